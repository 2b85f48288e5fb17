"""Pairwise logistic (single-layer RankNet) rankers learned from clicks.

- PairRank (Jia et al. 2021, Algorithm 1): a RankNet fitted by regularised maximum
  likelihood on independent click pairs; pairs whose estimated order is certain (lower
  confidence bound of sigma(theta . x_ij) above 1/2) are kept, the others explored inside
  blocks; ``variant="R"`` shuffles each block, ``variant="C"`` keeps the certain orders in it.
- epsilon-greedy RankNet: the same model, exploring by placing a random document at each
  position with probability epsilon.
- SGD RankNet: one stochastic gradient step per round on the round's pairs, always exploits.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.special import expit

from ..kernels import lower_bound_above_half
from ..metrics import rank_by_scores
from ..params import FLAG, at_least, between, choice, positive
from .base import BaseRanker, Display
from .clickpairs import independent_pairs

OBJECTIVES = ("sum", "mean")


class OnlinePairwiseLogistic:
    """argmin_theta sum_p log(1 + exp(-theta . z_p)) + (l2/2)|theta|^2 over pair differences z_p.

    ``objective="sum"`` is that, the paper's form (PairRank, Eq. 4). ``objective="mean"`` is the
    reference code's: the *mean* loss over the n pairs so far plus l2 |theta|^2, whose minimiser
    is the sum form's with the weight 2 n l2 (a regularisation that grows with the data).

    Bounded cost per update: the ``window`` most recent pairs enter exactly; each older
    pair is replaced, when it leaves the window, by the second-order Taylor expansion of
    its loss at the current estimate (which aggregates into a vector ``c`` and a matrix
    ``H``). ``newton_steps`` warm-started Newton steps follow each update. While the
    history fits in the window this is the exact regularised MLE.
    """

    def __init__(self, n_features: int, l2: float = 0.1, window: int = 1000, newton_steps: int = 2,
                 objective: str = "sum"):
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}")
        self.base_l2, self.window, self.newton_steps = float(l2), int(window), int(newton_steps)
        self.objective = objective
        self.theta = np.zeros(n_features)
        self.pairs = np.zeros((self.window, n_features))
        self.count = 0                                   # pairs ever added
        self.c = np.zeros(n_features)
        self.H = np.zeros((n_features, n_features))

    @property
    def l2(self) -> float:
        """The sum form's regularisation weight: l2, or 2 n l2 for the mean form (n: pairs so far)."""
        return self.base_l2 if self.objective == "sum" else 2.0 * self.base_l2 * max(self.count, 1)

    def _active(self) -> np.ndarray:
        return self.pairs[: min(self.count, self.window)]

    def add(self, Z: np.ndarray) -> None:
        for z in Z:
            slot = self.count % self.window
            if self.count >= self.window:
                self._retire(self.pairs[slot])
            self.pairs[slot] = z
            self.count += 1

    def _retire(self, z: np.ndarray) -> None:
        m = z @ self.theta
        g = -expit(-m)
        h = expit(m) * expit(-m)
        self.c += (g - h * m) * z
        self.H += h * np.outer(z, z)

    def gradient_hessian(self, theta: np.ndarray, margins: np.ndarray | None = None):
        """Gradient and Hessian of the objective at ``theta`` (``margins``: Z theta, if already known)."""
        Z = self._active()
        p = expit(Z @ theta if margins is None else margins)
        grad = Z.T @ (p - 1.0) + self.c + self.H @ theta + self.l2 * theta
        S = Z * np.sqrt(p * (1.0 - p))[:, None]
        hess = S.T @ S + self.H
        hess.flat[:: len(theta) + 1] += self.l2
        return grad, hess

    def _loss_at(self, theta: np.ndarray, margins: np.ndarray) -> float:
        return float(np.logaddexp(0.0, -margins).sum() + self.c @ theta + 0.5 * theta @ self.H @ theta
                     + 0.5 * self.l2 * theta @ theta)

    def loss(self, theta: np.ndarray) -> float:
        """The exact objective over the active window plus the quadratic summary (for tests)."""
        return self._loss_at(theta, self._active() @ theta)

    def fit(self, steps: int | None = None) -> np.ndarray:
        """Damped Newton steps (backtracking until the objective decreases, Armijo rule); each trial's
        margins are reused by the next step's gradient."""
        Z = self._active()
        margins = Z @ self.theta
        current = self._loss_at(self.theta, margins)
        for _ in range(self.newton_steps if steps is None else steps):
            grad, hess = self.gradient_hessian(self.theta, margins)
            step = np.linalg.solve(hess, grad)
            slope, size = grad @ step, 1.0
            while True:
                trial = self.theta - size * step
                trial_margins = Z @ trial
                trial_loss = self._loss_at(trial, trial_margins)
                if trial_loss <= current - 1e-4 * size * slope or size <= 1e-6:
                    break
                size *= 0.5
            if trial_loss > current:                   # no decrease found: keep the current estimate
                break
            self.theta, margins, current = trial, trial_margins, trial_loss
        return self.theta


