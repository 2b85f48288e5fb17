"""The estimand the words name (#46): constructed runs for each estimand a claim can declare (pooled fixed effect,
pooled random effects, a majority, each cell, equivalence with the paper's own standard error), and the pooled
test deciding a 6-cell average claim at 0.3 s.d. with 30 runs per cell that the cell-by-cell rule leaves open."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from olr_core.claims import ESTIMANDS, Claim, estimand_of, judge
from olr_core.reproductions import dsp, neural, pairrank, topk
from olr_core.sequential import profile_level

CELLS = ("u1", "u2", "u3", "u4", "u5", "u6")


def standard_noise(runs: int, rng) -> np.ndarray:
    """``runs`` draws rescaled to mean exactly 0 and s.d. exactly 1 (so a cell's t statistic is known exactly)."""
    z = rng.standard_normal(runs)
    return (z - z.mean()) / z.std(ddof=1)


def gain_frame(effects, runs: int, seed: int = 0, exact: bool = True) -> pd.DataFrame:
    """Runs of a treatment ``a`` and a control ``b`` per cell, paired by seed: the paired difference a - b has the
    cell's ``effect`` as its mean and s.d. 1 (exactly, with ``exact``; else a normal sample)."""
    rng = np.random.default_rng(seed)
    rows = []
    for cell, effect in zip(CELLS, effects):
        noise = standard_noise(runs, rng) if exact else rng.standard_normal(runs)
        for s in range(runs):
            rows += [{"algorithm": "a", "dataset": "d", "click_model": cell, "fold": 1, "seed": s,
                      "m": 1.0 + effect + noise[s]},
                     {"algorithm": "b", "dataset": "d", "click_model": cell, "fold": 1, "seed": s, "m": 1.0}]
    return pd.DataFrame(rows)


def gain_claim(estimand: str = "", **kwargs) -> Claim:
    return Claim("test", "x", "Figure 1", "a beats b", "main", "m", "paired_gain", {"treatment": "a", "control": "b"},
                 cells=("click_model",), estimand=estimand, **kwargs)


def test_a_pooled_test_decides_a_six_cell_average_claim_the_cell_by_cell_rule_leaves_open():
    """Six cells, each with a true paired effect of 0.3 s.d. and 30 runs: each cell's t is 0.3 sqrt(30) = 1.64,
    below the 95 % critical value, so the cell-by-cell rule (every cell) decides none; the fixed-effect mean over
    the cells has t = 0.3 / sqrt(6 / 30 / 36) = 4.02 and is decided, at 95 % and at the paper profile's look."""
    frame = gain_frame([0.3] * 6, runs=30)
    every = judge(gain_claim("every"), frame, "text")
    pooled = judge(gain_claim("pooled"), frame, "text")
    assert every["verdict"] == "inconclusive" and pooled["verdict"] == "reproduced"
    assert pooled["estimand"] == "pooled" and len(pooled["per_cell"]) == 6 and len(pooled["cells"]) == 1
    assert pooled["cells"][0]["margin"] == pytest.approx(0.3) and pooled["cells"][0]["runs"] == 30
    assert judge(gain_claim("pooled"), frame, "text", level=profile_level("paper"))["verdict"] == "reproduced"


def test_on_sampled_runs_the_pooled_test_has_the_power_the_cell_by_cell_rule_lacks():
    """60 samples of the same design (normal runs, 30 per cell): the pooled test decides nearly all (power 0.98 by
    the noncentral t), the cell-by-cell rule almost never calls it reproduced (0.46^6)."""
    pooled = every = 0
    for seed in range(60):
        frame = gain_frame([0.3] * 6, runs=30, seed=seed, exact=False)
        pooled += judge(gain_claim("pooled"), frame, "text")["verdict"] == "reproduced"
        every += judge(gain_claim("every"), frame, "text")["verdict"] == "reproduced"
    assert pooled >= 52 and every <= 3, (pooled, every)


def test_pooled_random_effects_widen_with_heterogeneous_cells_and_need_five():
    """Cells whose effects differ (0.05 to 0.75): the fixed effect (the cells run) is decided; the random-effects
    mean (a claim about cells beyond those run) has a t interval over only 6 cell means and stays open. With
    fewer than 5 cells the random-effects request falls back to the fixed effect and says so."""
    frame = gain_frame([0.05, 0.05, 0.05, 0.05, 0.75, 0.75], runs=200)
    fixed = judge(gain_claim("pooled"), frame, "text")
    random = judge(gain_claim("pooled-random"), frame, "text")
    assert fixed["verdict"] == "reproduced" and random["verdict"] == "inconclusive"
    assert "random effects" in random["cells"][0]["cell"]
    few = judge(gain_claim("pooled-random"), frame[frame.click_model.isin(CELLS[:3])], "text")
    assert "fixed effect" in few["cells"][0]["cell"] and "random effects need at least 5 cells" in few["reason"]


def test_most_asks_for_a_majority_of_cells_and_every_for_each():
    """Five cells, three clearly for the claim and two clearly against: "most" is reproduced, "every" is not; with
    two for and three against, "most" is not reproduced."""
    three = gain_frame([1.0, 1.0, 1.0, -1.0, -1.0], runs=30)
    assert judge(gain_claim("most"), three, "text")["verdict"] == "reproduced"
    assert judge(gain_claim("every"), three, "text")["verdict"] == "partly"
    two = gain_frame([1.0, 1.0, -1.0, -1.0, -1.0], runs=30)
    assert judge(gain_claim("most"), two, "text")["verdict"] == "not reproduced"


def _table_frame(offset: float, runs: int, our_sd: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"algorithm": "a", "dataset": "d", "click_model": "u1", "fold": 1, "seed": range(runs),
                          "m": 0.5 + offset + our_sd * standard_noise(runs, rng)})
    paper = pd.DataFrame({"click_model": ["u1"], "algorithm": ["a"], "paper_mean": [0.5], "paper_sd": [0.1]})
    return frame, paper


