"""The PairRank chapter's experiments (Jia et al., WWW 2021): grids, tuning, the well-specified simulation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy.special import expit

from ..data.ranking_data import Fold, RankingData
from ..experiments import expand_grid
from ..experiments.store import default_store_dir
from ..rankers.pairwise import PairRank, pairwise_uncertainty

ALGORITHMS = ["pairrank_c", "pairrank_r", "pdgd", "epsilon_greedy", "sgd_ranknet", "dbgd", "mgd"]
CLICK_MODELS = ["perfect", "navigational", "informational"]
DEFAULTS = {"pairrank_c": {"alpha": 0.1, "l2": 0.1}, "pairrank_r": {"alpha": 0.1, "l2": 0.1},
            "epsilon_greedy": {"epsilon": 0.1, "l2": 0.1}, "sgd_ranknet": {"learning_rate": 0.1},
            "pdgd": {"learning_rate": 0.1}, "dbgd": {}, "mgd": {}}
TUNING_GRID = {"pairrank_c": {"alpha": [0.01, 0.1, 0.5], "l2": [0.1, 0.5]},
               "epsilon_greedy": {"epsilon": [0.05, 0.1, 0.2]},
               "sgd_ranknet": {"learning_rate": [0.01, 0.1, 0.5]},
               "pdgd": {"learning_rate": [0.01, 0.1, 0.5]}}


def tuned_path() -> Path:
    return default_store_dir() / "pairrank_tuned.json"


def tuning_specs(dataset: str, seeds: int, rounds: int, click_model: str = "navigational"):
    """A small grid per tuned algorithm, evaluated on the validation split."""
    import itertools

    algos = []
    for name, grid in TUNING_GRID.items():
        keys = sorted(grid)
        for values in itertools.product(*(grid[k] for k in keys)):
            algos.append({"name": name, "params": dict(zip(keys, values))})
    return expand_grid({"algorithms": algos, "datasets": dataset, "click_models": click_model, "seeds": seeds,
                        "rounds": rounds, "eval_split": "vali"})


def save_tuned(choice: dict) -> None:
    path = tuned_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(choice, indent=2, sort_keys=True))


def tuned_params() -> dict:
    """Parameters chosen by the tuning notebook (PairRank_R shares PairRank_C's); defaults if not tuned yet."""
    params = {k: dict(v) for k, v in DEFAULTS.items()}
    path = tuned_path()
    if path.exists():
        chosen = json.loads(path.read_text())
        params.update({k: dict(v) for k, v in chosen.items()})
        if "pairrank_c" in chosen:
            params["pairrank_r"] = dict(chosen["pairrank_c"])
    else:
        print(f"no tuning results at {path}: using the defaults {DEFAULTS} (run pairrank_tuning first)")
    return params


def main_grid(datasets, seeds: int, rounds: int, params: dict, click_models=CLICK_MODELS, algorithms=ALGORITHMS):
    algos = [{"name": a, "params": params.get(a, {})} for a in algorithms]
    return expand_grid({"algorithms": algos, "datasets": list(datasets), "click_models": list(click_models),
                        "seeds": seeds, "rounds": rounds, "reference": "offline_ranknet"})


def well_specified_fold(n_features: int = 10, n_queries: int = 300, docs: int = 20, seed: int = 0):
    """Queries of Gaussian documents whose true order is theta* . x (labels: within-query rank, best highest).

    With :class:`olr_core.users.LogisticClickUser` the clicks follow PairRank's logistic
    pairwise model exactly, and the loop's mis-ordered pairs are the Kendall distance to the
    true order. Returns the fold (train = test = the same queries) and theta*.
    """
    rng = np.random.default_rng(seed)
    theta_star = rng.standard_normal(n_features)
    theta_star *= 2.0 / np.linalg.norm(theta_star)
    X = rng.standard_normal((n_queries * docs, n_features)) / np.sqrt(n_features)
    utility = (X @ theta_star).reshape(n_queries, docs)
    labels = np.argsort(np.argsort(utility, axis=1), axis=1).ravel()
    offsets = np.arange(0, n_queries * docs + 1, docs)
    data = RankingData(X, labels, offsets, np.array([f"w{q}" for q in range(n_queries)]), docs - 1, "well-specified")
    return Fold("well-specified", 1, data, data, data), theta_star


class CoverageProbe(PairRank):
    """PairRank that also reports how often the true preference sigma(theta* . x_ij) lies outside
    the confidence interval of the current round's pairs (``ci_miss_rate``) and how often a pair
    declared certain is in fact ordered the wrong way (``certain_wrong_rate``)."""

    def __init__(self, theta_star, **kwargs):
        super().__init__(**kwargs)
        self.theta_star = np.asarray(theta_star)

    def rank(self, query):
        display = super().rank(query)
        prob, norms, _ = pairwise_uncertainty(query.features, self.model.theta, self.Minv)
        s = query.features @ self.theta_star
        truth = expit(s[:, None] - s[None, :])
        off_diagonal = ~np.eye(len(s), dtype=bool)
        width = self.width() * norms
        miss = np.abs(prob - truth) > width
        display.stats["ci_miss_rate"] = float(miss[off_diagonal].mean())
        certain = prob - width > 0.5
        if certain.any():
            display.stats["certain_wrong_rate"] = float((truth[certain] < 0.5).mean())
        return display
