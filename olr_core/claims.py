"""Does it reproduce? Claims of a paper's experiments as data, and verdicts computed by one stated rule.

A :class:`Claim` names what a paper reports (a table's cells, an ordering, a gain, a trend),
the experiment of ours that tests it, the metric, and the *rule* that measures it. Every rule
reduces each **cell** of the claim (a data set, a user, a data set and user, ...) to a
**margin**: a signed number, positive where the claim holds in that cell, with a confidence
interval computed from the runs. One function, :func:`verdict_of`, turns the intervals into a
verdict, whatever the rule:

- **reproduced**: the interval lies above 0 in every cell (the cells the claim's estimand asks for: below);
- **not reproduced**: below 0 in at least one cell (the runs contradict the claim there) and
  above 0 in none;
- **partly**: above 0 in some cells but not in all (the others below 0 or undecided);
- **smaller than reported**: the claim states a size, its sign is not decided above 0 in every cell,
  and in every cell our interval lies below the paper's number (a decided outcome);
- **inconclusive**: above 0 in no cell and below 0 in none; the record gives the largest margin the
  runs allow and how many runs per cell would end "inconclusive" with 80 % assurance (``runs_needed``,
  see *Reach*), or why that is not estimable;
- **not testable here**: the claim needs data or recordings this build does not have, or (``smaller_spread``)
  its runs are too few for the test to see what it claims.

The intervals are two-sided, at the level in force: 95 % by default, and under the book's sequential design
(:mod:`olr_core.adaptive`: quick profile look 1, paper profile look 2, a budget look 3, O'Brien-Fleming-type
Lan-DeMets error spending) the look's level: :func:`judge` takes it as ``level`` and every interval,
correction and reach calculation below uses it.

**Estimands.** What the cells must show is the claim's *estimand* (``Claim.estimand``, with a one-line
reason; :data:`ESTIMANDS`, :func:`estimand_of`; every record carries ``estimand`` and ``estimand_reason``):

- ``every`` (the default of cell-by-cell rules; "every", "each", "consistently"): "reproduced" needs every
  cell, an intersection-union test: it holds when every cell's own interval lies above 0, with no correction
  for the number of cells.
- ``pooled`` (averages and unqualified "A beats B"): one summary cell, the equally weighted mean of the cells'
  margins (each paired by seed within its cell), a fixed effect over the cells run: variance the sum of the
  cells' squared standard errors over m^2, Welch-Satterthwaite degrees of freedom. ``pooled-random``: a
  random-effects mean (t over the m cell margins) for a claim about cells beyond those run, given at least
  :data:`RANDOM_MIN_CELLS` cells (else the fixed effect, and the reason says so). The cells stay in the
  record as ``per_cell``.
- ``most`` ("most panels", ``mostly_positive``): one summary cell, the q-th largest cell margin (q = m // 2
  + 1) with the q-th largest ends of the cells' intervals (a union bound; see :func:`majority_cell`).
- ``equivalence`` (``within_sd``, ``equivalent``, ``flat``): the difference lies within the indifference zone
  (two one-sided tests); for a paper's table (``within_sd`` with ``paper_runs``) the difference's interval
  carries the paper's own standard error, s.d. / sqrt(runs), beside ours (Welch).

Otherwise the intervals are Holm-corrected over the cells, to
say in how many cells the claim holds or fails: the cell with the i-th smallest p-value (of m)
gets the level that Holm's step-down procedure gives it, ``min(0.05 p_i / p_i^Holm,
0.05 / (m - i + 1))``, so a cell's interval excludes 0 exactly when Holm rejects "margin = 0"
there. A cell's p-value is the smallest ``gamma`` at which its ``1 - gamma`` interval excludes 0
(the interval's dual test).

**Reach.** An inconclusive record's ``runs_needed`` is the runs per cell at which extending the runs ends
"inconclusive" (the next decision: any one cell decided, at Holm's first step) with 80 % *assurance*, a
predictive probability that averages over what the runs leave uncertain about the effect (:func:`reach`);
where it cannot be estimated (a statistic the same in every run, no count up to the grid's end) it is None
and the record says why (``runs_needed_not_estimable``); no capped count is ever printed. A
``smaller_spread`` claim whose runs are too few to see a halved s.d. with 80 % power is "not testable" at
that many runs, with the count that would test it (``runs_to_test``).

The margins, rule by rule (``d`` a paired difference over runs sharing data set, fold and seed;
intervals by Student's t, on the pairs where the runs are paired):

- ``paired_gain``: mean of d(treatment - control).
- ``best`` / ``argmax_in`` / ``extreme_in``: the smallest paired difference between the claimed winner
  and any other (``argmax_in``: the best value in the set minus the best outside). Its interval: the
  lower end is the smallest lower end of those differences (an intersection-union test: no
  correction needed), the upper end the smallest upper end at a Bonferroni-corrected level over the
  others (to show a failure one difference must be below 0). With several possible winners the
  corrections swap roles.
- ``worst``: every claimed target below every other method: the smallest paired difference over all
  (target, other) pairs, with the same intersection-union interval.
- ``equivalent`` / ``flat`` / ``within_sd``: tolerance minus |difference| (for ``flat``: minus the
  largest difference between any two values of the parameter; for ``within_sd``: k paper s.d.
  minus |ours - paper|); the interval is the image of the differences' intervals (its lower end is
  the two one-sided tests' bound).
- ``increasing``: one least-squares slope of the metric on the parameter per run (data set, fold,
  seed), and a t interval over the runs' slopes.
- ``below`` / ``above``: threshold minus the mean (mean minus threshold). A measured log-log
  regret slope against a theorem's rate is judged with ``below`` and a threshold of the rate plus
  ``RATE_TOLERANCE``: a slope whose interval lies below it is consistent with the upper bound.
- ``all_positive``: "for every" claims, one cell per comparison and cell, each a mean paired gain.
- ``mostly_positive``: "mostly" claims, one summary cell: the q-th largest of m comparisons' gains
  (q = m // 2 + 1), with the q-th largest ends of their Bonferroni intervals.
- ``closer``: (method - far) - share (near - far), paired: the method closes more than ``share`` of the
  gap between two references.
- ``smaller_spread``: the mean over paired runs of the control's absolute deviation from its median minus
  the treatment's (a paired Brown-Forsythe statistic, with its t interval).
- ``not_testable``: no margin; the reason says why.

A finite value that is the same in every run is a measured value, not an estimate: it gets no interval
(unbounded), and the reason says so; a difference that is exactly 0 in every run (two computations
identical run by run) is certain. Fewer than two runs give an unbounded interval.

Beside the sign, a claim that states a size (``paper_number``) gets a *magnitude*: per cell, our
interval against the paper's number ("as reported", "smaller", "larger"); a claim whose sign is
undecided but whose every cell lies below the paper's number is "smaller than reported". Thresholds
of ours that a paper does not state are named (``unstated``) and the record gives the verdict at half
and double their value; a claim stated at a horizon (``horizon``) is judged only at or beyond it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy import stats

from .formatting import FLOAT_NOISE, mean_sd_text, number_text, threshold_text
from .names import name_of

VERDICTS = ("reproduced", "partly", "smaller than reported", "not reproduced", "inconclusive", "not testable here")
ALPHA = 0.05
MIN_PAIRS = 5            # significance marks on the pages are never computed from fewer paired runs
RATE_TOLERANCE = 0.1     # a measured log-log slope up to a theorem's rate + 0.1 counts as that rate
PAIR_KEYS = ["dataset", "fold", "seed"]
GAMMAS = np.geomspace(1e-12, 1.0, 481)     # the levels on which a cell's p-value is located
_LEVEL = contextvars.ContextVar("olr_claims_level", default=ALPHA)


def json_safe(value):
    """NaN and infinities become null, so that a record printed by ``--json`` (and a ledger) is valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def current_level() -> float:
    """The two-sided level every interval and verdict uses now: :data:`ALPHA`, or a sequential look's share of it
    (:func:`at_level`, ``judge(..., level=...)``)."""
    return _LEVEL.get()


@contextlib.contextmanager
def at_level(level: float | None):
    """Judge at ``level`` (1 - confidence) inside the block: a group-sequential look spends its share of the error
    (:mod:`olr_core.adaptive`); None keeps the level in force."""
    if level is None:
        yield
        return
    if not 0 < level <= ALPHA:
        raise ValueError(f"level {level!r} is invalid; a look's level lies in (0, {ALPHA}]")
    token = _LEVEL.set(float(level))
    try:
        yield
    finally:
        _LEVEL.reset(token)


def _percent(level: float) -> str:
    """The confidence of a two-sided ``level`` in words: 0.05 -> "95 %", 0.0167 -> "98.3 %"."""
    return f"{100 * (1 - level):.3g} %"

