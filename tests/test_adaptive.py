"""The sequential design of ``olr claims --budget`` (olr_core.adaptive): error spent over the looks, the stopping
rule's false "reproduced" rate under no effect, the order in which undecided experiments get seeds, and what an
undecided claim says it needs."""


import numpy as np
import pytest
from scipy import stats

from olr_core import adaptive
from olr_core.adaptive import (
    LOOKS,
    Look,
    another_look,
    look_levels,
    look_seeds,
    next_steps,
    profile_level,
    spending_bounds,
)
from olr_core.claims import ALPHA, MIN_PAIRS, Cell, Claim, at_level, decide, judge, mean_interval

PROFILE_SEEDS = 5                # the quick profile's figure experiments: looks at 5, 10 and 20 runs per cell
SD = 0.03                        # a realistic run-to-run s.d. of a paired NDCG@10 difference


def test_the_looks_spend_alpha_by_obrien_fleming_lan_demets_spending():
    """The boundaries' joint no-crossing probability under no effect is 1 - alpha; each look's first-crossing
    probability is the spending function's increment; the two-look design at t = (1/2, 1) has the published
    boundaries (Jennison and Turnbull 2000, Table 7.6 region: 2.77 and 1.98) and spends little early."""
    levels = look_levels()
    assert len(levels) == LOOKS and all(0 < v < ALPHA for v in levels) and levels[0] < levels[1] < levels[2]
    bounds = spending_bounds()
    assert 1 - adaptive._no_crossing(bounds, adaptive.FRACTIONS) == pytest.approx(ALPHA, abs=2e-4)
    for k in range(1, LOOKS + 1):
        spent_by_k = 1 - adaptive._no_crossing(bounds[:k], adaptive.FRACTIONS)
        assert spent_by_k == pytest.approx(float(adaptive.spent(adaptive.FRACTIONS[k - 1])), abs=2e-4)
    assert spending_bounds((0.5, 1.0)) == pytest.approx((2.772, 1.977), abs=3e-3)
    assert levels[0] < 1e-3 and sum(levels) > ALPHA         # the correlation between looks is used, not Bonferroni
    assert adaptive.worst_case_error() < 1.1 * ALPHA
    with pytest.raises(ValueError, match="looks=0 is invalid"):
        look_levels(0)


def test_quick_is_the_first_look_paper_a_later_one_and_no_look_has_fewer_than_min_pairs():
    assert profile_level("quick") == look_levels()[0] and profile_level("paper") == look_levels()[1]
    assert [look_seeds(5, k) for k in (1, 2, 3)] == [5, 10, 20]
    assert [look_seeds(20, k, first=2) for k in (2, 3)] == [20, 40]
    assert min(look_seeds(5, k) for k in range(1, LOOKS + 1)) >= MIN_PAIRS
    with pytest.raises(ValueError, match="before this profile's look"):
        look_seeds(20, 1, first=2)


def _book_verdict(samples: np.ndarray, level: float) -> str:
    """One claim (cells x runs of a paired difference) judged by the book's rule (claims.decide) at ``level``."""
    cells = [Cell(f"c{i}", *mean_interval(cell)) for i, cell in enumerate(samples)]
    with at_level(level):
        return decide(cells, "", "simulated").verdict


def _verdicts(samples: np.ndarray, level: float) -> np.ndarray:
    """The same rule, vectorised over claims (claims x cells x runs): every cell's t interval above 0 at ``level``:
    reproduced; else Holm's step-down at ``level`` over the cells: above 0 somewhere partly, below somewhere not
    reproduced, else inconclusive. (It matches claims.decide claim by claim: checked below.)"""
    n = samples.shape[-1]
    t = samples.mean(-1) / (samples.std(-1, ddof=1) / np.sqrt(n))
    p = 2 * stats.t.sf(np.abs(t), n - 1)
    order = np.argsort(p, axis=1, kind="stable")
    steps = np.maximum.accumulate(np.take_along_axis(p, order, 1) * np.arange(p.shape[1], 0, -1), axis=1)
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, steps, 1)
    above, below = (adjusted <= level) & (t > 0), (adjusted <= level) & (t < 0)
    every = (t > stats.t.ppf(1 - level / 2, n - 1)).all(1)
    return np.where(every, "reproduced", np.where(above.any(1), "partly",
                                                  np.where(below.any(1), "not reproduced", "inconclusive")))


