"""Offline evaluation of linear rankers a batch of rounds at a time (olr_core.loop.BatchedEvaluation): every
stored array identical to the last bit to the unbatched path (EVAL_COLUMNS = 0 keeps it, the reference), near
ties settled (one gain) or recomputed, non-finite models stopped at the same round with the same message."""

import numpy as np
import pytest

import olr_core.loop as loop
from olr_core.data import load_fold
from olr_core.data.ranking_data import RankingData
from olr_core.kernels import KEYS_NEEDED, _discounts, segment_ndcg, settled_ndcg_mean
from olr_core.loop import BatchedEvaluation, NonFiniteModelError, OfflineEvaluator, evaluation_vector, run_online
from olr_core.plugin_guard import guard_ranker
from olr_core.rankers import ALGORITHMS, LIBRARY_ALGORITHMS, make_ranker
from olr_core.rankers.dueling import DBGD
from olr_core.users import make_user

CODE = {"multileave": "probabilistic", "credit_samples": 10_000, "learning_rate": 0.01, "decay": 1.0,
        "dsp_renormalize": True}
# (algorithm, options, user): every ranker family that declares its evaluation vector
FAMILIES = [("dbgd", {}, "navigational"), ("mgd", {}, "navigational"), ("nsgd", {}, "navigational"),
            ("dbgd_dsp", {}, "navigational"), ("mgd_dsp", CODE, "navigational"), ("nsgd_dsp", {}, "navigational"),
            ("mgd", {"multileave": "probabilistic"}, "informational"), ("pdgd", {}, "navigational"),
            ("pairrank_c", {}, "navigational"), ("pairrank_r", {}, "navigational"),
            ("epsilon_greedy", {}, "navigational"), ("sgd_ranknet", {}, "navigational"), ("topk_squared", {}, "top1"),
            ("topk_ranksvm", {}, "top2"), ("listnet_full", {}, "full"), ("offline_ranknet", {}, "perfect")]


@pytest.fixture(scope="module")
def mslr():
    return load_fold("synth-mslr")


@pytest.fixture(scope="module")
def mq():
    return load_fold("synth-mq")


@pytest.fixture
def counted(monkeypatch):
    """Counts of the batched evaluations settled from the product (certified) and of those recomputed by the
    GEMV."""
    counts = {"certified": 0, "fallback": 0}
    settle = OfflineEvaluator.settled

    def counting(self, scores, slack):
        values = settle(self, scores, slack)
        counts["certified"] += int((values != KEYS_NEEDED).sum())
        counts["fallback"] += int((values == KEYS_NEEDED).sum())
        return values

    monkeypatch.setattr(OfflineEvaluator, "settled", counting)
    return counts


def both_paths(monkeypatch, name, params, fold, user, rounds, eval_every, columns=loop.EVAL_COLUMNS, **options):
    """(batched ranker, its trace), (unbatched ranker, its trace) of the same run (batched on any split size)."""
    monkeypatch.setattr(loop, "BATCHED_FROM", 0)
    out = []
    for width in (columns, 0):
        monkeypatch.setattr(loop, "EVAL_COLUMNS", width)
        ranker = make_ranker(name, **params)
        out.append((ranker, run_online(ranker, fold, user, rounds, seed=3, eval_every=eval_every, **options)))
    return out


def assert_identical(batched, unbatched):
    (fast_ranker, fast), (slow_ranker, slow) = batched, unbatched
    assert fast.arrays().keys() == slow.arrays().keys()
    for key, value in fast.arrays().items():
        assert value.tobytes() == slow.arrays()[key].tobytes(), key
    assert fast_ranker.weights().tobytes() == slow_ranker.weights().tobytes()


@pytest.mark.parametrize("name, params, click_model", FAMILIES)
def test_whole_runs_on_synth_mslr_equal_the_unbatched_path_to_the_last_bit(monkeypatch, counted, mslr, name, params,
                                                                            click_model):
    fold = mslr
    user = make_user(click_model, fold.max_grade)
    runs = both_paths(monkeypatch, name, params, fold, user, 120, 5, columns=4)
    assert_identical(*runs)
    assert counted["certified"] >= 20          # the batches were used (and certified), not all recomputed