def click_pair_differences(query, display, feedback, rng, pairing: str) -> np.ndarray:
    """x_win - x_lose for the round's independent click pairs (rows; empty if there are none)."""
    win, lose = independent_pairs(feedback.clicks, rng, pairing)
    shown = display.ranking
    return query.features[shown[win]] - query.features[shown[lose]]


class _FittedRankNet(BaseRanker):
    """Shared by rankers that score with an :class:`OnlinePairwiseLogistic` model."""

    def score(self, docs) -> np.ndarray:
        return docs.features @ self.model.theta

    def weights(self) -> np.ndarray:
        return self.model.theta

    def evaluation_vector(self) -> np.ndarray | None:
        return self.model.theta if type(self).score is _FittedRankNet.score else None


@njit(cache=True)
def _order_blocks(certain, order, block_start, keys, conservative):
    """Within each block (a run of ``order``), shuffle (R) or random topological sort of certain pairs (C)."""
    n = len(order)
    out = np.empty(n, dtype=np.int64)
    n_blocks = len(block_start) - 1
    for b in range(n_blocks):
        lo, hi = block_start[b], block_start[b + 1]
        size = hi - lo
        members = order[lo:hi]
        indeg = np.zeros(size, dtype=np.int64)
        if conservative:
            for i in range(size):
                for j in range(size):
                    if certain[members[j], members[i]]:
                        indeg[i] += 1
        placed = np.zeros(size, dtype=np.bool_)
        for step in range(size):
            best = -1
            for i in range(size):
                if not placed[i] and indeg[i] == 0 and (best < 0 or keys[members[i]] > keys[members[best]]):
                    best = i
            out[lo + step] = members[best]
            placed[best] = True
            if conservative:
                for i in range(size):
                    if certain[members[best], members[i]]:
                        indeg[i] -= 1
    return out


def pair_probabilities_and_gram(X: np.ndarray, theta: np.ndarray, Minv: np.ndarray):
    """sigma(theta . x_ij) for all pairs, the Gram matrix X M^-1 X^T and the scores X theta."""
    s = X @ theta
    return expit(s[:, None] - s[None, :]), X @ Minv @ X.T, s


def pairwise_uncertainty(X: np.ndarray, theta: np.ndarray, Minv: np.ndarray):
    """sigma(theta . x_ij) and ||x_ij||_{M^-1} for all pairs at once (one quadratic form, no loop)."""
    prob, G, s = pair_probabilities_and_gram(X, theta, Minv)
    diag = np.diag(G)
    norms = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2.0 * G, 0.0))
    return prob, norms, s


def transitive_closure(relation: np.ndarray) -> np.ndarray:
    """The transitive closure of a boolean relation (repeated squaring, about log2(n) products)."""
    closed = relation.copy()
    while True:
        step = closed | ((closed.astype(np.float64) @ closed.astype(np.float64)) > 0)
        if (step == closed).all():
            return closed
        closed = step


@njit(cache=True)
def _block_starts(certain, order):
    """Start of each block of ``order`` and n: a block ends at the first position r where no document at
    or before r has an uncertain partner (neither order certain) below r."""
    n = len(order)
    position = np.empty(n, dtype=np.int64)
    for r in range(n):
        position[order[r]] = r
    starts = np.empty(n + 1, dtype=np.int64)
    starts[0], count, furthest = 0, 1, -1
    for r in range(n):
        i = order[r]
        reach = r
        for c in range(n):
            if c != i and not certain[i, c] and not certain[c, i] and position[c] > reach:
                reach = position[c]
        furthest = max(furthest, reach)
        if furthest == r:
            starts[count] = r + 1
            count += 1
    return starts[:count]


def certain_blocks(certain: np.ndarray, scores: np.ndarray, rng: np.random.Generator):
    """Documents in score order and the start of each block.

    Certain orders agree with the score order, so blocks (connected components of the
    uncertain-pair graph, merged wherever certain orders between them would form a cycle)
    are the finest runs of the score order that no uncertain pair straddles.
    """
    order = rank_by_scores(scores, rng)
    return order, _block_starts(certain, order)


