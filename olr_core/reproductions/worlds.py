"""Well-specified worlds for the regret theorems of PairRank (Theorem 8) and olRankNet (Theorem 4.4).

Both theorems assume the *logistic pair model*: given that exactly one document of an independent
pair is clicked, it is document i with probability sigmoid(h(x_i) - h(x_j)) (PairRank: h linear,
h = theta* . x; olRankNet's Proposition 3.2: h any function its network class can represent). A user
who examines every shown position and clicks each document independently with probability
sigmoid(h(x) - b) realises it exactly (the bias b cancels in the pair). Labels are the documents'
within-query ranks of h, so the loop's count of mis-ordered pairs is the Kendall distance to the
order of h: the regret of both theorems. Each query has as many documents as the list shows, so the
whole ranking is shown and examined in every round (p* = 1).

Run specs name these worlds by reference: the data set ``olr_core.reproductions.worlds:linear_fold``
(or ``network_fold``) and the user ``olr_core.reproductions.worlds:LinearLogisticUser`` (or
``NetworkLogisticUser``). They live here, outside the code fingerprint of every other run, so that
adding them changed no stored run's key.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..click_models import Clicks
from ..data.ranking_data import Fold, RankingData
from ..data.synthetic import relevance_network

SEED = 20261126
DOCS = 10                 # documents per query = the list length: the whole ranking is shown
QUERIES = 300
LINEAR_FEATURES = 10      # PairRank's theory page's world
NETWORK_FEATURES = 46     # MQ2008-sized, as the ``synth-mq-net`` preset
NETWORK_SPREAD = 1.5      # standard deviation of h over documents in the network world
LINEAR_NORM = 2.0         # ||theta*|| in the linear world (as the PairRank theory page)

REFERENCE = "olr_core.reproductions.worlds"
LINEAR_DATA, NETWORK_DATA = f"{REFERENCE}:linear_fold", f"{REFERENCE}:network_fold"
LINEAR_USER, NETWORK_USER = f"{REFERENCE}:LinearLogisticUser", f"{REFERENCE}:NetworkLogisticUser"


@functools.cache
def linear_theta() -> np.ndarray:
    """theta* of the linear world: a Gaussian direction of norm ``LINEAR_NORM``."""
    theta = np.random.default_rng(SEED).standard_normal(LINEAR_FEATURES)
    return theta * LINEAR_NORM / np.linalg.norm(theta)


def linear_truth(features: np.ndarray) -> np.ndarray:
    """h(x) = theta* . x, PairRank's well-specified score."""
    return features @ linear_theta()


@functools.cache
def _network_and_scale():
    """The known ReLU network of :func:`relevance_network` and the affine map that gives its output mean 0
    and standard deviation ``NETWORK_SPREAD`` on a fixed reference sample of documents."""
    network = relevance_network(NETWORK_FEATURES, SEED)
    reference = _network_features(np.random.default_rng(SEED + 1), 20_000)
    values = network(reference)
    return network, float(values.mean()), float(values.std())


def network_truth(features: np.ndarray) -> np.ndarray:
    """h(x): a known ReLU network of the features (olRankNet's well-specified case), standardised."""
    network, mean, std = _network_and_scale()
    return (network(features) - mean) / std * NETWORK_SPREAD


def _network_features(rng, n: int) -> np.ndarray:
    """Features as the ``network`` presets draw them: uniform in [0, 1], 30 % of them zero."""
    return rng.random((n, NETWORK_FEATURES)) * (rng.random((n, NETWORK_FEATURES)) < 0.7)


def _rank_fold(name: str, features: np.ndarray, truth) -> Fold:
    """Queries of ``DOCS`` documents labelled by their within-query rank of ``truth`` (best highest).

    The features are min-max normalised per query *before* the labels are computed: the loader normalises a
    data set given by reference in the same way (an exact no-op on these features), so the features the user and
    the ranker see are those the labels were computed from. (Labelling the raw features, as this module did
    before issue #48, made every run's user click by another order than its labels: not a well-specified world.)
    """
    n_queries = len(features) // DOCS
    offsets = np.arange(0, n_queries * DOCS + 1, DOCS)
    qids = np.array([f"{name}-{q}" for q in range(n_queries)])
    raw = RankingData(features, np.zeros(len(features), dtype=int), offsets, qids, DOCS - 1, name)
    normalised = raw.query_minmax_normalized().features
    utility = truth(normalised).reshape(-1, DOCS)
    labels = np.argsort(np.argsort(utility, axis=1, kind="stable"), axis=1).ravel()
    data = RankingData(normalised, labels, offsets, qids, DOCS - 1, name)
    return Fold(name, 1, data, data, data)


def linear_fold(fold: int = 1) -> Fold:
    """PairRank's world: Gaussian features (scaled by 1/sqrt(d)), labels the ranks of theta* . x (one fold)."""
    rng = np.random.default_rng(SEED + 10 + fold)
    features = rng.standard_normal((QUERIES * DOCS, LINEAR_FEATURES)) / np.sqrt(LINEAR_FEATURES)
    return _rank_fold("logistic-linear", features, linear_truth)


def network_fold(fold: int = 1) -> Fold:
    """olRankNet's world: ``synth-mq-net``-like features, labels the ranks of the known network's score."""
    features = _network_features(np.random.default_rng(SEED + 20 + fold), QUERIES * DOCS)
    return _rank_fold("logistic-network", features, network_truth)


@dataclass(frozen=True)
class _LogisticUser:
    """Examines every shown position; clicks each document independently with probability sigmoid(h(x) - bias),
    so that P(i clicked | exactly one of i, j clicked) = sigmoid(h(x_i) - h(x_j)) (the logistic pair model)."""

    max_grade: int = DOCS - 1
    cutoff: int = 10
    bias: float = 0.0
    feedback_kind = "clicks"

    def truth(self, features: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, query, shown, rng) -> Clicks:
        draws = rng.random(self.cutoff)
        logits = self.truth(query.features[shown]) - self.bias
        clicked = draws[: len(shown)] < 1.0 / (1.0 + np.exp(-logits))
        return Clicks(clicked, len(shown) - 1)


@dataclass(frozen=True)
class LinearLogisticUser(_LogisticUser):
    """The logistic pair user of PairRank's analysis: h(x) = theta* . x of :func:`linear_fold`."""

    name: str = "logistic-linear"

    def truth(self, features):
        return linear_truth(features)


@dataclass(frozen=True)
class NetworkLogisticUser(_LogisticUser):
    """The logistic pair user of olRankNet's Proposition 3.2: h = the known network of :func:`network_fold`."""

    name: str = "logistic-network"

    def truth(self, features):
        return network_truth(features)


def pair_win_rate(user, features_i, features_j, sessions: int, seed: int = 0) -> float:
    """How often document i is the clicked one among ``sessions`` sessions of the list (i, j) with exactly one
    click (a Monte Carlo check of the logistic pair model)."""
    rng = np.random.default_rng(seed)

    class _Query:
        features = np.vstack([features_i, features_j])

    clicks = np.array([user(_Query, np.array([0, 1]), rng).clicks for _ in range(sessions)])
    one = clicks.sum(axis=1) == 1
    return float(clicks[one, 0].mean())
