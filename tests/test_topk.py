"""RTop-kF (Chaudhuri and Tewari): the unbiased gradient estimators, the policy, the users that
reveal only the top k grades, and bad input."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

from olr_core.data import load_fold
from olr_core.data.ranking_data import Query
from olr_core.loop import run_online
from olr_core.params import ParameterError
from olr_core.rankers import make_ranker
from olr_core.rankers.topk import (
    SURROGATES,
    TOPK_SURROGATES,
    estimate_gradient,
    make_surrogate,
    project_to_ball,
)
from olr_core.users import TopKRelevanceUser, make_user

from .conftest import assert_compiled_replays_protocol

S = np.array([0.3, -0.2, 0.25, 0.9])
R = np.array([2.0, 0.0, 1.0, 3.0])


def exact_expectation(surrogate, s, grades, k, gamma, model_order):
    """E[estimate] over P(sigma) = (1 - gamma) 1[sigma = model_order] + gamma / m!, by enumeration."""
    m = len(s)
    model_top = np.zeros(m, dtype=bool)
    model_top[model_order[:k]] = True
    total = np.zeros(m)
    for sigma in itertools.permutations(range(m)):
        sigma = np.array(sigma)
        p = gamma / math.factorial(m) + (1 - gamma) * np.array_equal(sigma, model_order)
        total += p * estimate_gradient(surrogate, s, sigma[:k], grades[sigma[:k]], model_top, gamma)
    return total


@pytest.mark.parametrize("name,k", [("squared", 1), ("squared", 2), ("kl", 1), ("kl", 3), ("smoothdcg", 1),
                                    ("smoothdcg", 2), ("smoothdcg_gain", 1), ("ranksvm", 2), ("ranksvm", 3)])
@pytest.mark.parametrize("m", [3, 4])
def test_estimator_is_unbiased_by_exact_enumeration(name, k, m):
    surrogate = make_surrogate(name, epsilon=0.5)
    s, grades = S[:m], R[:m]
    for model_order in (np.argsort(-s), np.arange(m)[::-1]):       # the model's ranking, and any other
        expected = exact_expectation(surrogate, s, grades, k, 0.3, model_order)
        np.testing.assert_allclose(expected, surrogate.gradient(s, grades), atol=1e-12)


def test_ranksvm_from_one_grade_would_be_biased():
    """Lemma 2: the hinge's gradient needs pairs of grades; a 'pair' from top-1 feedback does not exist."""
    surrogate = make_surrogate("ranksvm")
    expected = exact_expectation(surrogate, S, R, 1, 0.3, np.argsort(-S))
    assert np.abs(expected - surrogate.gradient(S, R)).max() > 0.5


@pytest.mark.parametrize("name", TOPK_SURROGATES)
def test_the_rankers_own_lists_give_an_unbiased_estimate_monte_carlo(name):
    """The estimate averaged over the ranker's own random lists (its rank()) matches the full gradient."""
    ranker = make_ranker(f"topk_{name.removesuffix('_gain')}", surrogate=name, epsilon=0.5, gamma0=0.5, gamma_power=0.0)
    fold = load_fold("synth-mq-5g")
    ranker.start(fold.train, np.random.default_rng(1))
    query = fold.train.query(3)
    q = Query(query.features[:5], np.array([0, 3, 1, 4, 2]))
    ranker.w = np.random.default_rng(0).normal(size=ranker.w.shape) * 0.3
    k = ranker.k
    draws = []
    for _ in range(20000):
        display = ranker.rank(q)
        model_top = np.zeros(5, dtype=bool)
        model_top[display.info.model_order[:k]] = True
        shown = display.ranking[:k]
        draws.append(estimate_gradient(ranker.surrogate, display.info.model, shown, q.labels[shown].astype(float),
                                       model_top, display.info.gamma))
    draws = np.array(draws)
    truth = ranker.surrogate.gradient(display.info.model, q.labels.astype(float))
    stderr = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - truth) <= 4.5 * stderr + 1e-9)   # 4.5 s.e.: a false alarm ~1e-4


