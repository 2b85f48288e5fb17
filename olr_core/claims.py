"""Does it reproduce? Claims of a paper's experiments as data, and verdicts computed by one stated rule.

A :class:`Claim` names what a paper reports (a table's cells, an ordering, a gain, a trend),
the experiment of ours that tests it, the metric, and the *rule* that measures it. Every rule
reduces each **cell** of the claim (a data set, a user, a data set and user, ...) to a
**margin**: a signed number, positive where the claim holds in that cell, with a confidence
interval computed from the runs. One function, :func:`verdict_of`, turns the intervals into a
verdict, whatever the rule:

- **reproduced**: the interval lies above 0 in every cell;
- **not reproduced**: below 0 in at least one cell (the runs contradict the claim there) and
  above 0 in none;
- **partly**: above 0 in some cells but not in all (the others below 0 or undecided);
- **inconclusive**: above 0 in no cell and below 0 in none; the record says roughly how many
  runs per cell would decide the closest cell (``runs_needed``), from its margin and spread;
- **not testable here**: the claim needs data or recordings this build does not have.

The intervals are two-sided, 95 %, and Holm-corrected over the cells of a claim: the cell
with the i-th smallest p-value (of m) gets the level that Holm's step-down procedure gives it,
``1 - 0.05 p_i / p_i^Holm`` (``1 - 0.05 / (m - i + 1)`` while the procedure has not stopped), so a
cell's interval excludes 0 exactly when Holm rejects "margin = 0" there. A cell's p-value is the
smallest ``gamma`` at which its ``1 - gamma`` interval excludes 0 (the interval's dual test).

The margins, rule by rule (``d`` a paired difference over runs sharing data set, fold and seed;
intervals by Student's t, on the pairs where the runs are paired):

- ``paired_gain``: mean of d(treatment - control).
- ``best`` / ``worst`` / ``argmax_in`` / ``extreme_in``: the smallest paired difference between
  the claimed winner and any other (for ``worst``: any other minus the lowest target; for
  ``argmax_in``: the best value in the set minus the best outside). Its interval: the lower end
  is the smallest lower end of those differences (an intersection-union test: no correction
  needed), the upper end the smallest upper end at a Bonferroni-corrected level over the others
  (to show a failure one difference must be below 0). With several possible winners the
  corrections swap roles.
- ``equivalent`` / ``flat`` / ``within_sd``: tolerance minus |difference| (for ``flat``: minus the
  largest difference between any two values of the parameter; for ``within_sd``: k paper s.d.
  minus |ours - paper|); the interval is the image of the differences' intervals.
- ``increasing``: the least-squares slope of the metric on the parameter, within runs of one
  data set, fold and seed (t interval with the residual degrees of freedom).
- ``below`` / ``above``: threshold minus the mean (mean minus threshold). A measured log-log
  regret slope against a theorem's rate is judged with ``below`` and a threshold of the rate plus
  ``RATE_TOLERANCE``: a slope whose interval lies below it is consistent with the upper bound.
- ``mostly_positive``: one cell, the mean paired gain averaged over all the compared pairs and cells.
- ``closer``: (method - far) - (near - method), paired: the method lies nearer one reference than another.
- ``smaller_spread``: the control's standard deviation over runs minus the treatment's, with a paired
  percentile bootstrap interval (a spread has no t interval).
- ``not_testable``: no margin; the reason says why.

A difference that is the same in every run (a quantity the seed does not change) is exact: its
interval is a point. Fewer than two runs give an unbounded interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive", "not testable here")
ALPHA = 0.05
MIN_PAIRS = 5            # significance marks on the pages are never computed from fewer paired runs
RATE_TOLERANCE = 0.1     # a measured log-log slope up to a theorem's rate + 0.1 counts as that rate
PAIR_KEYS = ["dataset", "fold", "seed"]
GAMMAS = np.geomspace(1e-12, 1.0, 481)     # the levels on which a cell's p-value is located

# The verdict rule and each rule's margin in words: the verdicts page prints these, so the page says what the code does.
VERDICT_RULE = {
    "reproduced": "the margin's interval lies above 0 in every cell",
    "partly": "the interval lies above 0 in some cells but not in all (the others below 0 or undecided)",
    "not reproduced": "the interval lies below 0 in at least one cell and above 0 in none; the reason names the "
                      "cause shown by a run (another configuration with another verdict) or says the cause was "
                      "not found and what was tried",
    "inconclusive": "the interval lies above 0 in no cell and below 0 in none; the reason says roughly how many "
                    "runs per cell would decide the closest cell, and the command that runs them",
    "not testable here": "the claim needs data or recordings this build does not have, or is true by "
                         "construction; the reason says which",
}
MARGINS = {
    "paired_gain": "mean paired difference treatment - control",
    "best": "smallest paired lead of the claimed best method over any other",
    "worst": "smallest paired gap between any other method and the lowest of the claimed worst ones",
    "argmax_in": "best mean over the claimed parameter values minus the best mean outside them (paired)",
    "extreme_in": "smallest paired gap by which the named value exceeds (or stays below) every other",
    "increasing": "least-squares slope of the metric on the parameter, within runs of one seed",
    "flat": "tolerance minus the largest paired difference between the means at two parameter values",
    "equivalent": "tolerance minus |mean paired difference|",
    "within_sd": "k paper standard deviations minus |our mean - the paper's mean|",
    "below": "threshold minus the mean",
    "above": "the mean minus the threshold",
    "mostly_positive": "paired gain averaged over all compared pairs and cells (one cell)",
    "closer": "paired (method - far) - (near - method): positive where the method lies nearer the near reference",
    "smaller_spread": "standard deviation over runs of the control minus that of the treatment (paired bootstrap)",
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
    configs: tuple = ("text",)      # the configurations the claim is judged in


@dataclass
class Cell:
    """A cell's margin (positive: the claim holds there), its interval family and run count."""

    name: str
    margin: float
    interval: Interval
    runs: int
    low: float = float("nan")
    high: float = float("nan")

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


