"""Rankers for a growing library whose user reveals one chosen item (Delage, KDD 2009).

Every ranker here scores items by one parameter per item (the paper's one-hot features
Phi_t(q, I_i) = e_i, whose dimension grows with the library) and learns from
:class:`olr_core.users.Choice` feedback; see :mod:`olr_core.library_loop` for the loop.

- :class:`KLRank`: the K-L cost -theta_j + log sum_I exp(theta_I) minimised by GPER (Table 1
  of the paper): projected online gradient descent over the ball ||theta|| <= alpha 2^(m/4)
  in cycle m, cycles of 2^(m-1) steps, step r_m / sqrt(2 k) at the k-th step of a cycle
  (D_m / (2 sqrt(2) F_m) / sqrt(k) with D_m = 2 r_m, F_m = 1). ``policy="random"``
  samples a Plackett-Luce ranking from theta (NoRegret KLRank); ``"greedy"`` sorts by theta.
- :class:`OnlineRankNet`: the paper's pairwise loss (chosen item against every other
  candidate, averaged) by the same GPER updates; ranks by theta.
- :class:`CategoryRanking`, :class:`McRank`, :class:`HITS`, :class:`PageRank`: the baselines.

Updates touch only the candidates' parameters: theta is stored as ``scale * v`` with its
squared norm tracked, so the projection onto the ball costs O(1), and a step O(|I_t|),
whatever the size of the library. No ranker here reads its own ranking when it learns, so a
round's display is a :class:`SortedOnRead`: its sort keys, drawn exactly as the full sort draws
them, sorted only if something reads the ranking; the loop asks for the chosen item's position,
which is counted in O(|I_t|) (``sort_every_round = True`` sorts every round: the reference path
the tests compare with, bit for bit).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import expit

from ..kernels import gathered_bincount, lexsort_position, normalise_and_change, scaled_add
from ..metrics import rank_by_scores
from ..params import FLAG, at_least, between, choice, positive
from .base import BaseRanker, Display


class SortedOnRead(Display):
    """A display ranked by ``np.lexsort(keys)`` (one or two keys, the last primary; full ties by index), sorted
    only when ``ranking`` is read; ``position`` counts the candidates that sort before one instead of sorting."""

    def __init__(self, keys: tuple, info=None):
        self.keys = keys
        super().__init__(None, info)

    @property
    def ranking(self) -> np.ndarray:
        if self._ranking is None:
            self._ranking = np.lexsort(self.keys)
        return self._ranking

    @ranking.setter
    def ranking(self, value) -> None:
        self._ranking = value

    def position(self, item: int) -> int:
        """Where the ranking shows ``item`` (0 = first), in O(n)."""
        if self._ranking is not None:
            return int(np.flatnonzero(self._ranking == item)[0])
        primary = self.keys[-1]
        secondary = self.keys[0] if len(self.keys) > 1 else primary      # (one key: its ties by index)
        return int(lexsort_position(primary, secondary, item))


class ScaledVector:
    """theta = scale * v over all items, with ||theta||^2 kept up to date: O(|items|) updates and an
    O(1) projection onto a ball."""

    def __init__(self, n: int):
        self.v = np.zeros(n)
        self.scale = 1.0
        self.sq = 0.0               # sum of v^2

    def get(self, items: np.ndarray) -> np.ndarray:
        return self.scale * self.v[items]

    def add(self, items: np.ndarray, delta: np.ndarray) -> None:
        """theta[items] += delta (items distinct)."""
        old, new = np.empty(len(items)), np.empty(len(items))
        scaled_add(self.v, items, np.asarray(delta, dtype=float), self.scale, old, new)
        self.sq += float(new @ new - old @ old)

    def norm(self) -> float:
        return self.scale * math.sqrt(max(self.sq, 0.0))

    def project(self, radius: float) -> None:
        """theta <- min(1, radius / ||theta||) theta."""
        norm = self.norm()
        if norm > radius:
            self.scale *= radius / norm
            if self.scale < 1e-8:                       # fold the scale back in before it underflows
                self.v *= self.scale
                self.sq = float(self.v @ self.v)
                self.scale = 1.0

    def dense(self) -> np.ndarray:
        return self.scale * self.v


def cycle_radius(alpha: float, m: int) -> float:
    """The radius of GPER's feasible ball in cycle m: alpha T_m^(1/4), T_m = 2^m - 1 (the cycle's last step)."""
    return alpha * ((1 << m) - 1) ** 0.25


class GPER:
    """The step sizes and feasible sets of Greedy Projection with Exponential Restart (Table 1).

    Step t (from 1) lies in cycle m = floor(log2 t) + 1, which covers t = 2^(m-1) .. 2^m - 1;
    the radius is alpha T_m^(1/4) with T_m = 2^m - 1 (the paper's Practical Example, Part 3: so that
    D_m F_m = 2 alpha T_m^(1/4) < K 2^(m/4) with K = 2 alpha, the strict inequality of Assumption 4.3),
    and the k-th step of the cycle has size radius / sqrt(2 k).
    """

    def __init__(self, alpha: float):
        self.alpha = alpha

    @staticmethod
    def cycle(t: int) -> int:
        return t.bit_length()

    def radius(self, t: int) -> float:
        return cycle_radius(self.alpha, self.cycle(t))

    def step(self, t: int) -> float:
        k = t - (1 << (self.cycle(t) - 1)) + 1
        return self.radius(t) / math.sqrt(2.0 * k)


def log_softmax(theta: np.ndarray) -> np.ndarray:
    """log P(first = i) = theta_i - log sum exp(theta), without overflow."""
    shifted = theta - theta.max()
    return shifted - math.log(np.exp(shifted).sum())


def kl_cost_and_gradient(theta: np.ndarray, chosen: int, log_first: np.ndarray | None = None):
    """cost = -theta_j + log sum exp(theta) = -log P(first = j); gradient softmax(theta) - e_j (Section 3.2)."""
    log_first = log_softmax(theta) if log_first is None else log_first
    grad = np.exp(log_first)
    grad[chosen] -= 1.0
    return float(-log_first[chosen]), grad


def pairwise_loss_and_gradient(theta: np.ndarray, chosen: int) -> tuple[float, np.ndarray]:
    """Online RankNet's loss (1/(n-1)) sum_{i != j} log(1 + exp(theta_i - theta_j)) and its gradient."""
    n = len(theta)
    diff = theta - theta[chosen]
    diff[chosen] = -np.inf
    grad = expit(diff) / (n - 1)
    grad[chosen] = -grad.sum()
    loss = float(np.logaddexp(0.0, diff[np.arange(n) != chosen]).sum() / (n - 1))
    return loss, grad


