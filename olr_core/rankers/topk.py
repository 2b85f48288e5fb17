"""Learning to rank from the grades of the top k documents only (Chaudhuri and Tewari, AISTATS 2016).

:class:`RTopKF` is the paper's Algorithm 1: a linear scorer w, a list that is the model's
ranking with probability 1 - gamma_t and a uniformly random permutation otherwise (line 5-6),
the grades of the top k shown documents as the only feedback (line 7), an unbiased estimate
of the surrogate's gradient built from them (line 9), a gradient step and a projection onto
the ball ||w|| <= U (lines 10-11). :class:`ListNetFull` is the full-information baseline: online
ListNet that sees every grade of the list each round.

The estimators (Section 4 of the paper, written once for any k):

- a surrogate whose gradient in the scores s is ``known(s) + sum_j h_j(s, R_j)`` (one grade per
  term: squared, KL, SmoothDCG) is estimated by ``known(s) + sum_{j in top k} h_j(s, R_j) / pi_j``
  with ``pi_j = P(j among the top k shown)``;
- a surrogate whose gradient is ``sum_{a != b} h_ab(s, R_a, R_b)`` (RankSVM) is estimated by
  ``sum_{{a,b} in top k} (h_ab + h_ba) / pi_ab`` with ``pi_ab = P(a and b both among the top k)``.

Under the exploration policy ``P_t(sigma) = (1 - gamma) 1[sigma = sigma_t] + gamma / m!``,
``pi_j = (1 - gamma) 1[j in sigma_t's top k] + gamma k / m`` and ``pi_ab = (1 - gamma)
1[a, b in sigma_t's top k] + gamma k (k - 1) / (m (m - 1))``; at k = 1 (k = 2) these are the
paper's p(sigma(1)) (p(sigma(1), sigma(2)) + p(sigma(2), sigma(1))), Section 4.2.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..data.ranking_data import Query
from ..metrics import rank_by_scores
from ..params import Param, ParameterError, between, choice, positive
from ..users import TopKRelevanceUser
from .base import Display, LinearRanker


def softmax(v: np.ndarray) -> np.ndarray:
    """exp(v) / sum exp(v), computed without overflow."""
    e = np.exp(v - v.max())
    return e / e.sum()


def gains(grades: np.ndarray) -> np.ndarray:
    """G(r) = 2^r - 1."""
    return np.exp2(grades) - 1.0


class Surrogate:
    """A ranking surrogate phi(s, R) of a score vector s and grades R (one query).

    ``order`` is how many grades each term of the gradient reads (1 or 2; None: not
    decomposable, so no estimator from top-k feedback exists).
    """

    name = ""
    order: int | None = 1
    convex = True

    def loss(self, s: np.ndarray, grades: np.ndarray) -> float:
        raise NotImplementedError

    def known(self, s: np.ndarray) -> np.ndarray | float:
        """The part of the gradient that does not depend on the grades."""
        return 0.0

    def sampled(self, s: np.ndarray, docs: np.ndarray, grades: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """sum_j weights_j h_j(s, R_j) over ``docs`` (order 1), or sum over ordered pairs
        ``docs = (a, b)``, ``grades = (R_a, R_b)`` (order 2)."""
        raise NotImplementedError

    def gradient(self, s: np.ndarray, grades: np.ndarray) -> np.ndarray:
        """The full-information gradient d phi / d s (every grade known)."""
        m = len(s)
        if self.order == 2:
            a, b = np.nonzero(~np.eye(m, dtype=bool))
            return self.sampled(s, (a, b), (grades[a], grades[b]), np.ones(len(a)))
        docs = np.arange(m)
        return self.known(s) + self.sampled(s, docs, grades, np.ones(m))


class Squared(Surrogate):
    """Pointwise squared loss ||s - R||^2; gradient 2 s - sum_j 2 R_j e_j (Cossock and Zhang)."""

    name = "squared"

    def loss(self, s, grades):
        return float(np.sum((s - grades) ** 2))

    def known(self, s):
        return 2.0 * s

    def sampled(self, s, docs, grades, weights):
        out = np.zeros(len(s))
        out[docs] -= 2.0 * grades * weights          # (documents are distinct)
        return out


class KL(Surrogate):
    """The paper's un-normalised KL divergence between exp(R) and exp(s) (modified ListNet):
    phi = sum_i e^{R_i} R_i - e^{R_i} s_i - e^{R_i} + e^{s_i}; h_j = (e^{s_j} - e^{R_j}) e_j."""

    name = "kl"

    def loss(self, s, grades):
        eR = np.exp(grades)
        return float(np.sum(eR * grades - eR * s - eR + np.exp(s)))

    def sampled(self, s, docs, grades, weights):
        out = np.zeros(len(s))
        out[docs] += (np.exp(s[docs]) - np.exp(grades)) * weights
        return out


class SmoothDCG(Surrogate):
    """Minus SmoothDCG@1 (Chapelle and Wu): phi = -sum_i G(R_i) p_i with p = softmax(s / epsilon).

    The paper writes the smoothed gain itself; a loss to minimise is its negative. Each term
    is h_j = -G(R_j) p_j (e_j - p) / epsilon. Not convex: no regret guarantee.
    """

    name = "smoothdcg"
    convex = False

    def __init__(self, epsilon: float = 0.01):
        self.epsilon = float(epsilon)

    def loss(self, s, grades):
        return float(-np.sum(gains(grades) * softmax(s / self.epsilon)))

    def sampled(self, s, docs, grades, weights):
        p = softmax(s / self.epsilon)
        c = gains(grades) * weights * p[docs] / self.epsilon
        out = c.sum() * p
        out[docs] -= c
        return out


class SmoothDCGAsWritten(SmoothDCG):
    """The paper's formula taken literally: phi = +sum_i G(R_i) p_i, the smoothed gain itself, handed to a
    descent step (Algorithm 1 subtracts the gradient), so the learner *lowers* the smoothed DCG. Kept to
    show, with a run, what the sign does to the paper's "SmoothDCG performs poorly"."""

    name = "smoothdcg_gain"

    def loss(self, s, grades):
        return -super().loss(s, grades)

    def sampled(self, s, docs, grades, weights):
        return -super().sampled(s, docs, grades, weights)