@pytest.mark.parametrize("name", list(SURROGATES))
def test_gradients_match_finite_differences(name):
    surrogate = make_surrogate(name, epsilon=0.7)
    s = np.array([0.31, -0.17, 0.52, 1.3, 0.05])
    grades = np.array([2.0, 0.0, 1.0, 3.0, 1.0])
    h = 1e-6
    numeric = np.array([(surrogate.loss(s + h * e, grades) - surrogate.loss(s - h * e, grades)) / (2 * h)
                        for e in np.eye(len(s))])
    np.testing.assert_allclose(surrogate.gradient(s, grades), numeric, atol=1e-5)


def test_smoothdcg_is_stable_at_tiny_epsilon():
    surrogate = make_surrogate("smoothdcg", epsilon=0.01)
    s = np.array([9.0, -9.0, 8.5])
    assert np.isfinite(surrogate.loss(s, R[:3])) and np.isfinite(surrogate.gradient(s, R[:3])).all()


def test_projection_onto_the_ball():
    w = np.array([3.0, 4.0])
    p = project_to_ball(w, 1.0)
    np.testing.assert_allclose(p, [0.6, 0.8])
    np.testing.assert_allclose(project_to_ball(p, 1.0), p)              # idempotent
    inside = np.array([0.1, -0.2])
    assert project_to_ball(inside, 1.0) is inside


def test_schedules_and_first_step():
    """gamma_t = gamma0 / t^(1/3); the first update is -eta_1 X^T z, projected (eta_1 = eta0)."""
    ranker = make_ranker("topk_squared", eta0=0.05, gamma0=0.2)
    assert ranker.gamma(8) == pytest.approx(0.1) and ranker.gamma(1) == pytest.approx(0.2)
    fold = load_fold("synth-mq-5g")
    ranker.start(fold.train, np.random.default_rng(0))
    query = fold.train.query(0)
    display = ranker.rank(query)
    grade = query.labels[display.ranking[:1]]
    ranker.learn(query, display, TopKRelevanceUser(1)(query, display.ranking, None))
    m, top = query.n_docs, display.ranking[0]
    pi = (1 - 0.2) * (top == display.info.model_order[0]) + 0.2 / m
    z = np.zeros(m)
    z[top] = -2 * grade[0] / pi                 # s = 0 at the start: the known part 2s vanishes
    expected = project_to_ball(-0.05 * (z @ query.features), 1.0)
    np.testing.assert_allclose(ranker.w, expected)
    step2 = ranker.eta0 / 2 ** ranker.eta_power
    assert step2 == pytest.approx(0.05 / 2 ** (2 / 3))


def test_top_k_user_reveals_exactly_k_grades():
    q = Query(np.zeros((5, 2)), np.array([0, 3, 1, 4, 2]))
    feedback = make_user("top2", 4)(q, np.array([4, 1, 0, 3, 2]), None)
    assert list(feedback.labels) == [2, 3]
    assert set(vars(feedback)) == {"labels"}


@pytest.mark.parametrize("name,user", [("topk_squared", "top1"), ("topk_kl", "top1"), ("topk_ranksvm", "top2"),
                                       ("topk_smoothdcg", "top1"), ("topk_kl", "top3")])
def test_learners_read_nothing_but_the_revealed_grades(name, user):
    """Run once recording which grades the user revealed; scramble every other training grade; rerun
    with the same seed: the weights must be identical. A learner that read ``query.labels`` (or a
    user that revealed more than k grades) fails this test."""
    fold = load_fold("synth-mq-5g")
    revealed = set()
    inner = make_user(user, 4)

    class Recording:
        feedback_kind, k = inner.feedback_kind, inner.k

        def __call__(self, query, shown, rng):
            feedback = inner(query, shown, rng)
            revealed.update((query.qid, int(d)) for d in shown[: len(feedback.labels)])
            return feedback

    first = make_ranker(name)
    run_online(first, fold, Recording(), 300, seed=3)
    labels = fold.train.labels.copy()
    hidden = np.ones(len(labels), dtype=bool)
    qid_index = {str(q): i for i, q in enumerate(fold.train.qids)}
    for qid, doc in revealed:
        hidden[fold.train.offsets[qid_index[qid]] + doc] = False
    labels[hidden] = np.random.default_rng(0).integers(0, 5, hidden.sum())
    assert (labels != fold.train.labels).sum() > 1000            # the scrambled copy really differs
    scrambled = dataclasses.replace(fold, train=dataclasses.replace(fold.train, labels=labels))
    second = make_ranker(name)
    run_online(second, scrambled, make_user(user, 4), 300, seed=3)
    np.testing.assert_array_equal(first.w, second.w)


