"""The head-to-head page: one grid shared with the neural chapter, and standings computed exactly."""

import numpy as np
import pandas as pd

from olr_core import claims
from olr_core.experiments.runner import spec_key
from olr_core.names import DISPLAY_NAMES
from olr_core.reproductions import head_to_head as h2h
from olr_core.reproductions import neural


def test_every_click_learner_runs_once_and_the_neural_chapters_runs_are_shared():
    params = h2h.settings()
    specs = h2h.grid(["synth-mq"], 2, 50, params)
    assert sorted({s.algorithm for s in specs}) == sorted(h2h.ALGORITHMS)
    assert len(specs) == len(h2h.ALGORITHMS) * 3 * 2
    assert set(h2h.ALGORITHMS) == set(h2h.FAMILY_OF) and set(h2h.ALGORITHMS) <= set(DISPLAY_NAMES)
    ours = {spec_key(s) for s in specs}
    chapter = neural.experiments.main_grid(["synth-mq"], 2, 50, neural.experiments.tuned_params())
    shared = [s for s in chapter if s.algorithm in h2h.ALGORITHMS]
    assert shared and {spec_key(s) for s in shared} <= ours


def _frame(values: dict) -> pd.DataFrame:
    """One row per (algorithm, seed) of one data set and user."""
    return pd.DataFrame([{"dataset": "d", "click_model": "perfect", "fold": 1, "seed": seed, "algorithm": name,
                          "score": v} for name, vs in values.items() for seed, v in enumerate(vs)])


def test_standings_rank_by_mean_and_tie_only_what_a_paired_test_cannot_separate():
    values = {"pdgd": [1.0, 1.1, 1.2, 1.3, 1.4],          # best: mean 1.2
              "mgd": [0.9, 1.2, 1.1, 1.35, 1.3],          # noisy, close: not separable from pdgd
              "dbgd": [0.5, 0.62, 0.69, 0.81, 0.9]}      # about 0.5 below in every run
    table = h2h.standings(_frame(values), "score").set_index("algorithm")
    assert table["rank"].to_dict() == {"pdgd": 1, "mgd": 2, "dbgd": 3}
    assert np.isclose(table.loc["pdgd", "mean"], 1.2)
    assert np.isclose(table.loc["pdgd", "se"], np.std(values["pdgd"], ddof=1) / np.sqrt(5))
    assert table.loc["dbgd", "p_vs_best"] < 1e-6 and not table.loc["dbgd", "tied"]
    assert table.loc["mgd", "p_vs_best"] > 0.05 and table.loc["mgd", "tied"] and table.loc["pdgd", "tied"]
    shown = h2h.standings_table(table.reset_index())
    assert shown.loc["PDGD"].iloc[0].endswith("(1)*") and shown.loc["MGD"].iloc[0].endswith("(2)*")
    assert shown.loc["DBGD"].iloc[0].endswith("(3)")


def test_with_fewer_than_five_runs_nothing_is_marked_tied_but_the_best():
    table = h2h.standings(_frame({"pdgd": [1.0, 1.2], "mgd": [0.9, 1.25]}), "score")
    assert table.set_index("algorithm")["p_vs_best"].isna()["mgd"]
    shown = h2h.standings_table(table)
    assert shown.loc["PDGD"].iloc[0].endswith("(1)*") and shown.loc["MGD"].iloc[0].endswith("(2)")


def test_family_ranks_give_each_familys_best_member():
    values = {"pdgd": [1.0] * 5, "mgd": [0.8] * 5, "mgd_dsp": [0.9] * 5, "olranknet": [0.7] * 5}
    ranks = h2h.family_ranks(h2h.standings(_frame(values), "score"))
    row = ranks.iloc[0]
    assert row["pairwise differentiable gradient descent"] == 1
    assert row["dueling bandits (Wang et al., 2019)"] == 2
    assert row["neural rankers (Jia and Wang, 2022)"] == 4