class RankSVM(Surrogate):
    """Pairwise hinge (RankSVM): phi = sum_{i != j} 1(R_i > R_j) max(0, 1 + s_j - s_i);
    h_ab = 1(R_a > R_b) 1(1 + s_b > s_a) (e_b - e_a). Needs two grades per term: top-2 feedback."""

    name = "ranksvm"
    order = 2

    def loss(self, s, grades):
        diff = 1.0 + s[None, :] - s[:, None]                    # [i, j] = 1 + s_j - s_i
        return float(np.sum((grades[:, None] > grades[None, :]) * np.maximum(diff, 0.0)))

    def sampled(self, s, docs, grades, weights):
        (a, b), (ra, rb) = docs, grades
        active = weights * ((ra > rb) & (1.0 + s[b] > s[a]))
        m = len(s)
        return np.bincount(b, active, m) - np.bincount(a, active, m)


class ListNet(Surrogate):
    """ListNet's top-1 cross entropy -sum_i softmax(R)_i log softmax(s)_i; gradient softmax(s) -
    softmax(R). Every term reads every grade, so top-k feedback cannot estimate it (Lemma 3)."""

    name = "listnet"
    order = None

    def loss(self, s, grades):
        log_p = s - s.max() - np.log(np.sum(np.exp(s - s.max())))
        return float(-np.sum(softmax(grades.astype(float)) * log_p))

    def gradient(self, s, grades):
        return softmax(s) - softmax(grades.astype(float))


SURROGATES = {"squared": Squared, "kl": KL, "ranksvm": RankSVM, "smoothdcg": SmoothDCG,
              "smoothdcg_gain": SmoothDCGAsWritten, "listnet": ListNet}
TOPK_SURROGATES = ("squared", "kl", "ranksvm", "smoothdcg", "smoothdcg_gain")


def make_surrogate(name: str, epsilon: float = 0.01) -> Surrogate:
    return SURROGATES[name](epsilon) if name.startswith("smoothdcg") else SURROGATES[name]()


def inclusion_probabilities(model_top: np.ndarray, docs: np.ndarray, m: int, k: int, gamma: float) -> np.ndarray:
    """P(each of ``docs`` is among the top k shown): (1 - gamma) 1[in the model's top k] + gamma k / m."""
    return (1.0 - gamma) * model_top[docs] + gamma * k / m


