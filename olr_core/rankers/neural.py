"""Neural rankers learned online (Jia & Wang 2022): olRankNet, olLambdaRank and the GT skyline.

olRankNet (their Algorithm 1) scores documents with the two-layer ReLU network of
:class:`.scorers.ReLUScorer` and learns it from independent click pairs by RankNet's
cross-entropy (Eq. 3.2). Its exploration is PairRank's: a pair's order is *certain* when

    sigma(f_i - f_j) - alpha * ||(g_i - g_j) / sqrt(m)||_{A^-1} > 1/2          (Definition 3.4)

with g the gradient of the score with respect to all network parameters (the tangent
features) and A = lambda I + sum over observed pairs of (g_i - g_j)(g_i - g_j)^T / m
(line 12); certain orders are kept, uncertain ones explored inside blocks
(:func:`.pairwise.display_certain_orders`, the same code as PairRank). As in the paper's
experiments A is kept as its diagonal; ``uncertainty="full"`` keeps the whole matrix where
the parameter count allows, to show what the diagonal loses.

Training has a fixed budget per round (``training="replay"``): ``steps`` mini-batch steps
over a bounded replay of the most recent ``replay`` pairs, so the cost per round is flat in
t. ``training="history"`` is the reference code's choice, ``epochs`` passes over every pair
seen so far each round (a cost that grows with t), kept to compare the two.

olLambdaRank weights each pair by |1/log2(r_i + 2) - 1/log2(r_j + 2)| / IDCG of the clicks
(r: 0-based display positions). olLambdaRank GT refits a LambdaRank network on the true
grades of the queries presented so far: a skyline that reads labels, like the oracle.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from numba import njit
from scipy.special import expit

from ..kernels import lower_bound_above_half
from ..loop import NonFiniteModelError
from ..params import FLAG, at_least, choice, positive
from .base import BaseRanker, Display
from .clickpairs import independent_pairs
from .pairwise import display_certain_orders
from .scorers import ReLUScorer

FULL_MATRIX_LIMIT = 4000      # parameters; a full A^-1 is p x p doubles


class Adam:
    """Adam (Kingma & Ba 2015) on a flat parameter vector: the reference code's optimiser."""

    def __init__(self, size: int, learning_rate: float, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = learning_rate, beta1, beta2, eps
        self.m, self.v, self.t = np.zeros(size), np.zeros(size), 0
        self._work = (np.empty(size), np.empty(size))

    def step(self, theta: np.ndarray, grad: np.ndarray) -> np.ndarray:
        """theta - lr m_hat / (sqrt(v_hat) + eps) (Algorithm 1 of Kingma & Ba), every product and sum in the
        textbook order, written into preallocated buffers (the same floating-point operations, no temporaries)."""
        self.t += 1
        work, work2 = self._work
        self.m *= self.beta1
        self.m += np.multiply(1 - self.beta1, grad, out=work)            # beta1 m + (1 - beta1) g
        self.v *= self.beta2
        np.multiply(1 - self.beta2, grad, out=work)
        self.v += np.multiply(work, grad, out=work)                       # beta2 v + ((1 - beta2) g) g
        np.divide(self.v, 1 - self.beta2 ** self.t, out=work2)            # v_hat
        np.sqrt(work2, out=work2)
        work2 += self.eps
        np.divide(self.m, 1 - self.beta1 ** self.t, out=work)             # m_hat
        work *= self.lr
        work /= work2
        return theta - work


class GradientDescent:
    """Plain gradient steps of size ``learning_rate`` (the paper's Algorithm 1, line 11)."""

    def __init__(self, size: int, learning_rate: float):
        self.lr = learning_rate

    def step(self, theta: np.ndarray, grad: np.ndarray) -> np.ndarray:
        return theta - self.lr * grad


OPTIMIZERS = {"adam": Adam, "sgd": GradientDescent}


class PairBuffer:
    """Winner / loser feature rows and weights of click pairs: a ring of ``capacity`` rows
    (``None``: keep every pair, growing by doubling)."""

    def __init__(self, n_features: int, capacity: int | None):
        self.capacity = capacity
        size = capacity if capacity is not None else 1024
        self.win, self.lose = np.zeros((size, n_features)), np.zeros((size, n_features))
        self.weight = np.zeros(size)
        self.added = 0
        self._stacked = np.empty((0, n_features))

    def __len__(self) -> int:
        return self.added if self.capacity is None else min(self.added, self.capacity)

    def add(self, win: np.ndarray, lose: np.ndarray, weight: np.ndarray) -> None:
        if self.capacity is None and self.added + len(win) > len(self.win):
            grow = max(2 * len(self.win), self.added + len(win))
            for name in ("win", "lose", "weight"):
                old = getattr(self, name)
                new = np.zeros((grow,) + old.shape[1:])
                new[: self.added] = old[: self.added]
                setattr(self, name, new)
        slots = np.arange(self.added, self.added + len(win))
        if self.capacity is not None:
            slots %= self.capacity
        self.win[slots], self.lose[slots], self.weight[slots] = win, lose, weight
        self.added += len(win)

    def gather(self, idx: np.ndarray) -> np.ndarray:
        """The winner rows of pairs ``idx`` stacked over their loser rows (2 len(idx) x d), in a reused buffer."""
        n = len(idx)
        if len(self._stacked) < 2 * n:
            self._stacked = np.empty((2 * n, self.win.shape[1]))
        out = self._stacked[: 2 * n]
        np.take(self.win, idx, axis=0, out=out[:n])
        np.take(self.lose, idx, axis=0, out=out[n:])
        return out


def lambda_pair_weights(win: np.ndarray, lose: np.ndarray, n_clicks: int) -> np.ndarray:
    """olLambdaRank's weight of each click pair: |1/log2(r_w + 2) - 1/log2(r_l + 2)| / IDCG(clicks),
    r the 0-based display positions, IDCG the DCG of ``n_clicks`` binary gains at the top."""
    ideal = (1.0 / np.log2(np.arange(n_clicks) + 2.0)).sum()
    return np.abs(1.0 / np.log2(win + 2.0) - 1.0 / np.log2(lose + 2.0)) / ideal


def pairwise_logistic_gradient(scorer, theta, win, lose, weight) -> tuple[float, np.ndarray]:
    """Mean over pairs of weight * log(1 + exp(-(f(x_w) - f(x_l)))) and its gradient in theta."""
    return stacked_pair_gradient(scorer, theta, np.concatenate([win, lose]), weight)


def stacked_pair_gradient(scorer, theta, X, weight) -> tuple[float, np.ndarray]:
    """:func:`pairwise_logistic_gradient` of the pairs (X[i], X[n + i]), i < n = len(weight): winners stacked
    over losers, so a caller that gathers both into one buffer copies the rows once."""
    n = len(weight)
    forward = scorer.forward(X, theta)
    s = forward[2]
    margin = s[:n] - s[n:]
    loss = float((weight * np.logaddexp(0.0, -margin)).mean())
    d_margin = -weight * expit(-margin) / n
    return loss, scorer.backward(X, theta, np.concatenate([d_margin, -d_margin]), forward)


@njit(cache=True)
def scaled_tangent_features(pre, hidden, w2, X, scale_W1, scale_w2):
    """g(x_i) / sqrt(m) scaled entry-wise by A^-1/2 (float32, n x p), in one pass: the W1 block is
    w2_k 1[pre_ik > 0] x_if scale_W1[k, f], the w2 block hidden_ik scale_w2[k]
    (:meth:`.scorers.ReLUScorer.document_gradients` divided by sqrt(m))."""
    n, m = pre.shape
    d = X.shape[1]
    out = np.empty((n, m * d + m), dtype=np.float32)
    for i in range(n):
        for k in range(m):
            base = k * d
            if pre[i, k] > 0:
                a = w2[k]
                for f in range(d):
                    out[i, base + f] = a * X[i, f] * scale_W1[k, f]
            else:
                for f in range(d):
                    out[i, base + f] = 0.0
            out[i, m * d + k] = hidden[i, k] * scale_w2[k]
    return out


class NeuralPairRank(BaseRanker):
    """olRankNet (``weighting="none"``) and olLambdaRank (``weighting="lambda"``), Algorithm 1 of
    Jia & Wang (2022), with the diagonal (or full) A of line 12 and a bounded training budget."""

    PARAMS = {"width": at_least(2), "alpha": at_least(0, "float"), "l2": positive(), "learning_rate": positive(),
              "optimizer": choice(*OPTIMIZERS), "regularizer": choice("paper", "code"),
              "training": choice("replay", "history"), "steps": at_least(1), "batch": at_least(1),
              "replay": at_least(1), "epochs": at_least(1), "uncertainty": choice("diagonal", "full"),
              "weighting": choice("none", "lambda"), "pairing": choice("adjacent", "shuffled"), "explore": FLAG}

    def __init__(self, width: int = 100, alpha: float = 0.1, l2: float = 0.01, learning_rate: float = 0.01,
                 optimizer: str = "adam", regularizer: str = "paper", training: str = "replay", steps: int = 4,
                 batch: int = 128, replay: int = 5000, epochs: int = 1, uncertainty: str = "diagonal",
                 weighting: str = "none", pairing: str = "adjacent", explore: bool = True):
        self.scorer = ReLUScorer(width, option="width")
        self.width, self.alpha, self.l2, self.learning_rate = int(width), float(alpha), float(l2), float(learning_rate)
        self.optimizer, self.regularizer, self.training = optimizer, regularizer, training
        self.steps, self.batch, self.replay, self.epochs = int(steps), int(batch), int(replay), int(epochs)
        self.uncertainty, self.weighting, self.pairing, self.explore = uncertainty, weighting, pairing, bool(explore)

    # -- protocol -------------------------------------------------------------------------
    def start(self, train, rng) -> None:
        super().start(train, rng)
        d = train.n_features
        p = self.scorer.n_params(d)
        if self.uncertainty == "full" and p > FULL_MATRIX_LIMIT:
            raise ValueError(f"option uncertainty='full' needs width * (features + 1) <= {FULL_MATRIX_LIMIT} "
                             f"parameters, got {p}; use uncertainty='diagonal' or a smaller width")
        self.theta0 = self.scorer.init(d, rng)
        self.theta = self.theta0.copy()
        self.opt = OPTIMIZERS[self.optimizer](p, self.learning_rate)
        self.pairs = PairBuffer(d, self.replay if self.training == "replay" else None)
        self.pairs_seen = 0
        if self.uncertainty == "diagonal":
            self.A_diag = np.full(p, self.l2)                 # A_1 = lambda I (line 3)
        else:
            self.A_inv = np.eye(p) / self.l2

    def score(self, docs) -> np.ndarray:
        return self.scorer.scores(docs.features, self.theta)

    def weights(self) -> np.ndarray:
        return self.theta

    def rank(self, query) -> Display:
        certain, scores = self.certain_pairs(query.features)
        return display_certain_orders(certain, scores, self.rng, conservative=True)

    def learn(self, query, display, feedback) -> dict:
        win, lose = independent_pairs(feedback.clicks, self.rng, self.pairing)
        if len(win) == 0:
            return {"pairs": 0.0}
        shown = display.ranking
        Xw, Xl = query.features[shown[win]], query.features[shown[lose]]
        weight = (lambda_pair_weights(win, lose, int(feedback.clicks.sum())) if self.weighting == "lambda"
                  else np.ones(len(win)))
        self.pairs.add(Xw, Xl, weight)
        self.pairs_seen += len(win)
        loss = self.train(len(win))
        self.update_uncertainty(Xw, Xl)
        return {"pairs": float(len(win)), "train_loss": loss}

    # -- Eq. 3.2: training ----------------------------------------------------------------------
    def regularizer_gradient(self) -> np.ndarray:
        """Gradient of the penalty, divided by the number of pairs so far (the loss is a mean):
        ``paper``: m lambda / 2 ||theta - theta_0||^2 (Eq. 3.2); ``code``: weight decay lambda on theta."""
        n = max(self.pairs_seen, 1)
        if self.regularizer == "paper":
            return self.width * self.l2 * (self.theta - self.theta0) / n
        return self.l2 * self.theta / n

    def train(self, newest: int) -> float:
        """``steps`` mini-batches from the replay (the newest pairs always in the first), or with
        ``training="history"`` ``epochs`` shuffled passes over every pair so far; the last batch's loss."""
        n = len(self.pairs)
        if self.training == "history":
            order = np.concatenate([self.rng.permutation(n) for _ in range(self.epochs)])
            batches = [order[i:i + self.batch] for i in range(0, len(order), self.batch)]
        else:
            ring = self.pairs.capacity
            recent = (self.pairs.added - 1 - np.arange(min(newest, self.batch))) % ring
            batches = [np.concatenate([recent, self.rng.integers(n, size=self.batch - len(recent))])]
            batches += [self.rng.integers(n, size=min(self.batch, n)) for _ in range(self.steps - 1)]
        loss = 0.0
        for idx in batches:
            loss, grad = stacked_pair_gradient(self.scorer, self.theta, self.pairs.gather(idx), self.pairs.weight[idx])
            self.theta = self.opt.step(self.theta, grad + self.regularizer_gradient())
        if not np.isfinite(self.theta).all():
            raise NonFiniteModelError(f"{type(self).__name__}: the network's weights became non-finite after "
                                      f"{self.pairs_seen} pairs; lower option learning_rate={self.learning_rate:g}")
        return loss

    # -- Lemma 3.3: uncertainty ------------------------------------------------------------------
    def update_uncertainty(self, Xw: np.ndarray, Xl: np.ndarray) -> None:
        """A += sum over the round's pairs of g_ij g_ij^T / m at the new theta (line 12)."""
        G = (self.scorer.document_gradients(Xw, self.theta)
             - self.scorer.document_gradients(Xl, self.theta)) / np.sqrt(self.width)
        if self.uncertainty == "diagonal":
            self.A_diag += (G * G).sum(axis=0)
            return
        for g in G:                                            # Sherman-Morrison, one pair at a time
            Ag = self.A_inv @ g
            self.A_inv -= np.outer(Ag, Ag) / (1.0 + g @ Ag)

    def tangent_gram(self, X: np.ndarray, layer=None) -> np.ndarray:
        """The Gram matrix of the tangent features g(x_i) / sqrt(m) in the A^-1 inner product (for the
        diagonal A, scaled by A^-1/2 and multiplied in single precision); ``layer``: the hidden layer
        (W1 x, relu(W1 x)) of X at the current theta, if already computed."""
        if self.uncertainty == "diagonal":
            pre, hidden = layer if layer is not None else self.scorer.hidden_layer(X, self.theta)
            _, w2 = self.scorer.split(self.theta, X.shape[1])
            d = X.shape[1]
            scale = 1.0 / np.sqrt(self.A_diag)
            G = scaled_tangent_features(pre, hidden, w2, X, scale[: len(w2) * d].reshape(len(w2), d),
                                        scale[len(w2) * d:])
            return (G @ G.T).astype(np.float64)
        G = self.scorer.document_gradients(X, self.theta) / np.sqrt(self.width)
        return G @ self.A_inv @ G.T

    def pair_widths(self, X: np.ndarray) -> np.ndarray:
        """||(g_i - g_j) / sqrt(m)||_{A^-1} for every pair of rows of X, from one Gram matrix."""
        gram = self.tangent_gram(X)
        diag = np.diag(gram)
        return np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2.0 * gram, 0.0))

    def certain_pairs(self, X: np.ndarray):
        """(certain[i, j]: i above j is a certain order, scores); with ``explore=False`` every
        order is certain (the greedy network, an ablation). One forward pass serves the scores and
        the widths (Definition 3.4 tested in one compiled pass over the pairs)."""
        pre, hidden, scores = self.scorer.forward(X, self.theta)
        prob = expit(scores[:, None] - scores[None, :])
        if not self.explore:
            return prob > 0.5, scores
        return lower_bound_above_half(prob, self.tangent_gram(X, (pre, hidden)), self.alpha), scores