@pytest.mark.parametrize("dataset", ["synth-mq", "mq2008"])
@pytest.mark.parametrize("name, params, click_model", FAMILIES)
def test_whole_runs_on_mq_sized_data_equal_the_unbatched_path(monkeypatch, request, mq, dataset, name, params,
                                                              click_model):
    fold = mq if dataset == "synth-mq" else load_fold(dataset, 1, request.getfixturevalue("real_data_dir"))
    user = make_user(click_model, fold.max_grade)
    assert_identical(*both_paths(monkeypatch, name, params, fold, user, 300, 7))


def test_small_splits_are_batched_and_ties_of_one_gain_settle(monkeypatch, counted, mq, real_data_dir):
    """MQ2008's duplicate documents tie in nearly every evaluation; their grades agree, so the ties settle and the
    product's evaluations are kept (the zero model of round 0, whose ties join grades, is the GEMV's)."""
    run_online(make_ranker("mgd"), mq, make_user("navigational", mq.max_grade), 100, seed=0, eval_every=5)
    assert counted["certified"] >= 15
    mq2008 = load_fold("mq2008", 1, real_data_dir)
    counted.update(certified=0, fallback=0)
    runs = both_paths(monkeypatch, "mgd", {}, mq2008, make_user("navigational", mq2008.max_grade), 1000, 5,
                      columns=4)
    assert_identical(*runs)
    assert counted["fallback"] <= 4 and counted["certified"] >= 190


def test_ties_of_different_gains_everywhere_stop_the_batching(monkeypatch, counted, mq):
    monkeypatch.setattr(loop, "EVAL_COLUMNS", 4)
    ranker = make_ranker("mgd")
    ranker.evaluation_vector = lambda: np.zeros(mq.train.n_features)    # (every evaluation ties: v = 0)
    run_online(ranker, mq, make_user("navigational", mq.max_grade), 200, seed=0, eval_every=5)
    assert counted == {"certified": 0, "fallback": loop.GIVE_UP_AFTER}


def test_batches_across_chunks_with_references_and_progress_equal_the_unbatched_path(monkeypatch, counted, mslr):
    fold = mslr
    monkeypatch.setattr(loop, "CHUNK_ROUNDS", 40)
    reference = np.linspace(-1, 1, fold.train.n_features)
    seen, progress = {}, {0: [], 64: []}
    for width in (64, 0):
        monkeypatch.setattr(loop, "EVAL_COLUMNS", width)
        seen[width] = run_online(make_ranker("mgd"), fold, make_user("navigational", fold.max_grade), 130, seed=1,
                                 eval_every=10, reference_weights=reference, progress=progress[width].append)
    for key, value in seen[64].arrays().items():
        assert value.tobytes() == seen[0].arrays()[key].tobytes(), key
    assert "eval__cosine_to_reference" in seen[64].arrays() and counted["certified"] >= 10
    assert progress[64] == progress[0] == list(range(10, 131, 10))


def test_a_batch_never_spans_more_than_a_chunk(monkeypatch, mq):
    fold = mq
    monkeypatch.setattr(loop, "CHUNK_ROUNDS", 30)
    monkeypatch.setattr(loop, "BATCHED_FROM", 0)
    sizes = []
    flush = BatchedEvaluation.flush
    monkeypatch.setattr(BatchedEvaluation, "flush", lambda self: (sizes.append(len(self.pending)), flush(self)))
    run_online(make_ranker("pdgd"), fold, make_user("navigational", fold.max_grade), 100, seed=0, eval_every=5)
    assert 0 < max(sizes) <= 6 and sum(sizes) == 21          # 30 rounds of 5: 6 evaluations a chunk; 21 in all


def test_the_zero_model_of_round_zero_falls_back_to_the_gemv(monkeypatch, counted, mslr):
    fold = mslr
    runs = both_paths(monkeypatch, "pdgd", {}, fold, make_user("navigational", fold.max_grade), 0, 10)
    assert_identical(*runs)
    assert counted == {"certified": 0, "fallback": 1}          # v = 0: every score ties, nothing certified


def near_tie_queries(first: np.ndarray, v: np.ndarray) -> RankingData:
    """Queries of two documents (grades 1 and 0): a row of ``first`` and the same row with its first and last
    features swapped. With v_0 = v_-1 their exact scores are equal, so the order of each pair is whatever the
    rounding of the product makes it."""
    second = first.copy()
    second[:, [0, -1]] = first[:, [-1, 0]]
    X = np.empty((2 * len(first), first.shape[1]))
    X[0::2], X[1::2] = first, second
    pairs = len(first)
    return RankingData(X, np.tile([1, 0], pairs), np.arange(0, 2 * pairs + 1, 2), np.arange(pairs), 1)


