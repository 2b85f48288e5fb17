"""A synthetic LETOR-like data set: the embedded default, deterministic by seed.

Generative model (all draws from one ``numpy`` generator seeded by ``seed``):

1. Each document has a latent vector ``z ~ N(0, I_L)`` (``L = 10``).
2. Its observed features are a noisy non-linear mixture ``x = tanh(z W + 0.3 e)`` with a
   fixed random mixing matrix ``W`` (``L x n_features``) and ``e ~ N(0, I)``, then min-max
   normalised within the query (like LETOR's QueryLevelNorm files).
3. Its relevance utility is ``u = z . beta + 0.8 z_0 z_1 + 0.5 (z_2^2 - 1) + b_q + 0.3 n``:
   a linear part, an interaction and a curvature term (which no linear ranker can
   represent) plus a per-query difficulty ``b_q ~ N(0, query_spread^2)``, so that some
   queries have no relevant document, and label noise ``n ~ N(0, 1)``.
4. Grades are the number of global thresholds ``u`` exceeds, the thresholds being the
   quantiles of ``u`` that give the target grade distribution (``grade_shares``).

Query sizes follow a log-normal distribution around ``docs_per_query``.
The queries are cut into five subsets S1..S5, from which five folds are built as in
LETOR (train = three subsets, validation = the next, test = the last).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import ranking_data
from .letor import cached_data
from .ranking_data import Fold, RankingData

LATENT_DIM = 10


@dataclass(frozen=True)
class SyntheticPreset:
    name: str
    n_queries: int
    docs_per_query: int
    n_features: int
    grade_shares: tuple[float, ...]
    query_spread: float = 1.0
    seed: int = 20260101
    description: str = ""
    relevance: str = "latent"      # "latent": non-linear in the features; "linear": linear in them;
    #                                "network": a known small ReLU network of the features

    @property
    def max_grade(self) -> int:
        return len(self.grade_shares) - 1


THREE_GRADES = (0.807, 0.132, 0.061)   # MQ2008's label distribution
FIVE_GRADES = (0.52, 0.32, 0.13, 0.02, 0.01)  # close to MSLR-WEB10K's

PRESETS = {
    p.name: p
    for p in [
        SyntheticPreset("synth-mq", 800, 20, 46, THREE_GRADES, 1.6,
                        description="MQ2008-sized: 46 features, ~20 documents per query, grades 0-2"),
        SyntheticPreset("synth-mq-5g", 800, 20, 46, FIVE_GRADES, 1.6,
                        description="MQ2008-sized with five grades 0-4"),
        SyntheticPreset("synth-mslr", 1000, 120, 136, FIVE_GRADES, 1.0,
                        description="MSLR-WEB10K-sized: 136 features, ~120 documents per query, grades 0-4"),
        SyntheticPreset("synth-mslr-3g", 1000, 120, 136, THREE_GRADES, 1.0,
                        description="MSLR-WEB10K-sized with three grades 0-2"),
        SyntheticPreset("synth-mq-linear", 800, 20, 46, THREE_GRADES, 1.6, relevance="linear",
                        description="MQ2008-sized, relevance linear in the features (PairRank's well-specified case)"),
        SyntheticPreset("synth-mq-5g-linear", 800, 20, 46, FIVE_GRADES, 1.6, relevance="linear",
                        description="MQ2008-sized, five grades, relevance linear in the features (the control of "
                                    "the neural chapter's LDA claim for five-grade data)"),
        SyntheticPreset("synth-mq-net", 800, 20, 46, FIVE_GRADES, 1.0, relevance="network",
                        description="MQ2008-sized, five grades, relevance a known ReLU network of the features "
                                    "(the neural rankers' well-specified case)"),
    ]
}


def _query_sizes(rng, n_queries, mean):
    sizes = np.round(rng.lognormal(np.log(mean), 0.5, n_queries)).astype(np.int64)
    return np.clip(sizes, 3, 4 * mean)


def generate(preset: SyntheticPreset, seed: int | None = None) -> RankingData:
    """All queries of a synthetic data set (see the module docstring for the model), kept in the
    cache directory under a key of the preset, the seed and this generator's source, so that a
    process builds the MSLR-sized preset (seconds) once per machine, not once per run."""
    source = Path(__file__).read_bytes() + Path(ranking_data.__file__).read_bytes()
    key = hashlib.sha256(repr((preset, seed)).encode() + source).hexdigest()[:32]
    return cached_data(f"synthetic-{preset.name}-{key}", preset.name, lambda: _generate_single_threaded(preset, seed))


def _generate_single_threaded(preset: SyntheticPreset, seed: int | None = None) -> RankingData:
    """:func:`_generate` with one BLAS thread: a multi-threaded matrix product sums in another order, and
    the same seed must give the same data, to the last bit, in every process (a test checks)."""
    from ..threads import blas_threads

    with blas_threads(1):
        return _generate(preset, seed)


def _generate(preset: SyntheticPreset, seed: int | None = None) -> RankingData:
    if preset.relevance in ("linear", "network"):
        return _generate_explicit(preset, seed)
    rng = np.random.default_rng(preset.seed if seed is None else seed)
    sizes = _query_sizes(rng, preset.n_queries, preset.docs_per_query)
    n_docs = int(sizes.sum())
    z = rng.standard_normal((n_docs, LATENT_DIM))
    mixing = rng.standard_normal((LATENT_DIM, preset.n_features)) / np.sqrt(LATENT_DIM) * 1.5
    features = np.tanh(z @ mixing + 0.3 * rng.standard_normal((n_docs, preset.n_features)))
    beta = rng.standard_normal(LATENT_DIM) / np.sqrt(LATENT_DIM)
    difficulty = np.repeat(rng.normal(0.0, preset.query_spread, preset.n_queries), sizes)
    utility = (z @ beta + 0.8 * z[:, 0] * z[:, 1] + 0.5 * (z[:, 2] ** 2 - 1)
               + difficulty + 0.3 * rng.standard_normal(n_docs))
    thresholds = np.quantile(utility, np.cumsum(preset.grade_shares)[:-1])
    labels = np.searchsorted(thresholds, utility, side="right").astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    qids = np.array([f"{preset.name}-{q}" for q in range(preset.n_queries)])
    data = RankingData(features, labels, offsets, qids, preset.max_grade, preset.name)
    return data.query_minmax_normalized()


NETWORK_WIDTH = 8


def relevance_network(n_features: int, seed: int):
    """The known network of the ``network`` presets, ``NETWORK_WIDTH`` ReLU units in pairs of
    opposite sign: u(x) = sum_k v_k (relu(w_k . x + b_k) + relu(-w_k . x - b_k)) = sum_k v_k |w_k . x + b_k|,
    W ~ N(0, 9/d), b_k centring w_k . x on uniform features, v ~ |N(0, 1)|. Folded about a
    hyperplane, the utility is far from any linear function (a test checks linear rankers fall short)."""
    rng = np.random.default_rng(seed)
    half = NETWORK_WIDTH // 2
    W = rng.standard_normal((half, n_features)) * 3.0 / np.sqrt(n_features)
    b = -W.sum(axis=1) * 0.35                     # features average 0.35 (uniform, 30 % zeros)
    v = np.abs(rng.standard_normal(half))
    return lambda X: (np.maximum(X @ W.T + b, 0.0) + np.maximum(-(X @ W.T) - b, 0.0)) @ v


def _generate_explicit(preset: SyntheticPreset, seed: int | None = None) -> RankingData:
    """Features uniform in [0, 1], 30 % of them zero (no normalisation needed), and utility
    ``h(x) + b_q + 0.3 n`` with ``h`` linear (``x . beta``; PairRank's well-specified case) or
    :func:`relevance_network` (the neural rankers' well-specified case)."""
    rng = np.random.default_rng(preset.seed if seed is None else seed)
    sizes = _query_sizes(rng, preset.n_queries, preset.docs_per_query)
    n_docs = int(sizes.sum())
    features = rng.random((n_docs, preset.n_features)) * (rng.random((n_docs, preset.n_features)) < 0.7)
    if preset.relevance == "linear":
        beta = rng.standard_normal(preset.n_features) / np.sqrt(preset.n_features) * 3.0
        signal = features @ beta
    else:
        signal = relevance_network(preset.n_features, int(rng.integers(2 ** 31)))(features)
        signal = signal / signal.std() * 1.5
    difficulty = np.repeat(rng.normal(0.0, preset.query_spread, preset.n_queries), sizes)
    utility = signal + difficulty + 0.3 * rng.standard_normal(n_docs)
    thresholds = np.quantile(utility, np.cumsum(preset.grade_shares)[:-1])
    labels = np.searchsorted(thresholds, utility, side="right").astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    qids = np.array([f"{preset.name}-{q}" for q in range(preset.n_queries)])
    return RankingData(features, labels, offsets, qids, preset.max_grade, preset.name)


SUBSET_FOLDS = {  # fold -> (train subsets, validation subset, test subset), LETOR 4.0 convention
    1: ((1, 2, 3), 4, 5), 2: ((2, 3, 4), 5, 1), 3: ((3, 4, 5), 1, 2), 4: ((4, 5, 1), 2, 3), 5: ((5, 1, 2), 3, 4),
}


def fold_from_subsets(name: str, fold: int, subsets: dict[int, RankingData]) -> Fold:
    """Build LETOR fold ``fold`` from five subsets S1..S5."""
    train_ids, vali_id, test_id = SUBSET_FOLDS[fold]
    train = RankingData.concatenate([subsets[i] for i in train_ids], name=f"{name}/Fold{fold}/train")
    return Fold(name, fold, train, subsets[vali_id], subsets[test_id])


def synthetic_fold(name: str, fold: int = 1, seed: int | None = None) -> Fold:
    """Fold ``fold`` (1-5) of a synthetic preset, cut into subsets as LETOR does."""
    data = generate(PRESETS[name], seed)
    bounds = np.linspace(0, data.n_queries, 6).astype(int)
    subsets = {i + 1: data.subset(np.arange(bounds[i], bounds[i + 1])) for i in range(5)}
    return fold_from_subsets(name, fold, subsets)