def lambdarank_label_terms(labels: np.ndarray):
    """The parts of :func:`lambdarank_score_gradient` that read the grades only: the pairs (i, j) with
    y_i > y_j (row-major; none when the ideal DCG is 0), their gain differences G_i - G_j (G = 2^y - 1)
    and the ideal DCG."""
    n = len(labels)
    gains = 2.0 ** labels - 1.0
    ideal = (np.sort(gains)[::-1] / np.log2(np.arange(n) + 2.0)).sum()
    i, j = np.nonzero(labels[:, None] > labels[None, :]) if ideal > 0 else (np.zeros(0, int), np.zeros(0, int))
    return i, j, gains[i] - gains[j], ideal


def lambdarank_batch_gradient(scores: np.ndarray, sizes: list[int], terms: list) -> np.ndarray:
    """:func:`lambdarank_score_gradient` of consecutive queries (``sizes`` documents each, ``terms`` their
    :func:`lambdarank_label_terms`): every query's ranking from one stable lexicographic sort, the lambdas
    |Delta NDCG_ij| sigma(s_j - s_i) of all pairs y_i > y_j in one vectorised pass (the other entries of a
    query's lambda matrix are 0), then each query's row and column sums of its own n x n matrix, so that
    every sum adds the same terms in the same order as the dense form."""
    starts = np.cumsum([0] + sizes[:-1])
    segment = np.repeat(np.arange(len(sizes)), sizes)
    rank = np.empty(len(scores), dtype=np.int64)
    rank[np.lexsort((-scores, segment))] = np.arange(len(scores)) - np.repeat(starts, sizes)
    disc = 1.0 / np.log2(rank + 2.0)
    first = np.concatenate([t[0] + lo for t, lo in zip(terms, starts)])
    second = np.concatenate([t[1] + lo for t, lo in zip(terms, starts)])
    ideal = np.repeat([t[3] for t in terms], [len(t[0]) for t in terms])
    delta = np.abs(np.concatenate([t[2] for t in terms]) * (disc[first] - disc[second])) / ideal
    lam = delta * expit(scores[second] - scores[first])       # -(s_i - s_j) = s_j - s_i exactly
    out, done = [], 0
    for (i, j, _, _), n in zip(terms, sizes):
        square = np.zeros((n, n))
        square[i, j] = lam[done: done + len(i)]
        done += len(i)
        out.append(square.T.sum(axis=1) - square.sum(axis=1))   # d loss / d s_i: -sum_j lam_ij + sum_j lam_ji
    return np.concatenate(out)


