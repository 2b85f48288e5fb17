"""The held-out evaluation in one compiled pass (OfflineEvaluator.of_stream, kernels.split_ndcg_mean): the same
mean NDCG as today's path (OfflineEvaluator.__call__: the keys drawn, segment_ndcg, numpy's mean), to the last
bit, with the evaluation stream left in the same state, on random scores with planted ties, on the learners'
own models and in whole runs on synthetic and real data."""

import numpy as np
import pytest

import olr_core.loop as loop
from olr_core.data import load_fold
from olr_core.kernels import numpy_pairwise_sum
from olr_core.loop import NonFiniteModelError, OfflineEvaluator, run_online, skip_doubles
from olr_core.rankers import make_ranker
from olr_core.users import make_user

from .conftest import tiny_data

LEARNERS = [("dbgd", {}, "navigational"), ("mgd", {}, "navigational"), ("pdgd", {}, "navigational"),
            ("nsgd", {}, "navigational"), ("dbgd_dsp", {}, "informational"), ("pairrank_c", {}, "navigational"),
            ("pdgd", {"scorer": "mlp"}, "perfect"), ("random", {}, "navigational")]


def same_as_reference(evaluator: OfflineEvaluator, scores: np.ndarray, seed: int) -> bool:
    """of_stream and the reference path give the same bits and leave their generators in the same state."""
    fast, slow = np.random.default_rng(seed), np.random.default_rng(seed)
    value = evaluator.of_stream(scores, fast)
    reference = evaluator(scores, slow)
    return np.float64(value).tobytes() == np.float64(reference).tobytes() and fast.random() == slow.random()