def test_full_information_learner_sees_every_grade():
    q = Query(np.zeros((3, 2)), np.array([0, 2, 1]))
    assert list(make_user("full", 2)(q, np.array([1]), None).labels) == [0, 2, 1]


def test_bad_input_is_a_one_line_error():
    fold = load_fold("synth-mq-5g")
    with pytest.raises(ValueError, match="reveals 1; use click model top2"):
        run_online(make_ranker("topk_ranksvm"), fold, make_user("top1", 4), 5, seed=0)
    with pytest.raises(ParameterError, match="needs top-2 feedback"):
        make_ranker("topk_ranksvm", k=1)
    with pytest.raises(ParameterError, match="option k=0"):
        make_ranker("topk_kl", k=0)
    with pytest.raises(ValueError, match="k must be between 1 and the 10 shown"):
        make_user("top11", 4)
    with pytest.raises(ValueError, match="k must be between 1"):
        make_user("top0", 4)
    with pytest.raises(ValueError, match="larger than the 10 documents shown"):
        run_online(make_ranker("topk_kl", k=12), fold, TopKRelevanceUser(12), 5, seed=0)
    with pytest.raises(ValueError, match="learns from 'topk_labels' feedback"):
        run_online(make_ranker("topk_kl"), fold, make_user("navigational", 4), 5, seed=0)


def test_random_runs_with_any_user_and_short_lists_reveal_what_they_have():
    fold = load_fold("synth-mq-5g")
    assert run_online(make_ranker("random"), fold, make_user("top2", 4), 20, seed=0).rounds == 20
    q = Query(np.ones((1, 3)), np.array([2]))
    assert list(make_user("top2", 4)(q, np.array([0]), None).labels) == [2]


def test_audit_records_surrogate_losses_without_changing_the_run():
    fold = load_fold("synth-mq-5g")
    plain = run_online(make_ranker("topk_kl"), fold, make_user("top1", 4), 200, seed=2)
    audited = run_online(make_ranker("topk_kl"), fold, make_user("top1", 4), 200, seed=2, audit=True)
    np.testing.assert_array_equal(plain.online_ndcg, audited.online_ndcg)
    played, model = audited.stats["played_loss"], audited.stats["model_loss"]
    exploit = audited.stats["explored"] == 0
    np.testing.assert_array_equal(played[exploit], model[exploit])
    assert np.isfinite(played).all() and (played[~exploit] != model[~exploit]).all()
    with pytest.raises(ValueError, match="no played scores to audit"):
        run_online(make_ranker("dbgd"), fold, make_user("perfect", 4), 5, seed=0, audit=True)


@pytest.mark.parametrize("name,k", [("squared", 1), ("squared", 3), ("kl", 1), ("kl", 2), ("ranksvm", 2),
                                    ("ranksvm", 4), ("smoothdcg", 1), ("smoothdcg", 2), ("smoothdcg_gain", 1)])
def test_the_compiled_update_is_the_numpy_estimator(name, k):
    """learn (compiled) and reference_learn (numpy estimate_gradient + step + projection) give the same weights."""
    fold = load_fold("synth-mq-5g")
    algorithm = f"topk_{name.removesuffix('_gain')}"
    compiled, reference = (make_ranker(algorithm, surrogate=name, k=k, eta0=0.05) for _ in range(2))
    compiled.start(fold.train, np.random.default_rng(3))
    reference.start(fold.train, np.random.default_rng(3))
    user = make_user(f"top{k}", 4)
    for q in range(60):
        query = fold.train.query(q)
        a, b = compiled.rank(query), reference.rank(query)
        np.testing.assert_array_equal(a.ranking, b.ranking)
        compiled.learn(query, a, user(query, a.ranking, None))
        reference.reference_learn(query, b, user(query, b.ranking, None))
        # the two sum in another order, and SmoothDCG's 1/epsilon = 100 amplifies rounding: equal to within
        # 1e-6 of the weight vector's scale (an entry near 0 can differ by more than 1e-6 of itself)
        np.testing.assert_allclose(compiled.w, reference.w, rtol=1e-6, atol=1e-6 * np.abs(reference.w).max())
    assert np.abs(compiled.w).sum() > 0