def _sequential(draws: np.ndarray, levels=None) -> np.ndarray:
    """The budget's stopping rule on every claim at once: look k judges the first look_seeds(5, k) runs of each
    cell at the look's level (``levels``: an override), and a claim gets its next look when the book's stopping
    rule (:func:`another_look`) asks for it."""
    levels = levels or look_levels()
    final = np.full(len(draws), "", dtype=object)
    active = np.ones(len(draws), bool)
    for index in range(1, LOOKS + 1):
        verdicts = _verdicts(draws[active][:, :, :look_seeds(PROFILE_SEEDS, index)], levels[index - 1])
        final[active] = verdicts
        active[active] = [another_look(v, index) for v in verdicts]
    return final


def _null_draws(positive: float, rng, claims: int = 2000) -> np.ndarray:
    effects = np.zeros((claims, 3))
    effects[:, 1:] = positive
    return effects[:, :, None] + SD * rng.standard_normal((claims, 3, look_seeds(PROFILE_SEEDS, LOOKS)))


def test_the_vectorised_rule_is_the_books_rule():
    rng = np.random.default_rng(7)
    for positive in (0.0, 1.5 * SD, 3 * SD):
        draws = _null_draws(positive, rng, 60)
        for n, level in ((3, ALPHA / LOOKS), (6, ALPHA / LOOKS), (12, ALPHA)):
            ours = _verdicts(draws[:, :, :n], level)
            assert list(ours) == [_book_verdict(d[:, :n], level) for d in draws]


QUICK_RUNS, PAPER_RUNS = 5, 20      # PairRank's main experiment: 5 seeds at the quick profile, 20 at the paper's


def _workflow(draws: np.ndarray, levels) -> np.ndarray:
    """The book's real workflow on every claim at once: the quick build (the first QUICK_RUNS runs of each cell at
    ``levels[0]``), then the paper profile (PAPER_RUNS runs, the quick ones among them, at ``levels[1]``) for the
    claims still undecided, then a budget doubling the paper's runs (``levels[2]``) for those still undecided."""
    final = np.full(len(draws), "", dtype=object)
    active = np.ones(len(draws), bool)
    for runs, level in zip((QUICK_RUNS, PAPER_RUNS, 2 * PAPER_RUNS), levels):
        verdicts = _verdicts(draws[active][:, :, :runs], level)
        final[active] = verdicts
        active[active] = [v in adaptive.CAN_CHANGE for v in verdicts]
    return final


def _workflow_draws(positive: float, seed: int, claims: int = 20_000) -> np.ndarray:
    effects = np.zeros((claims, 3))
    effects[:, 1:] = positive
    return effects[:, :, None] + SD * np.random.default_rng(seed).standard_normal((claims, 3, 2 * PAPER_RUNS))


WORKFLOW_LEVELS = (profile_level("quick"), profile_level("paper"), look_levels()[2])
TODAYS_WORKFLOW = (ALPHA, ALPHA, ALPHA / 3)   # main before #46: quick and paper at 95 %, a budget's look at 5 % / 3


@pytest.mark.parametrize("positive", [0.0, 3 * SD], ids=["every-cell-null", "one-cell-null"])
def test_the_workflow_quick_paper_budget_keeps_false_reproduced_below_the_stated_level(positive):
    """20,000 false claims of 3 cells taken through quick, paper and a budget, each step only while the verdict can
    change, at the design's levels (:func:`profile_level`). The stated level is the one-sided alpha / 2 = 2.5 %
    (s.e. of the estimate 0.11 %): asserted with 0.5 % slack. With the levels of today's workflow (quick and paper
    each at 95 %) the same simulation breaks it (next test)."""
    rate = np.mean(_workflow(_workflow_draws(positive, 46), WORKFLOW_LEVELS) == "reproduced")
    assert rate <= ALPHA / 2 + 0.005, rate


def test_todays_workflow_levels_break_the_stated_level():
    rate = np.mean(_workflow(_workflow_draws(3 * SD, 46), TODAYS_WORKFLOW) == "reproduced")
    assert rate > ALPHA / 2 + 0.005, rate


