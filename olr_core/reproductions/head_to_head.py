"""Every click learner of the book in one simulator: the same data, queries, users and seeds.

Each method runs with the settings a chapter chose: the neural chapter's tuning for every method
it compares (the networks, PairRank_C, epsilon-greedy, PDGD and DBGD), the PairRank chapter's for
PairRank_R, SGD RankNet and MGD, and the DSP paper's text for NSGD and the DSP variants (so the
budgets here are not equal: this page judges no paper's claim). The grid is the neural chapter's Figures 4-6 grid with
more algorithms, so the runs the two share are computed once. The growing-library rankers
(KLRank, GPER) rank a library without query features, and RTop-kF learns from the grades of
the top k rather than from clicks, so neither can face these users; their chapters compare
them with their own baselines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import claims, names
from ..claims import MIN_PAIRS
from ..formatting import estimate_text
from ..tables import mean_sd_text
from .neural import experiments as neural
from .pairrank import experiments as pairrank

FAMILIES = {
    "dueling bandits (Wang et al., 2019)": ["dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd", "nsgd_dsp"],
    "pairwise models (Jia et al., 2021)": ["pairrank_c", "pairrank_r", "epsilon_greedy", "sgd_ranknet"],
    "pairwise differentiable gradient descent": ["pdgd"],
    "neural rankers (Jia and Wang, 2022)": ["olranknet", "ollambdarank", "neural_pdgd", "neural_dbgd"],
}
ALGORITHMS = [name for members in FAMILIES.values() for name in members]
FAMILY_OF = {name: family for family, members in FAMILIES.items() for name in members}


def settings() -> dict:
    """{algorithm: parameters}: the neural chapter's choices for the methods it tunes, the PairRank
    chapter's for the rest of its methods; DSP's defaults for the others."""
    chosen = {**pairrank.tuned_params(), **neural.tuned_params()}
    return {name: dict(chosen.get(name, {})) for name in ALGORITHMS}


def grid(datasets, seeds: int, rounds: int, params: dict, click_models=neural.CLICK_MODELS, extra=()):
    """Every algorithm x data set x user x seed (the neural chapter's grid, so shared runs are shared);
    ``extra``: rankers of your own (``module:Class``, ``file.py:Class``) that join with default parameters."""
    return neural.main_grid(datasets, seeds, rounds, params, click_models, [*ALGORITHMS, *extra])


def standings(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per data set and user, each algorithm's mean and standard error of ``metric`` over runs, its
    rank (1 = best), and the verdict rules' comparison with the best (:func:`gaps_to_best`; paired by fold and
    seed: the same queries in the same order): each method's gap to the best with its interval, Holm-corrected
    over the cell's methods. ``tied`` marks the best and every method whose gap's interval does not lie above 0;
    ``p_vs_best`` is Holm-adjusted (NaN with fewer than 5 pairs)."""
    rows = []
    for (dataset, user), cell in summary.groupby(["dataset", "click_model"], sort=False):
        runs = cell.pivot_table(index=["fold", "seed"], columns="algorithm", values=metric)
        means = runs.mean().sort_values(ascending=False)
        best = means.index[0]
        gaps = gaps_to_best(cell, metric, best, list(means.index[1:]))
        for rank, (name, mean) in enumerate(means.items(), start=1):
            gap = gaps.get(name, {"p": float("nan")})
            p = 1.0 if name == best else gap["p"]
            separated = gap.get("gap_low", np.nan) > 0
            rows.append({"dataset": dataset, "click_model": user, "algorithm": name, "family": FAMILY_OF.get(name),
                         "mean": mean, "se": runs[name].std(ddof=1) / np.sqrt(runs[name].count()),
                         "runs": int(runs[name].count()), "rank": rank, "p_vs_best": p,
                         "tied": bool(name == best or (np.isfinite(p) and not separated)),
                         **{k: v for k, v in gap.items() if k != "p"}})
    return pd.DataFrame(rows)


def _holm_p(cells: list) -> np.ndarray:
    """Holm-adjusted p-values of the cells (:func:`olr_core.claims.p_value`, the verdict rules' p-value)."""
    return claims.holm_adjusted(np.array([claims.p_value(c) for c in cells])) if cells else np.array([])


def gaps_to_best(cell: pd.DataFrame, metric: str, best: str, others: list) -> dict:
    """{method: {gap, gap_low, gap_high, p}} for one (data set, user) cell: the mean paired gap best - method with
    its interval, judged together as the verdict rules judge a claim's cells (:func:`olr_core.claims.set_intervals`:
    95 % where every gap lies above 0, else Holm over the cell's methods); ``p`` the Holm-adjusted p-value (the
    plain one where every gap lies above 0: no correction is needed there), NaN
    with fewer than ``MIN_PAIRS`` pairs (then the method counts as not separated and the cell as untested)."""
    cells = claims.comparison_cells(cell, [(best, o) for o in others], metric)
    every = claims.set_intervals(cells)
    raw = np.array([claims.p_value(c) for c in cells])
    out = {}
    for c, p in zip(cells, raw if every else _holm_p(cells)):
        out[c.key[1]] = {"gap": c.margin, "gap_low": c.low, "gap_high": c.high,
                         "p": float(p) if c.runs >= MIN_PAIRS else float("nan")}
    return out


def standings_table(table: pd.DataFrame, digits: int = 3, users=neural.CLICK_MODELS) -> pd.DataFrame:
    """Algorithms (rows) x (data set, user) (columns, in the order of ``users``): 'mean ± s.e. (rank)', both to the
    decimals the s.e. supports (:func:`olr_core.tables.mean_sd_text`; ``digits`` decimals without an s.e.), with
    '*' on the best and every method not significantly below it (``tied``: never with fewer than 5 paired runs)."""
    mark = np.where(table["tied"], "*", "")
    spread = mean_sd_text(table["mean"], table["se"])
    text = [f"{t} ({r}){k}" if np.isfinite(s) and s > 0 else f"{m:.{digits}f} ({r}){k}"
            for t, m, s, r, k in zip(spread, table["mean"], table["se"], table["rank"], mark)]
    out = table.assign(value=text).pivot_table(index="algorithm", columns=["dataset", "click_model"], values="value",
                                               aggfunc="first")
    order = [a for a in ALGORITHMS if a in out.index] + [a for a in out.index if a not in ALGORITHMS]
    users = [u for u in users if u in out.columns.get_level_values("click_model")]
    out = out.reindex(index=order).reindex(columns=users, level="click_model")
    out.index = [names.display_name(a) for a in out.index]
    return out


def _tested(cell: pd.DataFrame) -> bool:
    """A cell of :func:`standings` whose paired tests ran: at least ``MIN_PAIRS`` runs of every method."""
    return cell["runs"].min() >= MIN_PAIRS


def group_leads(table: pd.DataFrame, members) -> pd.Series:
    """Per (data set, user) of :func:`standings`: True where the paired tests put ``members`` ahead (the best method
    and every method tied with it are members, from ``MIN_PAIRS`` runs up); a mean ahead with an outsider tied, or
    from fewer runs, is False."""
    return table.groupby(["dataset", "click_model"], sort=False).apply(
        lambda cell: bool(_tested(cell) and set(cell.loc[cell["tied"], "algorithm"]) <= set(members)),
        include_groups=False)


@dataclass(frozen=True)
class Leader:
    """One cell of :func:`standings`: its best method by the mean and the methods the paired tests cannot separate
    from it (display names); ``tested``: every method has ``MIN_PAIRS`` runs there, so the tests ran."""
    dataset: str
    user: str
    best: str
    tied: tuple
    tested: bool


def leaders(table: pd.DataFrame) -> list[Leader]:
    """The :class:`Leader` of each (data set, user) cell of :func:`standings`, in the table's order."""
    out = []
    for (dataset, user), cell in table.groupby(["dataset", "click_model"], sort=False):
        cell = cell.sort_values("rank")
        tied = tuple(names.display_name(a) for a in cell.algorithm[cell["tied"] & (cell["rank"] > 1)])
        out.append(Leader(dataset, user, names.display_name(cell.algorithm.iloc[0]), tied, _tested(cell)))
    return out


def tie_words(leader: Leader) -> str:
    """What a sentence naming ``leader.best`` adds in parentheses: the methods tied with it, or that the paired test
    did not run; nothing where the test separates it from every other."""
    if not leader.tested:
        return " (by the mean: too few runs for the paired test)"
    return (f" (tied with {', '.join(leader.tied)}: a paired t-test at 5 % over seeds cannot separate them)"
            if leader.tied else "")


def leader_words(table: pd.DataFrame) -> list[str]:
    """'data set/user: Best' per cell of :func:`standings`, then ', tied with A, B', ', ahead of every other method'
    or ' (ahead by the mean; too few runs to test)'."""
    def tail(leader: Leader) -> str:
        if not leader.tested:
            return " (ahead by the mean; too few runs to test)"
        return f", tied with {', '.join(leader.tied)}" if leader.tied else ", ahead of every other method"

    return [f"{x.dataset}/{x.user}: {x.best}{tail(x)}" for x in leaders(table)]


def tied_with_lowest(summary: pd.DataFrame, metric: str) -> list[str]:
    """The methods lowest in ``metric`` in some tested cell, or tied with the lowest there (the paired tests of
    :func:`standings` on the negated metric); empty where no cell has ``MIN_PAIRS`` runs."""
    low = standings(summary.assign(**{metric: -summary[metric]}), metric)
    tested = low.groupby(["dataset", "click_model"], sort=False)["runs"].transform("min") >= MIN_PAIRS
    return sorted(set(low.loc[tested & low["tied"], "algorithm"]), key=names.display_name)


def family_ranks(table: pd.DataFrame) -> pd.DataFrame:
    """Rank of each family's best member per (data set, user): which family leads where."""
    best = table.groupby(["dataset", "click_model", "family"])["rank"].min().unstack("family")
    return best[[f for f in FAMILIES if f in best.columns]]


def families_leading_alone(table: pd.DataFrame) -> pd.Series:
    """Per (data set, user), the family of the best method if every method tied with it (``tied``) belongs to
    the same family, else NaN: a family "leads" only where the paired tests separate it from the others."""
    out = {}
    for key, cell in table.groupby(["dataset", "click_model"], sort=False):
        families = set(cell.loc[cell["tied"], "family"].dropna())
        tested = cell["runs"].min() >= 5
        out[key] = families.pop() if tested and len(families) == 1 else np.nan
    return pd.Series(out, dtype=object)


DSP_BASES = ("dbgd", "mgd", "nsgd")


def dsp_comparisons(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Each DSP variant against its base per (data set, user), as the verdicts judge the paper's claims "DSP beats
    its base under every user" (``T2-<base>-dsp``): the mean paired gain with its interval, the cells of one base
    judged together (:func:`olr_core.claims.set_intervals`: Holm over them unless every interval lies above 0);
    ``p`` Holm-adjusted; ``better`` / ``worse`` where the interval lies above / below 0 (from ``MIN_PAIRS`` pairs)."""
    rows = []
    for base in DSP_BASES:
        cells = claims.comparison_cells(summary, [(f"{base}_dsp", base)], metric, ["dataset", "click_model"])
        claims.set_intervals(cells)
        for c, p in zip(cells, _holm_p(cells)):
            tested = c.runs >= MIN_PAIRS
            rows.append({"dataset": c.key[2], "click_model": c.key[3], "base": base, "gain": c.margin, "low": c.low,
                         "high": c.high, "runs": c.runs, "p": float(p) if tested else float("nan"),
                         "better": bool(tested and c.low > 0), "worse": bool(tested and c.high < 0)})
    columns = ["dataset", "click_model", "base", "gain", "low", "high", "runs", "p", "better", "worse"]
    return pd.DataFrame(rows, columns=columns)


def dsp_pooled(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per base, the DSP variant's gain pooled over every (data set, user) cell as the verdicts pool an unqualified
    claim (:func:`olr_core.claims.pooled_cell`: the equally weighted mean of the cells' paired gains, fixed effect,
    Welch-Satterthwaite degrees of freedom) with its 95 % interval; ``better`` / ``worse`` as in
    :func:`dsp_comparisons`."""
    rows = []
    for base in DSP_BASES:
        cells = claims.comparison_cells(summary, [(f"{base}_dsp", base)], metric, ["dataset", "click_model"])
        if not cells:
            continue
        pooled = claims.pooled_cell(cells)
        claims.set_intervals([pooled])
        tested = min(c.runs for c in cells) >= MIN_PAIRS
        rows.append({"base": base, "cells": len(cells), "gain": pooled.margin, "low": pooled.low, "high": pooled.high,
                     "better": bool(tested and pooled.low > 0), "worse": bool(tested and pooled.high < 0)})
    return pd.DataFrame(rows, columns=["base", "cells", "gain", "low", "high", "better", "worse"])


def dsp_outcome(row) -> str:
    """"higher", "lower" or "not separated" for a row of :func:`dsp_comparisons` or :func:`dsp_pooled`."""
    return "higher" if row["better"] else "lower" if row["worse"] else "not separated"


def dsp_table(comparisons: pd.DataFrame, pooled: pd.DataFrame, users) -> pd.DataFrame:
    """Users (rows, in the order of ``users``, then "pooled over the cells") x DSP variant against its base
    (columns): the gain with its interval (:func:`olr_core.formatting.estimate_text`) and the outcome. For one
    data set (the pages' first)."""
    def text(row) -> str:
        return f"{estimate_text(row['gain'], row['low'], row['high'])} ({dsp_outcome(row)})"

    def column(base: str) -> str:
        return f"{names.display_name(base + '_dsp')} vs {names.display_name(base)}"

    cells = comparisons.assign(text=comparisons.apply(text, axis=1), column=comparisons.base.map(column))
    out = cells.pivot_table(index="click_model", columns="column", values="text", aggfunc="first")
    out = out.reindex([u for u in users if u in out.index])
    if len(pooled):
        out.loc[f"pooled over the {int(pooled['cells'].max())} users"] = pd.Series(
            pooled.apply(text, axis=1).to_numpy(), index=pooled.base.map(column).to_numpy())
    return out[[column(b) for b in DSP_BASES if column(b) in out.columns]].rename_axis(index="user", columns=None)