def test_smoothdcg_as_written_descends_the_gain_ours_ascends_it():
    """The paper's phi_SD is the smoothed gain; descending it lowers DCG. Ours minimises its negative."""
    ours, written = make_surrogate("smoothdcg", 0.5), make_surrogate("smoothdcg_gain", 0.5)
    s, grades = np.array([0.3, -0.2, 0.1]), np.array([2.0, 0.0, 1.0])
    assert written.loss(s, grades) == pytest.approx(-ours.loss(s, grades)) and ours.loss(s, grades) < 0
    docs, weights = np.array([0, 2]), np.array([1.0, 1.0])
    np.testing.assert_allclose(written.sampled(s, docs, grades[docs], weights),
                               -ours.sampled(s, docs, grades[docs], weights))


def test_comparators_computed_on_the_workers_are_the_ones_the_regret_curve_reads(tmp_path, monkeypatch):
    """precompute_comparators keeps one best-fixed comparator per surrogate and seed (learners of a seed share
    it), computed on two worker processes; the regret curve then reads exactly what a serial computation gives."""
    from olr_core.reproductions import topk

    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "parallel"))
    train = load_fold(topk.experiments.REGRET_DATASET, 1, None).train
    specs = topk.experiments.regret_grid(topk.experiments.REGRET_DATASET, 2, 320, gammas=(0.1, 0.3),
                                         surrogates=("squared", "kl"))
    horizons = topk.experiments.checkpoints(320)
    topk.analysis.precompute_comparators(specs, train, horizons, jobs=2)
    assert len(list((tmp_path / "parallel" / "comparators").glob("*.npy"))) == 2 * 2      # surrogates x seeds
    parallel = [topk.analysis.comparators(s.algorithm.removeprefix("topk_"), train, 320, s.seed, tuple(horizons), 1.0)
                for s in specs]
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "serial"))
    serial = [topk.analysis.comparators(s.algorithm.removeprefix("topk_"), train, 320, s.seed, tuple(horizons), 1.0)
              for s in specs]
    assert all(np.array_equal(a, b) for a, b in zip(parallel, serial))


# -- the compiled rounds (RTopKF.compiled_rounds) replay the protocol to the last bit --------------------------------

COMPILED_CASES = [("topk_squared", {}, "top1"), ("topk_kl", {}, "top1"), ("topk_ranksvm", {}, "top2"),
                  ("topk_smoothdcg", {}, "top1"), ("topk_smoothdcg", {"surrogate": "smoothdcg_gain"}, "top1"),
                  ("topk_kl", {"eta0": 0.1}, "top2"), ("topk_squared", {"k": 3, "gamma0": 0.9}, "top3"),
                  ("topk_ranksvm", {"k": 4, "gamma0": 0.5, "eta0": 0.1}, "top5")]


@pytest.mark.parametrize("dataset", ["synth-mslr", "synth-mq"])
@pytest.mark.parametrize("name,params,user", COMPILED_CASES)
def test_compiled_rounds_replay_the_protocol_bit_for_bit(name, params, user, dataset, monkeypatch):
    """Whole runs, compiled and through the protocol: every stored array, w and t equal to the last bit, over
    evaluation blocks of several lengths and chunks that end inside a block's run (synth-mslr has queries of more
    than ONE_SORT_FROM documents, where rank_by_scores sorts once; a high gamma0 explores in most rounds)."""
    from olr_core import loop

    monkeypatch.setattr(loop, "CHUNK_ROUNDS", 700)                    # chunks of 700 rounds: several per run
    fold = load_fold(dataset)
    for eval_every, seeds in ((100, (0, 3)), (7, (1,))):
        assert_compiled_replays_protocol(name, params, fold, make_user(user, fold.train.max_grade), 1500, seeds,
                                         eval_every, model=("w", "t"))


