"""Does it reproduce? Claims of a paper's experiments as data, and verdicts computed by stated rules.

A :class:`Claim` names what a paper reports (a table's cells, an ordering, a gain, a trend),
the experiment of ours that tests it, the metric, and the *rule* that turns our runs into a
verdict. Rules are implemented once, here, and each returns an :class:`Outcome`: what we
measured (``ours``), how many runs it rests on, the verdict and the reason.

Verdicts: ``reproduced``, ``partly``, ``not reproduced``, ``not testable here``. The rules:

- ``within_sd``: each cell's mean is within ``k`` (default 1) of the paper's standard
  deviations of the paper's mean. All cells: reproduced; at least half: partly; else not.
- ``paired_gain``: the treatment beats the control (sign of the mean paired difference over
  runs sharing data, fold and seed) in each cell, significant at 5% by a paired t-test.
  Same sign and significant everywhere: reproduced; the same sign everywhere but not
  always significant (or fewer than 5 pairs, too few for the test): partly; a cell with the
  opposite sign: not reproduced.
- ``mostly_positive``: the mean paired gain is positive in at least half of the cells.
- ``best``: the target has the highest mean in every cell (reproduced), in some (partly),
  in none (not reproduced); significance against the runner-up is reported.
- ``worst``: the lowest mean of every cell belongs to one of the targets.
- ``increasing``: the mean rises with a parameter (Spearman rho > 0) in every cell.
- ``flat``: the means over a parameter's values stay within ``tolerance`` in every cell.
- ``argmax_in``: the parameter value with the best mean lies in the stated set in every cell.
- ``below``: the metric's mean is at most ``threshold`` in every cell.
- ``extreme_in``: the metric's mean is larger (or smaller) for the named value than for every other.
- ``equivalent``: the mean paired difference is within ``tolerance`` in every cell.
- ``not_testable``: the claim cannot be tested with this book's data; the reason says why.

Significance marks and t-tests are never computed from fewer than ``MIN_PAIRS`` paired runs.
A claimed regret rate T^a is judged with ``below`` on the measured log-log slope, with the
threshold a + ``RATE_TOLERANCE`` (finite horizons and few runs make the slope noisy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable here")
MIN_PAIRS = 5
RATE_TOLERANCE = 0.1     # a measured log-log slope up to a theorem's rate + 0.1 counts as that rate
PAIR_KEYS = ["dataset", "fold", "seed"]


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
class Outcome:
    ours: str
    runs: int
    verdict: str
    reason: str


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


def _paired(part: pd.DataFrame, a: str, b: str, metric: str, column: str = "algorithm") -> pd.DataFrame:
    keys = [k for k in PAIR_KEYS if k in part]
    wide = part[part[column].isin([a, b])].pivot_table(index=keys, columns=column, values=metric)
    return wide.dropna() if a in wide and b in wide else pd.DataFrame(columns=[a, b])


def paired_test(x: np.ndarray, y: np.ndarray) -> float:
    """p-value of a paired t-test of x against y; NaN below ``MIN_PAIRS`` pairs.

    Pairs whose difference is the same in every run (a quantity the seed does not change,
    e.g. the K-L cost of a policy learned from a fixed stream) are an exact difference, not
    a sample: p = 0 when it is not zero, 1 when it is.
    """
    d = np.asarray(x, float) - np.asarray(y, float)
    if len(d) < MIN_PAIRS:
        return float("nan")
    if np.ptp(d) == 0:
        return 0.0 if d[0] != 0 else 1.0
    return float(stats.ttest_rel(x, y).pvalue)


def _verdict(all_good: bool, some_good: bool) -> str:
    return "reproduced" if all_good else ("partly" if some_good else "not reproduced")


# -- the rules ---------------------------------------------------------------------------------------

def rule_within_sd(frame, claim, paper_cells: pd.DataFrame, k: float = 1.0, **_) -> Outcome:
    """``paper_cells``: columns of the cell plus algorithm, paper_mean, paper_sd."""
    keys = [c for c in claim.cells if c in frame] + ["algorithm"]
    ours = frame.groupby(keys, sort=False)[claim.metric].agg(["mean", "count"]).reset_index()
    merged = ours.merge(paper_cells, on=keys, how="inner")
    if merged.empty:
        return Outcome("no run matches a cell of the paper", 0, "not testable here", "no overlapping cells")
    merged["z"] = (merged["mean"] - merged["paper_mean"]) / merged["paper_sd"]
    inside = merged["z"].abs() <= k
    outside = merged[~inside]
    listed = [f"{'/'.join(str(r[c]) for c in keys)} {r['mean']:.3g} vs {r['paper_mean']:.3g}±{r['paper_sd']:.2g}"
              for _, r in outside.reindex(outside["z"].abs().sort_values(ascending=False).index).iterrows()]
    worst = ", ".join(listed[:4]) + (f", and {len(listed) - 4} more" if len(listed) > 4 else "")
    ours_text = (f"{int(inside.sum())} of {len(merged)} cells within {k:g} paper s.d. "
                 f"(median |z| {merged['z'].abs().median():.2f}, mean z {merged['z'].mean():+.2f})")
    reason = "every cell within range" if outside.empty else f"outside (largest |z| first): {worst}"
    return Outcome(ours_text, int(merged["count"].sum()),
                   _verdict(inside.all(), inside.mean() >= 0.5), reason)


def rule_paired_gain(frame, claim, treatment: str, control: str, column: str = "algorithm", **_) -> Outcome:
    texts, signs, significant, runs, small = [], [], [], 0, False
    for cell, part in _cells(frame, claim):
        pairs = _paired(part, treatment, control, claim.metric, column)
        if pairs.empty:
            continue
        runs += 2 * len(pairs)
        diff = pairs[treatment] - pairs[control]
        base = pairs[control].abs().mean()
        gain = 100 * diff.mean() / base if base > 0 else float("nan")
        p = paired_test(pairs[treatment], pairs[control])
        small |= len(pairs) < MIN_PAIRS
        signs.append(np.sign(diff.mean()))
        significant.append(np.isfinite(p) and p < 0.05)
        star = "*" if np.isfinite(p) and p < 0.05 else ""
        texts.append(f"{cell} {gain:+.1f}%{star}" if np.isfinite(gain) else f"{cell} {diff.mean():+.3g}{star}")
    if not signs:
        return Outcome("no paired runs", 0, "not testable here", f"no runs of both {treatment} and {control}")
    positive = [s > 0 for s in signs]
    against = [s < 0 and g for s, g in zip(signs, significant)]      # the opposite sign, significantly
    if all(positive) and all(significant):
        verdict = "reproduced"
    elif all(positive) or (sum(positive) >= len(positive) / 2 and not any(against)):
        verdict = "partly"
    else:
        verdict = "not reproduced"
    confirmed = sum(s > 0 and g for s, g in zip(signs, significant))
    reason = (f"{sum(positive)} of {len(signs)} cells with the paper's sign, {confirmed} of them significant "
              f"(paired t-test, 5%), {sum(against)} significant the other way")
    if small:
        reason += f"; fewer than {MIN_PAIRS} paired runs in some cells: no test there"
    return Outcome("; ".join(texts) + "  (* p < 0.05)", runs, verdict, reason)


def rule_mostly_positive(frame, claim, treatments: dict, **_) -> Outcome:
    """``treatments``: {treatment: control}; every (cell, pair) counts once."""
    gains, texts, runs = [], [], 0
    for treatment, control in treatments.items():
        for cell, part in _cells(frame, claim):
            pairs = _paired(part, treatment, control, claim.metric)
            if pairs.empty:
                continue
            runs += 2 * len(pairs)
            gain = float((pairs[treatment] - pairs[control]).mean())
            gains.append(gain)
            texts.append(f"{treatment}/{cell} {gain:+.3g}")
    if not gains:
        return Outcome("no paired runs", 0, "not testable here", "no runs of the compared algorithms")
    share = np.mean(np.array(gains) > 0)
    verdict = "reproduced" if share >= 0.5 else ("partly" if share > 0 else "not reproduced")
    return Outcome("; ".join(texts), runs, verdict, f"gain positive in {share:.0%} of {len(gains)} comparisons")


def _means(frame, claim, column="algorithm"):
    for cell, part in _cells(frame, claim):
        yield cell, part, part.groupby(column)[claim.metric].mean().sort_values(ascending=False)


def rule_best(frame, claim, target: str, **_) -> Outcome:
    best_cells, texts = [], []
    for cell, part, means in _means(frame, claim):
        if target not in means:
            continue
        is_best = means.index[0] == target
        runner = means.index[1] if is_best and len(means) > 1 else means.index[0]
        pairs = _paired(part, target, runner, claim.metric)
        p = paired_test(pairs[target], pairs[runner]) if not pairs.empty else float("nan")
        best_cells.append(is_best)
        mark = f", p={p:.2g} vs {runner}" if np.isfinite(p) else f" (vs {runner}, too few runs to test)"
        texts.append(f"{cell}: {'best' if is_best else f'below {means.index[0]}'}{mark}")
    if not best_cells:
        return Outcome("no runs", 0, "not testable here", f"no runs of {target}")
    return Outcome("; ".join(texts), len(frame), _verdict(all(best_cells), any(best_cells)),
                   f"{target} has the highest mean in {sum(best_cells)} of {len(best_cells)} cells")


def _cellwise(frame, claim, judge_cell, summary, column: str = "algorithm") -> Outcome:
    """Apply ``judge_cell(means) -> (hit, text)`` to each cell's means (sorted, best first)."""
    hits, texts = [], []
    for cell, _, means in _means(frame, claim, column):
        hit, text = judge_cell(means)
        hits.append(hit)
        texts.append(f"{cell}: {text}")
    if not hits:
        return Outcome("no runs", 0, "not testable here", "no runs")
    return Outcome("; ".join(texts), len(frame), _verdict(all(hits), any(hits)), summary(sum(hits), len(hits)))