@njit(cache=True)
def _display_counts(certain, ranking, top):
    """(certain orders among all pairs, pairs of the first ``top`` shown with either order certain, counted
    both ways as (decided | decided^T).sum() counts them)."""
    n = certain.shape[0]
    total = 0
    for i in range(n):
        for j in range(n):
            total += certain[i, j]
    shown = ranking[:top]
    decided = 0
    for a in shown:
        for b in shown:
            decided += certain[a, b] or certain[b, a]
    return total, decided


def display_certain_orders(certain: np.ndarray, scores: np.ndarray, rng: np.random.Generator,
                           conservative: bool, top: int = 10) -> Display:
    """The list of PairRank's Algorithm 1 (lines 7-8) for any scorer: documents in blocks of
    uncertain pairs, each block shuffled (R) or randomly topologically sorted along its certain
    orders (C, ``conservative``). Diagnostics: the number of blocks, of uncertain pairs, the block
    size at each of the first ``top`` positions, and the share of certain orders among the pairs
    shown in the first ``top`` positions (Jia & Wang 2022, Figure 6)."""
    order, starts = certain_blocks(certain, scores, rng)
    ranking = _order_blocks(certain, order, starts, rng.random(len(scores)), conservative)
    sizes = np.diff(starts)
    size_at = np.repeat(sizes, sizes)[:top].tolist()
    n = len(scores)
    total, decided = _display_counts(certain, ranking, top)
    shown = min(n, top)
    shown_pairs = shown * (shown - 1) / 2
    stats = {"n_blocks": float(len(sizes)), "uncertain_pairs": float(n * (n - 1) / 2 - total),
             "certain_ratio_top": float(decided / 2 / shown_pairs) if shown_pairs else 1.0}
    stats.update({f"block_size_at_{r}": float(size) for r, size in enumerate(size_at, 1)})
    return Display(ranking, stats=stats)


class PairRank(_FittedRankNet):
    """PairRank_R (``variant="R"``) or PairRank_C (``variant="C"``), Algorithm 1 of Jia et al. (2021).

    Confidence width ``alpha * ||x_ij||_{M^-1}``: ``alpha`` a tuned constant (the experiments'
    choice) or, with ``alpha_rule="theory"``, Lemma 2's
    ``(2 k_mu / c_mu) (sqrt(R^2 log(det M / (delta^2 det(l2 I)))) + sqrt(l2) Q)``.
    """

    PARAMS = {"variant": choice("R", "C"), "alpha": at_least(0, "float"), "l2": positive(),
              "alpha_rule": choice("constant", "theory"), "delta": between(0, 1, True, True),
              "subgaussian": positive(), "theta_bound": positive(), "pair_norm_bound": positive(),
              "pairing": choice("adjacent", "shuffled"), "window": at_least(1), "newton_steps": at_least(1),
              "objective": choice(*OBJECTIVES), "refine": FLAG}

    def __init__(self, variant: str = "C", alpha: float = 0.1, l2: float = 0.1, alpha_rule: str = "constant",
                 delta: float = 0.1, subgaussian: float = 0.5, theta_bound: float = 1.0, pair_norm_bound: float = 1.0,
                 pairing: str = "adjacent", window: int = 1000, newton_steps: int = 2, objective: str = "sum",
                 refine: bool = False):
        self.variant, self.alpha, self.l2, self.alpha_rule = variant, float(alpha), float(l2), alpha_rule
        self.delta, self.subgaussian = float(delta), float(subgaussian)
        self.theta_bound, self.pair_norm_bound = float(theta_bound), float(pair_norm_bound)
        self.pairing, self.window, self.newton_steps = pairing, int(window), int(newton_steps)
        self.objective, self.refine = objective, bool(refine)

    def start(self, train, rng) -> None:
        super().start(train, rng)
        d = train.n_features
        self.model = OnlinePairwiseLogistic(d, self.l2, self.window, self.newton_steps, self.objective)
        self.Minv = np.eye(d) / self.l2
        self.logdet_ratio = 0.0                          # log det M - log det(l2 I)

    def width(self) -> float:
        if self.alpha_rule == "constant":
            return self.alpha
        k_mu = 0.25
        edge = self.theta_bound * self.pair_norm_bound
        c_mu = expit(edge) * expit(-edge)
        log_term = self.subgaussian ** 2 * (self.logdet_ratio - 2.0 * np.log(self.delta))
        return (2 * k_mu / c_mu) * (np.sqrt(max(log_term, 0.0)) + np.sqrt(self.l2) * self.theta_bound)

    def certain_pairs(self, X: np.ndarray):
        """Certain orders (lower confidence bound above 1/2), closed transitively with ``refine``
        (the reference code's option: i > j and j > k certain make i > k certain)."""
        prob, gram, scores = pair_probabilities_and_gram(X, self.model.theta, self.Minv)
        certain = lower_bound_above_half(prob, gram, self.width())
        return (transitive_closure(certain) if self.refine else certain), scores

    def rank(self, query) -> Display:
        certain, scores = self.certain_pairs(query.features)
        return display_certain_orders(certain, scores, self.rng, self.variant == "C")

    def learn(self, query, display, feedback) -> dict:
        Z = click_pair_differences(query, display, feedback, self.rng, self.pairing)
        if len(Z) == 0:
            return {"pairs": 0.0}
        for z in Z:                                        # Sherman-Morrison: M += z z^T
            Mz = self.Minv @ z
            denom = 1.0 + z @ Mz
            self.Minv -= np.outer(Mz, Mz) / denom
            self.logdet_ratio += np.log(denom)
        self.model.add(Z)
        self.model.fit()
        return {"pairs": float(len(Z))}


