"""The growing-library chapter's package (olr_core.reproductions.klrank): Table 2's means and ranks on runs built by
hand, the regret slope, and the claims' experiments."""

import numpy as np
import pandas as pd
import pytest

from olr_core.reproductions.klrank import analysis, claims, experiments


def _runs(per_algorithm: dict, seeds: int = 5) -> pd.DataFrame:
    """``seeds`` runs per algorithm with the given metric values (each run the same)."""
    rows = [{"algorithm": name, "seed": s, **values} for name, values in per_algorithm.items() for s in range(seeds)]
    return pd.DataFrame(rows)


def test_table2_ranks_each_metric_in_its_direction_with_ties_and_an_infinite_cost():
    values = {"klrank_gper": {"avg_kl_cost": 4.6, "avg_rel_click_distance": 0.25, "clicked_first_rate": 0.15,
                              "avg_ndcg": 0.35},
              "random": {"avg_kl_cost": 4.9, "avg_rel_click_distance": 0.45, "clicked_first_rate": 0.10,
                         "avg_ndcg": 0.28},
              "hits": {"avg_kl_cost": np.nan, "avg_rel_click_distance": 0.25, "clicked_first_rate": 0.17,
                       "avg_ndcg": 0.36}}
    others = {"avg_kl_cost": 6.0, "avg_rel_click_distance": 0.5, "clicked_first_rate": 0.05, "avg_ndcg": 0.2}
    runs = _runs({**{name: others for name in experiments.ALGORITHMS}, **values})
    table = analysis.table2(runs).loc[list(values)]
    assert table.loc["hits", "avg_kl_cost"] == np.inf                    # NaN cost: infinite, ranked last
    assert list(table["rank:avg_kl_cost"]) == [1, 2, len(experiments.ALGORITHMS)]
    assert list(table["rank:avg_rel_click_distance"]) == [1, 3, 1]       # lower is better; a tie shares rank 1
    assert list(table["rank:clicked_first_rate"]) == [2, 3, 1]           # higher is better
    assert table.loc["random", "avg_ndcg"] == 0.28                       # the mean over its five runs


def test_loglog_slope_of_a_power_law():
    T = np.array([2.0 ** k for k in range(6, 14)])
    assert abs(analysis.loglog_slope(T, 5 * T ** 0.75) - 0.75) < 1e-9


def test_the_claims_experiments_are_sized_by_the_profiles():
    grids = experiments.experiments("tiny", "text", ["synth-library"])
    tiny = experiments.PROFILES["tiny"]
    assert {c.experiment for c in claims.CLAIMS} - {"none"} <= set(grids)
    assert [s.rounds for s in grids["regret"]] == [tiny["regret"]["rounds"]] * tiny["regret"]["seeds"]
    assert {s.dataset for s in grids["regret"]} == {experiments.REGRET_DATASET}


def test_a_certified_gap_below_float_noise_is_zero_not_a_measurement():
    """The regret table's gap column printed -5.32e-13 (#47): the two bounds of one optimum, equal up to rounding."""
    from olr_core.reproductions.klrank.analysis import certified_gap

    assert certified_gap(400.0, 400.0 + 5.32e-13) == 0.0 and certified_gap(2.5, 2.4) == pytest.approx(0.1)