def rule_worst(frame, claim, targets: list, **_) -> Outcome:
    return _cellwise(frame, claim, lambda m: (m.index[-1] in targets, f"lowest {m.index[-1]}"),
                     lambda k, n: f"the lowest mean is one of {', '.join(targets)} in {k} of {n} cells")


def rule_increasing(frame, claim, parameter: str, **_) -> Outcome:
    rhos, texts = [], []
    for cell, _, means in _means(frame, claim, parameter):
        if len(means) < 3:
            continue
        rho = stats.spearmanr(means.index.astype(float), means.values).statistic
        rhos.append(rho)
        texts.append(f"{cell}: rho {rho:+.2f}")
    if not rhos:
        return Outcome("fewer than three values", 0, "not testable here", f"{parameter} needs three or more values")
    up = [r > 0 for r in rhos]
    return Outcome("; ".join(texts), len(frame), _verdict(all(up), any(up)),
                   f"mean rises with {parameter} (Spearman rho > 0) in {sum(up)} of {len(up)} cells")


def rule_flat(frame, claim, parameter: str, tolerance: float, relative: bool = False, **_) -> Outcome:
    """The range of the means over the parameter's values is at most ``tolerance`` (a share of the
    mean with ``relative``)."""
    spans, texts = [], []
    for cell, _, means in _means(frame, claim, parameter):
        span = float(means.max() - means.min())
        spans.append(span / abs(means.mean()) if relative else span)
        texts.append(f"{cell}: range {span:.3g}" + (f" ({100 * spans[-1]:.1f}% of the mean)" if relative else ""))
    if not spans:
        return Outcome("no runs", 0, "not testable here", "no runs")
    flat = [s <= tolerance for s in spans]
    limit = f"{100 * tolerance:g}% of the mean" if relative else f"{tolerance:g}"
    return Outcome("; ".join(texts), len(frame), _verdict(all(flat), any(flat)),
                   f"means over {parameter} within {limit} in {sum(flat)} of {len(flat)} cells")


