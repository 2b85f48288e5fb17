"""Coverage checks of PairRank's Lemma 2 and the neural Lemma 3.3 (olr_core.reproductions.coverage): the matrix and
radii on cases small enough to compute by hand, the estimator and its projection, and replays in small fixed-seed
worlds where a radius known to be too small, or a wrong true parameter, must fail while the lemma's radius covers."""

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import binomtest

from olr_core.data.ranking_data import Fold
from olr_core.rankers.pairwise import PairRank
from olr_core.reproductions import coverage, worlds
from olr_core.reproductions.pairing import replay
from olr_core.reproductions.pairrank.experiments import well_specified_fold
from olr_core.users import LogisticClickUser

DELTA = 0.1


def _history(Z, truth, l2=1.0):
    history = coverage.PairHistory(np.asarray(truth, float), l2)
    history.add(np.asarray(Z, float))
    return history


def test_the_noise_check_uses_lambda_i_plus_the_pairs_outer_products():
    """Two pairs z = (1, 0) and (0, 2) with lambda = 1: M = diag(2, 5); with w* = 0 each label's noise is 1/2, so
    S = (1/2, 1), ||S||^2_{M^-1} = 1/8 + 1/5, and beta = R sqrt(log 10 + 2 log(1 / delta))."""
    history = _history([[1.0, 0.0], [0.0, 2.0]], [0.0, 0.0])
    np.testing.assert_allclose(history.matrix, np.diag([2.0, 5.0]))
    lemma = coverage.Lemma(1.0, bound=1.0, pair_norm=2.0, delta=DELTA)
    found = coverage.lemma_ratios(history, np.zeros((0, 2)), lemma, None)
    beta = 0.5 * np.sqrt(np.log(10.0) + 2 * np.log(1 / DELTA))
    assert found[coverage.NOISE] == pytest.approx(np.sqrt(1 / 8 + 1 / 5) / beta)
    assert found["alpha"] == pytest.approx(2 * 0.25 / (expit(2.0) * expit(-2.0)) * (beta + 1.0))


def test_the_parameter_set_is_measured_in_the_m_norm_around_the_lemmas_estimate():
    """No projection (Theta large): the estimate solves g_t(w) = sum z_p, and the ratio is ||w - w*||_M over
    alpha_t / k_mu, with M = diag(2, 5) by hand; a pair's ratio is its preference gap over alpha_t ||z||_{M^-1}."""
    truth = np.array([0.3, -0.2])
    history = _history([[1.0, 0.0], [0.0, 2.0]], truth)
    lemma = coverage.Lemma(1.0, bound=100.0, pair_norm=2.0)
    estimates = coverage.Estimates(np.zeros(2), np.zeros(2))
    pair = np.array([[1.0, 1.0]])
    found = coverage.lemma_ratios(history, pair, lemma, estimates)
    w = estimates.w_tilde
    np.testing.assert_allclose(coverage.link_sum(history.Z, w, 1.0), [1.0, 2.0], atol=1e-9)
    radius = found["alpha"] / 0.25
    gap = w - truth
    assert found[coverage.PARAMETER] == pytest.approx(np.sqrt(2 * gap[0] ** 2 + 5 * gap[1] ** 2) / radius)
    width = found["alpha"] * np.sqrt(1 / 2 + 1 / 5)
    assert found[coverage.PAIRS] == pytest.approx(abs(expit(w.sum()) - expit(truth.sum())) / width)
    assert estimates.outside == 0 and np.array_equal(estimates.w_hat, w)


def test_the_replayed_matrix_is_the_implementations():
    """After a replay, the lemma's M_t (from the pairs PairRank stored) is the inverse of the ranker's M^-1, kept by
    Sherman-Morrison, and their log-determinant ratios agree."""
    fold, theta = well_specified_fold(4, 20, 6, seed=3)
    ranker = PairRank(alpha=0.1, window=1000)
    replay(ranker, fold, LogisticClickUser(tuple(theta)), 30, np.random.default_rng(0).spawn(2), lambda t, q: None)
    M = coverage.gram(ranker.model.pairs[: ranker.model.count], ranker.l2)
    np.testing.assert_allclose(M @ ranker.Minv, np.eye(4), atol=1e-8)
    assert coverage.logdet_ratio(M, ranker.l2) == pytest.approx(ranker.logdet_ratio)