def pair_inclusion_probabilities(model_top: np.ndarray, a: np.ndarray, b: np.ndarray, m: int, k: int,
                                 gamma: float) -> np.ndarray:
    """P(a and b both among the top k shown): (1 - gamma) 1[both in the model's top k] + gamma k(k-1) / (m(m-1))."""
    return (1.0 - gamma) * (model_top[a] & model_top[b]) + gamma * k * (k - 1) / (m * (m - 1))


def estimate_gradient(surrogate: Surrogate, s: np.ndarray, shown_top: np.ndarray, grades: np.ndarray,
                      model_top: np.ndarray, gamma: float) -> np.ndarray:
    """The unbiased estimate of d phi / d s from the grades of the top k shown documents (line 9 of Alg. 1).

    ``shown_top``: the k documents shown first; ``grades``: their grades; ``model_top``: a
    boolean mask of the model's own top k; ``gamma``: this round's exploration probability.
    """
    m, k = len(s), len(shown_top)
    if surrogate.order == 1:
        pi = inclusion_probabilities(model_top, shown_top, m, k, gamma)
        return surrogate.known(s) + surrogate.sampled(s, shown_top, grades, 1.0 / pi)
    first, second = _ordered_pairs(k)
    if len(first) == 0:
        return np.zeros(m)
    a, b = shown_top[first], shown_top[second]
    weight = 1.0 / pair_inclusion_probabilities(model_top, a, b, m, k, gamma)
    return surrogate.sampled(s, (a, b), (grades[first], grades[second]), weight)


@functools.cache
def _ordered_pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Both orders (i, j) and (j, i) of every pair i < j of k positions."""
    i, j = np.triu_indices(k, 1)
    return np.concatenate([i, j]), np.concatenate([j, i])


@dataclass
class PlayedRound:
    """What one round played: the model's scores, the score vector actually played (the
    model's, or uniform on [0, 1]^m when exploring) and the surrogate that judges it."""

    model: np.ndarray
    played: np.ndarray
    model_order: np.ndarray
    gamma: float
    surrogate: Surrogate

    def audit(self, grades: np.ndarray) -> dict:
        """The surrogate losses phi(played, R) and phi(model, R) against the full grades (for the
        experimenter's regret measurement; the ranker never sees them)."""
        played = self.surrogate.loss(self.played, grades)
        model = played if self.played is self.model else self.surrogate.loss(self.model, grades)
        return {"played_loss": played, "model_loss": model}


def project_to_ball(w: np.ndarray, radius: float) -> np.ndarray:
    """min(1, U / ||w||) w: the Euclidean projection onto {||w|| <= U} (line 11 of Alg. 1)."""
    norm = float(np.sqrt(w @ w))
    return w * (radius / norm) if norm > radius else w


class _ProjectedOGD(LinearRanker):
    """Shared: step sizes eta_t = eta0 / t^eta_power and the projection onto the ball of radius U."""

    PARAMS = {"eta0": positive(), "eta_power": between(0, 1), "radius": positive()}

    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.t = 0

    def step(self, features: np.ndarray, grad_scores: np.ndarray) -> None:
        self.t += 1
        eta = self.eta0 / self.t ** self.eta_power
        self.w = project_to_ball(self.w - eta * (grad_scores @ features), self.radius)


SURROGATE_CODES = {"squared": 0, "kl": 1, "ranksvm": 2, "smoothdcg": 3, "smoothdcg_gain": 4}