def test_rounds_the_kernel_declines_are_played_by_the_protocol(monkeypatch):
    """Every third round handed back (as a non-finite score or tied uniforms would be): the generator is set back
    to that round's draws, the protocol plays it, and the run is still the protocol's to the last bit."""
    from olr_core.rankers import topk

    kernel = topk.rtopkf_round
    calls = []

    def declining(*args):
        calls.append(1)
        return -1.0 if len(calls) % 3 == 0 else kernel(*args)

    monkeypatch.setattr(topk, "rtopkf_round", declining)
    fold = load_fold("synth-mq")
    assert_compiled_replays_protocol("topk_kl", {"gamma0": 0.5}, fold, make_user("top1", 2), 400, (0,), 31,
                                     model=("w", "t"))
    assert len(calls) == 400


def test_the_kernel_declines_non_finite_scores_and_tied_uniforms():
    """-1 and nothing changed for a score that is not finite or uniforms that tie where they decide the shown list;
    a tie below the shown list's end is harmless (the shown order is argsort(-uniform)'s whatever the sort)."""
    from olr_core.rankers.topk import _uniform_top, rtopkf_round

    rng = np.random.default_rng(5)
    X, labels = rng.random((6, 3)), np.array([0, 1, 2, 0, 1, 2])
    for s, uniform in ((np.array([0.1, np.nan, 0, 0, 0, 0]), rng.random(6)),
                       (np.array([0.1, np.inf, 0, 0, 0, 0]), rng.random(6)),
                       (X @ np.ones(3), np.array([0.5, 0.9, 0.1, 0.9, 0.2, 0.3]))):
        w, shown = np.ones(3), np.full(4, -7, dtype=np.int32)
        draws = np.concatenate([rng.random(6), [0.0], uniform])          # 0.0 < gamma: explore
        assert rtopkf_round(X, w, s, draws, 0, labels, 0.1, 0.1, 1.0, 0, 0.01, 1, shown) == -1.0
        assert (w == 1).all() and (shown == -7).all()
    uniform = np.array([0.5, 0.9, 0.1, 0.8, 0.1, 0.3])
    np.testing.assert_array_equal(_uniform_top(uniform, 3), np.argsort(-uniform)[:3])     # tie at 0.1 below: fine
    assert len(_uniform_top(uniform, 5)) == 0                                            # tie at 5th/6th: declined
    uniform = rng.random(200)
    for c in (1, 10, 199, 200, 300):
        np.testing.assert_array_equal(_uniform_top(uniform, c), np.argsort(-uniform)[:c])


def test_the_model_order_is_lexsort_of_noise_and_minus_scores():
    from olr_core.rankers.topk import _model_top

    rng = np.random.default_rng(2)
    for m in (1, 5, 40, 150):
        s = rng.integers(0, 4, m) * 0.5                                    # many ties
        s[rng.random(m) < 0.2] = -0.0
        noise = rng.random(m)
        noise[: m // 2] = noise[0]                                         # ties in the noise too: index decides
        for c in (1, 3, 10, m):
            c = min(c, m)
            np.testing.assert_array_equal(_model_top(s, noise, c), np.lexsort((noise, -s))[:c])


def test_compiled_rounds_are_offered_only_to_the_plain_class_and_the_top_k_user():
    fold = load_fold("synth-mq-5g")

    class Subclass(type(make_ranker("topk_kl"))):
        pass

    def offer(ranker, user):
        ranker.start(fold.train, np.random.default_rng(0))
        return ranker.compiled_rounds(user, fold.train, 10)

    assert offer(make_ranker("topk_kl"), make_user("top1", 4)) is not None
    assert offer(make_ranker("topk_ranksvm"), make_user("top3", 4)) is not None
    assert offer(Subclass(), make_user("top1", 4)) is None
    assert offer(make_ranker("topk_ranksvm"), make_user("top1", 4)) is None

    @dataclasses.dataclass(frozen=True)
    class OtherTopK(TopKRelevanceUser):
        pass

    assert offer(make_ranker("topk_kl"), OtherTopK(1)) is None
    ranker = make_ranker("topk_kl")
    ranker.start(fold.train, np.random.Generator(np.random.MT19937(0)))
    assert ranker.compiled_rounds(make_user("top1", 4), fold.train, 10) is None