def test_the_projection_lands_on_the_ball_no_farther_than_the_truth():
    """The projected estimate lies in Theta and its ||g_t(w) - g_t(w_tilde)||_{M^-1} is at most that of every point
    of Theta tried, the truth included (what the lemma's proof uses)."""
    rng = np.random.default_rng(0)
    truth = np.array([1.5, -1.0, 0.5])
    Z = rng.standard_normal((60, 3))
    Z = np.where((rng.random(60) < expit(Z @ truth))[:, None], Z, -Z)
    w_tilde = coverage.regularised_mle(Z, 0.1, np.zeros(3))
    bound = 0.5 * np.linalg.norm(w_tilde)
    M_inv = np.linalg.inv(coverage.gram(Z, 0.1))
    w_hat = coverage.projected(w_tilde, Z, 0.1, M_inv, bound)
    target = coverage.link_sum(Z, w_tilde, 0.1)

    def distance(w):
        return coverage.mahalanobis(coverage.link_sum(Z, w, 0.1) - target, M_inv)

    assert np.linalg.norm(w_hat) == pytest.approx(bound)
    others = rng.standard_normal((200, 3))
    others *= bound * rng.random((200, 1)) ** (1 / 3) / np.linalg.norm(others, axis=1, keepdims=True)
    assert distance(w_hat) <= min(distance(w) for w in [*others, truth * bound / np.linalg.norm(truth)]) + 1e-9


def test_uniform_coverage_counts_runs_covered_at_every_round():
    ratios = np.array([[0.5, 0.9, 0.2], [0.5, 1.2, 0.3], [0.1, 0.1, 0.1], [2.0, 0.1, 0.1]])
    row = coverage.uniform_coverage(ratios, DELTA)
    interval = binomtest(2, 4).proportion_ci(0.95, method="exact")
    assert (row["covered at every round"], row["share"]) == (2, 0.5)
    assert (row["low"], row["high"]) == pytest.approx((interval.low, interval.high))
    assert row["smallest per-round share"] == 0.75 and row["largest ratio to the radius"] == 2.0
    doubled = coverage.uniform_coverage(ratios, DELTA, scale=2.0)
    assert doubled["covered at every round"] == 4 and doubled["largest ratio to the radius"] == 1.0
    np.testing.assert_array_equal(coverage.first_failures(ratios), [np.nan, 2.0, np.nan, 1.0])


def test_a_subset_keeps_its_runs_and_no_run_is_not_judged():
    import pandas as pd

    runs = coverage.CoverageRuns({coverage.NOISE: np.array([[0.5, 2.0], [0.1, 0.2], [0.3, 0.4]])}, DELTA,
                                 pd.DataFrame({"run": [0, 1, 2]}))
    kept = runs.subset([False, True, True])
    assert kept.table().loc[coverage.NOISE, "share"] == 1.0 and list(kept.details["run"]) == [1, 2]
    empty = coverage.uniform_coverage(np.zeros((0, 2)), DELTA)
    assert empty["runs"] == 0 and coverage.against_target(empty) == "no run to judge"


def test_a_share_is_judged_against_one_minus_delta_by_its_interval():
    def judged(covered, runs):
        return coverage.against_target(coverage.uniform_coverage(
            np.where(np.arange(runs)[:, None] < covered, 0.5, 2.0), DELTA))

    assert (judged(100, 100), judged(10, 10), judged(3, 10)) == ("above", "consistent with", "below")


@pytest.fixture(scope="module")
def small_world():
    fold, theta = well_specified_fold(5, 30, 6, seed=1)
    return fold, LogisticClickUser(tuple(theta)), theta