@njit(cache=True)
def _epsilon_greedy(order, explore, picks):
    """Fill positions: the best remaining document, or with ``explore[r]`` a random remaining one."""
    n = len(order)
    taken = np.zeros(n, dtype=np.bool_)
    out = np.empty(n, dtype=np.int64)
    best = 0
    for r in range(n):
        if explore[r]:
            k = int(picks[r] * (n - r))
            for doc in order:
                if not taken[doc]:
                    if k == 0:
                        out[r] = doc
                        taken[doc] = True
                        break
                    k -= 1
        else:
            while taken[order[best]]:
                best += 1
            out[r] = order[best]
            taken[order[best]] = True
    return out


class EpsilonGreedyRankNet(_FittedRankNet):
    """RankNet on independent click pairs (as PairRank), exploring with probability ``epsilon`` per position."""

    PARAMS = {"epsilon": between(0, 1), "l2": positive(), "pairing": choice("adjacent", "shuffled"),
              "window": at_least(1), "newton_steps": at_least(1), "objective": choice(*OBJECTIVES)}

    def __init__(self, epsilon: float = 0.1, l2: float = 0.1, pairing: str = "adjacent", window: int = 1000,
                 newton_steps: int = 2, objective: str = "sum"):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon, self.l2, self.pairing = float(epsilon), float(l2), pairing
        self.window, self.newton_steps, self.objective = int(window), int(newton_steps), objective

    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.model = OnlinePairwiseLogistic(train.n_features, self.l2, self.window, self.newton_steps,
                                            self.objective)

    def rank(self, query) -> Display:
        n = query.n_docs
        order = rank_by_scores(query.features @ self.model.theta, self.rng)
        draws = self.rng.random((2, n))
        return Display(_epsilon_greedy(order, draws[0] < self.epsilon, draws[1]))

    def learn(self, query, display, feedback) -> dict:
        Z = click_pair_differences(query, display, feedback, self.rng, self.pairing)
        if len(Z):
            self.model.add(Z)
            self.model.fit()
        return {"pairs": float(len(Z))}


class SGDRankNet(BaseRanker):
    """RankNet by one stochastic gradient step per round on its click pairs; ranks greedily."""

    PARAMS = {"learning_rate": positive(), "l2": at_least(0, "float"), "pairing": choice("adjacent", "shuffled")}

    def __init__(self, learning_rate: float = 0.1, l2: float = 0.0, pairing: str = "adjacent"):
        self.learning_rate, self.l2, self.pairing = float(learning_rate), float(l2), pairing

    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.theta = np.zeros(train.n_features)

    def learn(self, query, display, feedback) -> dict:
        Z = click_pair_differences(query, display, feedback, self.rng, self.pairing)
        if len(Z):
            grad = Z.T @ expit(-(Z @ self.theta)) - self.l2 * self.theta
            self.theta = self.theta + self.learning_rate * grad
        return {"pairs": float(len(Z))}

    def score(self, docs) -> np.ndarray:
        return docs.features @ self.theta

    def weights(self) -> np.ndarray:
        return self.theta

    def evaluation_vector(self) -> np.ndarray | None:
        return self.theta if type(self).score is SGDRankNet.score else None
