"""Offline linear learners trained on the full training labels (the papers' upper bound and w*).

- RankNet: minimise ``(1/P) sum_{(i,j): y_i > y_j} log(1 + exp(-(s_i - s_j))) + (l2/2)|w|^2``
  with ``s = X w`` over all labelled pairs of every training query (L-BFGS, scipy).
- LambdaRank: the same pairwise logistic loss, each pair weighted by ``|Delta NDCG_ij|``,
  the NDCG change from swapping i and j in the current ranking; the weights are
  recomputed from the current model a few times (each time L-BFGS is warm-started),
  a fixed-point form of LambdaRank's lambda gradients for a linear model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.special import expit, log1p

from ..cache import cached_array
from ..data.letor import cache_dir
from ..data.ranking_data import RankingData
from ..params import at_least
from .base import LinearRanker


def labelled_pairs(data: RankingData, chunk: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Global document indices (i, j) of every pair in one query with label_i > label_j."""
    index, mask = data.padded()
    labels = np.where(mask, data.labels[index], -1)
    out_i, out_j = [], []
    for lo in range(0, data.n_queries, chunk):
        lab = labels[lo:lo + chunk]
        valid = mask[lo:lo + chunk]
        better = (lab[:, :, None] > lab[:, None, :]) & valid[:, :, None] & valid[:, None, :]
        q, a, b = np.nonzero(better)
        out_i.append(index[lo + q, a])
        out_j.append(index[lo + q, b])
    return np.concatenate(out_i), np.concatenate(out_j)


def fit_pairwise_logistic(X, pi, pj, weights=None, l2=1e-3, w0=None, maxiter=200) -> np.ndarray:
    """argmin_w mean_p weight_p * log(1 + exp(-(x_i - x_j) . w)) + l2/2 |w|^2 by L-BFGS."""
    n_docs, d = X.shape
    weights = np.ones(len(pi)) if weights is None else weights
    norm = max(len(pi), 1)

    def objective(w):
        s = X @ w
        margin = s[pi] - s[pj]
        loss = (weights * log1p(np.exp(-np.clip(margin, -50, None)))).sum() / norm + 0.5 * l2 * w @ w
        g_pair = -weights * expit(-margin) / norm
        g_doc = np.bincount(pi, g_pair, n_docs) - np.bincount(pj, g_pair, n_docs)
        return loss, X.T @ g_doc + l2 * w

    w0 = np.zeros(d) if w0 is None else w0
    from scipy.optimize import minimize  # here, not at the top: only offline fits need it

    return minimize(objective, w0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter}).x


def delta_ndcg_weights(data: RankingData, w: np.ndarray, pi, pj) -> np.ndarray:
    """|Delta NDCG@all| of swapping each pair (i, j) in the ranking by ``X w``."""
    index, mask = data.padded()
    scores = np.where(mask, data.features[index] @ w, -np.inf)
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks_padded = np.empty_like(order)
    np.put_along_axis(ranks_padded, order, np.arange(order.shape[1])[None, :], axis=1)
    rank = np.empty(data.n_docs, dtype=np.int64)
    rank[index[mask]] = ranks_padded[mask]
    gains = 2.0 ** data.labels - 1.0
    disc = 1.0 / np.log2(rank + 2.0)
    sorted_gains = -np.sort(-np.where(mask, gains[index], 0.0), axis=1)
    ideal = (sorted_gains / np.log2(np.arange(2, order.shape[1] + 2))).sum(axis=1)
    ideal_per_doc = np.repeat(np.where(ideal > 0, ideal, 1.0), data.docs_per_query)
    return np.abs((gains[pi] - gains[pj]) * (disc[pi] - disc[pj])) / ideal_per_doc[pi]


_FITTED: dict = {}   # (learner, its parameters, training data's content hash) -> weights, per process


def fitted_once(learner, train: RankingData, fit) -> np.ndarray:
    """``fit()``'s weights, computed once per machine for the same learner, settings and data.

    The offline fits are deterministic (no randomness enters them), and every run that measures
    the cosine to w* needs them (on the MSLR-sized preset a fit takes tens of seconds). They are
    kept in memory and in the cache directory under a key of the learner's scalar settings, the
    training data's content hash and this module's source; an unreadable copy is fitted again.
    """
    settings = tuple(sorted((k, v) for k, v in vars(learner).items() if isinstance(v, (int, float, str))))
    key = (type(learner).__name__, settings, train.fingerprint())
    if key not in _FITTED:
        if len(_FITTED) >= 16:
            _FITTED.pop(next(iter(_FITTED)))
        _FITTED[key] = cached_array("fitted", [key[0], [list(kv) for kv in key[1]], key[2]], fit,
                                    extra=Path(__file__).read_bytes(), root=cache_dir())
    return _FITTED[key].copy()


class OfflineRankNet(LinearRanker):
    """Linear RankNet fitted once on all training labels (an offline upper bound)."""

    PARAMS = {"l2": at_least(0, "float"), "maxiter": at_least(1)}

    def __init__(self, l2: float = 1e-3, maxiter: int = 200):
        self.l2, self.maxiter = float(l2), int(maxiter)

    def start(self, train: RankingData, rng) -> None:
        super().start(train, rng)
        self.w = fitted_once(self, train, lambda: self._fit(train))

    def _fit(self, train: RankingData) -> np.ndarray:
        pi, pj = labelled_pairs(train)
        return fit_pairwise_logistic(train.features, pi, pj, l2=self.l2, maxiter=self.maxiter)


class OfflineLambdaRank(LinearRanker):
    """Linear LambdaRank fitted once on all training labels; its weights are the papers' w*."""

    PARAMS = {"l2": at_least(0, "float"), "maxiter": at_least(1), "reweighting_rounds": at_least(0)}

    def __init__(self, l2: float = 1e-3, maxiter: int = 100, reweighting_rounds: int = 5):
        self.l2, self.maxiter, self.rounds = float(l2), int(maxiter), int(reweighting_rounds)

    def start(self, train: RankingData, rng) -> None:
        super().start(train, rng)
        self.w = fitted_once(self, train, lambda: self._fit(train))

    def _fit(self, train: RankingData) -> np.ndarray:
        pi, pj = labelled_pairs(train)
        w = fit_pairwise_logistic(train.features, pi, pj, l2=self.l2, maxiter=self.maxiter)
        for _ in range(self.rounds):
            weights = delta_ndcg_weights(train, w, pi, pj)
            weights *= len(weights) / max(weights.sum(), 1e-12)
            w = fit_pairwise_logistic(train.features, pi, pj, weights, self.l2, w, self.maxiter)
        return w
