"""Pairwise Differentiable Gradient Descent (Oosterhuis & de Rijke 2018).

The ranker samples the whole list from a Plackett-Luce model over ``softmax(s)`` (Gumbel
trick). From the clicks it infers pairs (clicked above unclicked, up to one position after
the last click) and ascends

    sum_pairs rho_ij * grad log( e^{s_i} / (e^{s_i} + e^{s_j}) ),
    rho_ij = P(R*_ij) / (P(R) + P(R*_ij)),

where R*_ij is the shown list with i and j swapped: the debiasing weight that makes the
estimated preference unbiased under position bias. The gradient is a sum, not a mean. The
scorer is linear or an MLP (``scorer="mlp"``).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import expit

from ..params import at_least, between, choice, positive
from .base import BaseRanker, Display
from .clickpairs import pdgd_pairs
from .scorers import make_scorer, scorer_backward


def swap_log_ratio(scores_shown_order: np.ndarray, cutoff: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log P(R*) - log P(R) for swapping positions a < b of a Plackett-Luce ranking, per pair.

    Only the denominators of positions a+1..b (within the cutoff) change: the document
    that was at b now remains available there instead of the one that was at a. If b lies
    beyond the cutoff, the numerator at a changes too (from e^{s_a} to e^{s_b}).
    """
    e = np.exp(scores_shown_order - scores_shown_order.max())
    tail = np.cumsum(e[::-1])[::-1]                       # D_r = sum_{k >= r} e_k
    r = np.arange(min(cutoff, len(e)))
    inside = (r[None, :] > a[:, None]) & (r[None, :] <= b[:, None])
    changed = np.where(inside, tail[None, r] - e[b][:, None] + e[a][:, None], 1.0)
    numerator = np.where(b >= len(r), scores_shown_order[b] - scores_shown_order[a], 0.0)
    return np.where(inside, np.log(tail[None, r]) - np.log(changed), 0.0).sum(axis=1) + numerator


def pdgd_score_gradient_reference(s: np.ndarray, clicks: np.ndarray, cutoff: int) -> np.ndarray:
    """d(objective)/d(score) of each document in shown order, vectorised numpy (the tests' reference)."""
    win, lose = pdgd_pairs(clicks)
    a, b = np.minimum(win, lose), np.maximum(win, lose)
    rho = 1.0 / (1.0 + np.exp(-swap_log_ratio(s, cutoff, a, b)))          # P(R*) / (P(R) + P(R*))
    pair_weight = rho * expit(s[win] - s[lose]) * expit(s[lose] - s[win])   # e^si e^sj / (e^si + e^sj)^2
    return np.bincount(win, pair_weight, len(s)) - np.bincount(lose, pair_weight, len(s))


@njit(cache=True)
def pdgd_score_gradient(s, clicks, cutoff):
    """Compiled :func:`pdgd_score_gradient_reference`: one pass over the click pairs."""
    n, m = len(s), len(clicks)
    out = np.zeros(n)
    last = -1
    for i in range(m):
        if clicks[i]:
            last = i
    if last < 0:
        return out
    observed = min(last + 2, m)
    e = np.exp(s - s.max())
    tail = np.empty(n)
    acc = 0.0
    for r in range(n - 1, -1, -1):
        acc += e[r]
        tail[r] = acc
    limit = min(cutoff, n)
    for win in range(observed):
        if not clicks[win]:
            continue
        for lose in range(observed):
            if clicks[lose]:
                continue
            a, b = min(win, lose), max(win, lose)
            log_ratio = 0.0
            for r in range(a + 1, min(b, limit - 1) + 1):
                log_ratio += np.log(tail[r]) - np.log(tail[r] - e[b] + e[a])
            if b >= limit:
                log_ratio += s[b] - s[a]
            rho = 1.0 / (1.0 + np.exp(-log_ratio))
            p = 1.0 / (1.0 + np.exp(s[lose] - s[win]))
            weight = rho * p * (1.0 - p)
            out[win] += weight
            out[lose] -= weight
    return out


class PDGD(BaseRanker):
    """PDGD with a linear or MLP scorer; learning rate decayed by ``decay`` per update."""

    PARAMS = {"learning_rate": positive(), "decay": between(0, 1, low_open=True),
              "scorer": choice("linear", "mlp", "relu"), "hidden": at_least(1), "cutoff": at_least(1)}

    def __init__(self, learning_rate: float = 0.1, decay: float = 0.9999977, scorer: str = "linear",
                 hidden: int = 10, cutoff: int = 10):
        self.learning_rate, self.decay, self.cutoff = float(learning_rate), float(decay), int(cutoff)
        self.scorer = make_scorer(scorer, hidden)

    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.theta = self.scorer.init(train.n_features, rng)
        self.lr = self.learning_rate

    def rank(self, query) -> Display:
        s = self.scorer.scores(query.features, self.theta)
        gumbel = -np.log(-np.log(self.rng.random(len(s))))
        return Display(np.argsort(-(s + gumbel), kind="stable"))

    def learn(self, query, display, feedback) -> dict:
        if not feedback.clicks.any():
            return None
        ranking = display.ranking
        s = self.scorer.scores(query.features, self.theta)[ranking]       # in shown order
        dscores = pdgd_score_gradient(s, feedback.clicks, self.cutoff)
        grad = scorer_backward(self.scorer, query.features[ranking], self.theta, dscores)
        self.theta = self.theta + self.lr * grad
        self.lr *= self.decay
        return None

    def score(self, docs) -> np.ndarray:
        return self.scorer.scores(docs.features, self.theta)

    def weights(self) -> np.ndarray:
        return self.theta