# The verdict rule and each rule's margin in words: the verdicts page prints these, so the page says what the code does.
VERDICT_RULE = {
    "reproduced": "the margin's interval lies above 0 in every cell the claim's estimand asks for (each cell for "
                  "'every'; the pooled mean for an average or an unqualified 'A beats B'; the majority's margin for "
                  "'most'), at the level of the profile's look in the sequential design",
    "partly": "the Holm-corrected interval lies above 0 in some cells but not in all (the others below 0 or "
              "undecided)",
    "not reproduced": "the interval lies below 0 in at least one cell and above 0 in none; the reason names the "
                      "cause shown by a run (another configuration with another verdict) or says the cause was "
                      "not found and what was tried",
    "smaller than reported": "the claim states a size (a gain, a table entry) and, though its sign is not decided "
                             "above 0 in every cell, our interval lies below the paper's number in every cell",
    "inconclusive": "the interval lies above 0 in no cell and below 0 in none; the reason gives the largest margin "
                    "the runs still allow, how many runs per cell would end 'inconclusive' (one decided cell) with "
                    "80 % assurance, or why that is not estimable, and the command that runs them",
    "not testable here": "the claim needs data or recordings this build does not have, or is true by "
                         "construction; the reason says which",
}
MARGINS = {
    "paired_gain": "mean paired difference treatment - control",
    "best": "smallest paired lead of the claimed best method over any other",
    "worst": "smallest paired gap between any other method and any of the claimed worst ones (each below every other)",
    "argmax_in": "best mean over the claimed parameter values minus the best mean outside them (paired)",
    "extreme_in": "smallest paired gap by which the named value exceeds (or stays below) every other",
    "increasing": "mean over runs of each run's least-squares slope of the metric on the parameter (t over runs)",
    "flat": "tolerance minus the largest paired difference between the means at two parameter values",
    "equivalent": "tolerance minus |mean paired difference|",
    "within_sd": "k paper standard deviations minus |our mean - the paper's mean|",
    "below": "threshold minus the mean",
    "above": "the mean minus the threshold",
    "below_with_control": "threshold minus the mean, for the claimed method and, by the same rule in the same world, "
                          "for a negative control that the claim must not hold for (its verdict is reported beside)",
    "rate_at_most": "an upper bound's rate minus the measured log-log slope (a slope above the rate leaves the claim "
                    "undecided, never contradicted: the bound's constants are not measured)",
    "bound_above_trivial": "none where the bound exceeds the trivial bound at the runs' horizon (not testable, the "
                           "ratio reported); otherwise the mean minus the threshold",
    "all_positive": "mean paired gain, one cell per comparison and cell ('for every', 'consistently': all must hold)",
    "mostly_positive": "the q-th largest of m comparisons' mean paired gains, q = m // 2 + 1 ('mostly': a majority), "
                       "with the q-th largest ends of their Bonferroni intervals",
    "closer": "paired (method - far) - share x (near - far): positive where the method closes more than the share "
              "(by default half) of the gap from the far reference to the near one",
    "smaller_spread": "mean over paired runs of the control's absolute deviation from its median minus the "
                      "treatment's (paired Brown-Forsythe: robust, conservative at few runs)",
    "not_testable": "none: the claim is not judged",
}

Interval = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]   # gamma -> (low, high) of the 1 - gamma interval


@dataclass(frozen=True)
class Claim:
    """One claim of a paper's experiments and how this book tests it."""

    paper: str
    id: str
    source: str                     # "Table 2", "Figure 6", "Section 4.2.1"
    text: str                       # the claim in our words
    experiment: str                 # which of the paper module's experiments provides the runs
    metric: str                     # a column of the experiment's run frame
    rule: str
    args: dict = field(default_factory=dict)
    paper_value: str = ""           # what the paper reports, as text
    cells: tuple = ("click_model",)  # what a "cell" is: the columns grouped over
    where: dict = field(default_factory=dict)   # restrict the runs (column: value or list)
    configs: tuple = ("text",)      # the configurations the claim is judged in; the first is the headline
    paper_number: float | dict | None = None   # the size the paper reports, in the margin's units (per cell: a dict)
    relative: bool = False          # paper_number is a gain in % of the control's mean
    unstated: dict = field(default_factory=dict)   # {arg: (what it is, base)}: thresholds the paper does not state
    horizon: int | None = None      # rounds at which the paper states the claim (judged on runs of that length)
    by_horizon: bool = False        # the claim holds *by* the horizon (convergence): runs at least that long count
    computed: bool = False          # the statistic is a deterministic computation, the same in every run: exact
    estimand: str = ""              # what the words claim over the cells (:data:`ESTIMANDS`); "": the rule's default
    estimand_reason: str = ""       # why, in one line (the claim's wording)


@dataclass(frozen=True)
class Unstated:
    """A threshold of ours that the paper does not state: what it is, and the value from which it is a distance
    (the sensitivity columns judge the claim at ``base + (value - base) / 2`` and ``base + 2 (value - base)``)."""

    what: str
    base: float = 0.0


@dataclass
class Cell:
    """A cell's margin (positive: the claim holds there), its interval family and run count."""

    name: str
    margin: float
    interval: Interval
    runs: int
    low: float = float("nan")
    high: float = float("nan")
    scale: float = 1.0              # margin x scale = the paper's units (e.g. 100 / control mean for a gain in %)
    key: tuple = ()                 # what the cell compares, where a caller needs it: (treatment, control, *group)

    def record(self) -> dict:
        return {"cell": self.name, "margin": _finite(self.margin), "ci_low": _finite(self.low),
                "ci_high": _finite(self.high), "runs": self.runs}


@dataclass
class Outcome:
    ours: str
    runs: int
    verdict: str
    reason: str
    cells: list = field(default_factory=list)
    runs_needed: int | None = None
    magnitude: dict | None = None
    what: str = ""                  # the margin in words
    per_cell: list = field(default_factory=list)   # the cells a pooled or majority estimand summarises
    not_estimable: str = ""         # why no runs_needed could be computed, where one was sought
    control: dict | None = None     # a negative control judged by the same rule in the same world (its verdict)
    controls: list = field(default_factory=list)    # every negative control of the record (``control`` the first)


def _finite(x: float):
    return float(x) if np.isfinite(x) else (None if np.isnan(x) else float(x))


# -- intervals -----------------------------------------------------------------------------------------

def mean_interval(values) -> tuple[float, Interval, int]:
    """The mean of ``values`` and its Student-t interval family.

    A finite value that is the same in every run (up to rounding, :data:`FLOAT_NOISE`) is a *measured value*,
    not an estimate: no run-to-run variation was observed, so nothing bounds the mean's error and the interval
    is unbounded (the reason says so; replicate the statistic over what varies). The one exception is a difference that
    is exactly 0 in every run: two computations identical run by run, which is certain."""
    x = np.asarray(values, float)
    if len(x) and not np.isfinite(x).all():
        return _unbounded_mean(x)
    n, mean = len(x), float(np.mean(x)) if len(x) else float("nan")
    constant = n >= 2 and bool(np.ptp(x) <= FLOAT_NOISE * np.max(np.abs(x)))
    se = float(np.std(x, ddof=1) / math.sqrt(n)) if n >= 2 else float("inf")

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        if constant and mean == 0:
            return np.zeros(gamma.shape), np.zeros(gamma.shape)
        if n < 2 or constant:
            return np.full(gamma.shape, -np.inf), np.full(gamma.shape, np.inf)
        half = stats.t.ppf(1 - gamma / 2, n - 1) * se
        return mean - half, mean + half
    interval.constant = constant and mean != 0
    interval.sd = 0.0 if constant else float(np.std(x, ddof=1)) if n >= 2 else float("nan")
    return mean, interval, n


def _unbounded_mean(x: np.ndarray) -> tuple[float, Interval, int]:
    """A mean over values some of which are infinite (e.g. the K-L cost of a deterministic ranker): the
    interval is [min, max] of the values, at every level (exact where they are all the same infinity)."""
    low, high = (float(np.nanmin(x)), float(np.nanmax(x))) if not np.isnan(x).all() else (-np.inf, np.inf)
    mean = float(np.mean(x)) if not np.isnan(x).any() else float("nan")

    def interval(gamma):
        shape = np.shape(gamma)
        return np.full(shape, low), np.full(shape, high)
    return mean, interval, len(x)


def maxmin_interval(diffs: dict) -> tuple[float, Interval]:
    """Margin ``max_t min_o d(t, o)`` from {t: {o: (estimate, interval)}} and its interval family.

    The lower end takes each difference at level gamma / |t| (some t must beat every o), the
    upper end at gamma / |o| (for every t some o must beat it)."""
    n_t = len(diffs)
    n_o = max(len(row) for row in diffs.values())
    margin = max(min(est for est, _ in row.values()) for row in diffs.values())
    winner = max(diffs.values(), key=lambda row: min(est for est, _ in row.values()))
    binding = min(winner.values(), key=lambda d: d[0])[1]

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        low = np.max([np.min([f(gamma / n_t)[0] for _, f in row.values()], axis=0) for row in diffs.values()], axis=0)
        high = np.max([np.min([f(gamma / n_o)[1] for _, f in row.values()], axis=0) for row in diffs.values()], axis=0)
        return low, high
    interval.sd, interval.factor = getattr(binding, "sd", float("nan")), n_t    # the binding pair's spread
    return margin, interval


def tolerance_interval(tolerance: float, diffs: list) -> tuple[float, Interval]:
    """Margin ``tolerance - max |d|`` over the differences [(estimate, interval)] and its interval family:
    the image of the differences' intervals (the upper end Bonferroni-corrected over them)."""
    margin = tolerance - max(abs(est) for est, _ in diffs)

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        largest = np.max([np.maximum(np.abs(lo), np.abs(hi)) for lo, hi in (f(gamma) for _, f in diffs)], axis=0)
        smallest = np.max([np.where((lo <= 0) & (hi >= 0), 0.0, np.minimum(np.abs(lo), np.abs(hi)))
                           for lo, hi in (f(gamma / len(diffs)) for _, f in diffs)], axis=0)
        return tolerance - largest, tolerance - smallest
    interval.sd = getattr(max(diffs, key=lambda d: abs(d[0]))[1], "sd", float("nan"))   # the binding difference's
    return margin, interval


