"""The robustness page's summaries, on a standings table built by hand."""

import numpy as np
import pandas as pd

from olr_core.reproductions import robustness as rb


def _standings():
    rows = []
    ranks = {"navigational": {"a": 1, "b": 2, "c": 3}, "dbn": {"a": 1, "b": 3, "c": 2},
             "ubm": {"a": 3, "b": 1, "c": 2}}
    tied = {("navigational", "b"), ("dbn", "c")}
    for user, by_algorithm in ranks.items():
        for algorithm, rank in by_algorithm.items():
            rows.append({"dataset": "d", "click_model": user, "algorithm": algorithm, "rank": rank, "runs": 5,
                         "tied": rank == 1 or (user, algorithm) in tied})
    return pd.DataFrame(rows)


def test_rank_table_keeps_the_users_order_and_the_ranks():
    table = rb.rank_table(_standings(), ["navigational", "dbn", "ubm", "pbm"])
    assert list(table.columns) == ["navigational", "dbn", "ubm"]
    assert table.loc["a"].tolist() == [1, 1, 3] and table.loc["c"].tolist() == [3, 2, 2]


def test_survivors_name_the_users_where_a_leader_lost_its_place():
    out = rb.survivors(_standings())
    assert out.loc["a", "best_under_reference"] and out.loc["a", "not_best_under"] == ["ubm"]
    assert out.loc["b", "best_under_reference"] and out.loc["b", "not_best_under"] == ["dbn"]
    assert not out.loc["c", "best_under_reference"]


def test_rank_spread_and_correlation():
    table = rb.rank_table(_standings(), ["navigational", "dbn", "ubm"])
    spread = rb.rank_spread(table)
    assert spread.loc["a", "best"] == 1 and spread.loc["a", "worst"] == 3 and spread.loc["a", "worst_at"] == "ubm"
    correlation = rb.rank_correlation(table)
    assert correlation["navigational"] == 1.0
    assert np.isclose(correlation["dbn"], 0.5) and np.isclose(correlation["ubm"], -0.5)


def test_the_grid_sets_every_learner_against_every_user():
    from olr_core.reproductions import head_to_head as h2h

    specs = h2h.grid(["synth-mq"], 1, 50, h2h.settings(), rb.USERS)
    assert {s.click_model for s in specs} == set(rb.USERS)
    assert {s.algorithm for s in specs} == set(h2h.ALGORITHMS)
    assert len(specs) == len(rb.USERS) * len(h2h.ALGORITHMS)


def test_rank_intervals_span_the_ranks_the_runs_cannot_order():
    """Three learners under one user: a and b overlap (ranks 1-2 each), c lies wholly below both (rank 3); a
    single run allows every rank (#47)."""
    import pandas as pd

    from olr_core.reproductions.robustness import rank_intervals

    standings = pd.DataFrame({"dataset": "d", "click_model": "navigational", "algorithm": ["a", "b", "c", "d"],
                              "mean": [0.60, 0.59, 0.40, 0.5], "se": [0.01, 0.01, 0.01, float("nan")],
                              "runs": [10, 10, 10, 1]})
    best, worst = rank_intervals(standings, users=["navigational"])
    assert best["navigational"].to_dict() == {"a": 1, "b": 1, "c": 3, "d": 1}
    assert worst["navigational"].to_dict() == {"a": 3, "b": 3, "c": 4, "d": 4}
