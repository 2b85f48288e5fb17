"""The DSP chapter's experiments (Wang et al., SIGIR 2019): grids, comparison tables, paper numbers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from ..experiments import expand_grid

ALGORITHMS = ["dbgd", "dbgd_dsp", "mgd", "mgd_dsp", "nsgd", "nsgd_dsp"]
BASES = ["dbgd", "mgd", "nsgd"]
CLICK_MODELS = ["perfect", "navigational", "informational"]


def main_grid(datasets, folds, seeds, rounds: int = 10_000, algorithms=ALGORITHMS, click_models=CLICK_MODELS,
              params: dict | None = None, **extra):
    """Every algorithm x data set x fold x click model x seed of Tables 2-3 and Figure 2."""
    algos = [{"name": a, "params": dict(params or {})} for a in algorithms]
    return expand_grid({"algorithms": algos, "datasets": list(datasets), "folds": list(folds),
                        "click_models": list(click_models), "seeds": seeds, "rounds": rounds, **extra})


def paper_numbers() -> dict:
    return yaml.safe_load((Path(__file__).with_name("dsp_sigir2019.yml")).read_text())


def paper_frame(metric: str) -> pd.DataFrame:
    """The paper's Table 2 (``online``) or Table 3 (``offline``) as a tidy frame."""
    numbers = paper_numbers()
    rows = []
    for click, algos in numbers[metric].items():
        for algo, values in algos.items():
            for dataset, (mean, sd) in zip(numbers["datasets"], values):
                rows.append({"click_model": click, "algorithm": algo, "dataset": dataset,
                             "paper_mean": mean, "paper_sd": sd})
    return pd.DataFrame(rows)


def comparison_table(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, sd, relative improvement of X-DSP over X and a paired t-test over (fold, seed).

    Pairs are the runs of X and X-DSP with the same data set, fold, click model and seed,
    which share queries and users.
    """
    keys = ["dataset", "click_model", "fold", "seed"]
    rows = []
    for (dataset, click), part in summary.groupby(["dataset", "click_model"], sort=False):
        wide = part.pivot_table(index=keys[2:], columns="algorithm", values=metric)
        for base in BASES:
            for algo in (base, f"{base}_dsp"):
                if algo not in wide:
                    continue
                row = {"dataset": dataset, "click_model": click, "algorithm": algo,
                       "mean": wide[algo].mean(), "sd": wide[algo].std(ddof=1), "runs": wide[algo].count()}
                if algo.endswith("_dsp") and base in wide:
                    row["improvement_%"] = 100 * (wide[algo].mean() / wide[base].mean() - 1)
                    paired = wide[[base, algo]].dropna()
                    row["p_value"] = (stats.ttest_rel(paired[algo], paired[base]).pvalue
                                      if len(paired) > 1 and np.ptp(paired[algo] - paired[base]) > 0 else np.nan)
                rows.append(row)
    return pd.DataFrame(rows)


def with_paper(table: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Join our table with the paper's numbers where the data set is one the paper used."""
    paper = paper_frame(metric)
    out = table.merge(paper, on=["dataset", "click_model", "algorithm"], how="left")
    out["difference"] = out["mean"] - out["paper_mean"]
    return out


def format_table(table: pd.DataFrame, digits: int) -> pd.DataFrame:
    """The paper's layout: 'mean (sd) (+x.xx%)' per algorithm row and data set column."""
    def cell(row):
        text = f"{row['mean']:.{digits}f} ({row['sd']:.{digits}f})"
        if "improvement_%" in row and np.isfinite(row.get("improvement_%", np.nan)):
            star = "*" if row.get("p_value", 1.0) < 0.05 else ""
            text += f" ({row['improvement_%']:+.2f}%{star})"
        if "paper_mean" in row and np.isfinite(row.get("paper_mean", np.nan)):
            text += f" | paper {row['paper_mean']:.{digits}f}"
        return text

    shown = table.assign(cell=table.apply(cell, axis=1))
    order = {a: i for i, a in enumerate(ALGORITHMS)}
    shown = shown.assign(_o=shown["algorithm"].map(order)).sort_values(["click_model", "_o"])
    return shown.pivot_table(index=["click_model", "algorithm"], columns="dataset", values="cell",
                             aggfunc="first", sort=False)


def duel_samples(query, theta, user, n_samples: int, rng, k: int = 3, oracle: bool = False, step: float = 1.0,
                 cutoff: int = 10):
    """Monte Carlo of one DBGD comparison on a fixed query and ranker (for Theorem 3.1 / Lemma 3.2).

    For each of ``n_samples`` directions u (uniform on the sphere): interleave theta with
    theta + step u, let ``user`` click, and record Z (the candidate wins), u, A u with A the
    projector on the document space (inferred with ``k``, or the true one if ``oracle``) and
    the rank of A. Returns a dict of arrays.
    """
    from ..metrics import rank_by_scores
    from ..rankers.interleaving import team_draft, team_draft_credit
    from ..rankers.projection import DocumentSpace
    from ..rankers.scorers import unit_sphere

    space = DocumentSpace(len(theta), k=k, r=0, oracle=oracle)
    directions = unit_sphere(rng, n_samples, len(theta))
    wins = np.zeros(n_samples)
    projected = np.zeros_like(directions)
    ranks = np.zeros(n_samples)
    for i, u in enumerate(directions):
        scores = np.vstack([theta, theta + step * u]) @ query.features.T
        shown, team = team_draft(rank_by_scores(scores, rng), cutoff, rng)
        feedback = user(query, shown, rng)
        credit = team_draft_credit(team, feedback.clicks, 2)
        wins[i] = float(credit[1] > credit[0])
        if feedback.clicks.any() or oracle:
            projected[i], ranks[i] = space.project(u, space.examined(query.features, shown, feedback))
        # else: no click, examination unknown, nothing shown counts as examined: A = 0
    return {"u": directions, "Au": projected, "win": wins, "rank": ranks}