def planted_ties(rng, n: int, kind: str) -> np.ndarray:
    """Scores with ties: a few levels (ties of mixed grades), duplicates of a few values, all equal, or none."""
    if kind == "levels":
        return rng.integers(0, 4, n).astype(float) / 3.0
    if kind == "duplicates":
        return rng.choice(rng.normal(size=max(2, n // 3)), n)
    if kind == "zero":
        return np.zeros(n) * rng.choice([-1.0, 1.0], n)                # +0 and -0, which tie
    return rng.normal(size=n)


@pytest.mark.parametrize("n", list(range(0, 300)) + [511, 1024, 1031, 4099, 8192, 8193, 20_000, 100_003])
def test_the_pairwise_sum_is_numpys_to_the_last_bit(n):
    rng = np.random.default_rng(n)
    for values in (rng.normal(size=n), rng.normal(size=n) * 10.0 ** rng.integers(-8, 9, n), rng.random(n)):
        assert np.float64(numpy_pairwise_sum(values, 0, n)).tobytes() == np.add.reduce(values).tobytes()
        assert numpy_pairwise_sum(values, 0, n) / max(n, 1) == (values.mean() if n else 0.0)


@pytest.mark.parametrize("k", [1, 3, 10, 25])
@pytest.mark.parametrize("kind", ["levels", "duplicates", "zero", "distinct"])
def test_random_scores_with_planted_ties_give_the_reference_bits(k, kind):
    for seed in range(40):
        data = tiny_data(seed, n_queries=30, n_features=3, max_grade=1 + seed % 4)
        evaluator = OfflineEvaluator(data, k)
        scores = planted_ties(np.random.default_rng(seed), data.n_docs, kind)
        assert same_as_reference(evaluator, scores, seed), seed


@pytest.mark.parametrize("dataset", ["synth-mq", "synth-mq-5g", "mq2008"])
def test_real_and_synthetic_splits_with_ties_give_the_reference_bits(request, dataset):
    fold = load_fold(dataset, 1, request.getfixturevalue("real_data_dir")) if dataset == "mq2008" else \
        load_fold(dataset)
    evaluator = OfflineEvaluator(fold.test, 10)
    rng = np.random.default_rng(0)
    X = fold.test.features
    for seed in range(30):
        v = rng.normal(size=X.shape[1]) * (rng.random(X.shape[1]) < 0.5)     # sparse: many exact ties
        for scores in (X @ v, np.round(X @ v, 1), planted_ties(rng, len(X), ("levels", "zero")[seed % 2])):
            assert same_as_reference(evaluator, scores, seed)


def test_non_finite_scores_are_refused_with_the_stream_untouched():
    data = tiny_data(1, n_queries=8)
    evaluator = OfflineEvaluator(data, 10)
    for bad in (np.nan, np.inf, -np.inf):
        scores = np.random.default_rng(0).normal(size=data.n_docs)
        scores[3] = bad
        rng = np.random.default_rng(5)
        assert evaluator.of_stream(scores, rng) is None and rng.random() == np.random.default_rng(5).random()


def test_a_split_without_relevant_documents_draws_no_keys():
    data = tiny_data(2, n_queries=5)
    data.labels[:] = 0
    evaluator = OfflineEvaluator(data, 10)
    rng = np.random.default_rng(3)
    assert np.isnan(evaluator.of_stream(np.ones(data.n_docs), rng))
    assert rng.random() == np.random.default_rng(3).random()


def test_skipping_doubles_is_drawing_them():
    for n in (0, 1, 2874, 10**6):
        drawn, skipped = np.random.default_rng(n), np.random.default_rng(n)
        drawn.random(n)
        skip_doubles(skipped, n)
        assert drawn.bit_generator.state == skipped.bit_generator.state
    other, reference = np.random.Generator(np.random.MT19937(1)), np.random.Generator(np.random.MT19937(1))
    skip_doubles(other, 7)
    reference.random(7)
    assert other.random() == reference.random()


def reference_evaluation(monkeypatch):
    """Today's path in the loop: every evaluation unbatched, its GEMV's scores, the keys drawn, segment_ndcg,
    numpy's mean (OfflineEvaluator.__call__)."""
    monkeypatch.setattr(loop, "EVAL_COLUMNS", 0)

    def of_stream(self, scores, rng):
        scores = np.asarray(scores, dtype=np.float64)
        return self(scores, rng) if np.isfinite(scores).all() else None
    monkeypatch.setattr(OfflineEvaluator, "of_stream", of_stream)


def both_paths(monkeypatch, name, params, fold, user, rounds, seed, eval_every):
    """(fast trace, reference trace) of the same run."""
    fast = run_online(make_ranker(name, **params), fold, user, rounds, seed=seed, eval_every=eval_every)
    with monkeypatch.context() as patch:
        reference_evaluation(patch)
        slow = run_online(make_ranker(name, **params), fold, user, rounds, seed=seed, eval_every=eval_every)
    return fast, slow


def assert_identical(fast, slow):
    assert fast.arrays().keys() == slow.arrays().keys()
    for key, value in fast.arrays().items():
        assert value.tobytes() == slow.arrays()[key].tobytes(), key


@pytest.mark.parametrize("dataset", ["synth-mq", "mq2008"])
@pytest.mark.parametrize("name, params, click_model", LEARNERS)
def test_whole_runs_equal_the_reference_path_to_the_last_bit(monkeypatch, request, dataset, name, params,
                                                             click_model):
    fold = load_fold(dataset, 1, request.getfixturevalue("real_data_dir")) if dataset == "mq2008" else \
        load_fold(dataset)
    user = make_user(click_model, fold.max_grade)
    for seed in range(3):
        assert_identical(*both_paths(monkeypatch, name, params, fold, user, 300, seed, 1 + seed * 3))


def test_whole_runs_with_the_batched_evaluation_equal_the_reference_path(monkeypatch):
    fold = load_fold("synth-mq")
    monkeypatch.setattr(loop, "BATCHED_FROM", 0)
    monkeypatch.setattr(loop, "GIVE_UP_AFTER", 2)               # the batches give up: the one pass takes over
    assert_identical(*both_paths(monkeypatch, "mgd", {}, fold, make_user("navigational", fold.max_grade), 200, 0, 5))


def test_a_diverging_model_still_stops_with_the_same_message():
    fold = load_fold("synth-mq")
    with pytest.raises(NonFiniteModelError, match="became non-finite"):
        run_online(make_ranker("pdgd", learning_rate=1e308), fold, make_user("perfect", fold.max_grade), 200, seed=0)
