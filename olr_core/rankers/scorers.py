"""Scoring functions with a flat parameter vector, so that one learner drives any of them.

A scorer maps features ``X`` (n x d) and a parameter vector ``theta`` (p,) to scores (n,);
``scores_many`` scores the same documents under several parameter vectors at once.
Dueling bandit methods perturb ``theta`` directly, whatever model it parameterises.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def linear_scores_many(X, thetas):
    """(m, n) scores theta_j . x_i, each summed in feature order from 0 (the compiled rounds of
    :mod:`.dueling_compiled` call the same function, so both paths see identical scores).

    The loop runs over documents innermost, on the transposed features, so that the compiler
    can work on several documents at once; each score still adds its terms in feature order.
    """
    m, n, d = thetas.shape[0], X.shape[0], X.shape[1]
    features = np.ascontiguousarray(X.T)
    out = np.zeros((m, n))
    for j in range(m):
        row = out[j]
        for f in range(d):
            weight = thetas[j, f]
            column = features[f]
            for i in range(n):
                row[i] += column[i] * weight
    return out


class LinearScorer:
    """s(x) = theta . x (p = d)."""

    linear = True

    def n_params(self, n_features: int) -> int:
        return n_features

    def init(self, n_features: int, rng: np.random.Generator) -> np.ndarray:
        return np.zeros(n_features)

    def scores(self, X: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return X @ theta

    def scores_many(self, X: np.ndarray, thetas: np.ndarray) -> np.ndarray:
        """(m, n) scores for m parameter vectors (rows of ``thetas``)."""
        return linear_scores_many(np.ascontiguousarray(X, dtype=np.float64),
                                  np.ascontiguousarray(thetas, dtype=np.float64))


class MLPScorer:
    """One hidden layer: s(x) = w2 . tanh(W1 x + b1); theta = [W1 (h x d), b1 (h), w2 (h)].

    Initialised with small random weights (a zero network has no gradient signal in
    its hidden layer and every perturbation would act linearly).
    """

    linear = False

    def __init__(self, hidden: int = 10, init_scale: float = 0.1):
        self.hidden, self.init_scale = int(hidden), float(init_scale)

    def n_params(self, n_features: int) -> int:
        return self.hidden * (n_features + 2)

    def init(self, n_features: int, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, self.init_scale, self.n_params(n_features))

    def _split(self, thetas: np.ndarray, d: int):
        h = self.hidden
        W1 = thetas[..., : h * d].reshape(*thetas.shape[:-1], h, d)
        return W1, thetas[..., h * d: h * d + h], thetas[..., h * d + h:]

    def scores(self, X: np.ndarray, theta: np.ndarray) -> np.ndarray:
        W1, b1, w2 = self._split(theta, X.shape[1])
        return np.tanh(X @ W1.T + b1) @ w2

    def scores_many(self, X: np.ndarray, thetas: np.ndarray) -> np.ndarray:
        W1, b1, w2 = self._split(thetas, X.shape[1])
        hidden = np.tanh(np.einsum("nd,mhd->mnh", X, W1) + b1[:, None, :])
        return np.einsum("mnh,mh->mn", hidden, w2)


class ReLUScorer:
    """The two-layer ReLU network of Jia & Wang (2022), Sec. 3.2: f(x) = sqrt(m) w2 . relu(W1 x).

    theta = [W1 (m x d), w2 (m)], p = m (d + 1), no biases. Initialised as in their
    Algorithm 1, line 2: W1 = [W; W] with W ~ N(0, 4/m) and w2 = [w; -w] with w ~ N(0, 2/m),
    so that the initial network scores every document 0 (the width m must be even).
    """

    linear = False

    def __init__(self, hidden: int = 100, option: str = "hidden"):
        if int(hidden) < 2 or int(hidden) % 2:
            raise ValueError(f"option {option}={hidden!r} is invalid; the ReLU network needs an even width >= 2")
        self.hidden = int(hidden)

    def n_params(self, n_features: int) -> int:
        return self.hidden * (n_features + 1)

    def init(self, n_features: int, rng: np.random.Generator) -> np.ndarray:
        m, half = self.hidden, self.hidden // 2
        W = rng.normal(0.0, np.sqrt(4.0 / m), (half, n_features))
        w = rng.normal(0.0, np.sqrt(2.0 / m), half)
        return np.concatenate([np.vstack([W, W]).ravel(), w, -w])

    def split(self, theta: np.ndarray, d: int):
        """(W1, w2) views of ``theta`` (leading axes of ``theta`` kept)."""
        m = self.hidden
        return theta[..., : m * d].reshape(*theta.shape[:-1], m, d), theta[..., m * d:]

    def hidden_layer(self, X: np.ndarray, theta: np.ndarray):
        """W1 x and relu(W1 x) for each row of X (n x m each)."""
        W1, _ = self.split(theta, X.shape[1])
        pre = X @ W1.T
        return pre, np.maximum(pre, 0.0)

    def scores(self, X: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return self.forward(X, theta)[2]

    def forward(self, X: np.ndarray, theta: np.ndarray):
        """W1 x, relu(W1 x) and the scores sqrt(m) w2 . relu(W1 x) for each row of X (a backward pass that is
        given them does not compute the hidden layer a second time)."""
        _, w2 = self.split(theta, X.shape[1])
        pre, hidden = self.hidden_layer(X, theta)
        return pre, hidden, np.sqrt(self.hidden) * (hidden @ w2)

    def scores_many(self, X: np.ndarray, thetas: np.ndarray) -> np.ndarray:
        W1, w2 = self.split(thetas, X.shape[1])
        hidden = np.maximum(np.einsum("nd,khd->knh", X, W1), 0.0)
        return np.sqrt(self.hidden) * np.einsum("knh,kh->kn", hidden, w2)

    def backward(self, X: np.ndarray, theta: np.ndarray, dscores: np.ndarray, forward=None) -> np.ndarray:
        """sum_i dscores_i g(x_i), g = d f / d theta (one matrix product per layer); ``forward``: the
        :meth:`forward` pass of the same X and theta, if already made."""
        _, w2 = self.split(theta, X.shape[1])
        pre, hidden, _ = forward if forward is not None else self.forward(X, theta)
        root = np.sqrt(self.hidden)
        d_pre = (dscores[:, None] * (pre > 0)) * (root * w2)            # n x m
        return np.concatenate([(d_pre.T @ X).ravel(), root * (hidden.T @ dscores)])

    def document_gradients(self, X: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """g(x_i) for every row: an n x p matrix (the tangent features of Sec. 3.2)."""
        _, w2 = self.split(theta, X.shape[1])
        pre, hidden = self.hidden_layer(X, theta)
        root = np.sqrt(self.hidden)
        gate = (pre > 0) * (root * w2)                                   # n x m
        n = len(X)
        return np.concatenate([(gate[:, :, None] * X[:, None, :]).reshape(n, -1), root * hidden], axis=1)


SCORERS = {"linear": LinearScorer, "mlp": MLPScorer, "relu": ReLUScorer}


def make_scorer(name: str, hidden: int = 10):
    """``linear``; ``mlp`` (tanh, with biases, ``hidden`` units); ``relu`` (the neural chapter's network)."""
    if name == "linear":
        return LinearScorer()
    if name == "mlp":
        return MLPScorer(hidden)
    if name == "relu":
        return ReLUScorer(hidden)
    raise ValueError(f"unknown scorer {name!r}; valid: {', '.join(SCORERS)}")


@njit(cache=True)
def unit_sphere(rng, m, p):
    """m directions drawn uniformly from the unit sphere in R^p (normalised Gaussians; numba draws from a
    numpy Generator exactly as numpy does, so the compiled rounds draw each round's directions in place)."""
    u = rng.standard_normal((m, p))
    for i in range(m):
        norm2 = 0.0
        for f in range(p):
            norm2 += u[i, f] * u[i, f]
        u[i] /= np.sqrt(norm2)
    return u


def scorer_backward(scorer, X: np.ndarray, theta: np.ndarray, dscores: np.ndarray) -> np.ndarray:
    """sum_i dscores_i * d s(x_i) / d theta: the chain rule through a scorer (for PDGD)."""
    if scorer.linear:
        return X.T @ dscores
    if hasattr(scorer, "backward"):
        return scorer.backward(X, theta, dscores)
    W1, b1, w2 = scorer._split(theta, X.shape[1])
    hidden = np.tanh(X @ W1.T + b1)                       # n x h
    d_w2 = hidden.T @ dscores
    d_pre = np.outer(dscores, w2) * (1.0 - hidden ** 2)   # n x h
    return np.concatenate([(d_pre.T @ X).ravel(), d_pre.sum(axis=0), d_w2])