def _finite(x: float):
    return float(x) if np.isfinite(x) else (None if np.isnan(x) else float(x))


# -- intervals -----------------------------------------------------------------------------------------

def mean_interval(values) -> tuple[float, Interval, int]:
    """The mean of ``values`` and its Student-t interval family (a point if every value is the same)."""
    x = np.asarray(values, float)
    if len(x) and not np.isfinite(x).all():
        return _unbounded_mean(x)
    n, mean = len(x), float(np.mean(x)) if len(x) else float("nan")
    se = float(np.std(x, ddof=1) / math.sqrt(n)) if n >= 2 else float("inf")

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        if n < 2:
            return np.full(gamma.shape, -np.inf), np.full(gamma.shape, np.inf)
        half = stats.t.ppf(1 - gamma / 2, n - 1) * se if se > 0 else np.zeros(gamma.shape)
        return mean - half, mean + half
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

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        low = np.max([np.min([f(gamma / n_t)[0] for _, f in row.values()], axis=0) for row in diffs.values()], axis=0)
        high = np.max([np.min([f(gamma / n_o)[1] for _, f in row.values()], axis=0) for row in diffs.values()], axis=0)
        return low, high
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
    return margin, interval


def slope_interval(x, y, units) -> tuple[float, Interval, int]:
    """Least-squares slope of y on x within units (each unit's own mean removed), its t interval, and the
    number of units (runs)."""
    frame = pd.DataFrame({"x": np.asarray(x, float), "y": np.asarray(y, float), "u": list(units)})
    xc = frame["x"] - frame.groupby("u")["x"].transform("mean")
    yc = frame["y"] - frame.groupby("u")["y"].transform("mean")
    sxx = float((xc ** 2).sum())
    slope = float((xc * yc).sum() / sxx) if sxx > 0 else float("nan")
    dof = len(frame) - frame["u"].nunique() - 1
    resid = yc - slope * xc
    se = math.sqrt(float((resid ** 2).sum()) / dof / sxx) if dof > 0 and sxx > 0 else float("inf")

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        if not np.isfinite(se):
            return np.full(gamma.shape, -np.inf), np.full(gamma.shape, np.inf)
        half = stats.t.ppf(1 - gamma / 2, dof) * se if se > 0 else np.zeros(gamma.shape)
        return slope - half, slope + half
    return slope, interval, frame["u"].nunique()


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
    """Set each cell's interval at its Holm level (see the module docstring)."""
    if not cells:
        return cells
    p = np.array([p_value(c) for c in cells])
    adjusted = holm_adjusted(p)
    for cell, raw, adj in zip(cells, p, adjusted):
        gamma = ALPHA * raw / adj if adj > 0 else ALPHA / len(cells)
        low, high = cell.interval(np.array([min(gamma, 1.0)]))
        cell.low, cell.high = float(low[0]), float(high[0])
    return cells