def test_a_family_leads_only_where_the_tests_separate_it_and_dsp_comparisons_count_significance():
    import numpy as np
    import pandas as pd

    from olr_core.reproductions import head_to_head as h2h

    rng = np.random.default_rng(0)
    rows = [{"dataset": "d", "click_model": u, "fold": 1, "seed": s, "algorithm": a, "m": mean + 0.01 * rng.normal()}
            for u, means in (("perfect", {"pdgd": 1.0, "mgd": 0.5, "mgd_dsp": 0.6}),
                             ("navigational", {"pdgd": 1.0, "mgd": 1.0, "mgd_dsp": 1.0}))
            for a, mean in means.items() for s in range(6)]
    summary = pd.DataFrame(rows)
    table = h2h.standings(summary, "m")
    alone = h2h.families_leading_alone(table)
    assert alone[("d", "perfect")] == h2h.FAMILY_OF["pdgd"] and pd.isna(alone[("d", "navigational")])
    dsp = h2h.dsp_comparisons(summary, "m").set_index("click_model")
    assert dsp.loc["perfect", "better"] and not dsp.loc["navigational", "better"]


def test_standings_print_each_mean_to_the_decimals_its_standard_error_supports():
    from olr_core.tables import noise_digit_problems

    table = h2h.standings(_frame({"pdgd": [1.0, 1.2, 1.1, 1.3, 1.05], "mgd": [0.41, 0.4102, 0.4101, 0.4099, 0.4103]}),
                          "score")
    shown = h2h.standings_table(table, digits=1)
    assert shown.loc["PDGD"].iloc[0] == "1.130 ± 0.054 (1)*" and shown.loc["MGD"].iloc[0] == "0.410100 ± 0.000071 (2)"
    assert noise_digit_problems(shown.to_numpy().ravel()) == []


def test_a_group_leads_a_cell_only_where_no_outsider_is_tied_with_its_best():
    apart = {"olranknet": [1.0, 1.1, 1.2, 1.3, 1.4], "pdgd": [0.5, 0.62, 0.69, 0.81, 0.9]}
    close = {"olranknet": [1.0, 1.1, 1.2, 1.3, 1.4], "pdgd": [0.9, 1.2, 1.1, 1.35, 1.3]}
    frame = pd.concat([_frame(apart), _frame(close).assign(click_model="navigational")])
    table = h2h.standings(frame, "score")
    neural_rankers = ["olranknet", "ollambdarank"]
    assert h2h.group_leads(table, neural_rankers).tolist() == [True, False]
    assert h2h.leader_words(table) == ["d/perfect: olRankNet, ahead of every other method",
                                       "d/navigational: olRankNet, tied with PDGD"]
    apart_cell, close_cell = h2h.leaders(table)
    assert (apart_cell.best, apart_cell.tied, apart_cell.tested) == ("olRankNet", (), True)
    assert close_cell.tied == ("PDGD",) and h2h.tie_words(apart_cell) == ""
    assert h2h.tie_words(close_cell).startswith(" (tied with PDGD: a paired t-test at 5 %")
    few = h2h.standings(_frame({k: v[:3] for k, v in apart.items()}), "score")      # a clear mean from 3 runs
    assert h2h.group_leads(few, neural_rankers).tolist() == [False]
    assert h2h.leader_words(few) == ["d/perfect: olRankNet (ahead by the mean; too few runs to test)"]
    assert h2h.tie_words(h2h.leaders(few)[0]) == " (by the mean: too few runs for the paired test)"
    assert h2h.tied_with_lowest(frame, "score") == ["pdgd", "olranknet"]     # PDGD lowest; olRankNet tied with it once
    assert h2h.tied_with_lowest(_frame({k: v[:3] for k, v in apart.items()}), "score") == []


def _dsp_frame(gains: dict, control=(1.0, 1.1, 0.9, 1.05, 0.95)) -> pd.DataFrame:
    """DBGD and DBGD-DSP runs of one data set, one user per key of ``gains`` (the DSP run's paired differences)."""
    rows = []
    for user, diffs in gains.items():
        for seed, (base, d) in enumerate(zip(control, diffs)):
            rows += [{"dataset": "d", "click_model": user, "fold": 1, "seed": seed, "algorithm": "dbgd", "m": base},
                     {"dataset": "d", "click_model": user, "fold": 1, "seed": seed, "algorithm": "dbgd_dsp",
                      "m": base + d}]
    return pd.DataFrame(rows)


