"""Verdict rules on small hand-made frames (one reproduced, one partly, one not case each), and the
claim registries: every table and figure of both papers' experiment sections has a claim."""

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from olr_core.claims import RULES, VERDICTS, Claim, judge
from olr_core.data import get_spec
from olr_core.reproductions import dsp, klrank, neural, pairrank, topk
from olr_core.reproductions.verdicts import PAPERS, records_frame

PAPERS_DIR = Path(__file__).resolve().parents[2] / "shared" / "papers"


def runs(values: dict, cells=("perfect", "navigational"), folds=5, noise=0.0, seed=0) -> pd.DataFrame:
    """A run frame: for each algorithm a mean per cell, one run per fold, optional noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for algorithm, per_cell in values.items():
        for cell, mean in zip(cells, per_cell):
            for fold in range(1, folds + 1):
                rows.append({"algorithm": algorithm, "dataset": "d", "click_model": cell, "fold": fold, "seed": 0,
                             "m": mean + noise * rng.standard_normal()})
    return pd.DataFrame(rows)


def claim(rule, **args):
    return Claim("test", "x", "Table 1", "a claim", "main", "m", rule, args)


def verdict(rule, frame, **args):
    return judge(claim(rule, **args), frame, "text")["verdict"]


NOISE = 0.1


def effect_runs(rule: str, effects, n: int, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """Runs in two cells (perfect, navigational) where the claim's true margin is ``effects[i]`` in cell i
    (0.1 holds, -0.1 fails), n runs per cell with noise of s.d. NOISE; and the rule's arguments."""
    rng = np.random.default_rng(seed)
    cells = ("perfect", "navigational")
    rows = []

    def add(cell, run, m, **cols):
        rows.append({"dataset": "d", "click_model": cell, "fold": 1, "seed": run,
                     "m": m + NOISE * rng.standard_normal(), **cols})
    for cell, e in zip(cells, effects):
        for run in range(n):
            if rule in ("paired_gain", "mostly_positive", "equivalent"):
                add(cell, run, 1.0, algorithm="c")
                shift = e if rule != "equivalent" else 0.2 - e     # equivalent: |diff| 0.1 or 0.3 against 0.2
                add(cell, run, 1.0 + shift, algorithm="t")
            elif rule in ("best", "worst"):
                sign = 1 if rule == "best" else -1
                add(cell, run, 1.0 + sign * e, algorithm="t")
                add(cell, run, 1.0, algorithm="b")
                add(cell, run, 1.0 - sign * 0.5, algorithm="z")
            elif rule in ("increasing", "argmax_in", "flat"):
                for x in (0, 1, 2):
                    value = {"increasing": e / 2 * x, "argmax_in": e * (x == 1),
                             "flat": (0.2 - e) * (x == 2)}[rule]   # flat: a step of 0.1 or 0.3
                    add(cell, run, 1.0 + value, algorithm="a", **{"param:x": x})
            elif rule in ("below", "above", "within_sd"):
                add(cell, run, 1.0 - e if rule == "below" else 1.0 + e, algorithm="a")
    args = {"paired_gain": {"treatment": "t", "control": "c"}, "mostly_positive": {"treatments": {"t": "c"}},
            "equivalent": {"treatment": "t", "control": "c", "tolerance": 0.2, "column": "algorithm"},
            "best": {"target": "t"}, "worst": {"targets": ["t"]},
            "increasing": {"parameter": "param:x"}, "argmax_in": {"parameter": "param:x", "values": [1]},
            "flat": {"parameter": "param:x", "tolerance": 0.2}, "below": {"threshold": 1.0},
            "above": {"threshold": 1.0},
            "within_sd": {"paper_cells": pd.DataFrame({"click_model": list(cells), "algorithm": "a",
                                                       "paper_mean": [1.2, 1.2],      # |ours - paper| = 0.2 - e
                                                       "paper_sd": [0.2, 0.2]})}}[rule]
    return pd.DataFrame(rows), args


MARGIN_RULES = ["paired_gain", "best", "worst", "increasing", "argmax_in", "flat", "below", "above", "equivalent",
                "within_sd"]