def runs_needed(cells: list[Cell]) -> int | None:
    """Roughly how many runs per cell would decide the closest undecided cell: the interval's side towards 0
    shrinks as 1/sqrt(runs) until it no longer reaches 0. None if no cell has a margin and a finite spread."""
    needs = []
    for c in cells:
        side = c.margin - c.low if c.margin > 0 else c.high - c.margin
        if c.low <= 0 <= c.high and np.isfinite(side) and c.margin != 0 and np.isfinite(c.margin):
            needs.append(max(c.runs + 1, math.ceil(c.runs * (side / abs(c.margin)) ** 2)))
    return min(needs) if needs else None


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
    holm_intervals(cells)
    verdict = verdict_of(cells)
    above = sum(c.low > 0 for c in cells)
    below = sum(c.high < 0 for c in cells)
    reason = (f"margin: {what}; 95 % interval (Holm over {len(cells)} cell{'s' * (len(cells) > 1)}) "
              f"above 0 in {above}, below 0 in {below}, undecided in {len(cells) - above - below}")
    needed = runs_needed(cells) if verdict == "inconclusive" else None
    if verdict == "inconclusive":
        most = max(c.runs for c in cells)
        if most < 2:
            needed = 3
            reason += "; one run per cell shows no spread: at least 3 runs per cell are needed to judge it"
        else:
            reason += (f"; about {needed} runs per cell (now {most}) would decide the closest cell" if needed else
                       "; the runs show no margin to extrapolate from")
    return Outcome(ours, sum(c.runs for c in cells), verdict, reason, cells, needed)


# -- cells and pairs ---------------------------------------------------------------------------------

def _select(frame: pd.DataFrame, where: dict) -> pd.DataFrame:
    for column, value in where.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        frame = frame[frame[column].isin(values)]
    return frame