def test_the_lemma_covers_and_a_tenth_of_its_noise_radius_does_not(small_world):
    """In a small fixed-seed well-specified world (adjacent pairs: the lemma's noise condition holds exactly), over
    12 runs of 40 rounds: the lemma's noise bound and parameter set hold in at least 1 - delta - 0.1 of the runs
    (tolerance 0.1: about one standard error of a share from 12 runs near 0.9) and the exact 95 % interval of
    each share reaches 1 - delta; a tenth of the noise radius holds in at most 20 % of the runs."""
    fold, user, theta = small_world
    runs = coverage.pairrank_coverage(fold, user, theta, rounds=40, runs=12, alpha=0.1, pairing="adjacent")
    table = runs.table({"tenth": (coverage.NOISE, 0.1)})
    for check in (coverage.NOISE, coverage.PARAMETER, coverage.PAIRS):
        assert table.loc[check, "share"] >= 1 - DELTA - 0.1 and table.loc[check, "high"] >= 1 - DELTA, check
    assert table.loc["tenth", "share"] <= 0.2 and table.loc["tenth", "high"] < 1 - DELTA
    assert (runs.details["pairs"] > 0).all() and set(runs.ratios) >= set(coverage.CHECKS) - {coverage.NETWORK}


def test_a_wrong_true_parameter_fails_the_noise_check(small_world):
    """Clicks by theta*, checked against -theta*: the labels' noise about the wrong model has a mean that grows with
    the pairs, so the noise bound fails in every run (the check can fail by more than a shrunken radius)."""
    fold, user, theta = small_world
    runs = coverage.pairrank_coverage(fold, user, -theta, rounds=100, runs=4, estimates=False, alpha=0.1)
    assert coverage.uniform_coverage(runs.ratios[coverage.NOISE], DELTA)["share"] == 0.0
    assert set(runs.ratios) == {coverage.NOISE}


def test_the_linearised_truth_is_exact_only_while_the_pairs_fit_the_tangent_span():
    rng = np.random.default_rng(0)
    tangent, scores = rng.standard_normal((40, 12)), rng.standard_normal(40)
    few = coverage.linearised_truth(tangent[:12], scores[:12], docs=4)           # 9 independent pairs in 12 dims
    phi = (tangent[:12] @ few.basis).reshape(3, 4, -1)
    h = scores[:12].reshape(3, 4)
    np.testing.assert_allclose(np.einsum("qabr,r->qab", phi[:, :, None] - phi[:, None], few.truth).reshape(3, -1),
                               (h[:, :, None] - h[:, None]).reshape(3, -1), atol=1e-9)
    assert few.residual < 1e-9 and few.smallest > 0 and few.norm == pytest.approx(np.linalg.norm(few.truth))
    many = coverage.linearised_truth(tangent, scores, docs=4)                    # 30 pairs in 12 dims: N1 fails
    assert many.residual > 0.1 and many.smallest == 0.0 and many.directions == 30


def test_the_neural_check_runs_on_the_first_queries_of_the_network_world():
    network = worlds.network_fold()
    data = network.train.subset(np.arange(2))
    fold = Fold("two-queries", 1, data, data, data)
    runs = coverage.neural_coverage(fold, worlds.NetworkLogisticUser(), worlds.network_truth, rounds=12, runs=1,
                                    width=4, l2=0.01, alpha=0.1)
    assert set(runs.ratios) == set(coverage.CHECKS)
    assert coverage.linearisable(runs).all() and runs.details["pairs"].iloc[0] > 0
    assert np.isfinite(runs.ratios[coverage.NOISE]).all() and runs.ratios[coverage.NOISE].max() > 0
    whole = coverage.initial_linearisation(network.train, worlds.network_truth, width=4)
    assert whole.residual > 0.1 and whole.directions > whole.basis.shape[1]


def test_two_documents_that_switch_every_unit_off_are_counted_per_query():
    from olr_core.rankers.scorers import ReLUScorer

    class Started:                       # what dark_pairs reads of a started olRankNet
        scorer = ReLUScorer(4, option="width")
        theta0 = scorer.init(3, np.random.default_rng(0))

    features = np.random.default_rng(1).random((12, 3))
    features[[0, 1, 4]] = 0.0            # query 0 holds two all-zero documents, query 1 one
    assert coverage.dark_pairs(Started, features, docs=4) == 1
