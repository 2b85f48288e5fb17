"""Tidy (pandas) views of stored runs: summaries, curves and mean with 95% confidence intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .runner import spec_key
from .spec import RunSpec
from .store import ResultStore

ID_COLUMNS = ["algorithm", "label", "dataset", "fold", "click_model", "stop_rule", "seed"]


def _ids(spec: RunSpec) -> dict:
    return {"algorithm": spec.algorithm, "label": spec.label(), "dataset": spec.dataset, "fold": spec.fold,
            "click_model": spec.click_model, "stop_rule": spec.stop_rule, "seed": spec.seed}


def summary_frame(specs, store: ResultStore | None = None, data_dir=None, discount: float = 0.9995) -> pd.DataFrame:
    """One row per run with its final offline NDCG@10, cumulative online NDCG@10 and time."""
    store = store or ResultStore()
    rows = []
    for spec in specs:
        _, trace = store.load(spec_key(spec, data_dir))
        rows.append({**_ids(spec), **trace.summary(discount)})
    return pd.DataFrame(rows)


def curve_frame(specs, store: ResultStore | None = None, data_dir=None, metric: str = "offline_ndcg",
                every: int = 1) -> pd.DataFrame:
    """Long table (ids, round, value) of a per-evaluation or per-round series.

    ``metric``: ``offline_ndcg``, ``online_ndcg``, ``cumulative_online`` (discounted running
    sum), a ranker statistic ``stat:<name>`` or an evaluation statistic ``eval:<name>``.
    ``every`` thins per-round series.
    """
    store = store or ResultStore()
    frames = []
    for spec in specs:
        _, trace = store.load(spec_key(spec, data_dir))
        rounds, values = _series(trace, metric)
        sel = slice(None, None, every)
        frames.append(pd.DataFrame({**_ids(spec), "round": rounds[sel], "value": values[sel]}))
    return pd.concat(frames, ignore_index=True)


def _series(trace, metric: str):
    if metric == "offline_ndcg":
        return trace.eval_rounds, trace.offline_ndcg
    per_round = np.arange(1, trace.rounds + 1)
    if metric == "online_ndcg":
        return per_round, trace.online_ndcg
    if metric == "cumulative_online":
        return per_round, np.cumsum(trace.online_ndcg * 0.9995 ** np.arange(trace.rounds))
    kind, _, name = metric.partition(":")
    table = {"stat": trace.stats, "eval": trace.eval_stats}.get(kind)
    if table is None or name not in table:
        raise KeyError(f"unknown metric {metric!r}; this run has offline_ndcg, online_ndcg, cumulative_online, "
                       + ", ".join([f"stat:{k}" for k in trace.stats] + [f"eval:{k}" for k in trace.eval_stats]))
    return (per_round if kind == "stat" else trace.eval_rounds), table[name]


def mean_ci(frame: pd.DataFrame, by: list[str], value: str = "value", level: float = 0.95) -> pd.DataFrame:
    """Mean, standard deviation, count and the half-width of a t confidence interval per group. On a summary
    (per cell ``value``, ``value:std`` and ``value:n``, as a figure ledger keeps curves) the cells of a group are
    pooled: the mean and s.d. of all their runs together."""
    out = _pooled(frame, by, value) if f"{value}:n" in frame else \
        frame.groupby(by, sort=False)[value].agg(mean="mean", std="std", n="count").reset_index()
    tcrit = stats.t.ppf(0.5 + level / 2, np.maximum(out["n"] - 1, 1))
    out["ci"] = np.where(out["n"] > 1, tcrit * out["std"] / np.sqrt(out["n"]), np.nan)
    return out


def _pooled(summary: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Mean, s.d. and count per group of the runs that the summary's cells describe (a cell of one run: s.d. 0)."""
    n = summary[f"{value}:n"].astype(float)
    parts = summary[by].assign(n=n, total=n * summary[value],
                               squares=(n - 1) * summary[f"{value}:std"].fillna(0) ** 2 + n * summary[value] ** 2)
    sums = parts.groupby(by, sort=False)[["n", "total", "squares"]].sum().reset_index()
    mean = sums["total"] / sums["n"]
    variance = (sums["squares"] - sums["n"] * mean ** 2) / (sums["n"] - 1)
    return sums[by].assign(mean=mean, std=np.sqrt(variance.clip(lower=0)).where(sums["n"] > 1), n=sums["n"].astype(int))


def run_frame(specs, store: ResultStore | None = None, data_dir=None, discount: float = 0.9995,
              tail: float = 0.1) -> pd.DataFrame:
    """One row per run: ids, parameters (``param:<name>``), the summary, and per-run aggregates of
    its series that claims are judged on: ``mean_offline_ndcg10`` (the area under the offline
    curve divided by its length), ``final:<eval stat>``, and for every ranker statistic its mean
    over the first and the last ``tail`` share of rounds and over the whole run (``early:<stat>``,
    ``late:<stat>``, ``mean:<stat>``; NaN rounds left out)."""
    store = store or ResultStore()
    rows = []
    for spec in specs:
        _, trace = store.load(spec_key(spec, data_dir))
        row = {**_ids(spec), **{f"param:{k}": v for k, v in spec.params.items()}, **trace.summary(discount),
               "rounds_run": spec.rounds,
               "mean_offline_ndcg10": float(np.mean(trace.offline_ndcg)) if len(getattr(trace, "offline_ndcg", ()))
               else np.nan}
        for name, values in trace.eval_stats.items():
            row[f"final:{name}"] = float(values[-1])
        width = max(1, int(tail * trace.rounds))
        for name, values in trace.stats.items():
            with np.errstate(all="ignore"):
                row[f"early:{name}"] = float(np.nanmean(values[:width])) if np.isfinite(values[:width]).any() \
                    else np.nan
                row[f"late:{name}"] = float(np.nanmean(values[-width:])) if np.isfinite(values[-width:]).any() \
                    else np.nan
                row[f"mean:{name}"] = float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)