@njit(cache=True)
def compiled_update(features, w, s, shown_top, grades, model_top, gamma, eta, radius, code, epsilon):
    """One RTop-kF update in place (lines 9-11 of Algorithm 1): the estimate of
    :func:`estimate_gradient` for the surrogate ``code`` (:data:`SURROGATE_CODES`), the step
    w - eta X^T g and the projection onto ||w|| <= radius. The tests compare it with the numpy
    reference. ``model_top``: boolean mask of the model's own top k."""
    m, k, d = features.shape[0], shown_top.shape[0], features.shape[1]
    g = np.zeros(m)
    if code == 2:                                           # RankSVM: pairs of the top k
        base = gamma * k * (k - 1) / (m * (m - 1)) if m > 1 else 0.0
        for i in range(k):
            for j in range(i + 1, k):
                a, b = shown_top[i], shown_top[j]
                weight = 1.0 / ((1.0 - gamma) * (1.0 if model_top[a] and model_top[b] else 0.0) + base)
                if grades[i] > grades[j] and 1.0 + s[b] > s[a]:
                    g[b] += weight
                    g[a] -= weight
                if grades[j] > grades[i] and 1.0 + s[a] > s[b]:
                    g[a] += weight
                    g[b] -= weight
    else:
        if code == 0:
            for i in range(m):
                g[i] = 2.0 * s[i]
        p = np.empty(0)
        if code >= 3:                                       # softmax(s / epsilon), without overflow
            top = s.max() / epsilon
            p = np.exp(s / epsilon - top)
            p /= p.sum()
        total = 0.0
        for r in range(k):
            j = shown_top[r]
            weight = 1.0 / ((1.0 - gamma) * (1.0 if model_top[j] else 0.0) + gamma * k / m)
            if code == 0:
                g[j] -= 2.0 * grades[r] * weight
            elif code == 1:
                g[j] += (np.exp(s[j]) - np.exp(grades[r])) * weight
            else:
                c = (2.0 ** grades[r] - 1.0) * weight * p[j] / epsilon
                g[j] -= c
                total += c
        if code >= 3:
            for i in range(m):
                g[i] += total * p[i]
        if code == 4:                                       # the smoothed gain as written: descend it
            for i in range(m):
                g[i] = -g[i]
    step = np.zeros(d)                                      # X^T g, each feature's sum over documents in order,
    for i in range(m):                                      # read row by row (the features' memory order)
        for f in range(d):
            step[f] += g[i] * features[i, f]
    norm = 0.0
    for f in range(d):
        w[f] -= eta * step[f]
        norm += w[f] * w[f]
    norm = np.sqrt(norm)
    if norm > radius:
        for f in range(d):
            w[f] *= radius / norm


@njit(cache=True)
def _model_first(s, noise, a, b):
    """Document a before b in the model's order, ``np.lexsort((noise, -s))``: higher score, then lower noise, then
    lower index."""
    return s[a] > s[b] or (s[a] == s[b] and (noise[a] < noise[b] or (noise[a] == noise[b] and a < b)))


@njit(cache=True)
def _model_top(s, noise, c):
    """The first ``c`` documents of ``np.lexsort((noise, -s))`` (scores all finite), by insertion into a sorted
    buffer: the order is a strict total one, so its top c are those of the full sort."""
    top = np.empty(c, dtype=np.int64)
    filled = 0
    for i in range(len(s)):
        if filled == c and not _model_first(s, noise, i, top[c - 1]):
            continue
        r = filled if filled < c else c - 1
        while r > 0 and _model_first(s, noise, i, top[r - 1]):
            if r < c:
                top[r] = top[r - 1]
            r -= 1
        top[r] = i
        filled = min(filled + 1, c)
    return top


@njit(cache=True)
def _uniform_top(uniform, c):
    """The first ``c`` documents of ``np.argsort(-uniform)``, or an empty array when a tie among the values that
    decide them leaves that order to the sort's implementation (argsort's default sort is not stable)."""
    m = len(uniform)
    need = min(c + 1, m)                                    # the top c, and the best of the rest below them
    top = np.empty(need, dtype=np.int64)
    filled = 0
    for i in range(m):
        u = uniform[i]
        if filled == need and not u > uniform[top[need - 1]]:
            continue
        r = filled if filled < need else need - 1
        while r > 0 and u > uniform[top[r - 1]]:
            if r < need:
                top[r] = top[r - 1]
            r -= 1
        top[r] = i
        filled = min(filled + 1, need)
    for r in range(1, need):
        if not uniform[top[r]] < uniform[top[r - 1]]:
            return np.empty(0, dtype=np.int64)
    return top[: min(c, m)]