@pytest.mark.parametrize("positive", [0.0, 3 * SD], ids=["every-cell-null", "one-cell-null"])
def test_false_reproduced_stays_below_5_percent_under_adaptation(positive):
    """2,000 false claims of 3 cells: every cell's true margin 0, or (the least favourable case for an
    intersection-union test) one cell at 0 and two clearly positive. Looks are taken while the verdict can still
    change, as the budget does; a false "reproduced" happens when the null cell's lower end is ever above 0. The
    design bounds it by the one-sided alpha / 2 = 2.5 % (Bonferroni over the looks), so 5 % is asserted and the
    estimate (s.e. 0.35 % at 2.5 %) must also stay within 1 % of the bound; judging every look at the full 5 %
    breaks that bound (checked below)."""
    rate = np.mean(_sequential(_null_draws(positive, np.random.default_rng(35))) == "reproduced")
    assert rate <= 0.05 and rate <= ALPHA / 2 + 0.01, rate


def test_without_error_spending_the_same_stopping_rule_breaks_the_bound():
    """The control that shows the test above can fail: every look at the full 5 %, one null cell."""
    draws = _null_draws(3 * SD, np.random.default_rng(35))
    rate = np.mean(_sequential(draws, levels=(ALPHA,) * LOOKS) == "reproduced")
    assert rate > ALPHA / 2 + 0.01, rate


def test_the_stopping_rule_asks_for_a_look_while_the_verdict_can_change_and_looks_are_left():
    assert another_look("inconclusive", 1) and another_look("partly", LOOKS - 1)
    assert not another_look("inconclusive", LOOKS)
    assert not any(another_look(v, 1) for v in ("reproduced", "not reproduced", "smaller than reported",
                                                "not testable here"))


def _claim_frame(values):
    import pandas as pd

    return pd.DataFrame({"algorithm": "a", "dataset": "d", "fold": 1, "seed": range(len(values)),
                         "click_model": "nav", "m": values})


def test_a_look_level_widens_every_interval_and_is_recorded_while_the_default_path_is_unchanged():
    claim = Claim("p", "c", "Table 1", "m is positive", "e", "m", "above", {"threshold": 0.0})
    frame = _claim_frame([0.9, 1.4, 1.1, 0.2, 1.0])
    default, spent = judge(claim, frame, "text"), judge(claim, frame, "text", level=ALPHA / 3)
    assert "level" not in default and spent["level"] == pytest.approx(ALPHA / 3)
    assert default == judge(claim, frame, "text", level=ALPHA)     # the non-adaptive path, to the letter
    assert spent["cells"][0]["ci_low"] < default["cells"][0]["ci_low"]
    assert "98.3 % interval" in spent["reason"] and "95 % interval" in default["reason"]
    with pytest.raises(ValueError, match="level 0.2 is invalid"):
        judge(claim, frame, "text", level=0.2)


def test_a_claim_decided_at_95_can_be_undecided_at_a_looks_level():
    claim = Claim("p", "c", "Table 1", "m is positive", "e", "m", "above", {"threshold": 0.0})
    frame = _claim_frame([0.2, 1.5, 0.9, 0.1, 1.2])          # t = 2.84 on 4 df: p = 0.047
    assert judge(claim, frame, "text")["verdict"] == "reproduced"
    assert judge(claim, frame, "text", level=ALPHA / 3)["verdict"] == "inconclusive"


class _Design:
    """A design of three experiments with stated step costs (the pricing is plan.py's, tested there)."""

    looks = LOOKS

    def __init__(self, costs):
        self.costs = costs

    def step_cost(self, group, look):
        return self.costs[group], 10


def _record(group, runs, needed):
    return {"paper": group[0], "experiment": group[1], "verdict": "inconclusive", "runs_needed": needed,
            "cells": [{"runs": runs}]}


