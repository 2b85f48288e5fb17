"""Ranking metrics, vectorised over a query's documents or over padded query batches.

Conventions (stated once, used everywhere):
- DCG@k = sum_{r=1..k} (2^rel_r - 1) / log2(r + 1) with 1-based rank r;
- the ideal DCG sorts the query's *full* label list, not only the shown documents;
- a query without any relevant document has no defined NDCG: ``ndcg_at_k`` returns 0
  for it (the online convention), ``batch_ndcg_at_k`` returns NaN so that offline
  averages can drop it.
"""

from __future__ import annotations

import numpy as np


def _discounts(k: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, k + 2))


def dcg_at_k(ranked_labels, k: int = 10) -> float:
    """DCG@k of labels given in rank order."""
    top = np.asarray(ranked_labels, dtype=np.float64)[:k]
    return float(((2.0 ** top - 1.0) * _discounts(len(top))).sum())


def ideal_dcg_at_k(labels, k: int = 10) -> float:
    return dcg_at_k(np.sort(np.asarray(labels))[::-1], k)


def ndcg_at_k(ranked_labels, all_labels, k: int = 10) -> float:
    """NDCG@k of a shown list; 0 when the query has no relevant document."""
    ideal = ideal_dcg_at_k(all_labels, k)
    return dcg_at_k(ranked_labels, k) / ideal if ideal > 0 else 0.0


def rank_by_scores(scores: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """Indices sorting ``scores`` descending along the last axis; ties broken at random."""
    if rng is None:
        return np.argsort(-scores, axis=-1, kind="stable")
    noise = rng.random(scores.shape)
    return np.lexsort((noise, -scores), axis=-1)


def batch_ndcg_at_k(scores, labels, mask, k: int = 10, rng=None) -> np.ndarray:
    """NDCG@k of each row of padded ``(n_queries, width)`` scores; NaN without relevant documents.

    ``mask`` marks real documents; padding is ranked last.
    """
    scores = np.where(mask, scores, -np.inf)
    order = rank_by_scores(scores, rng)
    gains = np.where(mask, 2.0 ** labels - 1.0, 0.0)
    k = min(k, scores.shape[1])
    disc = _discounts(k)
    dcg = (np.take_along_axis(gains, order[:, :k], axis=1) * disc).sum(axis=1)
    ideal = (-np.sort(-gains, axis=1)[:, :k] * disc).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, dcg / ideal, np.nan)


def cumulative_online(values, discount: float = 0.9995) -> float:
    """Discounted cumulative online metric: sum_t values_t * discount^t (t from 0)."""
    values = np.asarray(values, dtype=np.float64)
    return float((values * discount ** np.arange(len(values))).sum())


def misordered_pairs(ranked_labels, cutoff: int | None = None) -> int:
    """Pairs (i above j) with label_i < label_j: Kendall-tau distance to an ideal ranking.

    With ``cutoff`` only pairs whose upper document is within the top ``cutoff`` count.
    """
    lab = np.asarray(ranked_labels)
    n = len(lab)
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    if cutoff is not None:
        upper[cutoff:, :] = False
    return int((upper & (lab[:, None] < lab[None, :])).sum())


def average_relevant_position(ranked_labels) -> float:
    """Mean 1-based rank of the relevant (label > 0) documents; NaN if there are none."""
    ranks = np.flatnonzero(np.asarray(ranked_labels) > 0) + 1
    return float(ranks.mean()) if len(ranks) else float("nan")


def cosine_similarity(a, b) -> float:
    """cos(a, b); 0 if either vector is zero."""
    a, b = np.ravel(a), np.ravel(b)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0