def pair_order(scores: np.ndarray) -> np.ndarray:
    return np.sign(scores[0::2] - scores[1::2])


def batched_value(data: RankingData, v: np.ndarray, other: np.ndarray, seed: int) -> float:
    """The NDCG of ``v`` by a batch of two (v and ``other``: a matrix product, not a GEMV)."""
    offline = [np.nan, np.nan]
    batch = BatchedEvaluation(DBGD(), OfflineEvaluator(data), data, np.random.default_rng(seed), offline, 2)
    assert batch.take(0, 0, v) and batch.take(1, 10, other)
    batch.flush()
    return offline[0]


def test_near_ties_where_the_two_products_disagree_fall_back_to_the_gemv(counted):
    """Pairs the batched product scores apart (no exact tie, which any certificate refuses) but in the other
    order than the GEMV (checked first, on this machine's BLAS): the evaluation must still be the GEMV's to
    the last bit. A certificate that only refused exact ties (a slack of 0) would take the product's order."""
    rng = np.random.default_rng(0)
    first, v, other = rng.random((600, 46)), rng.normal(size=46), rng.normal(size=46)
    v[-1] = v[0]
    product = (np.stack([v, other]) @ near_tie_queries(first, v).features.T)[0]
    data = near_tie_queries(first[pair_order(product) != 0], v)       # (the pairs the product does not tie)
    product, gemv = (np.stack([v, other]) @ data.features.T)[0], data.features @ v
    assert (pair_order(product) != 0).all() and (pair_order(product) != pair_order(gemv)).sum() > 10
    exact = OfflineEvaluator(data)(gemv, np.random.default_rng(5))
    assert batched_value(data, v, other, seed=5) == exact
    assert counted["fallback"] >= 1


def settled(data: RankingData, scores: np.ndarray, slack: np.ndarray) -> float:
    evaluator = OfflineEvaluator(data)
    return evaluator.settled(scores[None], slack[None])[0]


def test_the_certificate_needs_a_gap_above_twice_both_rounding_bounds():
    """One query of two documents of different grades scored exactly 1 and 1 - delta by a one-hot v (no rounding
    at all): settled only when delta exceeds 4 gamma_d (reach 1), as the bound requires of any two products; of
    one grade, settled whatever the gap."""
    d = 136
    gamma = d * 2.0 ** -53 / (1 - d * 2.0 ** -53)
    for delta, certain in ((3.9 * gamma, False), (4.1 * gamma, True), (0.0, False)):
        for grades, settles in (([0, 1], certain), ([1, 1], True)):
            X = np.zeros((2, d))
            X[:, 0] = [1.0, 1.0 - delta]
            data = RankingData(X, np.array(grades), np.array([0, 2]), np.array([0]), 1)
            batch = BatchedEvaluation(DBGD(), OfflineEvaluator(data), data, np.random.default_rng(0), [np.nan], 2)
            slack = batch.relative * (batch.query_max @ np.eye(d)[0]) + batch.absolute
            assert bool(settled(data, X @ np.eye(d)[0], slack) != KEYS_NEEDED) is settles


def test_an_open_stretch_across_the_cutoff_settles_only_if_every_document_it_may_take_shares_a_gain():
    """k = 1: the best document's place is open between the two top ones (within slack); a third document just
    below them within slack of the second may also take it, so its grade counts too, and one farther does not."""
    X = np.array([[1.0], [1.0 - 1e-9], [1.0 - 1.8e-9], [0.5]])
    for grades, settles in (([1, 1, 1, 0], True), ([1, 1, 0, 1], False), ([0, 0, 0, 1], True)):
        data = RankingData(X, np.array(grades), np.array([0, 4]), np.array([0]), 1)
        evaluator = OfflineEvaluator(data, k=1)
        value = evaluator.settled(X[:, 0][None], np.array([[2e-9]]))[0]
        assert bool(value != KEYS_NEEDED) is settles
        if settles:
            assert value == evaluator(X[:, 0], np.random.default_rng(0))