def test_next_steps_take_decisive_cheap_experiments_first_within_the_budget():
    a, b, c = ("p", "a"), ("p", "b"), ("p", "c")
    design = _Design({a: 50.0, b: 10.0, c: 5.0})
    looks = {g: Look(1, 3, ALPHA / LOOKS) for g in (a, b, c)}
    undecided = {a: [_record(a, 3, 6)], b: [_record(b, 3, 8), _record(b, 3, 9)], c: [_record(c, 3, 500)]}
    assert next_steps(design, looks, undecided, 100.0) == [b, a, c]    # c needs 500 runs: not decisive, last
    assert next_steps(design, looks, undecided, 55.0) == [b, c]        # a does not fit after b
    assert next_steps(design, looks, undecided, 4.0) == []
    looks[b] = Look(LOOKS, 12, ALPHA / LOOKS)
    assert b not in next_steps(design, looks, undecided, 100.0)        # no look left
    undecided[c] = [_record(c, 3, None)]                                # no spread yet: last, however cheap
    assert next_steps(design, looks, undecided, 100.0) == [a, c]
    undecided[a] = [{**_record(a, 3, None), "verdict": "partly"}]      # (partly records carry no runs_needed)
    undecided[c] = [_record(c, 3, 500)]
    assert next_steps(design, looks, undecided, 100.0) == [c, a]       # both undecisive: c 5 s a record, a 50 s


def test_an_undecided_claim_says_the_runs_and_cpu_time_it_needs():
    class Design:
        looks = LOOKS

        def per_seed_cost(self, group, look):
            return 20.0

    record = {**_record(("p", "a"), 6, 40), "reason": "r"}
    adaptive._say_what_it_needs(record, Design(), Look(2, 6, ALPHA / LOOKS))
    assert record["needs"] == {"runs_per_cell": 40, "seeds": 40, "cpu_seconds": 680.0}
    assert "undecided at the budget's end (look 2 of 3, 6 seeds): deciding it needs about 40 runs per cell " \
           "(40 seeds), ~680 CPU s more" in record["reason"]


def test_a_partly_record_says_it_is_still_partly():
    record = {**_record(("p", "a"), 6, None), "verdict": "partly", "reason": "r"}
    adaptive._say_what_it_needs(record, _Design({}), Look(3, 12, ALPHA / LOOKS))
    assert record["reason"] == "r; still partly at look 3 of 3: more seeds may decide its undecided cells"


def test_a_bad_budget_is_refused_in_one_line():
    with pytest.raises(ValueError, match="--budget 'lots' is invalid; give CPU seconds"):
        adaptive._budget_seconds("lots")


def test_the_budget_buys_looks_until_decided_or_spent_and_the_rest_say_what_they_need(monkeypatch):
    """The driver on a stated design: experiment a is decided at its second look, b never; each look costs
    10 CPU s an experiment at look 1 and doubles; a budget of 45 s pays for a's and b's second looks (40 s) but
    not b's third (+20 s)."""
    from olr_core.reproductions import verdicts

    a, b = ("p", "a"), ("p", "b")

    class Design(_Design):
        groups = [a, b]

        def __init__(self, *args, **kwargs):
            super().__init__({})

        def look(self, group, index):
            return Look(index, look_seeds(PROFILE_SEEDS, index), look_levels()[index - 1])

        def first_looks(self):
            return {g: self.look(g, 1) for g in self.groups}

        def cost(self, looks):
            return sum(10.0 * 2 ** (look.index - 1) for look in looks.values())

        def profile_cost(self):
            return 40.0

        def step_cost(self, group, look):
            return 10.0 * 2 ** (look.index - 1), 3

        def per_seed_cost(self, group, look):
            return 2.0

    def records(paper, profile, data_dir, jobs, store, rankers=(), looks=None, keep_runs=False):
        seen.append({g[1]: look.index for g, look in looks.items()})
        decided = looks[a].index >= 2
        return [{**_record(a, looks[a].seeds, 6), "verdict": "reproduced" if decided else "inconclusive",
                 "reason": ""}, {**_record(b, looks[b].seeds, 30), "reason": ""}]

    seen = []
    monkeypatch.setattr(adaptive, "Design", Design)
    monkeypatch.setattr(verdicts, "claim_records", records)
    out, spend = adaptive.budgeted_records("p", "quick", 45)
    assert seen == [{"a": 1, "b": 1}, {"a": 2, "b": 2}]
    assert spend.spent == 40.0 and spend.looks[b].index == 2
    assert out[0]["verdict"] == "reproduced" and "needs" not in out[0]
    assert out[1]["needs"] == {"runs_per_cell": 30, "seeds": 30, "cpu_seconds": 40.0}   # (30 - 10 seeds) x 2 s
    assert adaptive.budgeted_records("p", "quick", "auto")[1].budget == 40.0
