import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from olr_core.data import load_fold, load_library
from olr_core.rankers import ALGORITHMS, LIBRARY_ALGORITHMS, Ranker, make_ranker
from olr_core.rankers.offline import delta_ndcg_weights, fit_pairwise_logistic, labelled_pairs

from .conftest import tiny_data


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_ranker_follows_the_protocol_and_ranks_a_permutation(name):
    """LETOR rankers on LETOR queries, growing-library rankers on library queries (random on both)."""
    sources = []
    if name not in LIBRARY_ALGORITHMS or name == "random":
        data = tiny_data(2)
        sources.append((data, [data.query(q) for q in range(data.n_queries)]))
    if name in LIBRARY_ALGORITHMS:
        stream = load_library("synth-library")
        sources.append((stream, [stream.query(t) for t in range(0, 2000, 97)]))
    for data, queries in sources:
        ranker = make_ranker(name)
        assert isinstance(ranker, Ranker)
        ranker.start(data, np.random.default_rng(0))
        for query in queries:
            assert sorted(ranker.rank(query).ranking) == list(range(query.n_docs))
            assert ranker.score(query).shape == (query.n_docs,)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_oracle_sorts_by_grade(seed):
    data = tiny_data(seed)
    oracle = make_ranker("oracle")
    oracle.start(data, np.random.default_rng(seed))
    for q in range(data.n_queries):
        query = data.query(q)
        assert np.all(np.diff(query.labels[oracle.rank(query).ranking]) <= 0)


def test_labelled_pairs_are_exactly_the_better_worse_pairs_within_queries():
    data = tiny_data(4)
    pi, pj = labelled_pairs(data)
    expected = set()
    for q in range(data.n_queries):
        lo, hi = data.offsets[q], data.offsets[q + 1]
        expected |= {(i, j) for i in range(lo, hi) for j in range(lo, hi) if data.labels[i] > data.labels[j]}
    assert set(zip(pi.tolist(), pj.tolist())) == expected


def test_pairwise_logistic_fit_matches_a_reference_solver():
    data = tiny_data(5, n_queries=20, n_features=5)
    pi, pj = labelled_pairs(data)
    w = fit_pairwise_logistic(data.features, pi, pj, l2=0.1, maxiter=500)
    diff = data.features[pi] - data.features[pj]

    def loss(v):
        return np.logaddexp(0, -diff @ v).mean() + 0.05 * v @ v

    reference = minimize(loss, np.zeros(5), method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-12,
                                                                           "maxiter": 20000}).x
    np.testing.assert_allclose(w, reference, atol=1e-4)


def test_delta_ndcg_weights_match_brute_force_swaps():
    data = tiny_data(6, n_queries=3)
    w = np.array([1.0, -0.5, 0.3, 0.0])
    pi, pj = labelled_pairs(data)
    weights = delta_ndcg_weights(data, w, pi, pj)
    scores = data.features @ w
    q_of = data.query_of_doc()
    for (i, j), got in zip(zip(pi, pj), weights):
        q = q_of[i]
        lo, hi = data.offsets[q], data.offsets[q + 1]
        order = list(np.argsort(-scores[lo:hi], kind="stable") + lo)

        def dcg(order):
            return sum((2.0 ** data.labels[d] - 1) / np.log2(r + 2) for r, d in enumerate(order))

        swapped = order.copy()
        a, b = order.index(i), order.index(j)
        swapped[a], swapped[b] = j, i
        ideal = dcg(sorted(range(lo, hi), key=lambda d: -data.labels[d]))
        assert got == pytest.approx(abs(dcg(order) - dcg(swapped)) / ideal)


def test_offline_learners_beat_random_on_synthetic_test_data():
    from olr_core.loop import OfflineEvaluator

    fold = load_fold("synth-mq")
    evaluate = OfflineEvaluator(fold.test)
    results = {}
    for name in ("random", "offline_ranknet", "offline_lambdarank"):
        ranker = make_ranker(name)
        ranker.start(fold.train, np.random.default_rng(0))
        results[name] = evaluate(ranker.score(fold.test), np.random.default_rng(0))
    assert results["offline_ranknet"] > results["random"] + 0.15
    assert results["offline_lambdarank"] > results["random"] + 0.15


def test_make_ranker_rejects_unknown_names_and_parameters():
    with pytest.raises(KeyError, match="valid: .*offline_ranknet"):
        make_ranker("pairrank_x")
    with pytest.raises(ValueError, match=r"offline_ranknet has no option learning_rate; its options: l2 \("):
        make_ranker("offline_ranknet", learning_rate=0.1)


def test_offline_fits_are_computed_once_per_data_and_parameters():
    from olr_core.rankers import offline

    data = tiny_data(3, n_queries=12, n_features=4)
    calls = []
    original = offline.OfflineRankNet._fit

    def counting(self, train):
        calls.append(1)
        return original(self, train)

    offline._FITTED.clear()
    offline.OfflineRankNet._fit = counting
    try:
        first, second, other = make_ranker("offline_ranknet"), make_ranker("offline_ranknet"), \
            make_ranker("offline_ranknet", l2=0.1)
        for r in (first, second, other):
            r.start(data, np.random.default_rng(0))
        first.w[:] = 99.0                               # callers get copies
        fresh = make_ranker("offline_ranknet")
        fresh.start(data, np.random.default_rng(1))
    finally:
        offline.OfflineRankNet._fit = original
    assert len(calls) == 2                            # one per parameter setting
    np.testing.assert_array_equal(second.w, fresh.w)
    assert not np.allclose(fresh.w, 99.0)


def test_offline_weights_are_fitted_once_per_machine_and_a_corrupt_copy_is_refitted(tmp_path):
    from olr_core.rankers import offline

    train = tiny_data(3, n_queries=12)
    calls = []

    def fit():
        calls.append(1)
        return offline.OfflineRankNet()._fit(train)

    learner = offline.OfflineRankNet()
    first = offline.fitted_once(learner, train, fit)
    offline._FITTED.clear()                                   # a new process: only the disk copy remains
    np.testing.assert_array_equal(offline.fitted_once(learner, train, fit), first)
    assert len(calls) == 1
    (stored,) = (tmp_path / "cache" / "parsed" / "fitted").glob("*.npy")
    for corrupt in (b"", stored.read_bytes()[:100]):                   # empty, truncated
        stored.write_bytes(corrupt)
        offline._FITTED.clear()
        np.testing.assert_array_equal(offline.fitted_once(learner, train, fit), first)
    assert len(calls) == 3
    offline._FITTED.clear()
    assert not np.array_equal(offline.fitted_once(offline.OfflineRankNet(l2=1.0), train,
                                                  lambda: offline.OfflineRankNet(l2=1.0)._fit(train)), first)