@pytest.mark.parametrize("rule", MARGIN_RULES)
def test_every_rule_returns_each_verdict_and_weighs_the_noise(rule):
    """Each verdict from constructed runs; the same true effect is mostly inconclusive at 3 runs per cell
    and reproduced at 30 (20 fixed seeds; a t interval from 3 runs still decides now and then)."""
    def judged(effects, n, seed=0):
        frame, args = effect_runs(rule, effects, n, seed)
        return judge(claim(rule, **args), frame, "text")

    assert judged((0.1, 0.1), 30)["verdict"] == "reproduced"
    assert judged((0.1, -0.1), 30)["verdict"] == "partly"
    assert judged((-0.1, -0.1), 30)["verdict"] == "not reproduced"
    few = [judged((0.1, 0.1), 3, seed) for seed in range(20)]
    many = [judged((0.1, 0.1), 30, seed)["verdict"] for seed in range(20)]
    assert sum(r["verdict"] == "inconclusive" for r in few) >= 12, [r["verdict"] for r in few]
    assert sum(r["verdict"] == "reproduced" for r in few) <= 5
    assert many.count("reproduced") >= 17, many          # the power of 30 runs at this effect: about 90 % or more
    for record in few:
        if record["verdict"] == "inconclusive":
            assert "runs per cell" in record["reason"]     # the count itself: test_verdict_rules' power tests
        assert [c["cell"].split("/")[0] for c in record["cells"]] == ["perfect", "navigational"]
        for c in record["cells"]:
            assert c["ci_low"] <= c["margin"] <= c["ci_high"] and c["runs"] == 3


def test_mostly_needs_a_majority_of_comparisons_to_gain():
    """"Mostly": one summary cell, the majority's smallest gain; two comparisons of which one loses are no majority."""
    for effects, verdict in (((0.1, 0.1), "reproduced"), ((0.3, -0.1), "not reproduced"),
                             ((-0.1, -0.1), "not reproduced")):
        frame, args = effect_runs("mostly_positive", effects, 30)
        record = judge(claim("mostly_positive", **args), frame, "text")
        assert record["verdict"] == verdict and len(record["cells"]) == 1, record
    frame, args = effect_runs("mostly_positive", (0.1, 0.1), 2)
    assert judge(claim("mostly_positive", **args), frame, "text")["verdict"] == "inconclusive"


def test_the_verdict_follows_the_intervals_by_one_rule():
    from olr_core.claims import Cell, verdict_of

    def cell(low, high):
        return Cell("c", (low + high) / 2, None, 5, low, high)
    assert verdict_of([cell(0.1, 0.2), cell(0.01, 1)]) == "reproduced"
    assert verdict_of([cell(0.1, 0.2), cell(-1, 1)]) == "partly"
    assert verdict_of([cell(0.1, 0.2), cell(-1, -0.5)]) == "partly"
    assert verdict_of([cell(-0.1, 0.2), cell(-1, -0.5)]) == "not reproduced"
    assert verdict_of([cell(-0.1, 0.2), cell(-1, 0.5)]) == "inconclusive"
    assert verdict_of([cell(0.0, 0.2)]) == "inconclusive"          # an interval that reaches 0 decides nothing


def test_holm_widens_the_intervals_of_a_claim_with_many_cells():
    from olr_core.claims import Cell, holm_intervals, mean_interval

    rng = np.random.default_rng(3)
    values = [rng.normal(0.05, 0.1, 20) for _ in range(6)]
    one = holm_intervals([Cell("a", *mean_interval(values[0]))])[0]
    many = holm_intervals([Cell(str(i), *mean_interval(v)) for i, v in enumerate(values)])
    alone = stats.t.interval(0.95, 19, loc=values[0].mean(), scale=stats.sem(values[0]))
    np.testing.assert_allclose((one.low, one.high), alone, rtol=1e-9)        # one cell: the plain t interval
    assert many[0].high - many[0].low > one.high - one.low                     # six cells: wider
    p = np.array([stats.ttest_1samp(v, 0).pvalue for v in values])
    holm = multipletests(p, method="holm")[0]                                   # excludes 0 exactly where Holm rejects
    assert [c.low > 0 or c.high < 0 for c in many] == list(holm)