@njit(cache=True)
def rtopkf_round(X, w, s, draws, at, labels, gamma, eta, radius, code, epsilon, k, shown_out_t):
    """One RTop-kF round once its scores ``s = X @ w`` are known, from its draws ``draws[at: at + 2m + 1]`` (the
    protocol's ``rng.random(m)`` of :func:`rank_by_scores`, ``rng.random()`` and ``rng.random(m)`` of
    :meth:`RTopKF.rank`): the model's order (lexsort of the noise and -s), explore with probability ``gamma``
    (lines 5-6: the order of the uniforms then), the shown list into ``shown_out_t`` and the update of
    :func:`compiled_update` from the grades of its top k. Returns 1.0 (explored) or 0.0, or -1.0 having changed
    nothing when the protocol must play the round: a score that is not finite, or tied uniforms."""
    m, c = X.shape[0], min(shown_out_t.shape[0], X.shape[0])
    for i in range(m):
        if not np.isfinite(s[i]):
            return -1.0
    noise = draws[at: at + m]
    explore = draws[at + m] < gamma
    model = _model_top(s, noise, c)
    shown = _uniform_top(draws[at + m + 1: at + 2 * m + 1], c) if explore else model
    if len(shown) < c:
        return -1.0
    shown_out_t[:c] = shown
    kk = min(k, m)
    model_top = np.zeros(m, dtype=np.bool_)
    grades = np.empty(kk)
    for r in range(kk):
        model_top[model[r]] = True
        grades[r] = labels[shown[r]]
    compiled_update(X, w, s, shown[:kk], grades, model_top, gamma, eta, radius, code, epsilon)
    return 1.0 if explore else 0.0


class CompiledRTopKF:
    """Plays blocks of rounds of a plain :class:`RTopKF` against a :class:`~olr_core.users.TopKRelevanceUser`,
    identical to the protocol path number for number (``tests/test_topk.py`` compares the two): the block's draws
    from the ranker's generator taken at once (the same numbers in the same order), each round's scores by the
    protocol's own numpy GEMV, the rest of the round in one compiled call (:func:`rtopkf_round`). A round that call
    declines is played by the protocol itself, the generator set back to where that round's draws begin."""

    def __init__(self, ranker: RTopKF, user, train, cutoff: int):
        self.ranker, self.user, self.train = ranker, user, train
        self.labels = np.ascontiguousarray(train.labels, dtype=np.int64)
        self.code = SURROGATE_CODES[ranker.surrogate.name]
        self.epsilon = getattr(ranker.surrogate, "epsilon", 1.0)

    def play(self, queries: np.ndarray, user_rng: np.random.Generator, shown_out: np.ndarray) -> dict:
        """One round per query; fills ``shown_out``; returns whether each round explored (RTopKF.rank's stats)."""
        r, offsets, features = self.ranker, self.train.offsets, self.train.features
        lo, hi = offsets[queries], offsets[queries + 1]
        starts = np.concatenate([[0], np.cumsum(2 * (hi - lo) + 1)]).tolist()
        generator = r.rng.bit_generator
        before = generator.state
        draws = r.rng.random(starts[-1])                    # every round's three draws of rank, at once
        after = None
        explored = np.empty(len(queries))
        for t, (a, b) in enumerate(zip(lo.tolist(), hi.tolist())):
            X = features[a:b]
            s = X @ r.w                                     # LinearRanker.score: the same GEMV, the same bits
            step = r.t + 1
            e = rtopkf_round(X, r.w, s, draws, starts[t], self.labels[a:b], r.gamma(step),
                             r.eta0 / step ** r.eta_power, r.radius, self.code, self.epsilon, r.k, shown_out[t])
            if e < 0:
                after = after or generator.state
                generator.state = before
                generator.advance(starts[t])
                e = self._protocol_round(int(queries[t]), user_rng, shown_out[t])
            else:
                r.t = step
            explored[t] = e
        if after is not None:
            generator.state = after
        return {"explored": explored}

    def _protocol_round(self, q: int, user_rng, shown_out_t: np.ndarray) -> float:
        """The round as :class:`olr_core.loop.ProtocolRounds` plays it."""
        query, r = self.train.query(q), self.ranker
        display = r.rank(query)
        shown = display.ranking[: len(shown_out_t)]
        shown_out_t[: len(shown)] = shown
        r.learn(query, display, self.user(query, shown, user_rng))
        return display.stats["explored"]