def test_matching_a_table_counts_the_papers_own_standard_error():
    """Our mean 0.8 paper s.d. from the paper's, measured precisely (200 runs): taking the paper's mean as exact,
    it lies within 1 s.d. ("reproduced"); the paper's mean from 15 runs has a standard error of 0.26 s.d., so
    the equivalence is not shown and the verdict stays open."""
    frame, paper = _table_frame(0.08, 200, 0.02)
    table = Claim("test", "t", "Table 2", "matches Table 2", "main", "m", "within_sd",
                  {"paper_cells": paper, "k": 1.0}, cells=("click_model",))
    exact = judge(table, frame, "text")
    honest = judge(replace(table, args={**table.args, "paper_runs": 15}), frame, "text")
    assert exact["verdict"] == "reproduced" and honest["verdict"] == "inconclusive"
    assert honest["estimand"] == "equivalence" and "sqrt(15)" in honest["reason"]
    assert honest["cells"][0]["ci_low"] < 0 < exact["cells"][0]["ci_low"]


def test_every_claim_declares_a_known_estimand_and_the_average_claims_are_pooled():
    claims = {c.id: c for m in (dsp, pairrank, neural, topk) for c in m.claims.CLAIMS}
    for c in claims.values():
        kind, reason = estimand_of(c)
        assert kind in ESTIMANDS and reason
    for cid in ("T2-mgd-over-dbgd", "F4-c-over-r", "F4-egreedy-hurts", "F5-sgd-over-pdgd", "F4-lambda-over-ranknet",
                "F1-kl-over-squared", "F3-c-over-r"):
        assert estimand_of(claims[cid])[0] == "pooled", cid
    assert {estimand_of(claims[c])[0] for c in ("F3-dueling-worst", "F5-dueling-far")} == {"most"}
    assert {estimand_of(claims[c])[0] for c in ("T2-cells", "T3-cells")} == {"equivalence"}
    assert all(claims[c].args.get("paper_runs") == 15 for c in ("T2-cells", "T3-cells"))
    with pytest.raises(ValueError, match="unknown estimand 'mean'"):
        estimand_of(gain_claim("mean"))