def rule_argmax_in(frame, claim, parameter: str, values: list, **_) -> Outcome:
    return _cellwise(frame, claim, lambda m: (m.index[0] in values, f"best {parameter}={m.index[0]}"),
                     lambda k, n: f"best {parameter} in {values} in {k} of {n} cells", parameter)


def _threshold(frame, claim, threshold: float, at_most: bool) -> Outcome:
    hits, texts = [], []
    for cell, part in _cells(frame, claim):
        value = float(part[claim.metric].mean())
        hits.append(value <= threshold if at_most else value >= threshold)
        texts.append(f"{cell}: {value:.3g}")
    if not hits:
        return Outcome("no runs", 0, "not testable here", "no runs")
    return Outcome("; ".join(texts), len(frame), _verdict(all(hits), any(hits)),
                   f"mean at {'most' if at_most else 'least'} {threshold:g} in {sum(hits)} of {len(hits)} cells")


def rule_below(frame, claim, threshold: float, **_) -> Outcome:
    return _threshold(frame, claim, threshold, at_most=True)


def rule_above(frame, claim, threshold: float, **_) -> Outcome:
    return _threshold(frame, claim, threshold, at_most=False)


def rule_extreme_in(frame, claim, column: str, value: str, direction: str = "larger", **_) -> Outcome:
    """The metric's mean is larger (or smaller) where ``column == value`` than for every other value."""
    means = frame.groupby(column)[claim.metric].mean()
    if value not in means or len(means) < 2:
        return Outcome("no runs", 0, "not testable here", f"needs runs with {column}={value} and another")
    others = means.drop(value)
    hits = [(means[value] > v) if direction == "larger" else (means[value] < v) for v in others]
    text = f"{value} {means[value]:.3g}; " + "; ".join(f"{k} {v:.3g}" for k, v in others.items())
    return Outcome(text, len(frame), _verdict(all(hits), any(hits)),
                   f"{value} {direction} than {sum(hits)} of {len(hits)} others")