def unit_slopes(x, y, units) -> np.ndarray:
    """The least-squares slope of y on x within each unit (a run: one data set, fold and seed) that has
    two or more distinct x, in the order of the units' sorted labels."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    _, unit = np.unique(np.asarray(list(units), dtype=str), return_inverse=True)
    count = np.bincount(unit)
    xc = x - (np.bincount(unit, x) / count)[unit]
    yc = y - (np.bincount(unit, y) / count)[unit]
    sxx, sxy = np.bincount(unit, xc * xc), np.bincount(unit, xc * yc)
    return sxy[sxx > 0] / sxx[sxx > 0]


def p_value(cell: Cell) -> float:
    """The smallest gamma (on :data:`GAMMAS`) whose 1 - gamma interval excludes 0; 1 if none does."""
    low, high = cell.interval(GAMMAS)
    excluded = (low > 0) | (high < 0)
    return float(GAMMAS[np.argmax(excluded)]) if excluded.any() else 1.0


def holm_adjusted(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (the same numbers as statsmodels' ``multipletests(p, method="holm")``,
    a test checks; computed here because that function runs a full garbage collection on every call)."""
    p = np.asarray(p, float)
    order = np.argsort(p, kind="stable")
    steps = np.maximum.accumulate(p[order] * np.arange(len(p), 0, -1))
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(steps, 1.0)
    return adjusted


def holm_intervals(cells: list[Cell]) -> list[Cell]:
    """Set each cell's interval at its Holm level (see the module docstring): the cell with the i-th smallest
    p-value of m gets ``min(alpha p / p_holm, alpha / (m - i + 1))``, so its interval excludes 0 exactly when
    Holm rejects there, and is never narrower than the step's own level."""
    if not cells:
        return cells
    p = np.array([p_value(c) for c in cells])
    adjusted = holm_adjusted(p)
    step = np.empty(len(p))
    alpha = current_level()
    step[np.argsort(p, kind="stable")] = alpha / np.arange(len(p), 0, -1)
    for cell, raw, adj, own in zip(cells, p, adjusted, step):
        gamma = min(alpha * raw / adj, own) if adj > 0 else alpha / len(cells)
        _set_level(cell, min(gamma, 1.0))
    return cells


def _set_level(cell: Cell, level: float) -> None:
    """The cell's interval [low, high] at two-sided ``level`` (1 - confidence)."""
    low, high = cell.interval(np.array([level]))
    cell.low, cell.high = float(low[0]), float(high[0])


def set_intervals(cells: list[Cell]) -> bool:
    """The cells' intervals: each at 95 % where every one of them lies above 0 (then the claim holds in every
    cell: an intersection-union test, which needs no correction for multiplicity; returns True), else at
    its Holm level (to say in how many cells it holds or fails, the cells are corrected together)."""
    for cell in cells:
        _set_level(cell, current_level())
    if cells and all(c.low > 0 for c in cells):
        return True
    holm_intervals(cells)
    return False


POWER = 0.8                 # runs_needed: the chance that a rerun at the advertised count ends the undecided verdict


@dataclass(frozen=True)
class Reach:
    """What deciding an undecided claim takes: runs per cell (None: not estimable), and why not where it is not."""

    runs: int | None
    why_not: str = ""


def runs_needed(cells: list[Cell], power: float = POWER) -> int | None:
    """Runs per cell of :func:`reach` (None where it is not estimable)."""
    return reach(cells, power).runs


def reach(cells: list[Cell], power: float = POWER) -> Reach:
    """Runs per cell at which a rerun ends the claim's undecided verdict with probability ``power``: the next
    decision, not every cell's. An inconclusive claim ends when any cell is decided, above or below 0 (Holm's
    first step: a cell's two-sided test at level / m); a partly one becomes reproduced when every undecided
    cell lies above 0 (the intersection-union test at the level). The probability is an *assurance*, the power
    averaged over the uncertainty of the effect rather than the power at the observed effect taken as true: the
    predictive probability of :func:`_assurance` (cells independent). Not estimable (None and the reason): a cell
    with no spread (a statistic the same in every run), a probability that cannot be computed, or no count up to
    the grid's end reaching ``power``."""
    undecided = [c for c in cells if c.low <= 0 <= c.high]
    if not undecided:
        return Reach(None, "no undecided cell")
    for c in undecided:
        sd = getattr(c.interval, "sd", float("nan"))
        if not (np.isfinite(sd) and sd > 0 and np.isfinite(c.margin)):
            return Reach(None, f"cell {c.name} shows no spread (the same value in every run, or no finite margin): "
                               "nothing to extrapolate a run count from")
    any_cell = not any(c.low > 0 for c in cells)      # inconclusive: no cell decided yet (partly: some above)
    level = current_level() / (len(cells) if any_cell else 1)
    chance = [_assurance(c, level / getattr(c.interval, "factor", 1), both_sides=any_cell) for c in undecided]
    if any(np.isnan(p).any() for p in chance):
        return Reach(None, "the predictive probability could not be computed for these runs")
    ends = 1 - np.prod([1 - p for p in chance], axis=0) if any_cell else np.prod(chance, axis=0)
    enough = ends >= power
    if not enough.any():
        return Reach(None, f"even {int(_CANDIDATE_RUNS[-1]):,} runs per cell would end it with less than "
                           f"{power:.0%} assurance")
    return Reach(max(int(_CANDIDATE_RUNS[np.argmax(enough)]), max(c.runs for c in undecided) + 1))


EFFECT_PRIOR_SD = 0.4      # sceptical prior of an undecided standardised effect: N(0, 0.4^2) (see _assurance)
_CANDIDATE_RUNS = np.unique(np.concatenate([np.arange(2, 200), np.geomspace(200, 100_000, 160).astype(int)]))


def _assurance(cell: Cell, alpha: float, both_sides: bool) -> np.ndarray:
    """Per candidate run count n (:data:`_CANDIDATE_RUNS`): the predictive probability that the cell's test at
    two-sided ``alpha`` decides (above 0; or either side with ``both_sides``) once its n0 runs are extended to
    n, the effect unknown (Spiegelhalter, Freedman and Blackburn 1986, Controlled Clinical Trials 7). In s.d.
    units, with d the observed standardised margin, the effect's posterior is N(m, v), v = 1 / (n0 + 1/tau^2),
    m = n0 d v, under a sceptical prior N(0, tau^2), tau = :data:`EFFECT_PRIOR_SD`; the added runs' mean is then
    predicted as N(m, v + 1 / (n - n0)). The runs already made stay in the final test, as they do when the book
    adds seeds. Normal approximation, with the t critical value at n - 1 degrees of freedom. A flat prior
    (tau infinite) is optimistic where true effects spread little around the observed ones: rerun at its count,
    3-cell claims whose effects were drawn from N(0.3, 0.3^2) were decided in 62 % of cases, not 80 %; tau = 0.4
    keeps the share at or above 80 % across the spreads tests/test_reach_calibration.py draws."""
    d, n0 = cell.margin / cell.interval.sd, max(cell.runs, 2)
    post_var = 1 / (n0 + 1 / EFFECT_PRIOR_SD ** 2)           # the effect's posterior under the sceptical prior
    post_mean = n0 * d * post_var
    n = _CANDIDATE_RUNS.astype(float)
    added = np.maximum(n - n0, 0.0)
    crit = stats.t.ppf(1 - alpha / 2, n - 1) * np.sqrt(n)
    spread = np.sqrt(added ** 2 * post_var + added)
    centre = n0 * d + added * post_mean
    with np.errstate(divide="ignore", invalid="ignore"):
        up = stats.norm.cdf((centre - crit) / spread)
        down = stats.norm.cdf((-centre - crit) / spread)
    chance = up + down if both_sides else up
    return np.where(added > 0, chance, 0.0)


def verdict_of(cells: list[Cell]) -> str:
    """The one rule: above 0 everywhere, reproduced; below somewhere and above nowhere, not reproduced;
    above somewhere, partly; else inconclusive."""
    above = sum(c.low > 0 for c in cells)
    below = sum(c.high < 0 for c in cells)
    if above == len(cells):
        return "reproduced"
    if above:
        return "partly"
    return "not reproduced" if below else "inconclusive"


def decide(cells: list[Cell], ours: str, what: str) -> Outcome:
    """Holm intervals, verdict and a reason naming the margin (``what``) and the count of decided cells."""
    every = set_intervals(cells)
    verdict = verdict_of(cells)
    above = sum(c.low > 0 for c in cells)
    below = sum(c.high < 0 for c in cells)
    plural, confidence = "s" * (len(cells) > 1), _percent(current_level())
    reason = (f"margin: {what}; {confidence} interval above 0" if every and len(cells) == 1 else
              f"margin: {what}; {confidence} interval above 0 in each of {len(cells)} cell{plural} (the claim must "
              "hold in every cell: no correction needed)" if every else
              f"margin: {what}; {confidence} interval (Holm over {len(cells)} cell{plural}) "
              f"above 0 in {above}, below 0 in {below}, undecided in {len(cells) - above - below}")
    constant = [c.name for c in cells if getattr(c.interval, "constant", False)]
    if constant:
        reason += (f"; in {', '.join(constant)} the statistic is the same in every run (nothing the runs vary "
                   "changes it): a measured value, given no interval; it decides nothing until it is "
                   "replicated over what varies")
    found = reach(cells) if verdict in ("inconclusive", "partly") else Reach(None)
    needed, why_not = found.runs, found.why_not
    if verdict == "inconclusive":
        most = max(c.runs for c in cells)
        if most < 2:
            needed, why_not = 3, ""
            reason += "; one run per cell shows no spread: at least 3 runs per cell are needed to judge it"
        elif needed:
            event = "any one cell decided" if len(cells) > 1 else "the cell decided"
            reason += (f"; about {needed:,} runs per cell (now {most}) would end 'inconclusive' ({event}, at "
                       f"{confidence}) with {POWER:.0%} assurance (power averaged over the effect's uncertainty)")
        else:
            reason += f"; the runs that would decide it are not estimable: {why_not}"
    outcome = Outcome(ours, sum(c.runs for c in cells), verdict, reason, cells, needed, what=what)
    outcome.not_estimable = why_not if verdict == "inconclusive" and not needed else ""
    return outcome