def _cells(frame: pd.DataFrame, claim: Claim):
    columns = [c for c in claim.cells if c in frame]
    if not columns:
        yield "all", frame
        return
    for key, part in frame.groupby(columns, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield "/".join(str(k) for k in key), part


def _paired(part: pd.DataFrame, a, b, metric: str, column: str = "algorithm") -> pd.DataFrame:
    keys = [k for k in PAIR_KEYS if k in part]
    wide = part[part[column].isin([a, b])].pivot_table(index=keys, columns=column, values=metric)
    return wide.dropna() if a in wide and b in wide else pd.DataFrame(columns=[a, b])


def paired_difference(part: pd.DataFrame, a, b, metric: str, column: str = "algorithm"):
    """(estimate, interval, pairs) of the mean paired difference a - b; None without a pair."""
    pairs = _paired(part, a, b, metric, column)
    if pairs.empty:
        return None
    return mean_interval(pairs[a].to_numpy(float) - pairs[b].to_numpy(float))


def paired_test(x: np.ndarray, y: np.ndarray) -> float:
    """p-value of a paired t-test of x against y for the pages' significance marks; NaN below ``MIN_PAIRS``
    pairs. A difference that is the same in every run is exact: p = 0 when it is not zero, 1 when it is."""
    d = np.asarray(x, float) - np.asarray(y, float)
    if len(d) < MIN_PAIRS:
        return float("nan")
    if np.ptp(d) == 0:
        return 0.0 if d[0] != 0 else 1.0
    return float(stats.ttest_rel(x, y).pvalue)


def _fmt(x: float) -> str:
    return f"{x:+.3g}" if np.isfinite(x) else "n/a"


def _no_runs(what: str) -> Outcome:
    return Outcome("no runs", 0, "not testable here", what)


# -- the rules ---------------------------------------------------------------------------------------

def rule_within_sd(frame, claim, paper_cells: pd.DataFrame, k: float = 1.0, **_) -> Outcome:
    """``paper_cells``: columns of the cell plus algorithm, paper_mean, paper_sd. Margin per cell:
    k paper s.d. - |our mean - paper mean|."""
    keys = [c for c in claim.cells if c in frame] + ["algorithm"]
    merged = frame.merge(paper_cells, on=keys, how="inner")
    if merged.empty:
        return Outcome("no run matches a cell of the paper", 0, "not testable here", "no overlapping cells")
    cells, texts = [], []
    for key, part in merged.groupby(keys, sort=False):
        name = "/".join(str(v) for v in key)
        paper_mean, paper_sd = float(part["paper_mean"].iloc[0]), float(part["paper_sd"].iloc[0])
        est, interval, n = mean_interval(part[claim.metric].to_numpy(float) - paper_mean)
        margin, tol_interval = tolerance_interval(k * paper_sd, [(est, interval)])
        cells.append(Cell(name, margin, tol_interval, n))
        texts.append((abs(est) / paper_sd, f"{name} {paper_mean + est:.3g} vs {paper_mean:.3g}±{paper_sd:.2g}"))
    inside = sum(c.margin >= 0 for c in cells)
    worst = [t for _, t in sorted(texts, reverse=True)[:3]]
    ours = f"{inside} of {len(cells)} cells' means within {k:g} paper s.d.; farthest: {', '.join(worst)}"
    return decide(cells, ours, f"{k:g} paper s.d. minus |our mean - paper mean|")


def rule_paired_gain(frame, claim, treatment: str, control: str, column: str = "algorithm", **_) -> Outcome:
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        diff = paired_difference(part, treatment, control, claim.metric, column)
        if diff is None:
            continue
        est, interval, n = diff
        base = float(part.loc[part[column] == control, claim.metric].abs().mean())
        cells.append(Cell(cell, est, interval, n))
        texts.append(f"{cell} {100 * est / base:+.1f}%" if base > 0 else f"{cell} {est:+.3g}")
    if not cells:
        return _no_runs(f"no runs of both {treatment} and {control}")
    return decide(cells, "; ".join(texts) + f" ({treatment} vs {control}, mean paired gain)",
                  f"mean paired difference {treatment} - {control} in {_metric_name(claim)}")


def rule_mostly_positive(frame, claim, treatments: dict, **_) -> Outcome:
    """``treatments``: {treatment: control}. One cell: per run (data set, fold, seed), the paired gain
    averaged over every compared pair and cell."""
    gains, texts = [], []
    for treatment, control in treatments.items():
        for cell, part in _cells(frame, claim):
            pairs = _paired(part, treatment, control, claim.metric)
            if pairs.empty:
                continue
            gain = (pairs[treatment] - pairs[control]).rename("gain").reset_index()
            gains.append(gain)
            texts.append((treatment, cell, float(gain["gain"].mean())))
    if not gains:
        return _no_runs("no runs of the compared algorithms")
    keys = [k for k in PAIR_KEYS if k in gains[0]]
    per_run = pd.concat(gains).groupby(keys)["gain"].mean()
    est, interval, n = mean_interval(per_run.to_numpy())
    positive = sum(mean > 0 for *_, mean in texts)
    ours = (f"mean gain positive in {positive} of {len(texts)} comparisons: "
            + "; ".join(f"{t}/{cell} {mean:+.3g}" for t, cell, mean in texts))
    return decide([Cell("all comparisons", est, interval, n)], ours,
                  f"the paired gain in {_metric_name(claim)} averaged over all comparisons")


def _winner_margin(part, metric, winners, others, column, sign=1.0):
    """Cell margin ``max_w min_o sign * (w - o)`` over paired differences, or None if a pair is missing."""
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
    margin, interval = maxmin_interval(diffs)
    runs = min(len(_paired(part, w, o, metric, column)) for w in winners for o in others)
    return margin, interval, runs


def _ordering(frame, claim, winners_of, column, sign, what) -> Outcome:
    """The shared body of best / worst / argmax_in / extreme_in: ``winners_of(values)`` names the claimed
    winners among the cell's values of ``column``; the margin is the winners' paired lead over the rest."""
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        values = list(part[column].unique())
        winners = [v for v in winners_of(values) if v in values]
        others = [v for v in values if v not in winners]
        if not winners or not others:
            continue
        result = _winner_margin(part, claim.metric, winners, others, column, sign)
        if result is None:
            continue
        margin, interval, runs = result
        means = part.groupby(column)[claim.metric].mean()
        leader = means.idxmax() if sign > 0 else means.idxmin()
        cells.append(Cell(cell, margin, interval, runs))
        place = "highest" if sign > 0 else "lowest"
        texts.append(f"{cell}: {place} {leader} (margin {_fmt(margin)})")
    if not cells:
        return _no_runs(f"no cell has runs of the claimed {column} and another")
    return decide(cells, "; ".join(texts), what)


def _metric_name(claim) -> str:
    return claim.metric.replace("neg_", "-").replace("param:", "")


def rule_best(frame, claim, target: str, **_) -> Outcome:
    higher = "higher" if not claim.metric.startswith("neg_") else "smaller"
    metric = claim.metric.removeprefix("neg_")
    return _ordering(frame, claim, lambda _: [target], "algorithm", 1.0,
                     f"smallest paired lead of {target} over any other method in {metric} ({higher} is better)")


def rule_worst(frame, claim, targets: list, **_) -> Outcome:
    metric = claim.metric.removeprefix("neg_")
    return _ordering(frame, claim, lambda _: targets, "algorithm", -1.0,
                     f"smallest paired gap between any other method and the lowest of {', '.join(targets)} in "
                     f"{'-' if claim.metric.startswith('neg_') else ''}{metric}")


def rule_argmax_in(frame, claim, parameter: str, values: list, **_) -> Outcome:
    name = parameter.removeprefix("param:")
    return _ordering(frame, claim, lambda present: [v for v in present if v in values], parameter, 1.0,
                     f"best {claim.metric} over {name} in {values} minus the best outside (paired)")


def rule_extreme_in(frame, claim, column: str, value: str, direction: str = "larger", **_) -> Outcome:
    sign = 1.0 if direction == "larger" else -1.0
    return _ordering(frame, claim, lambda _: [value], column, sign,
                     f"smallest paired gap by which {column}={value} is {direction} in {claim.metric} than any other")


def rule_increasing(frame, claim, parameter: str, **_) -> Outcome:
    cells, texts = [], []
    units = [k for k in PAIR_KEYS if k in frame]
    for cell, part in _cells(frame, claim):
        if part[parameter].nunique() < 3:
            continue
        slope, interval, n = slope_interval(part[parameter].astype(float), part[claim.metric],
                                            part[units].astype(str).agg("/".join, axis=1))
        cells.append(Cell(cell, slope, interval, n))
        texts.append(f"{cell}: slope {slope:+.3g}")
    name = parameter.removeprefix("param:")
    if not cells:
        return Outcome("fewer than three values", 0, "not testable here", f"{name} needs three or more values")
    return decide(cells, "; ".join(texts) + f" per unit of {name}",
                  f"least-squares slope of {claim.metric} on {name} within runs of one seed (positive: rises)")


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
        texts.append(f"{cell}: range {span * scale:.3g}" + (f" ({100 * span:.1f}% of the mean)" if relative else ""))
    if not cells:
        return _no_runs("no runs")
    limit = f"{100 * tolerance:g}% of the mean" if relative else f"{tolerance:g}"
    return decide(cells, "; ".join(texts),
                  f"{limit} minus the largest paired difference of the means over {parameter.removeprefix('param:')}")


def _scaled(interval: Interval, scale: float) -> Interval:
    def scaled(gamma):
        lo, hi = interval(gamma)
        return lo / scale, hi / scale
    return scaled


def _threshold(frame, claim, threshold: float, at_most: bool) -> Outcome:
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        values = part[claim.metric].to_numpy(float)
        est, interval, n = mean_interval(threshold - values if at_most else values - threshold)
        cells.append(Cell(cell, est, interval, n))
        texts.append(f"{cell}: mean {values.mean():.4g}")
    if not cells:
        return _no_runs("no runs")
    side = "threshold minus the mean" if at_most else "the mean minus the threshold"
    return decide(cells, "; ".join(texts) + f" (claimed: {'at most' if at_most else 'at least'} {threshold:.3g})",
                  f"{side} of {claim.metric}")


def rule_below(frame, claim, threshold: float, **_) -> Outcome:
    return _threshold(frame, claim, threshold, at_most=True)


def rule_above(frame, claim, threshold: float, **_) -> Outcome:
    return _threshold(frame, claim, threshold, at_most=False)


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
        texts.append(f"{cell}: difference {est:+.3g}")
    if not cells:
        return _no_runs(f"no runs of both {treatment} and {control}")
    return decide(cells, "; ".join(texts) + f" ({treatment} - {control})",
                  f"{tolerance:g} minus |mean paired difference| in {claim.metric}")


def rule_closer(frame, claim, treatment: str, near: str, far: str, **_) -> Outcome:
    """The treatment's mean lies nearer ``near``'s than ``far``'s: margin (t - far) - (near - t) = 2t - near - far,
    paired over runs of one data set, fold and seed; ``ours`` gives the share of the far-near gap closed."""
    cells, texts = [], []
    keys = [k for k in PAIR_KEYS if k in frame]
    for cell, part in _cells(frame, claim):
        wide = part[part["algorithm"].isin([treatment, near, far])].pivot_table(index=keys, columns="algorithm",
                                                                               values=claim.metric)
        if not {treatment, near, far} <= set(wide.columns):
            continue
        wide = wide.dropna()
        est, interval, n = mean_interval(2 * wide[treatment] - wide[near] - wide[far])
        gap = float((wide[near] - wide[far]).mean())
        cells.append(Cell(cell, est, interval, n))
        closed = (float(wide[treatment].mean()) - float(wide[far].mean())) / gap if gap else float("nan")
        texts.append(f"{cell}: closes {closed:.0%} of the {far}-{near} gap")
    if not cells:
        return _no_runs(f"no runs of {treatment}, {near} and {far} together")
    return decide(cells, "; ".join(texts), f"({treatment} - {far}) - ({near} - {treatment}) in {claim.metric}, paired")


def bootstrap_interval(a, b, statistic, resamples: int = 1999) -> tuple[float, Interval, int]:
    """``statistic(a, b)`` over paired samples and its percentile bootstrap interval family (resampling the
    pairs, scipy.stats.bootstrap, fixed seed); fewer than 3 pairs give an unbounded interval."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    estimate = float(statistic(a, b))
    if len(a) < 3:
        return estimate, lambda g: (np.full(np.shape(g), -np.inf), np.full(np.shape(g), np.inf)), len(a)
    result = stats.bootstrap((a, b), statistic, paired=True, vectorized=False, n_resamples=resamples,
                             method="percentile", random_state=0)
    draws = np.sort(result.bootstrap_distribution)

    def interval(gamma):
        gamma = np.asarray(gamma, float)
        return np.quantile(draws, gamma / 2), np.quantile(draws, 1 - gamma / 2)
    return estimate, interval, len(a)


def rule_smaller_spread(frame, claim, treatment: str, control: str, column: str = "algorithm", **_) -> Outcome:
    """The runs of ``treatment`` vary less than those of ``control`` (sample standard deviations, paired runs)."""
    cells, texts = [], []
    for cell, part in _cells(frame, claim):
        pairs = _paired(part, treatment, control, claim.metric, column)
        if pairs.empty:
            continue
        est, interval, n = bootstrap_interval(pairs[treatment], pairs[control],
                                              lambda t, c: np.std(c, ddof=1) - np.std(t, ddof=1))
        cells.append(Cell(cell, est, interval, n))
        texts.append(f"{cell}: s.d. {pairs[treatment].std():.3g} vs {pairs[control].std():.3g}")
    if not cells:
        return _no_runs(f"no runs of both {treatment} and {control}")
    return decide(cells, "; ".join(texts) + f" ({treatment} vs {control})",
                  f"s.d. of {control} minus s.d. of {treatment} in {claim.metric} over paired runs (bootstrap)")


def rule_not_testable(frame, claim, reason: str, **_) -> Outcome:
    return Outcome("", 0, "not testable here", reason)


RULES = {"within_sd": rule_within_sd, "paired_gain": rule_paired_gain, "mostly_positive": rule_mostly_positive,
         "best": rule_best, "worst": rule_worst, "increasing": rule_increasing, "flat": rule_flat,
         "argmax_in": rule_argmax_in, "below": rule_below, "above": rule_above, "extreme_in": rule_extreme_in,
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


def judge(claim: Claim, frame: pd.DataFrame | None, config: str, **extra) -> dict:
    """The claim's record: paper, claim, config, paper_value, ours, runs, rule, verdict, reason, cells
    (each {cell, margin, ci_low, ci_high, runs}) and, on inconclusive records, runs_needed."""
    if claim.rule not in RULES:
        raise ValueError(f"claim {claim.id}: unknown rule {claim.rule!r}; valid: {', '.join(RULES)}")
    if claim.rule == "not_testable":
        outcome = rule_not_testable(None, claim, **claim.args)
    elif frame is None or frame.empty:
        outcome = Outcome("", 0, "not testable here", extra.pop("missing", "no runs for this claim in this build"))
    else:
        if "config" in frame:
            frame = frame[frame["config"] == config]
        outcome = RULES[claim.rule](_select(frame, claim.where), claim, **claim.args, **extra)
    record = {"paper": claim.paper, "id": claim.id, "source": claim.source, "claim": claim.text, "config": config,
              "paper_value": claim.paper_value, "ours": outcome.ours, "runs": outcome.runs, "rule": claim.rule,
              "verdict": outcome.verdict, "reason": outcome.reason}
    if outcome.verdict != "not testable here":
        record["cells"] = [c.record() for c in outcome.cells]
    if outcome.verdict == "inconclusive":
        record["runs_needed"] = outcome.runs_needed
    return record