def test_the_settled_ndcg_is_segment_ndcg_bit_for_bit():
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 40, size=300)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    scores, keys = rng.normal(size=offsets[-1]), rng.random(offsets[-1])
    gains = 2.0 ** rng.integers(0, 3, size=offsets[-1]) - 1.0
    ideal = np.array([np.sort(gains[a:b])[::-1][:10] @ (1 / np.log2(np.arange(2, 2 + min(10, b - a))))
                      for a, b in zip(offsets[:-1], offsets[1:])])
    kept = ideal > 0
    plain = segment_ndcg(scores, keys, gains, offsets, ideal, 10, np.empty(300))[kept].mean()

    def value(scores):
        return settled_ndcg_mean(scores, np.zeros(300), gains, offsets, ideal, kept, 10, _discounts(10),
                                 np.empty(11, dtype=np.int64), np.empty(300))

    assert np.float64(value(scores)).tobytes() == plain.tobytes()
    first = offsets[np.flatnonzero(kept & (sizes > 1))[0]]
    tied = scores.copy()
    tied[first:first + 2] = scores.max() + 1.0                         # an exact tie at the top of one query
    assert bool(value(tied) == KEYS_NEEDED) is bool(gains[first] != gains[first + 1])
    gains[first + 1] = gains[first]                                    # of one gain: no key changes the DCG
    assert value(tied) != KEYS_NEEDED


@pytest.mark.parametrize("learning_rate", [1e300, 1e306])
def test_a_diverging_model_stops_at_the_same_round_with_the_same_message(monkeypatch, mq, learning_rate):
    fold = mq
    user = make_user("perfect", fold.max_grade)
    messages = []
    for width in (64, 0):
        monkeypatch.setattr(loop, "EVAL_COLUMNS", width)
        with pytest.raises(NonFiniteModelError, match=r"by round \d+") as err:
            run_online(make_ranker("pdgd", learning_rate=learning_rate), fold, user, 400, 0, eval_every=3)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_a_model_whose_scores_could_overflow_is_evaluated_now_not_held():
    data = near_tie_queries(np.random.default_rng(0).random((5, 46)), np.zeros(46))
    batch = BatchedEvaluation(DBGD(), OfflineEvaluator(data), data, np.random.default_rng(0), [np.nan], 8)
    v = np.linspace(-1, 1, 46)
    assert not batch.take(0, 0, np.full(46, 1e305))        # finite, but its scores may not be
    assert not batch.take(0, 0, np.where(np.arange(46) == 3, np.nan, v))
    assert batch.take(0, 0, v) and len(batch.pending) == 1


def test_every_declared_evaluation_vector_scores_exactly_as_the_ranker_does(mq):
    """Class by class: after some learning, score(test) is features @ v to the last bit, for every built-in
    algorithm that declares a v."""
    fold = mq
    declared = []
    for name in sorted(set(ALGORITHMS) - set(LIBRARY_ALGORITHMS)):
        ranker = make_ranker(name)
        kind = getattr(ranker, "feedback_kind", "clicks")
        model = {"topk_labels": f"top{getattr(ranker, 'feedback_depth', 1)}", "all_labels": "full",
                 "choice": None}.get(kind, "navigational")
        if model is None:
            continue
        run_online(ranker, fold, make_user(model, fold.max_grade), 40, seed=0, eval_every=40)
        v = evaluation_vector(ranker)
        if v is not None:
            declared.append(name)
            assert ranker.score(fold.test).tobytes() == (fold.test.features @ v).tobytes(), name
    assert {"dbgd", "mgd_dsp", "nsgd", "pdgd", "pairrank_c", "epsilon_greedy", "topk_kl", "listnet_full",
            "offline_lambdarank"} <= set(declared)
    assert not {"neural_dbgd", "neural_pdgd", "olranknet", "random", "oracle"} & set(declared)


class OwnScoreDBGD(DBGD):
    def score(self, docs):
        return docs.features @ self.theta + 1.0


class SameDBGD(DBGD):
    pass


def test_plugins_and_subclasses_are_never_batched(mq):
    fold = mq
    for ranker in (guard_ranker(DBGD(), "mine"), OwnScoreDBGD(), SameDBGD(), make_ranker("mgd", scorer="mlp")):
        ranker.start(fold.train, np.random.default_rng(0))
        assert evaluation_vector(ranker) is None
    own, same = OwnScoreDBGD(), SameDBGD()
    for ranker in (own, same):
        ranker.start(fold.train, np.random.default_rng(0))
    assert own.evaluation_vector() is None and same.evaluation_vector() is same.theta    # (the class's own check)