# -- estimands: what the words claim over the cells ------------------------------------------------------

ESTIMANDS = {
    "every": "intersection-union: the claim must hold in each cell ('every', 'each', 'consistently', or a claim "
             "stated cell by cell); reproduced when every cell's interval lies above 0",
    "pooled": "pooled over the claim's cells, fixed effect: the equally weighted mean of the cells' margins (each "
              "paired by seed within its cell), its variance the sum of the cells' over m^2, Welch-Satterthwaite "
              "degrees of freedom; for averages and unqualified 'A beats B' over the cells run",
    "pooled-random": "pooled over the claim's cells, random effects: the mean of the cells' margins with a t "
                     "interval over the cells (m - 1 degrees of freedom), for a claim that generalises beyond the "
                     "data sets run; it needs at least 5 cells, else the fixed effect is used and the reason says so",
    "most": "a majority of the cells: the q-th largest cell margin, q = m // 2 + 1, with the q-th largest ends of "
            "the cells' intervals (lower at gamma / (m - q + 1), upper at gamma / q; a union bound)",
    "equivalence": "equivalence: the difference from the stated value lies within the indifference zone (two one-"
                   "sided tests), the uncertainty of the paper's own mean (its s.d. / sqrt(its runs)) included",
}
RANDOM_MIN_CELLS = 5      # fewer cells cannot estimate a between-cell variance worth the name


def estimand_of(claim: Claim) -> tuple[str, str]:
    """The claim's estimand and its reason: as declared, else the rule's default (``every`` for cell-by-cell
    rules, ``most`` for ``mostly_positive``, ``equivalence`` for the tolerance rules)."""
    if claim.estimand:
        if claim.estimand not in ESTIMANDS:
            raise ValueError(f"claim {claim.id}: unknown estimand {claim.estimand!r}; valid: {', '.join(ESTIMANDS)}")
        return claim.estimand, claim.estimand_reason or ESTIMANDS[claim.estimand].split(";")[0]
    if claim.rule == "mostly_positive":
        return "most", "the claim says 'mostly': a majority of its comparisons"
    if claim.rule in ("within_sd", "equivalent", "flat"):
        return "equivalence", "the claim states agreement within a tolerance"
    return "every", "the claim is stated for each of its cells (or has one cell)"


def pooled_cell(cells: list[Cell], random: bool = False) -> Cell:
    """One cell summarising ``cells`` by the equally weighted mean of their margins (in the paper's units where
    their scales differ): fixed effect (variance sum v_i / m^2, v_i the cell's squared standard error, Welch-
    Satterthwaite df) or, with ``random``, random effects (a t interval over the m cell margins, m - 1 df)."""
    m = len(cells)
    scaled = len({c.scale for c in cells}) > 1
    margins = np.array([c.margin * (c.scale if scaled else 1.0) for c in cells])
    sds = np.array([getattr(c.interval, "sd", float("nan")) * (c.scale if scaled else 1.0) for c in cells])
    runs = np.array([c.runs for c in cells])
    estimate = float(margins.mean())
    if random:
        se, df = float(margins.std(ddof=1) / math.sqrt(m)), m - 1
    else:
        v = sds ** 2 / runs
        se = float(math.sqrt(v.sum()) / m)
        df = float(v.sum() ** 2 / np.sum(v ** 2 / np.maximum(runs - 1, 1))) if v.sum() > 0 else float("inf")
    known = np.isfinite(se) and (se > 0 or estimate == 0)

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        if not known:
            return np.full(gamma.shape, -np.inf), np.full(gamma.shape, np.inf)
        half = stats.t.ppf(1 - gamma / 2, df) * se
        return estimate - half, estimate + half
    interval.sd = se * math.sqrt(int(runs.min())) if known else float("nan")    # se shrinks as 1 / sqrt(runs)
    interval.constant = bool(np.isfinite(se) and se == 0 and estimate != 0)
    kind = "random effects" if random else "fixed effect"
    return Cell(f"pooled over {m} cells ({kind})", estimate, interval, int(runs.min()),
                scale=1.0 if scaled else cells[0].scale)


def majority_cell(cells: list[Cell], what: str = "cells") -> Cell:
    """"Most" of m cells: the q-th largest margin (q = m // 2 + 1) with the q-th largest lower end of the cells'
    intervals at gamma / (m - q + 1) and the q-th largest upper end at gamma / q (the q-th largest lower end
    exceeds the q-th largest margin only if one of the m - q + 1 smallest margins is exceeded by its own lower
    end: a union bound over those; likewise above): above 0 means q cells hold, below 0 that fewer than q can."""
    m, q = len(cells), len(cells) // 2 + 1

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        lows = np.sort(np.stack([c.interval(gamma / (m - q + 1))[0] for c in cells]), axis=0)[::-1]
        highs = np.sort(np.stack([c.interval(gamma / q)[1] for c in cells]), axis=0)[::-1]
        return lows[q - 1], highs[q - 1]
    ranked = sorted(cells, key=lambda c: c.margin, reverse=True)
    interval.sd, interval.factor = getattr(ranked[q - 1].interval, "sd", float("nan")), m - q + 1
    return Cell(f"{q}-th largest of {m} {what}", float(ranked[q - 1].margin), interval, min(c.runs for c in cells))


def with_estimand(claim: Claim, outcome: Outcome) -> Outcome:
    """The rule's cells judged as the claim's estimand names (:func:`estimand_of`): ``pooled`` and ``most``
    summarise them in one cell (the cells kept as ``per_cell``); ``every`` and ``equivalence`` are the rules'
    own cell-by-cell judgments."""
    kind, _ = estimand_of(claim)
    cells = outcome.cells
    if kind in ("every", "equivalence") or outcome.verdict == "not testable here" or len(cells) < 2:
        return outcome
    note = ""
    if kind == "most":
        summary, what = majority_cell(cells), f"the {len(cells) // 2 + 1}-th largest of the {len(cells)} cells' " \
                                              f"margins ({outcome.what})"
    else:
        random = kind == "pooled-random" and len(cells) >= RANDOM_MIN_CELLS
        if kind == "pooled-random" and not random:
            note = (f"; random effects need at least {RANDOM_MIN_CELLS} cells and this claim has {len(cells)}: "
                    "the fixed effect over the cells run is used")
        summary = pooled_cell(cells, random)
        unit = " (in % of the control's mean)" if claim.relative and summary.scale == 1.0 else ""
        what = f"equally weighted mean over the {len(cells)} cells of the {outcome.what}{unit}"
    for c in cells:
        _set_level(c, current_level())
    pooled = decide([summary], outcome.ours, what)
    pooled.reason += note
    pooled.per_cell, pooled.control, pooled.controls = cells, outcome.control, outcome.controls
    return unless_a_control_passes(pooled)


# -- cells and pairs ---------------------------------------------------------------------------------

def _select(frame: pd.DataFrame, where: dict) -> pd.DataFrame:
    for column, value in where.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        frame = frame[frame[column].isin(values)]
    return frame


def _cells(frame: pd.DataFrame, claim: Claim):
    for _, name, part in _groups(frame, claim.cells):
        yield name, part