def plackett_luce_ranking(theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A ranking drawn from the Plackett-Luce model with weights exp(theta): sort theta + Gumbel noise
    (the first item is i with probability softmax(theta)_i, the rest recursively; no overflow)."""
    return np.argsort(plackett_luce_keys(theta, rng), kind="stable")


def plackett_luce_keys(theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The sort keys of :func:`plackett_luce_ranking`: -(theta + Gumbel noise), ascending."""
    return -(theta - np.log(-np.log(rng.random(len(theta)))))


def tie_broken_display(scores: np.ndarray, rng: np.random.Generator, info=None) -> SortedOnRead:
    """The display of :func:`olr_core.metrics.rank_by_scores` (scores descending, ties by uniform noise drawn
    from ``rng`` the same way), sorted only when read."""
    return SortedOnRead((rng.random(scores.shape), -scores), info)


class _PerItemRanker(BaseRanker):
    """One parameter per item of the library; ranks the candidates by it unless told otherwise."""

    feedback_kind = "choice"
    sort_every_round = False        # True: the reference path (a full sort each round, as before SortedOnRead)

    def start(self, stream, rng) -> None:
        self.rng = rng
        self.n_items = stream.n_items
        self.t = 0

    def score(self, query) -> np.ndarray:
        return self.theta.get(query.candidates)

    def rank(self, query) -> Display:
        return self.ranked(self.score(query))

    def ranked(self, scores, info=None) -> Display:
        """The candidates by ``scores``, ties at random (:func:`olr_core.metrics.rank_by_scores`)."""
        if self.sort_every_round:
            return Display(rank_by_scores(scores, self.rng), info)
        return tie_broken_display(scores, self.rng, info)


class KLRank(_PerItemRanker):
    """NoRegret KLRank (``policy="random"``) and Greedy KLRank (``"greedy"``), learned by GPER."""

    PARAMS = {"alpha": positive(), "policy": choice("random", "greedy"), "reset": FLAG}

    def __init__(self, policy: str = "random", alpha: float = 10.0, reset: bool = False):
        self.policy, self.alpha, self.reset = policy, float(alpha), bool(reset)

    def start(self, stream, rng) -> None:
        super().start(stream, rng)
        self.theta = ScaledVector(stream.n_items)
        self.schedule = GPER(self.alpha)

    def rank(self, query) -> Display:
        theta = self.theta.get(query.candidates)
        if self.policy == "greedy":
            return self.ranked(theta, {"theta": theta})
        info = {"theta": theta, "log_first": log_softmax(theta)}
        if self.sort_every_round:
            return Display(plackett_luce_ranking(theta, self.rng), info)
        return SortedOnRead((plackett_luce_keys(theta, self.rng),), info)

    def loss_and_gradient(self, info, chosen):
        return kl_cost_and_gradient(info["theta"], chosen, info.get("log_first"))

    def learn(self, query, display, feedback) -> dict:
        """One GPER step on this query's loss (line 4 of Table 1), restarting the step size each cycle."""
        self.t += 1
        if self.reset and self.t > 1 and (self.t & (self.t - 1)) == 0:      # a new cycle starts at t = 2^(m-1)
            self.theta = ScaledVector(self.n_items)
        loss, grad = self.loss_and_gradient(display.info, feedback.document)
        self.theta.add(query.candidates, -self.schedule.step(self.t) * grad)
        self.theta.project(self.schedule.radius(self.t))
        return {"loss": loss}


class OnlineRankNet(KLRank):
    """The paper's online RankNet: its pairwise loss updated by GPER, items ranked by theta."""

    def __init__(self, alpha: float = 10.0, reset: bool = False):
        super().__init__("greedy", alpha, reset)

    def loss_and_gradient(self, info, chosen):
        return pairwise_loss_and_gradient(info["theta"], chosen)


class CategoryRanking(_PerItemRanker):
    """Online category ranking (Crammer and Singer, COLT 2005) with items as the categories.

    Our variant, written down because the paper does not say which one it ran: the uniform
    update of their family with a passive-aggressive step. The chosen item j should beat every
    other candidate by a margin of 1; E is the set of candidates that violate it. With
    l = mean_{i in E} (1 - (theta_j - theta_i)), theta_j += tau and theta_i -= tau / |E| for i in
    E, with tau = min(C, l |E| / (|E| + 1)): the smallest uniform step that brings the mean
    margin over E to 1, capped by the aggressiveness C. There are no query features here
    (one-hot items), so the categories' prototypes are single numbers.
    """

    PARAMS = {"aggressiveness": positive()}

    def __init__(self, aggressiveness: float = 1.0):
        self.aggressiveness = float(aggressiveness)

    def start(self, stream, rng) -> None:
        super().start(stream, rng)
        self.theta = ScaledVector(stream.n_items)

    def learn(self, query, display, feedback) -> dict:
        theta = self.theta.get(query.candidates)
        j = feedback.document
        violators = np.flatnonzero(theta[j] - theta < 1.0)
        violators = violators[violators != j]
        if len(violators) == 0:
            return {"loss": 0.0}
        loss = float(np.mean(1.0 - (theta[j] - theta[violators])))
        tau = min(self.aggressiveness, loss * len(violators) / (len(violators) + 1))
        delta = np.zeros(len(theta))
        delta[j] = tau
        delta[violators] = -tau / len(violators)
        self.theta.add(query.candidates, delta)
        return {"loss": loss}


class McRank(_PerItemRanker):
    """Two-class McRank: logistic regression of "chosen" (1) against "not chosen" (0) for each candidate,
    learned online: theta_i -= eta / sqrt(n_i) (sigmoid(theta_i) - y_i) with n_i the times item i was a
    candidate. Its offline solution sorts items by the empirical choice proportion
    p_i = (times chosen) / (times a candidate), theta_i = log(p_i / (1 - p_i)) (Section 5.1)."""

    PARAMS = {"learning_rate": positive()}

    def __init__(self, learning_rate: float = 1.0):
        self.learning_rate = float(learning_rate)

    def start(self, stream, rng) -> None:
        super().start(stream, rng)
        self.theta = ScaledVector(stream.n_items)
        self.seen = np.zeros(stream.n_items)

    def learn(self, query, display, feedback) -> dict:
        items = query.candidates
        theta = self.theta.get(items)
        y = np.zeros(len(items))
        y[feedback.document] = 1.0
        p = expit(theta)
        self.seen[items] += 1
        self.theta.add(items, -self.learning_rate / np.sqrt(self.seen[items]) * (p - y))
        loss = -float(np.log(np.where(y == 1, p, 1 - p) + 1e-300).sum())
        return {"loss": loss}


class _GraphRanker(_PerItemRanker):
    """Authority computed from the citation graph known when the query arrives (the citations made by
    papers already in the library), refreshed whenever the library has grown by ``refresh_every`` items."""

    PARAMS = {"refresh_every": at_least(1), "tolerance": positive(), "max_iterations": at_least(1)}

    def __init__(self, refresh_every: int = 25, tolerance: float = 1e-8, max_iterations: int = 100):
        self.refresh_every, self.tolerance, self.max_iterations = int(refresh_every), tolerance, int(max_iterations)

    def start(self, stream, rng) -> None:
        super().start(stream, rng)
        self.citing, self.cited = (np.ascontiguousarray(stream.citations[:, k], dtype=np.int64) for k in (0, 1))
        self.scores = np.zeros(stream.n_items)
        self.refreshed_at = -self.refresh_every

    def score(self, query) -> np.ndarray:
        if query.library_size - self.refreshed_at >= self.refresh_every:
            known = int(np.searchsorted(self.citing, query.library_size))
            self.scores = self.authority(self.citing[:known], self.cited[:known], query.library_size, self.scores)
            self.refreshed_at = query.library_size
        return self.scores[query.candidates]


class HITS(_GraphRanker):
    """Kleinberg's authority: the principal eigenvector of A^T A, A[i, j] = 1 if i cites j (power
    iteration, warm-started from the previous scores)."""

    def authority(self, citing, cited, n, previous):
        return hits_authority(citing, cited, n, previous[:n], self.tolerance, self.max_iterations, len(previous))


class PageRank(_GraphRanker):
    """PageRank of a random surfer on the citation graph with restart probability 1 - damping
    (dangling papers link to every paper of the library)."""

    PARAMS = {"damping": between(0, 1, high_open=True)}

    def __init__(self, damping: float = 0.85, refresh_every: int = 25, tolerance: float = 1e-8,
                 max_iterations: int = 100):
        super().__init__(refresh_every, tolerance, max_iterations)
        self.damping = float(damping)

    def authority(self, citing, cited, n, previous):
        return pagerank(citing, cited, n, self.damping, previous[:n], self.tolerance, self.max_iterations,
                        len(previous))


def load_kernels() -> None:
    """Dispatch this module's compiled kernels once on throwaway arrays: the first compiled call of a process
    loads numba's machine code (a fixed cost of the process, not of a run; cf.
    :meth:`olr_core.loop.OfflineEvaluator.load_kernel`)."""
    values, index = np.zeros(2), np.zeros(2, dtype=np.int64)
    lexsort_position(values, values, 0)
    scaled_add(np.zeros(2), np.arange(2), values, 1.0, np.empty(2), np.empty(2))
    gathered_bincount(index, index, values, np.empty(2))
    normalise_and_change(np.ones(2), 1.0, values)


def hits_authority(citing, cited, n, start=None, tolerance=1e-8, max_iterations=100, size=None) -> np.ndarray:
    """Authority scores of the n nodes (a = A^T A a, normalised), padded with zeros to ``size``."""
    citing, cited = _citations_among(citing, cited, n)
    a = np.ones(n) if start is None or not np.any(start) else np.where(start > 0, start, 1e-3)
    a /= np.linalg.norm(a) or 1.0
    hub, new = np.empty(n), np.empty(n)
    for _ in range(max_iterations):
        gathered_bincount(citing, cited, a, hub)            # hub = A a
        gathered_bincount(cited, citing, hub, new)          # new = A^T hub
        norm = np.linalg.norm(new)
        if norm == 0:
            break
        done = normalise_and_change(new, norm, a) < tolerance
        a, new = new, a                                     # (the old vector's memory takes the next sweep)
        if done:
            break
    return np.pad(a, (0, (size or n) - n))


def _citations_among(citing, cited, n) -> tuple[np.ndarray, np.ndarray]:
    """The (citing, cited) columns as contiguous int64 arrays, refused when they name a node outside 0 .. n-1."""
    citing, cited = np.ascontiguousarray(citing, dtype=np.int64), np.ascontiguousarray(cited, dtype=np.int64)
    if len(citing) and (min(citing.min(), cited.min()) < 0 or max(citing.max(), cited.max()) >= n):
        raise ValueError(f"a citation names a paper outside the {n} papers of the library (ids 0 .. {n - 1})")
    return citing, cited


def pagerank(citing, cited, n, damping=0.85, start=None, tolerance=1e-8, max_iterations=100,
             size=None) -> np.ndarray:
    """The stationary distribution of the damped random surfer on the n nodes, padded to ``size``."""
    citing, cited = _citations_among(citing, cited, n)
    out_degree = np.bincount(citing, minlength=n).astype(float)
    p = np.full(n, 1.0 / n) if start is None or not np.any(start) else np.where(start > 0, start, 1.0 / n)
    p /= p.sum()
    dangling = out_degree == 0
    weight = 1.0 / np.where(dangling, 1.0, out_degree)
    flow = np.empty(n)
    for _ in range(max_iterations):
        gathered_bincount(cited, citing, p * weight, flow)
        new = (1 - damping) / n + damping * (flow + p[dangling].sum() / n)
        done = np.abs(new - p).sum() < tolerance
        p = new
        if done:
            break
    return np.pad(p, (0, (size or n) - n))
