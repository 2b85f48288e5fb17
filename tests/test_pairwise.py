import itertools

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from olr_core.data import Query, load_fold
from olr_core.kernels import lower_bound_above_half
from olr_core.loop import run_online
from olr_core.metrics import rank_by_scores
from olr_core.rankers import make_ranker
from olr_core.rankers.clickpairs import independent_pairs, pdgd_pairs
from olr_core.rankers.pairwise import (
    OnlinePairwiseLogistic,
    PairRank,
    _epsilon_greedy,
    _order_blocks,
    certain_blocks,
    display_certain_orders,
    pairwise_uncertainty,
    transitive_closure,
)
from olr_core.rankers.pdgd import swap_log_ratio
from olr_core.users import LogisticClickUser, make_user


def test_click_pairs_exact_cases():
    clicks = np.array([False, True, False, True, False, False])
    win, lose = pdgd_pairs(clicks)                       # observed: positions 0..4
    assert set(zip(win, lose)) == {(1, 0), (1, 2), (1, 4), (3, 0), (3, 2), (3, 4)}
    win, lose = independent_pairs(clicks)                # position pairs (0,1), (2,3); 4 unpaired
    assert list(zip(win, lose)) == [(1, 0), (3, 2)]
    win, lose = independent_pairs(clicks, np.random.default_rng(0), "shuffled")
    assert sorted(win) == [1, 3] and len(set(lose)) == 2 and set(lose) <= {0, 2, 4}
    assert len(pdgd_pairs(np.zeros(5, bool))[0]) == 0


def _random_certain(rng, n=12, d=4):
    X = rng.standard_normal((n, d))
    theta = rng.standard_normal(d)
    Minv = np.linalg.inv(np.eye(d) * 0.5 + 0.2 * X.T @ X)
    prob, norms, scores = pairwise_uncertainty(X, theta, Minv)
    return prob - 0.3 * norms > 0.5, scores


def test_pairwise_uncertainty_is_the_quadratic_form_of_each_pair():
    rng = np.random.default_rng(0)
    X, theta = rng.standard_normal((5, 3)), rng.standard_normal(3)
    Minv = np.linalg.inv(np.eye(3) + X.T @ X)
    prob, norms, _ = pairwise_uncertainty(X, theta, Minv)
    for i, j in itertools.product(range(5), repeat=2):
        z = X[i] - X[j]
        assert norms[i, j] == pytest.approx(np.sqrt(z @ Minv @ z), abs=1e-9)
        assert prob[i, j] == pytest.approx(expit(z @ theta))


@pytest.mark.parametrize("seed", range(20))
def test_blocks_partition_and_certain_pairs_are_respected(seed):
    rng = np.random.default_rng(seed)
    certain, scores = _random_certain(rng)
    order, starts = certain_blocks(certain, scores, rng)
    assert sorted(order) == list(range(len(scores))) and starts[0] == 0 and starts[-1] == len(scores)
    block = np.empty(len(scores), int)
    for b in range(len(starts) - 1):
        block[order[starts[b]:starts[b + 1]]] = b
    uncertain = ~(certain | certain.T)
    np.fill_diagonal(uncertain, False)
    i, j = np.nonzero(uncertain)
    assert np.all(block[i] == block[j])                  # uncertain pairs never straddle blocks
    for conservative in (False, True):
        ranking = _order_blocks(certain, order, starts, rng.random(len(scores)), conservative)
        position = np.empty_like(ranking)
        position[ranking] = np.arange(len(ranking))
        ci, cj = np.nonzero(certain)
        across = block[ci] != block[cj]
        assert np.all(position[ci[across]] < position[cj[across]])     # both variants, across blocks
        if conservative:
            assert np.all(position[ci] < position[cj])                 # PairRank_C: every certain pair


def test_pairrank_c_is_never_worse_than_r_in_expectation_given_the_same_blocks():
    """Certain pairs agree with the truth: keeping them cannot add mis-ordered pairs on average."""
    rng = np.random.default_rng(3)
    certain, scores = _random_certain(rng, n=15)
    truth = np.argsort(np.argsort(-scores))              # the model's scores are the truth here
    order, starts = certain_blocks(certain, scores, rng)

    def misordered(ranking):
        t = truth[ranking]
        return int(np.sum(np.triu(t[:, None] > t[None, :], 1)))

    res = {c: np.mean([misordered(_order_blocks(certain, order, starts, rng.random(15), c)) for _ in range(2000)])
           for c in (False, True)}
    assert res[True] <= res[False]


