"""Pairwise Differentiable Gradient Descent (Oosterhuis & de Rijke 2018).

The ranker samples the whole list from a Plackett-Luce model over ``softmax(s)`` (Gumbel
trick). From the clicks it infers pairs (clicked above unclicked, up to one position after
the last click) and ascends

    sum_pairs rho_ij * grad log( e^{s_i} / (e^{s_i} + e^{s_j}) ),
    rho_ij = P(R*_ij) / (P(R) + P(R*_ij)),

where R*_ij is the shown list with i and j swapped: the debiasing weight that makes the
estimated preference unbiased under position bias. The gradient is a sum, not a mean. The
scorer is linear or an MLP (``scorer="mlp"``).

With a linear scorer and a click model that has a kernel, :class:`CompiledPDGD` plays a block of
rounds: the block's Gumbel keys and the user's uniforms drawn at once (the same streams, the same
numbers), each round's scores and gradient product by the very numpy calls of the protocol path
(so BLAS sums them in the same order), and the sort, the clicks and the pairwise gradient of a
round in one compiled call (:func:`pdgd_round`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import expit

from .. import click_models
from ..click_models import compiled_user_arguments
from ..kernels import flush_stale_cache
from ..params import at_least, between, choice, positive
from . import dueling_compiled
from .base import BaseRanker, Display
from .clickpairs import pdgd_pairs
from .dueling_compiled import _show
from .scorers import LinearScorer, make_scorer, scorer_backward


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


@njit(cache=True)
def pdgd_round(X, s, gumbel, grades, shown_length, user_draws_t, chain, click_prob, stop_table, exam_table,
               exam_click_table, epsilon, cutoff, shown_out_t):
    """One PDGD round once its scores ``s`` of the documents ``X`` are known: the Plackett-Luce list (descending
    s + Gumbel, stable sort, as :meth:`PDGD.rank`), the user's clicks on its top ``shown_length`` (recorded in
    ``shown_out_t``); returns the documents' features in shown order and d(objective)/d(score) there
    (:func:`pdgd_score_gradient`), both empty without a click."""
    ranking = np.argsort(-(s + gumbel), kind="mergesort")
    clicked, _ = _show(ranking, len(ranking), shown_length, shown_out_t, grades, user_draws_t, chain, click_prob,
                       stop_table, exam_table, exam_click_table, epsilon)
    if not clicked.any():
        return X[:0], np.empty(0)
    shown_features = np.empty_like(X)
    for r in range(len(ranking)):
        shown_features[r] = X[ranking[r]]
    return shown_features, pdgd_score_gradient(s[ranking], clicked, cutoff)


flush_stale_cache(pdgd_round, click_models, dueling_compiled)


class CompiledPDGD:
    """Plays blocks of rounds of a linear :class:`PDGD` against a click model with a kernel, identical to the
    protocol path number for number (``tests/test_pairwise.py`` compares the two)."""

    def __init__(self, ranker, user, train, cutoff: int):
        self.ranker, self.user, self.train, self.cutoff = ranker, user, train, int(cutoff)
        self.grades = np.ascontiguousarray(train.labels, dtype=np.int64)
        self.user_arguments = compiled_user_arguments(user)

    def play(self, queries: np.ndarray, user_rng: np.random.Generator, shown_out: np.ndarray) -> dict:
        """One round per query; fills ``shown_out``; PDGD reports no diagnostics."""
        r, offsets = self.ranker, self.train.offsets
        lo, hi = offsets[queries], offsets[queries + 1]
        starts = np.concatenate([[0], np.cumsum(hi - lo)]).tolist()
        gumbel = -np.log(-np.log(r.rng.random(starts[-1])))      # each round's rng.random(n) of rank, at once
        user_draws = self.user.draw_rounds(user_rng, len(queries))
        features, theta, lr = self.train.features, r.theta, r.lr
        for t, (a, b) in enumerate(zip(lo.tolist(), hi.tolist())):
            X = features[a:b]
            shown_features, dscores = pdgd_round(X, X @ theta, gumbel[starts[t]: starts[t + 1]], self.grades[a:b],
                                                 self.cutoff, user_draws[t], *self.user_arguments, r.cutoff,
                                                 shown_out[t])
            if len(dscores):
                theta = theta + lr * (shown_features.T @ dscores)         # scorer_backward of a linear scorer
                lr *= r.decay
        r.theta, r.lr = theta, lr
        return {}


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

    def compiled_rounds(self, user, train, cutoff: int):
        """:class:`CompiledPDGD` for a linear scorer and a click model with a kernel; otherwise None."""
        if type(self) is not PDGD or not self.scorer.linear or compiled_user_arguments(user) is None:
            return None
        return CompiledPDGD(self, user, train, cutoff)

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

    def evaluation_vector(self) -> np.ndarray | None:
        """theta, when ``score`` is the linear scorer's ``X @ theta``."""
        return self.theta if type(self.scorer) is LinearScorer and type(self).score is PDGD.score else None