def lambdarank_score_gradient(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """d/ds of LambdaRank's loss for one query: sum over pairs y_i > y_j of
    |Delta NDCG_ij| log(1 + exp(-(s_i - s_j))), the weights from the current ranking (held fixed)."""
    return lambdarank_batch_gradient(scores, [len(scores)], [lambdarank_label_terms(labels)])


class NeuralLambdaRankGT(BaseRanker):
    """olLambdaRank GT: the network refitted on the true grades of the queries presented so far
    (``steps`` Adam steps per round on ``batch_queries`` of the last ``replay`` queries); ranks
    greedily. A skyline: it reads ``query.labels``, which no online learner may."""

    PARAMS = {"width": at_least(2), "l2": at_least(0, "float"), "learning_rate": positive(), "steps": at_least(1),
              "batch_queries": at_least(1), "replay": at_least(1)}

    def __init__(self, width: int = 100, l2: float = 0.0, learning_rate: float = 0.01, steps: int = 4,
                 batch_queries: int = 8, replay: int = 5000):
        self.scorer = ReLUScorer(width, option="width")
        self.width, self.l2, self.learning_rate = int(width), float(l2), float(learning_rate)
        self.steps, self.batch_queries, self.replay = int(steps), int(batch_queries), int(replay)

    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.theta = self.scorer.init(train.n_features, rng)
        self.opt = Adam(len(self.theta), self.learning_rate)
        self.history: deque = deque(maxlen=self.replay)

    def score(self, docs) -> np.ndarray:
        return self.scorer.scores(docs.features, self.theta)

    def weights(self) -> np.ndarray:
        return self.theta

    def learn(self, query, display, feedback) -> None:
        self.history.append((query, lambdarank_label_terms(query.labels)))   # the grades' terms, once a query
        for _ in range(self.steps):
            picks = self.rng.integers(len(self.history), size=min(self.batch_queries, len(self.history)))
            batch = [self.history[i] for i in picks]
            X = np.concatenate([q.features for q, _ in batch])
            s = self.scorer.scores(X, self.theta)
            dscores = lambdarank_batch_gradient(s, [q.n_docs for q, _ in batch], [terms for _, terms in batch])
            grad = self.scorer.backward(X, self.theta, dscores / len(batch)) + self.l2 * self.theta
            self.theta = self.opt.step(self.theta, grad)
        return None


__all__ = ["NeuralLambdaRankGT", "NeuralPairRank", "lambda_pair_weights", "lambdarank_batch_gradient",
           "lambdarank_label_terms", "lambdarank_score_gradient"]