def test_sherman_morrison_inverse_matches_a_direct_inverse():
    fold = load_fold("synth-mq")
    ranker = PairRank(l2=0.2)
    run_online(ranker, fold, make_user("informational", fold.max_grade), 150, seed=0, eval_every=1000)
    pairs = ranker.model._active()
    direct = np.linalg.inv(0.2 * np.eye(fold.n_features) + pairs.T @ pairs)
    np.testing.assert_allclose(ranker.Minv, direct, atol=1e-8)
    sign, logdet = np.linalg.slogdet(0.2 * np.eye(fold.n_features) + pairs.T @ pairs)
    assert ranker.logdet_ratio == pytest.approx(logdet - fold.n_features * np.log(0.2))


def test_online_mle_matches_a_reference_solver():
    rng = np.random.default_rng(1)
    theta_star = rng.standard_normal(5)
    Z = rng.standard_normal((300, 5))
    Z *= np.where(rng.random(300) < expit(Z @ theta_star), 1, -1)[:, None]   # oriented as observed preferences
    model = OnlinePairwiseLogistic(5, l2=0.5, window=1000)
    model.add(Z)
    model.fit(steps=30)

    def objective(t):
        return np.logaddexp(0, -Z @ t).sum() + 0.25 * t @ t

    reference = minimize(objective, np.zeros(5), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(model.theta, reference, atol=1e-6)


def test_capped_window_with_quadratic_summary_stays_close_to_the_full_mle():
    rng = np.random.default_rng(2)
    theta_star = rng.standard_normal(6)
    full, capped = OnlinePairwiseLogistic(6, 0.5, window=5000), OnlinePairwiseLogistic(6, 0.5, window=100)
    for _ in range(100):                                  # 100 rounds of 20 pairs, two Newton steps each
        Z = rng.standard_normal((20, 6))
        Z *= np.where(rng.random(20) < expit(Z @ theta_star), 1, -1)[:, None]
        for model in (full, capped):
            model.add(Z)
            model.fit()
    full.fit(steps=20)
    cos = capped.theta @ full.theta / np.linalg.norm(capped.theta) / np.linalg.norm(full.theta)
    assert cos > 0.995
    assert np.linalg.norm(capped.theta - full.theta) < 0.1 * np.linalg.norm(full.theta)


def test_epsilon_greedy_extremes():
    order = np.array([3, 1, 0, 2])
    assert list(_epsilon_greedy(order, np.zeros(4, bool), np.zeros(4))) == [3, 1, 0, 2]
    rng = np.random.default_rng(0)
    firsts = [_epsilon_greedy(order, np.ones(4, bool), rng.random(4))[0] for _ in range(4000)]
    counts = np.bincount(firsts, minlength=4) / 4000
    assert np.all(np.abs(counts - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 4000))


def test_pdgd_swap_ratio_matches_brute_force_plackett_luce():
    rng = np.random.default_rng(4)
    s = rng.standard_normal(6)

    def log_pl(order, cutoff):
        e = np.exp(s[order])
        return sum(np.log(e[r] / e[r:].sum()) for r in range(cutoff))

    ranking = np.arange(6)
    for a, b in [(0, 1), (1, 4), (2, 5)]:
        swapped = ranking.copy()
        swapped[[a, b]] = swapped[[b, a]]
        expected = log_pl(swapped, 4) - log_pl(ranking, 4)
        got = swap_log_ratio(s[ranking], 4, np.array([a]), np.array([b]))[0]
        assert got == pytest.approx(expected)


@pytest.mark.parametrize("name", ["pairrank_r", "pairrank_c", "pdgd", "epsilon_greedy", "sgd_ranknet"])
def test_click_learners_improve_on_random(name):
    fold = load_fold("synth-mq")
    user = make_user("perfect", fold.max_grade)
    trace = run_online(make_ranker(name), fold, user, 500, seed=0, eval_every=100)
    random = run_online(make_ranker("random"), fold, user, 500, seed=0, eval_every=100)
    assert trace.offline_ndcg[-1] > random.offline_ndcg[-1] + 0.05


def test_logistic_user_gives_logistic_pairwise_preferences():
    """P(i clicked | exactly one of i, j clicked) = sigmoid(theta . (x_i - x_j)); 4 s.e. tolerance."""
    theta = np.array([1.5, -0.5])
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    user = LogisticClickUser(tuple(theta), cutoff=2)
    rng = np.random.default_rng(0)
    query = Query(X, np.zeros(2, int))
    outcomes = [user(query, np.array([0, 1]), rng).clicks for _ in range(40000)]
    one = [c[0] for c in outcomes if c.sum() == 1]
    p = expit(theta @ (X[0] - X[1]))
    assert abs(np.mean(one) - p) < 4 * np.sqrt(p * (1 - p) / len(one))


def test_pairrank_parameters_are_validated():
    with pytest.raises(ValueError, match="variant='X' is invalid; expected one of R, C"):
        PairRank(variant="X")
    with pytest.raises(ValueError, match="alpha_rule=.magic. is invalid; expected one of constant, theory"):
        make_ranker("pairrank_c", alpha_rule="magic")


def test_mlp_backward_matches_numerical_gradient():
    from olr_core.rankers.scorers import MLPScorer, scorer_backward

    rng = np.random.default_rng(5)
    scorer = MLPScorer(hidden=4)
    X = rng.standard_normal((6, 3))
    theta = scorer.init(3, rng) * 5
    dscores = rng.standard_normal(6)
    analytic = scorer_backward(scorer, X, theta, dscores)
    eps = 1e-6
    numeric = np.array([(dscores @ scorer.scores(X, theta + eps * e) - dscores @ scorer.scores(X, theta - eps * e))
                        / (2 * eps) for e in np.eye(len(theta))])
    np.testing.assert_allclose(analytic, numeric, atol=1e-6)
    np.testing.assert_allclose(scorer.scores_many(X, theta[None, :])[0], scorer.scores(X, theta))


def test_pdgd_drives_an_mlp_scorer():
    fold = load_fold("synth-mq")
    user = make_user("perfect", fold.max_grade)
    trace = run_online(make_ranker("pdgd", scorer="mlp", hidden=16), fold, user, 800, seed=0, eval_every=200)
    random = run_online(make_ranker("random"), fold, user, 800, seed=0, eval_every=200)
    assert trace.offline_ndcg[-1] > random.offline_ndcg[-1] + 0.05


def test_compiled_pdgd_gradient_equals_the_numpy_reference():
    from olr_core.rankers.pdgd import pdgd_score_gradient, pdgd_score_gradient_reference

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        s = rng.standard_normal(n) * 2
        clicks = rng.random(min(10, n)) < 0.3
        np.testing.assert_allclose(pdgd_score_gradient(s, clicks, 10), pdgd_score_gradient_reference(s, clicks, 10),
                                   atol=1e-12)


def test_mean_objective_is_the_sum_form_with_a_regularisation_growing_with_the_pairs():
    """The reference code's estimator, mean loss + l2 |theta|^2, minimised by the sum form with weight 2 n l2."""
    from scipy.optimize import minimize

    from olr_core.rankers.pairwise import OnlinePairwiseLogistic

    rng = np.random.default_rng(4)
    Z = rng.standard_normal((60, 5)) + 0.3
    model = OnlinePairwiseLogistic(5, l2=0.05, window=100, objective="mean")
    model.add(Z)
    model.fit(steps=30)
    assert model.l2 == pytest.approx(2 * 0.05 * 60)

    def mean_objective(theta):
        return np.logaddexp(0.0, -(Z @ theta)).mean() + 0.05 * theta @ theta

    reference = minimize(mean_objective, np.zeros(5), method="BFGS", options={"gtol": 1e-10}).x
    np.testing.assert_allclose(model.theta, reference, atol=1e-6)
    summed = OnlinePairwiseLogistic(5, l2=0.05, window=100, objective="sum")
    summed.add(Z)
    summed.fit(steps=30)
    assert np.linalg.norm(model.theta) < np.linalg.norm(summed.theta)      # far stronger shrinkage
    with pytest.raises(ValueError, match="unknown objective"):
        OnlinePairwiseLogistic(5, objective="median")


def test_with_the_whole_list_shown_misordered_pairs_are_the_kendall_distance():
    """The well-specified theory page's setting: docs = cutoff, so the loop counts every discordant pair."""
    from olr_core.loop import query_sequence, run_online
    from olr_core.rankers.base import LinearRanker
    from olr_core.reproductions.pairrank.experiments import well_specified_fold
    from olr_core.users import LogisticClickUser

    fold, theta_star = well_specified_fold(n_features=5, n_queries=30, docs=10, seed=1)
    w = np.random.default_rng(3).standard_normal(5)

    class Fixed(LinearRanker):
        def start(self, train, rng):
            super().start(train, rng)
            self.w = w

    trace = run_online(Fixed(), fold, LogisticClickUser(tuple(theta_star)), 50, seed=0)
    for t, q in enumerate(query_sequence(fold.train.n_queries, 50, 0)):
        query = fold.train.query(q)
        labels = query.labels[np.argsort(-(query.features @ w))]
        kendall = sum(labels[a] < labels[b] for a in range(10) for b in range(a + 1, 10))
        assert trace.online_misordered[t] == kendall


def test_transitive_closure_of_certain_orders():
    from olr_core.rankers.pairwise import transitive_closure

    r = np.zeros((4, 4), dtype=bool)
    r[0, 1] = r[1, 2] = r[2, 3] = True
    closed = transitive_closure(r)
    expected = np.triu(np.ones((4, 4), dtype=bool), 1)
    np.testing.assert_array_equal(closed, expected)
    np.testing.assert_array_equal(transitive_closure(closed), closed)


def test_refine_only_adds_certain_orders_implied_by_chains():
    from olr_core.rankers import make_ranker

    rng = np.random.default_rng(0)
    X = rng.random((12, 6))
    plain, refined = make_ranker("pairrank_c", alpha=0.05), make_ranker("pairrank_c", alpha=0.05, refine=True)
    for ranker in (plain, refined):
        ranker.start(type("T", (), {"n_features": 6})(), np.random.default_rng(1))
        ranker.model.theta = rng.standard_normal(6) * 5 if ranker is plain else plain.model.theta
    base, _ = plain.certain_pairs(X)
    closed, _ = refined.certain_pairs(X)
    assert (closed >= base).all() and not (closed & closed.T).any()


@pytest.mark.parametrize("click_model, stop_rule, cutoff, params", [
    ("navigational", "after_click", 10, {}),
    ("informational", "every_position", 10, {"decay": 0.999}),
    ("perfect", "after_click", 6, {"cutoff": 4}),                         # the gradient's cutoff below the list's
    ("pbm", "after_click", 10, {}),
    ("navigational+noise=0.1", "after_click", 10, {"learning_rate": 0.5}),
    ("ubm+noise=0.2", "after_click", 8, {}),
])
def test_compiled_pdgd_rounds_replay_the_protocol_bit_for_bit(click_model, stop_rule, cutoff, params):
    fold = load_fold("synth-mq")
    user = make_user(click_model, fold.max_grade, stop_rule=stop_rule)
    ranker = make_ranker("pdgd", **params)
    ranker.start(fold.train, np.random.default_rng(0))
    assert ranker.compiled_rounds(user, fold.train, cutoff) is not None
    fast = run_online(make_ranker("pdgd", **params), fold, user, 700, seed=3, eval_every=30, cutoff=cutoff)
    slow = run_online(make_ranker("pdgd", **params), fold, user, 700, seed=3, eval_every=30, cutoff=cutoff,
                      compiled=False)
    assert fast.arrays().keys() == slow.arrays().keys()
    for key, value in fast.arrays().items():
        np.testing.assert_array_equal(value, slow.arrays()[key], err_msg=key)
    assert fast.offline_ndcg[-1] != fast.offline_ndcg[0]                 # it learned, so the updates were compared


def test_compiled_pdgd_rounds_are_offered_only_for_a_linear_scorer_and_a_kernel_user():
    fold = load_fold("synth-mq")
    cascade = make_user("navigational", fold.max_grade)
    own = LogisticClickUser(tuple(np.ones(fold.n_features)))               # no kernel of its own
    for ranker, user in [(make_ranker("pdgd", scorer="mlp"), cascade), (make_ranker("neural_pdgd"), cascade),
                         (make_ranker("pdgd"), own)]:
        ranker.start(fold.train, np.random.default_rng(0))
        assert ranker.compiled_rounds(user, fold.train, 10) is None


# -- issue #41: the compiled certain-order test against the numpy expression it replaced ------------------------

class ReferencePairRank(PairRank):
    """PairRank before #41: the certain-order test as a numpy expression over n x n temporaries."""

    def certain_pairs(self, X):
        prob, norms, scores = pairwise_uncertainty(X, self.model.theta, self.Minv)
        certain = prob - self.width() * norms > 0.5
        return (transitive_closure(certain) if self.refine else certain), scores


def test_compiled_certain_order_test_agrees_with_numpy_to_the_last_bit_at_the_threshold():
    """prob placed within 3 ulps of 1/2 + width * norm (numpy's bits): any change in how the kernel forms the
    norm (another order of the sums, a fused multiply-add) moves some of these across the threshold."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((40, 6))
    M = rng.standard_normal((6, 6))
    gram = X @ (M @ M.T + np.eye(6)) @ X.T
    gram[3, 7] = gram[3, 3]                               # a negative squared norm, clipped to 0
    diag = np.diag(gram)
    norms = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2.0 * gram, 0.0))
    for width in (0.0, 0.013, 0.1, 1.7):
        prob = 0.5 + width * norms
        prob = prob + rng.integers(-3, 4, prob.shape) * np.spacing(prob)
        np.testing.assert_array_equal(lower_bound_above_half(prob, gram, width), prob - width * norms > 0.5)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dataset, click_model, params", [
    ("synth-mslr", "navigational", {"variant": "C"}),
    ("synth-mq", "informational", {"variant": "R", "alpha": 0.5, "l2": 10.0}),
    ("synth-mq", "perfect", {"variant": "C", "alpha_rule": "theory", "refine": True, "objective": "mean",
                             "window": 50}),
])
def test_pairrank_with_the_compiled_test_replays_the_reference_bit_for_bit(seed, dataset, click_model, params):
    fold = load_fold(dataset)
    user = make_user(click_model, fold.max_grade)
    fast, slow = PairRank(**params), ReferencePairRank(**params)
    a = run_online(fast, fold, user, 150, seed=seed, eval_every=25)
    b = run_online(slow, fold, user, 150, seed=seed, eval_every=25)
    for key, value in a.arrays().items():
        np.testing.assert_array_equal(value, b.arrays()[key], err_msg=key)
    np.testing.assert_array_equal(fast.weights(), slow.weights())
    np.testing.assert_array_equal(fast.Minv, slow.Minv)
    assert a.stats["uncertain_pairs"].min() < a.stats["uncertain_pairs"].max()   # the test decided something


def reference_display_certain_orders(certain, scores, rng, conservative, top=10):
    """Blocks and diagnostics before #41: the furthest uncertain partner from an n x n numpy mask."""
    n = len(scores)
    order = rank_by_scores(scores, rng)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    uncertain = ~(certain | certain.T)
    np.fill_diagonal(uncertain, True)
    reach = np.where(uncertain[order], position[None, :], -1).max(axis=1)
    ends = np.maximum.accumulate(reach) == np.arange(n)
    starts = np.concatenate([[0], np.flatnonzero(ends) + 1])
    ranking = _order_blocks(certain, order, starts, rng.random(n), conservative)
    sizes = np.diff(starts)
    size_at = np.repeat(sizes, sizes)
    shown = ranking[:top]
    decided = certain[np.ix_(shown, shown)]
    shown_pairs = len(shown) * (len(shown) - 1) / 2
    stats = {"n_blocks": float(len(sizes)), "uncertain_pairs": float(n * (n - 1) / 2 - certain.sum()),
             "certain_ratio_top": float((decided | decided.T).sum() / 2 / shown_pairs) if shown_pairs else 1.0}
    stats.update({f"block_size_at_{r}": float(size_at[r - 1]) for r in range(1, top + 1) if r <= len(size_at)})
    return ranking, starts, stats


@pytest.mark.parametrize("seed", range(6))
def test_compiled_blocks_and_diagnostics_equal_the_numpy_reference(seed):
    """Certain orders from thresholded score gaps (consistent with the scores), random relations (not), tied
    scores, a certain diagonal, and lists of 1 to 150 documents: the same rankings, blocks and numbers, and
    the generator left in the same state."""
    rng = np.random.default_rng(seed)
    for n in (1, 2, 5, 10, 11, 40, 150):
        scores = np.round(rng.standard_normal(n), 1)
        gaps = scores[:, None] - scores[None, :]
        for certain in (gaps > rng.uniform(0, 1.5), rng.random((n, n)) < 0.3, np.eye(n, dtype=bool) | (gaps > 2)):
            for conservative in (True, False):
                fast_rng, slow_rng = np.random.default_rng(n), np.random.default_rng(n)
                fast = display_certain_orders(certain, scores, fast_rng, conservative)
                ranking, starts, stats = reference_display_certain_orders(certain, scores, slow_rng, conservative)
                np.testing.assert_array_equal(fast.ranking, ranking)
                assert fast.stats == stats
                assert fast_rng.random() == slow_rng.random()
                np.testing.assert_array_equal(certain_blocks(certain, scores, np.random.default_rng(n))[1], starts)
