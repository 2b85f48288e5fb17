"""The robustness page's leader table (olr_core.reproductions.robustness.leader_table) on hand-built frames."""

import numpy as np
import pandas as pd

from olr_core.reproductions import head_to_head as h2h
from olr_core.reproductions import robustness as rb


def _standings(cells: dict, runs: int = 5, dataset: str = "d") -> pd.DataFrame:
    """{user: [(algorithm, tied), ...] in rank order} -> a standings frame as head_to_head.standings makes it."""
    return pd.DataFrame([{"dataset": dataset, "click_model": user, "algorithm": algorithm, "rank": rank,
                          "runs": runs, "tied": rank == 1 or tied}
                         for user, ranking in cells.items()
                         for rank, (algorithm, tied) in enumerate(ranking, start=1)])


def test_the_leader_and_every_learner_tied_with_it_in_rank_order_under_display_names():
    standings = _standings({"navigational": [("pdgd", False), ("mgd", True), ("dbgd", False), ("pairrank_c", True)],
                            "dbn": [("mgd", False), ("pdgd", False)]})
    table = rb.leader_table(standings, ["navigational", "dbn"])
    assert table.loc["navigational", rb.BEST] == "PDGD"
    assert table.loc["navigational", rb.TIED] == "MGD, PairRank_C"        # DBGD, separated by the test, is left out
    assert table.loc["dbn"].tolist() == ["MGD", "none"]


def test_rows_follow_the_users_order_and_only_the_first_data_set_counts():
    standings = pd.concat([_standings({"ubm": [("mgd", False)], "navigational": [("pdgd", False)]}),
                           _standings({"navigational": [("dbgd", False)], "pbm": [("dbgd", False)]}, dataset="e")])
    table = rb.leader_table(standings, ["navigational", "ubm", "ccm"])
    assert table.index.name == "user" and list(table.index) == ["navigational", "ubm"]
    assert table[rb.BEST].tolist() == ["PDGD", "MGD"]


def test_below_five_runs_the_ties_are_not_tested_rather_than_none():
    standings = _standings({"navigational": [("pdgd", False), ("mgd", False)]}, runs=4)
    assert rb.leader_table(standings, ["navigational"]).loc["navigational", rb.TIED] == (
        "not tested (fewer than 5 paired runs)")


def _summary(runs: int) -> pd.DataFrame:
    """Three learners under one user: PDGD and MGD identical run by run (a tie), DBGD far below (separated)."""
    rng = np.random.default_rng(3)
    level = rng.uniform(0.4, 0.6, runs)
    values = {"pdgd": level, "mgd": level.copy(), "dbgd": level - 0.2 + 0.01 * rng.standard_normal(runs)}
    return pd.DataFrame([{"dataset": "d", "click_model": "navigational", "fold": 1, "seed": s, "algorithm": a,
                          "discounted_online_ndcg10": v[s]} for a, v in values.items() for s in range(runs)])


def test_from_standings_equal_learners_tie_and_a_separated_one_does_not_from_five_runs():
    table = rb.leader_table(h2h.standings(_summary(5), "discounted_online_ndcg10"), ["navigational"])
    assert set(table.loc["navigational"].str.split(", ").sum()) == {"PDGD", "MGD"}    # one best, the other tied
    small = rb.leader_table(h2h.standings(_summary(4), "discounted_online_ndcg10"), ["navigational"])
    assert small.loc["navigational", rb.TIED].startswith("not tested")