class RTopKF(_ProjectedOGD):
    """Algorithm 1 (RTop-kF) with one surrogate; ``k`` grades of feedback per round (default:
    the fewest the surrogate needs, 1 or 2), gamma_t = gamma0 / t^gamma_power, eta_t = eta0 /
    t^eta_power (the paper: 0.1 / t^(1/3) and 0.01 / t^(2/3)), U = ``radius``."""

    feedback_kind = "topk_labels"
    PARAMS = {"surrogate": choice(*TOPK_SURROGATES), "k": Param("int", 1, optional=True),
              "gamma0": between(0, 1, low_open=True), "gamma_power": between(0, 1), "epsilon": positive()}

    def __init__(self, surrogate: str = "squared", k: int | None = None, eta0: float = 0.01, eta_power: float = 2 / 3,
                 gamma0: float = 0.1, gamma_power: float = 1 / 3, radius: float = 1.0, epsilon: float = 0.01):
        self.surrogate = make_surrogate(surrogate, epsilon)
        order = self.surrogate.order
        self.k = order if k is None else int(k)
        if self.k < order:
            raise ParameterError(f"topk_{surrogate}: option k={k!r} is invalid; the {surrogate} surrogate's gradient "
                                 f"reads {order} grades per term and needs top-{order} feedback (k >= {order})")
        self.eta0, self.eta_power, self.gamma0, self.gamma_power = eta0, eta_power, gamma0, gamma_power
        self.radius = radius

    @property
    def feedback_depth(self) -> int:
        """How many grades from the top of the list each round's update reads."""
        return self.k

    def gamma(self, t: int) -> float:
        return self.gamma0 / t ** self.gamma_power

    def compiled_rounds(self, user, train, cutoff: int):
        """:class:`CompiledRTopKF` for this class itself against a top-k label user revealing at least k grades
        (the loop checks that) and the ranker's generator a PCG64 (its draws can be skipped over); otherwise None."""
        plain = type(self) is RTopKF and type(user) is TopKRelevanceUser and user.k >= self.k
        if not plain or type(self.rng.bit_generator) is not np.random.PCG64:
            return None
        return CompiledRTopKF(self, user, train, cutoff)

    def rank(self, query: Query) -> Display:
        """Lines 4-6: the model's order with probability 1 - gamma_t, else a uniformly random one."""
        s = self.score(query)
        order = rank_by_scores(s, self.rng)
        gamma = self.gamma(self.t + 1)
        explore = self.rng.random() < gamma
        uniform = self.rng.random(len(s))
        played, ranking = (uniform, np.argsort(-uniform)) if explore else (s, order)
        return Display(ranking, PlayedRound(s, played, order, gamma, self.surrogate), {"explored": float(explore)})

    def learn(self, query: Query, display: Display, feedback) -> None:
        """Lines 7-11: estimate the gradient from the top-k grades, step, project."""
        info, m = display.info, query.n_docs
        k = min(self.k, m)
        grades = np.asarray(feedback.labels, dtype=np.float64)
        if len(grades) < k:
            raise ValueError(f"topk_{self.surrogate.name} needs the grades of the top {k} documents but the user "
                             f"revealed {len(grades)}; use click model top{self.k}")
        model_top = np.zeros(m, dtype=bool)
        model_top[info.model_order[:k]] = True
        self.t += 1
        compiled_update(query.features, self.w, info.model, display.ranking[:k], grades[:k], model_top, info.gamma,
                        self.eta0 / self.t ** self.eta_power, self.radius, SURROGATE_CODES[self.surrogate.name],
                        getattr(self.surrogate, "epsilon", 1.0))

    def reference_learn(self, query: Query, display: Display, feedback) -> None:
        """The same update through the numpy estimator (:func:`estimate_gradient`): the tests' reference."""
        info, m = display.info, query.n_docs
        k = min(self.k, m)
        grades = np.asarray(feedback.labels, dtype=np.float64)
        model_top = np.zeros(m, dtype=bool)
        model_top[info.model_order[:k]] = True
        grad = estimate_gradient(self.surrogate, info.model, display.ranking[:k], grades[:k], model_top, info.gamma)
        self.step(query.features, grad)


class ListNetFull(_ProjectedOGD):
    """Online ListNet with every grade of the list revealed each round (the paper's full-feedback
    baseline): eta_t = eta0 / t^eta_power (0.01 / sqrt(t)), projected onto ||w|| <= U."""

    feedback_kind = "all_labels"

    def __init__(self, eta0: float = 0.01, eta_power: float = 0.5, radius: float = 1.0):
        self.eta0, self.eta_power, self.radius = eta0, eta_power, radius
        self.surrogate = ListNet()

    def rank(self, query: Query) -> Display:
        s = self.score(query)
        return Display(rank_by_scores(s, self.rng), PlayedRound(s, s, None, 0.0, self.surrogate))

    def learn(self, query: Query, display: Display, feedback) -> None:
        self.step(query.features, self.surrogate.gradient(display.info.model, np.asarray(feedback.labels, float)))