def _groups(frame: pd.DataFrame, by):
    """(key, name, part) per group of the columns ``by`` that ``frame`` has; one group "all" without any."""
    columns = [c for c in by if c in frame]
    if not columns:
        yield (), "all", frame
        return
    for key, part in frame.groupby(columns, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield key, "/".join(str(k) for k in key), part


def _paired(part: pd.DataFrame, a, b, metric: str, column: str = "algorithm") -> pd.DataFrame:
    """Runs of ``a`` and ``b`` side by side, one row per data set, fold and seed. Two runs of one of them
    under the same keys are an error (averaging them would count two runs as one pair)."""
    wide = _side_by_side(part, [a, b], metric, column)
    return wide.dropna() if a in wide and b in wide else pd.DataFrame(columns=[a, b])


def _side_by_side(part: pd.DataFrame, names: list, metric: str, column: str = "algorithm") -> pd.DataFrame:
    """The metric of the runs of ``names`` (values of ``column``), one column each, one row per data set, fold and
    seed; two runs of one name under the same keys are refused."""
    keys = [k for k in PAIR_KEYS if k in part]
    rows = part[part[column].isin(names)]
    _refuse_duplicates(rows, [*keys, column])
    return rows.pivot_table(index=keys, columns=column, values=metric, dropna=False)


def _refuse_duplicates(rows: pd.DataFrame, keys: list) -> None:
    repeated = rows[rows.duplicated(keys, keep=False)]
    if not repeated.empty:
        first = repeated.iloc[0]
        raise ValueError(f"{len(repeated)} runs share {', '.join(f'{k}={first[k]}' for k in keys)} in one cell of a "
                         "claim; a cell holds one run per data set, fold and seed: add the column that tells them "
                         "apart to the claim's cells or restrict the claim with `where`")


def paired_difference(part: pd.DataFrame, a, b, metric: str, column: str = "algorithm"):
    """(estimate, interval, pairs) of the mean paired difference a - b; None without a pair."""
    pairs = _paired(part, a, b, metric, column)
    if pairs.empty:
        return None
    return mean_interval(pairs[a].to_numpy(float) - pairs[b].to_numpy(float))


def paired_test(x: np.ndarray, y: np.ndarray) -> float:
    """p-value of a paired t-test of x against y for the pages' significance marks; NaN below ``MIN_PAIRS``
    pairs. A difference that is the same in every run is a measured value (NaN: no test) unless it is 0 in
    every run (1: the two are identical run by run), as in the claims' rules."""
    d = np.asarray(x, float) - np.asarray(y, float)
    if len(d) < MIN_PAIRS:
        return float("nan")
    if np.ptp(d) <= FLOAT_NOISE * np.max(np.abs(d)):
        return float("nan") if d[0] != 0 else 1.0
    return float(stats.ttest_rel(x, y).pvalue)


def _fmt(x: float) -> str:
    """A signed margin or difference for a sentence (:func:`olr_core.formatting.number_text`): "+0.0955", never
    "n/a" or "inf"."""
    return number_text(x, sign=True)


def _num(x: float, digits: int = 3) -> str:
    """A value for a sentence to ``digits`` significant digits (:func:`olr_core.formatting.number_text`)."""
    return number_text(x, digits=digits)


def _no_runs(what: str) -> Outcome:
    return Outcome("no runs", 0, "not testable here", what)


# -- the rules ---------------------------------------------------------------------------------------

def rule_within_sd(frame, claim, paper_cells: pd.DataFrame, k: float = 1.0, paper_runs: int | None = None,
                   **_) -> Outcome:
    """``paper_cells``: columns of the cell plus algorithm, paper_mean, paper_sd. Margin per cell:
    k paper s.d. - |our mean - paper mean| (an equivalence test: its lower end is the two one-sided tests').
    The paper's mean is itself an estimate: with ``paper_runs`` (the paper's runs per cell) the difference's
    interval carries both standard errors (:func:`difference_from_reported`), so an indifference zone of k paper
    s.d. is judged against the paper's uncertainty as well as ours; without it the paper's mean is taken as
    exact (the reason says so). The magnitude beside it: per cell, whether our mean is consistent with the
    paper's (the Bonferroni interval of ours - paper's contains 0), above or below it."""
    keys = [c for c in claim.cells if c in frame] + ["algorithm"]
    merged = frame.merge(paper_cells, on=keys, how="inner")
    if merged.empty:
        return Outcome("no run matches a cell of the paper", 0, "not testable here", "no overlapping cells")
    cells, texts, diffs = [], [], []
    for key, part in merged.groupby(keys, sort=False):
        name = "/".join(str(v) for v in key)
        paper_mean, paper_sd = float(part["paper_mean"].iloc[0]), float(part["paper_sd"].iloc[0])
        est, interval, n = difference_from_reported(part[claim.metric].to_numpy(float), paper_mean, paper_sd,
                                                    paper_runs)
        margin, tol_interval = tolerance_interval(k * paper_sd, [(est, interval)])
        cells.append(Cell(name, margin, tol_interval, n))
        diffs.append((name, est / paper_sd, interval, paper_sd))
        texts.append((abs(est) / paper_sd, f"{name} {number_text(paper_mean + est, paper_sd)} vs "
                                                      f"{mean_sd_text(paper_mean, paper_sd)}"))
    inside = sum(c.margin >= 0 for c in cells)
    worst = [t for _, t in sorted(texts, reverse=True)[:3]]
    ours = f"{inside} of {len(cells)} cells' means within {k:g} paper s.d.; farthest: {', '.join(worst)}"
    uncertainty = (f", the paper's mean uncertain by its s.d. / sqrt({paper_runs})" if paper_runs else
                   ", the paper's mean taken as exact (its run count is not declared)")
    outcome = decide(cells, ours, f"{k:g} paper s.d. minus |our mean - paper mean|{uncertainty}")
    outcome.magnitude = _table_magnitude(diffs)
    return outcome


def difference_from_reported(values, paper_mean: float, paper_sd: float, paper_runs: int | None):
    """(estimate, interval, runs) of our mean minus the paper's reported mean. With ``paper_runs`` the interval
    is Welch's: standard error sqrt(s^2 / n + paper_sd^2 / paper_runs), Welch-Satterthwaite degrees of freedom
    (the paper's mean is an estimate from its runs); without it, the one-sample t interval (the paper's exact)."""
    est, interval, n = mean_interval(np.asarray(values, float) - paper_mean)
    if not paper_runs or n < 2 or not np.isfinite(interval.sd):
        return est, interval, n
    ours, theirs = interval.sd ** 2 / n, paper_sd ** 2 / paper_runs
    se = math.sqrt(ours + theirs)
    df = (ours + theirs) ** 2 / (ours ** 2 / (n - 1) + theirs ** 2 / (paper_runs - 1)) if ours + theirs else np.inf

    def welch(gamma):
        half = stats.t.ppf(1 - np.asarray(gamma, float) / 2, df) * se
        return est - half, est + half
    welch.sd, welch.constant = se * math.sqrt(n), False
    return est, welch, n


def _table_magnitude(diffs: list) -> dict:
    """Per table cell: our mean minus the paper's in paper s.d.s, with its Bonferroni interval over the cells,
    and whether ours is consistent with the paper's mean, above it or below it."""
    per = []
    for name, standardised, interval, sd in diffs:
        low, high = interval(np.array([current_level() / len(diffs)]))
        low, high = float(low[0]) / sd, float(high[0]) / sd
        outcome = "above" if low > 0 else "below" if high < 0 else "as reported"
        per.append({"cell": name, "ours_minus_paper_sd": _finite(standardised), "low": _finite(low),
                    "high": _finite(high), "outcome": outcome})
    counts = {o: sum(c["outcome"] == o for c in per) for o in ("as reported", "above", "below")}
    return {"unit": "our mean - the paper's, in paper s.d.", "cells": per,
            "summary": f"{counts['as reported']} of {len(per)} cells consistent with the paper's mean, "
                       f"{counts['above']} above it, {counts['below']} below it "
                       f"(Bonferroni {_percent(current_level())})"}


def rule_paired_gain(frame, claim, treatment: str, control: str, column: str = "algorithm", **_) -> Outcome:
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        diff = paired_difference(part, treatment, control, claim.metric, column)
        if diff is None:
            continue
        est, interval, n = diff
        base = float(part.loc[part[column] == control, claim.metric].abs().mean())
        cells.append(Cell(cell, est, interval, n, scale=100 / base if claim.relative and base > 0 else 1.0))
        texts.append(f"{cell} {100 * est / base:+.1f}%" if base > 0 else f"{cell} {_fmt(est)}")
    if not cells:
        return _no_runs(f"no runs of both {treatment} and {control}")
    return decide(cells, "; ".join(texts) + f" ({treatment} vs {control}, mean paired gain)",
                  f"mean paired difference {treatment} - {control} in {_metric_name(claim)}")


def _comparison_cells(frame, claim, treatments: dict) -> list[Cell]:
    """One cell per comparison (treatment: control) and cell of the claim: the mean paired gain."""
    return comparison_cells(frame, treatments.items(), claim.metric, claim.cells)


def comparison_cells(frame: pd.DataFrame, pairs, metric: str, by=(), column: str = "algorithm") -> list[Cell]:
    """One :class:`Cell` per (treatment, control) of ``pairs`` and group of the columns ``by``: the mean paired
    difference treatment - control over the runs both have (:func:`paired_difference`: Student's t over the pairs),
    named "treatment vs control/group", ``key`` (treatment, control, *group). The verdict rules' comparisons
    (``all_positive``, ``mostly_positive``) and the pages' (head to head, robustness) are these cells; judged
    together, their intervals come from :func:`set_intervals` (Holm over the cells unless every one is above 0)."""
    cells = []
    for treatment, control in pairs:
        for key, name, part in _groups(frame, by):
            diff = paired_difference(part, treatment, control, metric, column)
            if diff is not None:
                cells.append(Cell(f"{treatment} vs {control}/{name}", *diff, key=(treatment, control, *key)))
    return cells


def rule_all_positive(frame, claim, treatments: dict, **_) -> Outcome:
    """``treatments``: {treatment: control}. "For every" / "consistently": one cell per comparison and cell,
    each the mean paired gain; reproduced only if every one is above 0."""
    cells = _comparison_cells(frame, claim, treatments)
    if not cells:
        return _no_runs("no runs of the compared algorithms")
    ours = "; ".join(f"{c.name} {_fmt(c.margin)}" for c in cells)
    return decide(cells, ours, f"mean paired gain in {_metric_name(claim)}, one cell per comparison")


def rule_mostly_positive(frame, claim, treatments: dict, **_) -> Outcome:
    """``treatments``: {treatment: control}. "Mostly": more than half of the comparisons (each treatment in each
    cell) gain. One summary cell: the q-th largest paired gain, q = m // 2 + 1 of m comparisons, with the q-th
    largest lower end of the comparisons' intervals at level gamma / (m - q + 1) and the q-th largest upper end
    at gamma / q (the q-th largest lower end exceeds the q-th largest gain only if one of the m - q + 1 smallest
    gains is exceeded by its own lower end: a union bound over those; likewise above): above 0 means q
    comparisons gain, below 0 that fewer than q can."""
    parts = _comparison_cells(frame, claim, treatments)
    if not parts:
        return _no_runs("no runs of the compared algorithms")
    cell = majority_cell(parts, "comparisons")
    m, q = len(parts), len(parts) // 2 + 1
    gaining = sum(c.margin > 0 for c in parts)
    ours = (f"gain in {gaining} of {m} comparisons (claimed: most, i.e. at least {q}): "
            + "; ".join(f"{c.name} {_fmt(c.margin)}" for c in parts))
    return decide([cell], ours,
                  f"the {q}-th largest of the {m} comparisons' mean paired gains in {_metric_name(claim)}")


def _winner_margin(part, metric, winners, others, column, sign=1.0, every=False):
    """Cell margin over paired differences ``sign * (w - o)``, or None if a pair is missing: with ``every``,
    the smallest over all winners and others (every winner beats every other); else ``max_w min_o`` (some
    winner beats every other)."""
    diffs = {}
    for w in winners:
        row = {}
        for o in others:
            d = paired_difference(part, w, o, metric, column) if sign > 0 else \
                paired_difference(part, o, w, metric, column)
            if d is None:
                return None
            row[o] = d[:2]
        diffs[w] = row
    if every:
        diffs = {"every": {(w, o): d for w, row in diffs.items() for o, d in row.items()}}
    margin, interval = maxmin_interval(diffs)
    runs = min(len(_paired(part, w, o, metric, column)) for w in winners for o in others)
    return margin, interval, runs


def _ordering(frame, claim, winners_of, column, sign, what, every=False) -> Outcome:
    """The shared body of best / worst / argmax_in / extreme_in: ``winners_of(values)`` names the claimed
    winners among the cell's values of ``column``; the margin is the winners' paired lead over the rest."""
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        values = list(part[column].unique())
        winners = [v for v in winners_of(values) if v in values]
        others = [v for v in values if v not in winners]
        if not winners or not others or (every and len(winners) < len(winners_of(values))):
            continue                     # "each of them is the worst" needs runs of each of them in the cell
        result = _winner_margin(part, claim.metric, winners, others, column, sign, every)
        if result is None:
            continue
        margin, interval, runs = result
        means = part.groupby(column)[claim.metric].mean()
        leader = means.idxmax() if sign > 0 else means.idxmin()
        cells.append(Cell(cell, margin, interval, runs))
        texts.append(f"{cell}: {leader_words(claim.metric, column, leader, sign, len(values))} "
                     f"(margin {_fmt(margin)})")
    if not cells:
        return _no_runs(f"no cell has runs of the claimed {column} and another")
    return decide(cells, "; ".join(texts), what)


def leader_words(metric: str, column: str, leader, sign: float, count: int) -> str:
    """Who leads a cell, in the metric's own direction: "NoRegret KLRank has the lowest K-L cost of 8 methods" (a
    cost, ``neg_kl_cost``, is led by its lowest value), "DSP r = 50 has the highest online NDCG@10 of 5 values"."""
    lower = metric.startswith("neg_")
    place = "highest" if (sign > 0) != lower else "lowest"
    who = name_of(leader) if column == "algorithm" else f"{name_of(column)} = {leader}"
    kind = "method" if column == "algorithm" else "value"
    return f"{who} has the {place} {name_of(metric.removeprefix('neg_'))} of {count} {kind}{'s' * (count != 1)}"


def _metric_name(claim) -> str:
    """The claim's metric in words (a negated cost "negated K-L cost")."""
    return name_of(claim.metric)


def rule_best(frame, claim, target: str, **_) -> Outcome:
    higher = "higher" if not claim.metric.startswith("neg_") else "smaller"
    metric = claim.metric.removeprefix("neg_")
    return _ordering(frame, claim, lambda _: [target], "algorithm", 1.0,
                     f"smallest paired lead of {target} over any other method in {metric} ({higher} is better)")


def rule_worst(frame, claim, targets: list, **_) -> Outcome:
    """Every one of ``targets`` is below every other method (the claim names them all as the worst)."""
    metric = claim.metric.removeprefix("neg_")
    return _ordering(frame, claim, lambda _: list(targets), "algorithm", -1.0,
                     f"smallest paired gap between any other method and any of {', '.join(targets)} in "
                     f"{'-' if claim.metric.startswith('neg_') else ''}{metric} (each of them below every other)",
                     every=True)


def rule_argmax_in(frame, claim, parameter: str, values: list | None = None, around: float | None = None,
                   within: float | None = None, **_) -> Outcome:
    """The best value of ``parameter`` is one of ``values`` (or lies within ``within`` of ``around``)."""
    name = parameter.removeprefix("param:")
    if values is None:
        def inside(present):
            return [v for v in present if abs(float(v) - around) <= within + 1e-12]
        claimed = f"{around:g} ± {within:g}"
    else:
        def inside(present):
            return [v for v in present if v in values]
        claimed = str(values)
    return _ordering(frame, claim, inside, parameter, 1.0,
                     f"best {claim.metric} over {name} in {claimed} minus the best outside (paired)")


def rule_extreme_in(frame, claim, column: str, value: str, direction: str = "larger", **_) -> Outcome:
    sign = 1.0 if direction == "larger" else -1.0
    return _ordering(frame, claim, lambda _: [value], column, sign,
                     f"smallest paired gap by which {column}={value} is {direction} in {claim.metric} than any other")


def rule_increasing(frame, claim, parameter: str, **_) -> Outcome:
    """The metric rises with the parameter: one least-squares slope per run (data set, fold and seed), and a
    t interval over the runs' slopes (a run is the unit that varies; pooling the residuals of all runs would
    count a run-by-parameter interaction as precision)."""
    cells, texts = [], []
    units = [k for k in PAIR_KEYS if k in frame]
    for cell, part in _cells(frame, claim):
        if part[parameter].nunique() < 3:
            continue
        slopes = unit_slopes(part[parameter].astype(float), part[claim.metric],
                             part[units].astype(str).agg("/".join, axis=1))
        slope, interval, n = mean_interval(slopes)
        cells.append(Cell(cell, slope, interval, n))
        texts.append(f"{cell}: slope {_fmt(slope)}")
    name = parameter.removeprefix("param:")
    if not cells:
        return Outcome("fewer than three values", 0, "not testable here", f"{name} needs three or more values")
    return decide(cells, "; ".join(texts) + f" per unit of {name}",
                  f"mean over runs of each run's least-squares slope of {claim.metric} on {name} (positive: rises)")


def rule_flat(frame, claim, parameter: str, tolerance: float, relative: bool = False, **_) -> Outcome:
    """The largest difference between the means at two values of the parameter is at most ``tolerance``
    (a share of the cell's mean with ``relative``)."""
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        values = sorted(part[parameter].unique())
        scale = abs(float(part[claim.metric].mean())) if relative else 1.0
        diffs = [paired_difference(part, a, b, claim.metric, parameter) for i, a in enumerate(values)
                 for b in values[i + 1:]]
        diffs = [(est / scale, _scaled(f, scale)) for est, f, _ in (d for d in diffs if d is not None)]
        if not diffs:
            continue
        margin, interval = tolerance_interval(tolerance, diffs)
        span = tolerance - margin
        cells.append(Cell(cell, margin, interval, len(part) // len(values)))
        share = f" ({_num(100 * span, 2)} % of the mean)" if relative else ""
        texts.append(f"{cell}: range {_num(span * scale)}{share}")
    if not cells:
        return _no_runs("no runs")
    limit = f"{100 * tolerance:g}% of the mean" if relative else f"{tolerance:g}"
    return decide(cells, "; ".join(texts),
                  f"{limit} minus the largest paired difference of the means over {parameter.removeprefix('param:')}")


def _scaled(interval: Interval, scale: float) -> Interval:
    def scaled(gamma):
        lo, hi = interval(gamma)
        return lo / scale, hi / scale
    scaled.sd = getattr(interval, "sd", float("nan")) / scale
    return scaled


def _threshold(frame, claim, threshold: float, at_most: bool) -> Outcome:
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        values = part[claim.metric].to_numpy(float)
        mean, interval, n = computed_value(values, claim) if claim.computed else mean_interval(values)
        est = threshold - mean if at_most else mean - threshold
        cells.append(Cell(cell, est, _shifted(interval, threshold, at_most), n))
        texts.append(f"{cell}: mean {_num(values.mean())}")
    if not cells:
        return _no_runs("no runs")
    side = "threshold minus the mean" if at_most else "the mean minus the threshold"
    claimed = f"{'at most' if at_most else 'at least'} {threshold_text(threshold)}"
    return decide(cells, "; ".join(texts) + f" (claimed: {claimed})",
                  f"{side} of {claim.metric}")


def computed_value(values: np.ndarray, claim: Claim) -> tuple[float, Interval, int]:
    """A deterministic computation (``claim.computed``): its one value, exact (a point at every level)."""
    if np.ptp(values) != 0:
        raise ValueError(f"claim {claim.id}: {claim.metric} is declared computed but differs between runs")
    value = float(values[0])

    def interval(gamma):
        return np.full(np.shape(gamma), value), np.full(np.shape(gamma), value)
    return value, interval, len(values)


def _shifted(interval: Interval, threshold: float, at_most: bool) -> Interval:
    """The interval family of ``threshold - x`` (``at_most``) or ``x - threshold`` from that of x."""
    def shifted(gamma):
        low, high = interval(gamma)
        return (threshold - high, threshold - low) if at_most else (low - threshold, high - threshold)
    shifted.constant, shifted.sd = getattr(interval, "constant", False), getattr(interval, "sd", float("nan"))
    return shifted


def rule_below(frame, claim, threshold: float, **_) -> Outcome:
    return _threshold(frame, claim, threshold, at_most=True)


def rule_above(frame, claim, threshold: float, **_) -> Outcome:
    return _threshold(frame, claim, threshold, at_most=False)


def rule_rate_at_most(frame, claim, threshold: float, **_) -> Outcome:
    """An upper bound's rate (a log-log slope at most ``threshold``): :func:`rule_below`, except that a slope above
    the rate is "inconclusive", never "not reproduced": a bound on the worst case allows any slower growth, and a
    faster growth at a finite horizon contradicts it only through the bound's constants, which the slope ignores."""
    outcome = _threshold(frame, claim, threshold, at_most=True)
    if outcome.verdict == "not reproduced":
        outcome.verdict = "inconclusive"
        outcome.reason += ("; the slope lies above the rate, which does not contradict an upper bound (its "
                           "constants and lower-order terms can dominate at this horizon): inconclusive")
    return outcome


def rule_below_with_control(frame, claim, threshold: float, target: str, controls: list, column: str = "algorithm",
                            **_) -> Outcome:
    """:func:`rule_below` on the ``target``'s runs (selected by ``column``), with the same rule applied to each
    negative control run in the same world (``controls``: run labels, :meth:`RunSpec.label`; methods the claim must
    not hold for). Each control's method, verdict and reading go into the record (``controls``; ``control`` is the
    first). A control that is not "not reproduced" makes the verdict "inconclusive": a rule that does not reject
    the claim's negation cannot tell the claim from it."""
    outcome = _threshold(frame[frame[column] == target], claim, threshold, at_most=True)
    negatives = [(label, _threshold(frame[frame["label"] == label], claim, threshold, at_most=True))
                 for label in controls]
    outcome.controls = [{"method": label, "verdict": negative.verdict, "ours": negative.ours}
                        for label, negative in negatives]
    outcome.control = outcome.controls[0]
    return unless_a_control_passes(outcome)


def unless_a_control_passes(outcome: Outcome) -> Outcome:
    """A decided outcome whose negative controls are not all "not reproduced" under the same rule becomes
    "inconclusive": the rule does not reject the claim's negation, so it cannot tell the claim from it."""
    passing = [c for c in outcome.controls if c["verdict"] != "not reproduced"]
    if passing and outcome.verdict in ("reproduced", "partly", "not reproduced"):
        names = "; ".join(f"{c['method']}: {c['verdict']}, {c['ours']}" for c in passing)
        outcome.verdict = "inconclusive"
        outcome.reason += (f"; the negative control is not rejected by the same rule ({names}), so the check cannot "
                           "tell the claim from its negation")
    return outcome


def rule_equivalent(frame, claim, treatment: str, control: str, tolerance: float, column: str = "variant",
                    **_) -> Outcome:
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        diff = paired_difference(part, treatment, control, claim.metric, column)
        if diff is None:
            continue
        est, interval, n = diff
        margin, tol_interval = tolerance_interval(tolerance, [(est, interval)])
        cells.append(Cell(cell, margin, tol_interval, n))
        texts.append(f"{cell}: difference {_fmt(est)}")
    if not cells:
        return _no_runs(f"no runs of both {treatment} and {control}")
    return decide(cells, "; ".join(texts) + f" ({treatment} - {control})",
                  f"{tolerance:g} minus |mean paired difference| in {claim.metric}")


def rule_closer(frame, claim, treatment: str, near: str, far: str, share: float = 0.5, **_) -> Outcome:
    """The treatment closes more than ``share`` of the gap from ``far`` to ``near``: margin
    (t - far) - share (near - far), paired over runs of one data set, fold and seed (``share`` 0.5: it lies
    nearer ``near`` than ``far``); ``ours`` gives the share of the gap closed."""
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        wide = _side_by_side(part, [treatment, near, far], claim.metric)
        if not {treatment, near, far} <= set(wide.columns):
            continue
        wide = wide.dropna()
        est, interval, n = mean_interval((wide[treatment] - wide[far]) - share * (wide[near] - wide[far]))
        gap = float((wide[near] - wide[far]).mean())
        cells.append(Cell(cell, est, interval, n))
        closed = (float(wide[treatment].mean()) - float(wide[far].mean())) / gap if gap else float("nan")
        texts.append(f"{cell}: closes {closed:.0%} of the gap from {name_of(far)} to {name_of(near)}")
    if not cells:
        return _no_runs(f"no runs of {treatment}, {near} and {far} together")
    return decide(cells, "; ".join(texts) + f" (claimed: more than {share:.0%})",
                  f"({treatment} - {far}) - {share:g} x ({near} - {far}) in {claim.metric}, paired")


def deviation_gaps(treatment, control) -> np.ndarray:
    """Per paired run, |control - its median| - |treatment - its median|: a paired Brown-Forsythe statistic, whose
    mean is above 0 where the control spreads more (robust to skewed and heavy-tailed runs, conservative at few
    runs; Brown and Forsythe 1974)."""
    t, c = np.asarray(treatment, float), np.asarray(control, float)
    return np.abs(c - np.median(c)) - np.abs(t - np.median(t))


def rule_smaller_spread(frame, claim, treatment: str, control: str, column: str = "algorithm", **_) -> Outcome:
    """The runs of ``treatment`` vary less than those of ``control``: margin the mean over paired runs of
    :func:`deviation_gaps`, with its t interval."""
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        pairs = _paired(part, treatment, control, claim.metric, column)
        if pairs.empty:
            continue
        est, interval, n = mean_interval(deviation_gaps(pairs[treatment], pairs[control]))
        cells.append(Cell(cell, est, interval, n))
        texts.append(f"{cell}: s.d. {_num(pairs[treatment].std())} vs {_num(pairs[control].std())}")
    if not cells:
        return _no_runs(f"no runs of both {treatment} and {control}")
    outcome = decide(cells, "; ".join(texts) + f" ({treatment} vs {control})",
                     f"mean over paired runs of |{control} - its median| - |{treatment} - its median| in "
                     f"{claim.metric} (paired Brown-Forsythe)")
    return _spread_power_check(outcome)


SPREAD_RATIO = 0.5        # the spread difference smaller_spread must be able to see: a halved s.d.


def _spread_power_check(outcome: Outcome) -> Outcome:
    """An undecided ``smaller_spread`` claim whose runs could not have seen a halved s.d. (power below
    :data:`POWER` at its fewest runs per cell, :func:`spread_test_power`) is not testable at this many runs; the
    reason gives the runs per cell that would test it."""
    runs = min(c.runs for c in outcome.cells)
    if outcome.verdict != "inconclusive" or runs < 2:
        return outcome
    power = spread_test_power(runs, current_level())
    if power >= POWER:
        return outcome
    enough = runs_to_test_spread(current_level())
    count = f"about {enough:,} runs per cell would" if enough else "no run count up to 400 per cell would"
    return Outcome(outcome.ours, outcome.runs, "not testable here",
                   f"not testable at this many runs: at {runs} runs per cell the paired spread test sees an s.d. "
                   f"halved by the treatment {power:.0%} of the time; {count} see it {POWER:.0%} of the time "
                   f"({outcome.reason})", outcome.cells, enough, what=outcome.what)


@functools.lru_cache(maxsize=256)
def spread_test_power(runs: int, level: float = ALPHA, reps: int = 4000) -> float:
    """The chance that :func:`rule_smaller_spread`'s interval lies above 0 at two-sided ``level`` when the treatment's
    s.d. is :data:`SPREAD_RATIO` times the control's (normal runs, ``runs`` pairs; Monte Carlo, fixed seed)."""
    rng = np.random.default_rng(46)
    control = rng.standard_normal((reps, runs))
    treatment = SPREAD_RATIO * rng.standard_normal((reps, runs))
    gaps = (np.abs(control - np.median(control, axis=1, keepdims=True))
            - np.abs(treatment - np.median(treatment, axis=1, keepdims=True)))
    with np.errstate(divide="ignore", invalid="ignore"):      # (two runs: both gaps equal, no spread)
        t = gaps.mean(1) / (gaps.std(1, ddof=1) / math.sqrt(runs))
    return float(np.mean(t > stats.t.ppf(1 - level / 2, runs - 1)))


def runs_to_test_spread(level: float = ALPHA, most: int = 400) -> int | None:
    """The fewest runs per cell at which :func:`spread_test_power` reaches :data:`POWER` (bisection; None beyond
    ``most``)."""
    if spread_test_power(most, level) < POWER:
        return None
    low, high = 2, most
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if spread_test_power(middle, level) < POWER else (low, middle)
    return high


def rule_not_testable(frame, claim, reason: str, **_) -> Outcome:
    return Outcome("", 0, "not testable here", reason)


def rule_bound_above_trivial(frame, claim, reason: str, ratio=None, column: str | None = None,
                             otherwise_above: float | None = None, **_) -> Outcome:
    """An upper bound that exceeds the trivial bound at the runs' horizon cannot be contradicted by them: "not
    testable here", with the bound over the trivial bound at the longest run's T in the reason: ``ratio(T)``, or the
    smallest value over the runs of the frame's ``column``. Where the bound is below the trivial one and
    ``otherwise_above`` is given, the claim is judged by :func:`rule_above` at that threshold on the runs whose
    bound is below the trivial one (the others cannot contradict it)."""
    horizon = int(frame["rounds_run"].max())
    value = ratio(horizon) if column is None else float(frame[column].min())
    if value <= 1 and otherwise_above is not None:
        tight = frame if column is None else frame[frame[column] <= 1]
        return _threshold(tight, claim, otherwise_above, at_most=False)
    return Outcome(f"bound / trivial bound = {_num(value, 2)} at T = {horizon:,}", 0, "not testable here",
                   f"{reason}; at T = {horizon:,} the bound is {_num(value, 2)} times the trivial bound")


RULES = {"within_sd": rule_within_sd, "paired_gain": rule_paired_gain, "mostly_positive": rule_mostly_positive,
         "all_positive": rule_all_positive,
         "best": rule_best, "worst": rule_worst, "increasing": rule_increasing, "flat": rule_flat,
         "argmax_in": rule_argmax_in, "below": rule_below, "above": rule_above, "extreme_in": rule_extreme_in,
         "below_with_control": rule_below_with_control, "rate_at_most": rule_rate_at_most,
         "bound_above_trivial": rule_bound_above_trivial,
         "equivalent": rule_equivalent, "closer": rule_closer, "smaller_spread": rule_smaller_spread,
         "not_testable": rule_not_testable}


def with_seeds(sizes: dict, seeds: int | None) -> dict:
    """A profile's experiment sizes with every ``seeds`` entry replaced (``olr claims --seeds N``)."""
    if seeds is None:
        return sizes
    if seeds < 1:
        raise ValueError(f"--seeds {seeds} is invalid; expected a whole number of at least 1")
    return {k: (with_seeds(v, seeds) if isinstance(v, dict) else (seeds if k == "seeds" else v))
            for k, v in sizes.items()}


SMALLER = "smaller than reported"


def gain_magnitude(claim: Claim, cells: list[Cell]) -> dict | None:
    """Our interval beside the size the paper reports (``claim.paper_number``, in the paper's units), per
    cell: "as reported" (the paper's number lies in our interval), "smaller" or "larger"; None if the claim
    states no number."""
    if claim.paper_number is None or claim.rule == "within_sd":
        return None
    per = []
    for c in cells:
        paper = claim.paper_number.get(c.name) if isinstance(claim.paper_number, dict) else claim.paper_number
        if paper is None and isinstance(claim.paper_number, dict) and c.name.startswith("pooled over"):
            paper = float(np.mean(list(claim.paper_number.values())))     # the paper's own average over the cells
        if paper is None:
            per.append({"cell": c.name, "ours": _finite(c.margin * c.scale), "low": _finite(c.low * c.scale),
                        "high": _finite(c.high * c.scale), "outcome": "no paper number"})
            continue
        low, high = c.low * c.scale, c.high * c.scale
        outcome = "smaller" if high < paper else "larger" if low > paper else "as reported"
        per.append({"cell": c.name, "paper": float(paper), "ours": _finite(c.margin * c.scale), "low": _finite(low),
                    "high": _finite(high), "outcome": outcome})
    if not any("paper" in c for c in per):
        return None
    outcomes = {c["outcome"] for c in per}
    unit = "% of the control's mean" if claim.relative else _metric_name(claim)
    summary = (f"{outcomes.pop()} in every cell" if len(outcomes) == 1 else
               ", ".join(f"{o} in {sum(c['outcome'] == o for c in per)}"
                         for o in ("smaller", "as reported", "larger", "no paper number")
                         if any(c["outcome"] == o for c in per)))
    return {"unit": unit, "cells": per, "summary": summary,
            "all_smaller": all(c["outcome"] == "smaller" for c in per)}     # a cell without a number is not smaller


def largest_allowed(cells: list[Cell], claim: Claim) -> str:
    """The largest margin the runs still allow (the highest upper end among the cells), in the margin's units
    and, for a gain in %, in the paper's."""
    top = max(cells, key=lambda c: c.high)
    if not np.isfinite(top.high):
        return f"the runs set no upper limit on the margin (cell {top.name}: its interval is open above)"
    text = f"the runs allow a margin of at most {_fmt(top.high)} (cell {top.name})"
    if claim.relative and top.scale != 1.0:
        text += f", a gain of at most {number_text(top.high * top.scale, sign=True, digits=2)} %"
    return text


def _judge_outcome(claim: Claim, frame: pd.DataFrame | None, config: str, extra: dict) -> Outcome:
    if claim.rule == "not_testable":
        return rule_not_testable(None, claim, **claim.args)
    if frame is None or frame.empty:
        return Outcome("", 0, "not testable here", extra.get("missing", "no runs for this claim in this build"))
    if "config" in frame:
        frame = frame[frame["config"] == config]
    if claim.horizon and "rounds_run" in frame and not frame.empty:
        at = frame["rounds_run"] >= claim.horizon if claim.by_horizon else frame["rounds_run"] == claim.horizon
        if not at.any():
            ran = ", ".join(f"{r:,}" for r in sorted(frame["rounds_run"].unique()))
            return Outcome(f"runs of {ran} rounds", 0, "not testable here",
                           f"not testable at this horizon: the paper states the claim "
                           f"{'by' if claim.by_horizon else 'at'} {claim.horizon:,} rounds and this build ran {ran}; "
                           f"`olr claims {claim.paper} --profile paper` runs the paper's horizon")
        frame = frame[at]
    extra = {k: v for k, v in extra.items() if k != "missing"}
    return with_estimand(claim, RULES[claim.rule](_select(frame, claim.where), claim, **claim.args, **extra))


def _sized(claim: Claim, outcome: Outcome) -> tuple[str, dict | None]:
    """The verdict with the size beside it: "smaller than reported" where the sign is undecided somewhere
    (inconclusive or partly) and every cell's interval lies below the paper's number; and the magnitude."""
    if outcome.verdict == "not testable here":
        return outcome.verdict, None
    magnitude = outcome.magnitude or gain_magnitude(claim, outcome.cells)
    smaller = bool(magnitude and magnitude.get("all_smaller")) and outcome.verdict in ("inconclusive", "partly")
    return (SMALLER if smaller else outcome.verdict), magnitude


def sensitivity(claim: Claim, frame: pd.DataFrame | None, config: str, extra: dict) -> list[dict]:
    """Each threshold of ours that the paper does not state (``claim.unstated``), with the verdict at half and
    at double its distance from its base."""
    rows = []
    for name, unstated in claim.unstated.items():
        value = claim.args[name]
        row = {"name": name, "what": unstated.what, "value": value, "base": unstated.base}
        for label, factor in (("half", 0.5), ("double", 2.0)):
            changed = float(f"{unstated.base + factor * (value - unstated.base):.10g}")   # (1e-12 halves to 5e-13)
            variant = replace(claim, args={**claim.args, name: changed}, unstated={})
            outcome = _judge_outcome(variant, frame, config, extra)
            row[label] = {"value": changed, "verdict": _sized(variant, outcome)[0]}
        rows.append(row)
    return rows


def judge(claim: Claim, frame: pd.DataFrame | None, config: str, level: float | None = None, **extra) -> dict:
    """:func:`judged` at two-sided ``level``: a sequential look's share of the error (None: the level in force,
    :data:`ALPHA` outside :func:`at_level`); every interval, verdict and power calculation of the record uses it,
    and a record judged below :data:`ALPHA` carries it as ``level``."""
    with at_level(level):
        record = judged(claim, frame, config, **extra)
        if current_level() != ALPHA:
            record["level"] = current_level()
        return record


def judged(claim: Claim, frame: pd.DataFrame | None, config: str, **extra) -> dict:
    """The claim's record: paper, claim, config, config_role (the claim's first configuration is its headline,
    the others sensitivity analyses), paper_value, ours, runs, rule, verdict, reason, cells (each {cell, margin,
    ci_low, ci_high, runs}), magnitude (where the paper states a number), thresholds (the unstated ones, with
    their sensitivity verdicts) and, on inconclusive records, runs_needed and largest_allowed.

    "smaller than reported": the sign of the claim is not decided above 0 everywhere (inconclusive or partly),
    but in every cell our interval lies below the size the paper reports, a decided outcome."""
    if claim.rule not in RULES:
        raise ValueError(f"claim {claim.id}: unknown rule {claim.rule!r}; valid: {', '.join(RULES)}")
    if claim.relative and claim.rule != "paired_gain":
        raise ValueError(f"claim {claim.id}: relative=True (a paper number in % of the control) needs the paired_gain "
                         f"rule, not {claim.rule!r}")
    outcome = _judge_outcome(claim, frame, config, extra)
    record = {"paper": claim.paper, "id": claim.id, "source": claim.source, "claim": claim.text, "config": config,
              "config_role": "headline" if config == claim.configs[0] else "sensitivity",
              "paper_value": claim.paper_value, "ours": outcome.ours, "runs": outcome.runs, "rule": claim.rule,
              "verdict": outcome.verdict, "reason": outcome.reason}
    record["estimand"], record["estimand_reason"] = estimand_of(claim)
    if outcome.verdict == "not testable here":
        if outcome.cells and outcome.runs_needed:
            record["runs_to_test"] = outcome.runs_needed          # (a rule with too little power at its runs)
        return record
    record["cells"] = [c.record() for c in outcome.cells]
    if outcome.per_cell:
        record["per_cell"] = [c.record() for c in outcome.per_cell]
    if outcome.control is not None:
        record["control"] = outcome.control
    if outcome.controls:
        record["controls"] = outcome.controls
    if claim.paper_number is not None or claim.rule == "within_sd":
        record["paper_number"] = claim.paper_number if claim.rule != "within_sd" else "the paper's table"
    record["verdict"], magnitude = _sized(claim, outcome)
    if magnitude:
        record["magnitude"] = {k: v for k, v in magnitude.items() if k != "all_smaller"}
        if record["verdict"] == SMALLER:
            record["reason"] += (f"; in every cell our interval lies below the paper's number "
                                 f"({magnitude['summary']}, in {magnitude['unit']})")
    if outcome.verdict == "inconclusive":
        record["runs_needed"] = outcome.runs_needed
        if outcome.not_estimable:
            record["runs_needed_not_estimable"] = outcome.not_estimable
        record["largest_allowed"] = largest_allowed(outcome.cells, claim)
        record["reason"] += f"; {record['largest_allowed']}"
    if claim.unstated:
        record["thresholds"] = sensitivity(claim, frame, config, extra)
    return record