def test_dsp_comparisons_give_the_verdict_rules_holm_intervals_exactly():
    from scipy import stats

    from olr_core import claims

    spread = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    gains = {"perfect": 5.0 + spread, "navigational": 1.13 + spread, "informational": 0.1 + spread}
    frame = _dsp_frame(gains)
    dsp = h2h.dsp_comparisons(frame, "m").set_index("click_model")
    claim = claims.Claim("dsp", "T2-dbgd-dsp", "Table 2", "DBGD-DSP beats DBGD under every user", "main", "m",
                         "paired_gain", {"treatment": "dbgd_dsp", "control": "dbgd"}, cells=("dataset", "click_model"))
    verdict = claims.rule_paired_gain(frame, claim, "dbgd_dsp", "dbgd")
    for cell in verdict.cells:
        row = dsp.loc[cell.name.split("/")[1]]
        assert np.isclose(row.low, cell.low) and np.isclose(row.high, cell.high) and np.isclose(row.gain, cell.margin)
    # by hand: the smallest p of m = 3 cells gets Holm's first level, 0.05 / 3
    half = stats.t.ppf(1 - 0.05 / 6, 4) * spread.std(ddof=1) / np.sqrt(5)
    assert np.isclose(dsp.loc["perfect", "low"], 5.0 - half) and np.isclose(dsp.loc["perfect", "high"], 5.0 + half)
    # p = 0.033 uncorrected: a paired t-test at 5 % calls it higher; Holm over the three users does not
    assert stats.ttest_1samp(gains["navigational"], 0).pvalue < 0.05
    assert dsp.better.tolist() == [True, False, False] and not dsp.worse.any()
    assert dsp.loc["navigational", "p"] > 0.05 and verdict.verdict == "partly"


def test_dsp_pooled_is_the_verdicts_fixed_effect_mean_and_the_table_shows_each_interval():
    from olr_core import claims

    spread = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    frame = _dsp_frame({"perfect": 0.6 + spread, "navigational": 0.6 + spread})
    pooled = h2h.dsp_pooled(frame, "m").set_index("base")
    cells = claims.comparison_cells(frame, [("dbgd_dsp", "dbgd")], "m", ["dataset", "click_model"])
    by_hand = claims.pooled_cell(cells)
    claims.set_intervals([by_hand])
    assert np.isclose(pooled.loc["dbgd", "low"], by_hand.low) and np.isclose(pooled.loc["dbgd", "gain"], 0.6)
    assert pooled.loc["dbgd", "better"] and not h2h.dsp_comparisons(frame, "m").better.any()   # pooled decides
    table = h2h.dsp_table(h2h.dsp_comparisons(frame, "m"), pooled.reset_index(), ["perfect", "navigational"])
    assert list(table.index) == ["perfect", "navigational", "pooled over the 2 users"]
    assert table.iloc[0, 0].endswith("(not separated)") and table.iloc[2, 0].endswith("(higher)")
    assert "[" in table.iloc[0, 0] and "[" in table.iloc[2, 0]


def test_standings_tie_what_holm_over_the_cells_methods_cannot_separate():
    spread = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    best = 10.0 + spread
    values = {"pdgd": best, "mgd": best - 1.13 - spread, "dbgd": best - 1.2 - spread,   # p 0.033 and 0.027 alone
              "nsgd": best - 0.1 - 3 * spread}
    holm = h2h.standings(_frame(values), "score").set_index("algorithm")
    assert claims.paired_test(values["mgd"], best) < 0.05 and claims.paired_test(values["dbgd"], best) < 0.05
    assert holm.loc["mgd", "tied"] and holm.loc["dbgd", "tied"]               # Holm over the 3: 3 x 0.027 > 0.05
    assert holm.loc["mgd", "gap_low"] < 0 < holm.loc["mgd", "gap_high"] and np.isclose(holm.loc["mgd", "gap"], 1.13)
    apart = {"pdgd": best, "mgd": best - 5.0 - spread}                       # every gap above 0: 95 %, no correction
    both = h2h.standings(_frame(apart), "score").set_index("algorithm")
    assert not both.loc["mgd", "tied"] and both.loc["mgd", "p_vs_best"] < 0.05