def rule_equivalent(frame, claim, treatment: str, control: str, tolerance: float, column: str = "variant",
                    **_) -> Outcome:
    hits, texts, runs = [], [], 0
    for cell, part in _cells(frame, claim):
        pairs = _paired(part, treatment, control, claim.metric, column)
        if pairs.empty:
            continue
        runs += 2 * len(pairs)
        diff = float((pairs[treatment] - pairs[control]).mean())
        hits.append(abs(diff) <= tolerance)
        texts.append(f"{cell}: {diff:+.3g}")
    if not hits:
        return Outcome("no paired runs", 0, "not testable here", f"no runs of both {treatment} and {control}")
    return Outcome("; ".join(texts), runs, _verdict(all(hits), any(hits)),
                   f"|mean difference| within {tolerance:g} in {sum(hits)} of {len(hits)} cells")


def rule_not_testable(frame, claim, reason: str, **_) -> Outcome:
    return Outcome("", 0, "not testable here", reason)


RULES = {"within_sd": rule_within_sd, "paired_gain": rule_paired_gain, "mostly_positive": rule_mostly_positive,
         "best": rule_best, "worst": rule_worst, "increasing": rule_increasing, "flat": rule_flat,
         "argmax_in": rule_argmax_in, "below": rule_below, "above": rule_above, "extreme_in": rule_extreme_in,
         "equivalent": rule_equivalent, "not_testable": rule_not_testable}


def judge(claim: Claim, frame: pd.DataFrame | None, config: str, **extra) -> dict:
    """The claim's record: paper, claim, config, paper_value, ours, runs, rule, verdict, reason."""
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
    return {"paper": claim.paper, "id": claim.id, "source": claim.source, "claim": claim.text, "config": config,
            "paper_value": claim.paper_value, "ours": outcome.ours, "runs": outcome.runs, "rule": claim.rule,
            "verdict": outcome.verdict, "reason": outcome.reason}