def test_holm_adjusted_p_values_are_statsmodels():
    from olr_core.claims import holm_adjusted

    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 18):
        p = rng.uniform(0, 0.2, m) ** 2
        p[: m // 3] = p[0]                                                        # ties
        np.testing.assert_allclose(holm_adjusted(p), multipletests(p, method="holm")[1], rtol=1e-12)


def test_a_constant_value_is_a_measured_value_and_one_run_decides_nothing():
    from olr_core.claims import mean_interval

    _, interval, _ = mean_interval([0.3, 0.3, 0.3])
    low, high = interval(np.array([0.05]))
    assert low[0] == -np.inf and high[0] == np.inf and interval.constant     # no spread: no interval
    _, interval, _ = mean_interval([0.0, 0.0, 0.0])
    assert interval(np.array([0.05])) == (0.0, 0.0)                          # identical runs: exactly equal
    _, interval, _ = mean_interval([0.3])
    low, high = interval(np.array([0.05]))
    assert low[0] == -np.inf and high[0] == np.inf


def test_a_value_constant_up_to_rounding_is_measured_and_its_reach_not_estimable():
    """GPER's regret slack on its fixed stream is one number in every run, but numpy's s.d. of ten copies of it is
    1e-16, not 0: the reach must not extrapolate a run count from rounding (it advertised 11 runs)."""
    from olr_core.claims import Cell, decide, mean_interval, paired_test

    value = 0.9576317517263313
    mean, interval, n = mean_interval(np.full(10, value))
    assert interval.constant and interval.sd == 0.0
    _, rounded, _ = mean_interval(np.full(10, value) + np.r_[1e-16, np.zeros(9)])     # differs by rounding only
    assert rounded.constant and rounded(np.array([0.05]))[0][0] == -np.inf
    outcome = decide([Cell("gper", mean, interval, n)], "ours", "slack")
    assert outcome.verdict == "inconclusive" and outcome.runs_needed is None
    assert "not estimable" in outcome.reason and "runs per cell (now" not in outcome.reason
    assert np.isnan(paired_test(np.full(5, 1.0) + np.r_[1e-16, 0, 0, 0, 0], np.zeros(5)))
    _, real, _ = mean_interval([1.0, 1.0 + 1e-9, 1.0])                      # a real, if small, spread is kept
    assert not real.constant and real.sd > 0


def test_within_sd_names_the_farthest_cells():
    paper = pd.DataFrame({"click_model": ["perfect", "navigational"], "algorithm": ["a", "a"],
                          "paper_mean": [1.0, 2.0], "paper_sd": [0.1, 0.1]})
    record = judge(claim("within_sd", paper_cells=paper), runs({"a": [1.0, 2.5]}, noise=0.01, folds=30), "text")
    assert record["verdict"] == "partly" and "navigational/a 2.50 vs 2.00 ± 0.10" in record["ours"]
    assert record["magnitude"]["summary"].startswith("1 of 2 cells consistent with the paper's mean, 1 above it")


def test_rules_on_nearly_exact_runs():
    frame = runs({"a": [3, 3], "b": [2, 1], "c": [1, 2]}, noise=0.01, folds=10)
    assert verdict("best", frame, target="a") == "reproduced"
    assert verdict("best", runs({"a": [3, 1], "b": [2, 2]}, noise=0.01, folds=10), target="a") == "partly"
    assert verdict("best", frame, target="b") == "not reproduced"
    assert verdict("worst", frame, targets=["b", "c"]) == "reproduced"         # each below the only other, a
    assert verdict("worst", frame, targets=["c"]) == "partly"
    assert verdict("extreme_in", runs({"a": [1.2, 2.0]}), column="click_model", value="navigational") \
        == "not testable here"                                   # a cell holds one value of the column
    record = judge(Claim("test", "x", "T", "c", "main", "m", "extreme_in",
                         {"column": "click_model", "value": "navigational"}, cells=()),
                   runs({"a": [1.2, 2.0]}, noise=0.01, folds=10), "text")
    assert record["verdict"] == "reproduced" and record["cells"][0]["margin"] == pytest.approx(0.8, abs=0.02)


def test_missing_runs_and_untestable_claims():
    record = judge(claim("best", target="a"), None, "text", missing="mq2008 is not in this build")
    assert record["verdict"] == "not testable here" and "mq2008" in record["reason"]
    record = judge(claim("not_testable", reason="needs Yahoo!"), None, "text")
    assert record["reason"] == "needs Yahoo!"
    with pytest.raises(ValueError, match="unknown rule 'magic'"):
        judge(claim("magic"), runs({"a": [1, 1]}), "text")


def test_records_have_the_contracted_keys():
    record = judge(claim("best", target="a"), runs({"a": [2, 2], "b": [1, 1]}), "text")
    for key in ("paper", "claim", "config", "paper_value", "ours", "runs", "rule", "verdict", "reason", "cells"):
        assert key in record
    assert record["verdict"] in VERDICTS and list(records_frame([record]).columns)[:3] == ["paper", "id", "source"]


@pytest.mark.parametrize("package", list(PAPERS.values()))
def test_every_claim_uses_a_known_rule_and_experiment(package):
    ids = [c.id for c in package.claims.CLAIMS]
    assert len(ids) == len(set(ids))
    for c in package.claims.CLAIMS:
        assert c.rule in RULES
        datasets = [d for d in package.experiments.MAIN_DATASETS if get_spec(d).synthetic]
        for config in c.configs:          # every configuration a claim is judged in runs its experiment
            assert c.experiment in ("none", *package.experiments.experiments("quick", config, datasets)), (c.id, config)
        assert set(c.configs) <= set(package.claims.CONFIGS)


@pytest.mark.parametrize("module, paper_file, section, sources, not_results", [
    (dsp.claims, "004_e263bc3a2bd40a73.txt", "Experiment", {"Table 2", "Table 3", "Figure 2", "Figure 3", "Figure 4"},
     {"Table 1", "Figure 1"}),
    (pairrank.claims, "000_d0fa57a9f4b090a1.txt", "Experiment",
     {"Figure 3", "Figure 4", "Figure 5", "Figure 6", "Figure 7"}, {"Table 1", "Figure 1"}),
    (topk.claims, "003_c746c843f07ddb86.txt", "6 Empirical Results", {"Figure 1"}, set()),
    (klrank.claims, "002_11cbd81aa9f204e5.txt", "5 Experiments", {"Table 2"}, set()),
    (neural.claims, "001_b5c7dc5fd4a3760f.txt", "5 EXPERIMENTS", {"Figure 3", "Figure 4", "Figure 5", "Figure 6"},
     {"Table 1"}),
])
def test_the_registry_covers_every_table_and_figure_of_the_experiments(module, paper_file, section, sources,
                                                                       not_results):
    covered = {m.group(0) for c in module.CLAIMS if (m := re.match(r"(Table|Figure) \d", c.source))}
    assert sources <= covered
    path = PAPERS_DIR / paper_file
    if path.exists():                 # the experiment section's own tables and figures are all in `sources`
        text = path.read_text()
        experiments = text[text.index(section):]
        named = set(re.findall(r"(?:Table|Figure) \d", experiments))
        assert named - not_results <= sources      # (not_results: set-up tables, e.g. the click models)


def test_every_experiment_the_quick_profile_judges_has_five_paired_runs_per_cell():
    """The verdicts' standard: an interval from at least 5 paired runs (seeds x folds) in every cell the quick
    book judges, so that a claim can be decided rather than reported inconclusive for want of runs."""
    for paper, package in PAPERS.items():
        judged = {claim.experiment for claim in package.claims.CLAIMS}   # (the PROFILES name pages' experiments too)
        for experiment, sizes in package.experiments.PROFILES["quick"].items():
            if experiment not in judged:
                continue
            folds = sizes.get("folds", [sizes.get("fold", 1)])
            assert sizes["seeds"] * len(folds) >= 5, (paper, experiment)


def test_a_constant_difference_and_a_tiny_sample_are_not_tested():
    from olr_core.claims import paired_test

    assert np.isnan(paired_test(np.array([1.0, 2.0]), np.array([0.0, 0.0])))            # below MIN_PAIRS
    assert np.isnan(paired_test(np.full(5, 3.0), np.full(5, 2.5)))                      # a measured value: no test
    assert paired_test(np.full(5, 3.0), np.full(5, 3.0)) == 1.0
    p = paired_test(np.array([1.0, 1.2, 0.9, 1.1, 1.05]), np.array([1.0, 1.1, 1.0, 1.0, 1.0]))
    assert 0 < p < 1


def test_no_claim_is_judged_on_the_runs_that_tuned_it():
    """Tuning runs score the validation split with seeds of their own; each neural method has its own grid."""
    from olr_core.reproductions import neural, pairrank

    for profile in ("quick", "paper"):
        judged = {s.seed for s in pairrank.experiments.experiments(profile, "text", ["synth-mslr"])["main"]}
        judged |= {s.seed for s in neural.experiments.experiments(profile, "text", [])["main"]}
        for grid in ("quick", "paper"):
            tuning = (neural.experiments.tuning_specs("synth-mq-5g", 3, 50, grid)
                      + pairrank.experiments.tuning_specs("synth-mq", 3, 50))
            assert {s.eval_split for s in tuning} == {"vali"}
            assert not judged & {s.seed for s in tuning}
    assert {"olranknet", "ollambdarank"} <= set(neural.experiments.TUNING_GRIDS["quick"])
    assert {s.algorithm for s in neural.experiments.tuning_specs("synth-mq-5g", 1, 50)} >= {"olranknet", "ollambdarank"}


def test_records_obey_the_verdict_rule_and_a_failure_names_its_cause():
    from olr_core.reproductions.verdicts import failure_cause, record_problems

    frames = {effects: effect_runs("paired_gain", effects, 30)[0] for effects in ((0.1, 0.1), (-0.1, -0.1))}
    c = claim("paired_gain", treatment="t", control="c")
    text = judge(c, frames[(-0.1, -0.1)], "text")
    code = judge(c, frames[(0.1, 0.1)], "code")
    assert text["verdict"] == "not reproduced" and code["verdict"] == "reproduced"
    assert record_problems([text]) == ["test:x (text): not reproduced without a cause or 'cause not found'"]
    same = {"text": (frames[(-0.1, -0.1)], {}), "code": (frames[(0.1, 0.1)], {})}
    text["cause"] = failure_cause(text, [text, code], c, same)
    assert text["cause"].startswith("cause: the configuration; on the same 30 (1 dataset, 1 fold, 30 seeds) runs")
    assert failure_cause(text, [text]).startswith("cause not found; tried: no other configuration")
    elsewhere = {"text": same["text"], "code": (same["code"][0].assign(dataset="other"), {})}
    assert failure_cause(text, [text, code], c, elsewhere) == \
        "cause not found; tried: `code` on the same 0 runs: no shared runs (as `text` there: not reproduced)"
    undecided = {"text": same["text"], "code": (effect_runs("paired_gain", (0.0, 0.0), 30)[0], {})}
    assert failure_cause(text, [text, code], c, undecided).startswith("cause not found; tried: `code` on the same 30")
    assert record_problems([text, code]) == []
    broken = {**code, "cells": [{**code["cells"][0], "ci_low": -0.01}]}
    assert "reproduced, but an interval reaches 0" in record_problems([broken])[0]


def test_closer_measures_which_reference_a_method_lies_nearer():
    rows = []
    rng = np.random.default_rng(0)
    for seed in range(30):
        for algorithm, mean in (("far", 0.2), ("near", 0.6), ("good", 0.5), ("poor", 0.3)):
            rows.append({"algorithm": algorithm, "dataset": "d", "fold": 1, "seed": seed,
                         "m": mean + 0.02 * rng.standard_normal()})
    frame = pd.DataFrame(rows)
    good = judge(Claim("t", "x", "F", "c", "e", "m", "closer", {"treatment": "good", "near": "near", "far": "far"},
                       cells=("dataset",)), frame, "text")
    poor = judge(Claim("t", "x", "F", "c", "e", "m", "closer", {"treatment": "poor", "near": "near", "far": "far"},
                       cells=("dataset",)), frame, "text")
    assert good["verdict"] == "reproduced" and re.search(r"closes 7[456]% of the gap from far to near", good["ours"])
    assert poor["verdict"] == "not reproduced" and good["cells"][0]["margin"] == pytest.approx(0.1, abs=0.01)


def test_smaller_spread_compares_standard_deviations_of_paired_runs():
    rng = np.random.default_rng(1)

    def frame(n, sd_t, sd_c):
        return pd.DataFrame([{"algorithm": a, "dataset": "d", "click_model": "p", "fold": 1, "seed": s,
                              "m": 1 + sd * rng.standard_normal()}
                             for s in range(n) for a, sd in (("t", sd_t), ("c", sd_c))])
    c = Claim("t", "x", "T", "c", "e", "m", "smaller_spread", {"treatment": "t", "control": "c"})
    assert judge(c, frame(40, 0.05, 0.2), "text")["verdict"] == "reproduced"
    assert judge(c, frame(40, 0.2, 0.05), "text")["verdict"] == "not reproduced"
    two = judge(c, frame(2, 0.05, 0.2), "text")           # 2 runs cannot see a spread (#46): not testable there
    assert two["verdict"] == "not testable here" and "not testable at this many runs" in two["reason"]
    again = judge(c, frame(40, 0.05, 0.2), "text")
    assert again["cells"][0]["ci_low"] > 0
    assert again["cells"][0]["margin"] == pytest.approx(0.8 * (0.2 - 0.05), abs=0.04)   # mean |deviation| gap


def test_an_infinite_difference_is_decided_without_arithmetic_on_infinity():
    import warnings

    from olr_core.claims import mean_interval

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est, interval, n = mean_interval([np.inf, np.inf, np.inf])
        assert est == np.inf and interval(np.array([0.05]))[0][0] == np.inf
        est, interval, n = mean_interval([np.inf, 0.5, 1.0])
        low, high = interval(np.array([0.05]))
        assert low[0] == 0.5 and high[0] == np.inf


