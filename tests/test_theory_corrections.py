"""Each formula the theory chapters correct, computed on both sides (issue #36), and the worlds and checks
behind the new theory claims."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from olr_core.claims import judge
from olr_core.click_fitting import ClickLog, conditional_probabilities, evaluate, fit
from olr_core.click_models import PositionBasedClickModel, UserBrowsingModel, build_click_model
from olr_core.rankers.library import kl_cost_and_gradient, log_softmax, pairwise_loss_and_gradient
from olr_core.rankers.pairwise import certain_blocks
from olr_core.reproductions import dsp, klrank, neural, pairrank, topk, worlds
from olr_core.reproductions.perplexity import both_perplexities, marginal_click_probabilities
from olr_core.reproductions.rates import increment_slope

# -- klrank.md: the curvature of the K-L cost along a penalised item ---------------------------------------------

def curvature_along_first(items: int, r: float) -> float:
    """d^2/dt^2 of the K-L cost at theta = (-r, 0, ..., 0) + t e_1, by central differences of its gradient."""
    theta = np.zeros(items)
    theta[0] = -r
    h = 1e-5
    plus, minus = theta.copy(), theta.copy()
    plus[0] += h
    minus[0] -= h
    return (kl_cost_and_gradient(plus, 1)[1][0] - kl_cost_and_gradient(minus, 1)[1][0]) / (2 * h)


def test_curvature_example_two_items_is_above_the_papers_bound_and_below_ours():
    curvature = curvature_along_first(2, 1.0)
    p1 = math.exp(log_softmax(np.array([-1.0, 0.0]))[0])
    assert p1 == pytest.approx(1 / (1 + math.e))
    assert curvature == pytest.approx(p1 * (1 - p1), rel=1e-6)          # 0.1966
    assert curvature > 1 / (2 * math.e)                                  # the paper's 1/(|L| e^r) = 0.1839 fails
    assert curvature < 1 / math.e                                        # ours, 1/((|L| - 1) e^r) = 0.3679


@pytest.mark.parametrize("items", [2, 3, 10, 100])
@pytest.mark.parametrize("r", [0.5, 1.0, 3.0, 8.0])
def test_curvature_is_below_one_over_items_minus_one_e_to_r(items, r):
    assert curvature_along_first(items, r) < 1 / ((items - 1) * math.exp(r))


# -- foundations.md: the two click perplexities --------------------------------------------------------------------

def fixed_lists(sessions: int) -> np.ndarray:
    """Two lists of grades, one of them shorter than the cutoff (padded with -1), alternating."""
    full = np.array([2, 0, 1, 0, 2, 0, 0, 1, 0, 0])
    short = np.array([0, 2, 1, 0, 1, -1, -1, -1, -1, -1])
    return np.array([full if s % 2 == 0 else short for s in range(sessions)])


@pytest.mark.parametrize("name", ["dbn", "ubm", "navigational"])
def test_marginal_click_probabilities_match_simulated_click_rates(name):
    model = build_click_model(name, 2)
    labels = fixed_lists(40_000)
    clicks = model.simulate(labels, np.random.default_rng(3))
    q = marginal_click_probabilities(model, labels[:2])
    for row in (0, 1):
        rate = clicks[row::2].mean(axis=0)
        se = np.sqrt(np.maximum(q[row] * (1 - q[row]), 1e-4) / (len(labels) // 2))
        assert np.all(np.abs(rate - q[row]) < 5 * se), (name, row, rate, q[row])
    assert np.all(q[1, 5:] == 0)                                          # past the short list's end


def test_conditional_probabilities_match_simulated_click_rates_given_the_first_click():
    model = build_click_model("dbn", 2)
    labels = fixed_lists(40_000)[::2]                                     # the full list only
    clicks = model.simulate(labels, np.random.default_rng(4))
    p = conditional_probabilities(model, ClickLog(labels, clicks))
    for first in (False, True):
        rows = clicks[:, 0] == first
        rate, expected = clicks[rows, 1].mean(), p[rows, 1][0]
        assert np.allclose(p[rows, 1], expected)
        assert abs(rate - expected) < 5 * np.sqrt(expected * (1 - expected) / rows.sum())


def direct_perplexity(probabilities: np.ndarray, log: ClickLog) -> float:
    """2^(-mean over sessions of log2 P(observed c_i)) per position, averaged over positions: written out."""
    per_position = []
    for i in range(log.labels.shape[1]):
        shown = log.labels[:, i] >= 0
        p = np.clip(probabilities[shown, i], 1e-6, 1 - 1e-6)
        c = log.clicks[shown, i]
        per_position.append(2 ** (-np.mean(np.where(c, np.log2(p), np.log2(1 - p)))))
    return float(np.mean(per_position))


@pytest.mark.parametrize("name", ["dbn", "informational", "pbm"])
def test_both_perplexities_against_a_direct_computation(name):
    model = build_click_model(name, 2)
    labels = fixed_lists(4_000)
    log = ClickLog(labels, model.simulate(labels, np.random.default_rng(5)))
    values = both_perplexities(model, log)
    assert values["conditional"] == pytest.approx(direct_perplexity(conditional_probabilities(model, log), log))
    assert values["conditional"] == pytest.approx(evaluate(model, log)["perplexity"])
    assert values["marginal"] == pytest.approx(direct_perplexity(marginal_click_probabilities(model, labels), log))
    if name == "pbm":                                                     # clicks above do not matter
        assert values["marginal"] == pytest.approx(values["conditional"])
    else:
        assert values["marginal"] > values["conditional"] + 1e-3


# -- foundations.md: UBM's preset is distance-only; the fitter estimates the rank-and-distance table ---------------

def test_ubm_preset_table_depends_on_distance_only():
    preset = build_click_model("ubm", 2)
    table = preset.examination_table
    d = np.arange(1, table.shape[1] + 1)
    assert np.allclose(table, table[0][None, :])                          # every rank the same row
    assert np.allclose(table[0], (1.0 / d) ** preset.eta)


def test_ubm_fitter_recovers_a_rank_dependent_table():
    ranks = np.arange(1, 11)[:, None]
    distances = np.arange(1, 11)[None, :]
    truth = np.clip(1.0 / ranks ** 0.5 / distances ** 0.3, 0, 1)
    truth = np.where(distances <= ranks, truth, 0.0)                      # a distance longer than the rank never occurs
    user = UserBrowsingModel("ubm-rank", (0.3, 0.6, 0.9), examination=tuple(map(tuple, truth)))
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 3, (30_000, 10))
    fitted = fit("ubm", ClickLog(labels, user.simulate(labels, rng)), max_grade=2).examination_table
    assert abs(fitted[5, 0] - truth[5, 0]) < 0.05 and abs(fitted[0, 0] - truth[0, 0]) < 0.05
    assert fitted[0, 0] - fitted[5, 0] > 0.4                              # the same distance, a different rank


# -- the well-specified worlds of the regret theorems --------------------------------------------------------------

@pytest.mark.parametrize("user, fold, truth", [(worlds.LinearLogisticUser(), worlds.linear_fold, worlds.linear_truth),
                                               (worlds.NetworkLogisticUser(), worlds.network_fold,
                                                worlds.network_truth)])
def test_logistic_users_realise_the_logistic_pair_model(user, fold, truth):
    data = fold().train
    x = data.features[[0, 3]]
    h = truth(x)
    rate = worlds.pair_win_rate(user, x[0], x[1], 40_000, seed=1)
    expected = float(expit(h[0] - h[1]))
    assert abs(rate - expected) < 0.015
    query_utility = truth(data.features[:worlds.DOCS])
    assert np.array_equal(np.argsort(query_utility), np.argsort(data.labels[:worlds.DOCS]))


def test_theory_runs_use_the_logistic_worlds():
    neural_specs = neural.experiments.theory_grid(1, 10, {})
    assert {s.click_model for s in neural_specs} == {worlds.NETWORK_USER}
    assert {s.dataset for s in neural_specs} == {worlds.NETWORK_DATA}
    pairrank_specs = pairrank.experiments.experiments("tiny", "text", ["synth-mslr"])["theory"]
    assert {s.click_model for s in pairrank_specs} == {worlds.LINEAR_USER}
    assert {s.algorithm for s in pairrank_specs} == {"pairrank_c", "epsilon_greedy"}
    assert not pairrank.experiments.experiments("tiny", "code", ["synth-mslr"])["theory"]


# -- neural.md: the burn-in device is empty when p >> n_t; Appendix C's identity is false ---------------------------

def test_lambda_min_of_a_t_stays_lambda_when_parameters_outnumber_observed_pairs():
    rng = np.random.default_rng(7)
    p, n, lam = 300, 120, 0.5
    g = rng.standard_normal((n, p))
    a_t = lam * np.eye(p) + g.T @ g
    assert np.linalg.eigvalsh(a_t)[0] == pytest.approx(lam)
    x = rng.standard_normal((120, 20))
    assert np.linalg.eigvalsh(lam * np.eye(20) + x.T @ x)[0] > 10 * lam   # fixed d, many pairs: it can grow


def test_an_unobserved_pairs_difference_is_not_a_sum_of_observed_ones():
    x = np.random.default_rng(8).standard_normal((4, 6))
    observed = np.stack([x[0] - x[1], x[2] - x[3]])                       # pairs (1, 2) and (3, 4)
    target = x[1] - x[2]                                                  # pair (2, 3)
    coefficients, *_ = np.linalg.lstsq(observed.T, target, rcond=None)
    assert np.linalg.norm(observed.T @ coefficients - target) > 0.1


# -- pairrank.md: after the merge a block with N uncertain pairs can hold more than N + 1 documents ----------------

def test_one_uncertain_pair_can_make_the_whole_list_one_block():
    n = 6
    scores = np.arange(n, 0, -1, dtype=float)
    certain = np.triu(np.ones((n, n), dtype=bool), 1)                     # every pair certain in score order ...
    certain[0, n - 1] = False                                             # ... but the first and the last
    order, starts = certain_blocks(certain, scores, np.random.default_rng(0))
    assert list(starts) == [0, n]                                         # one block of all n documents


# -- dsp.md: the exercise's exact answer and the reflection check ---------------------------------------------------

def test_projected_step_is_biased_when_an_outside_document_matters():
    phi = np.random.default_rng(9).uniform(0, 2 * np.pi, 400_000)
    u = np.stack([np.cos(phi), np.sin(phi)], axis=1)
    z = u[:, 0] > u[:, 1]
    mean_zu = (z[:, None] * u).mean(axis=0)
    mean_zau = (z[:, None] * (u * [1.0, 0.0])).mean(axis=0)
    exact = np.array([1.0, -1.0]) / (np.sqrt(2) * np.pi)
    assert np.allclose(mean_zu, exact, atol=3e-3)
    assert np.allclose(mean_zau, [exact[0], 0.0], atol=3e-3)


def test_squared_mean_norm_has_no_noise_floor_and_sees_a_planted_mean():
    rng = np.random.default_rng(4)
    noise = rng.standard_normal((2000, 46)) / np.sqrt(46)                   # E||x||^2 = 1, E[x] = 0
    assert np.linalg.norm(noise.mean(axis=0)) ** 2 > 2.5e-4                   # the naive estimate: its floor 1 / n
    assert abs(dsp.analysis.squared_mean_norm(noise)) < 3e-4                 # none here (s.d. about 1e-4)
    planted = noise + 0.3 * np.eye(46)[0]
    assert dsp.analysis.squared_mean_norm(planted) == pytest.approx(0.09, abs=0.02)


def any_scheme_frame(shares) -> pd.DataFrame:
    return pd.DataFrame({"algorithm": "nsgd_dsp", "dataset": "synth-mq", "fold": np.arange(len(shares)) % 5 + 1,
                         "seed": 0, "click_model": "perfect", "outside_share": shares})


def test_any_scheme_record_fails_on_a_planted_outside_component_and_passes_without_one():
    claim = next(c for c in dsp.claims.THEORY_CLAIMS if c.id == "T3.1-any-scheme")
    rng = np.random.default_rng(0)
    planted = judge(claim, any_scheme_frame(0.3 + 0.05 * rng.standard_normal(15)), "text")
    absent = judge(claim, any_scheme_frame(0.001 * rng.standard_normal(15)), "text")
    assert planted["verdict"] == "not reproduced"
    assert absent["verdict"] == "reproduced"


def test_outside_share_measures_nsgd_dsp_with_the_true_examined_set():
    states = dsp.analysis.outside_updates("synth-mq", 1, 0, "perfect", queries=3, samples=40, warmup=20)
    assert len(states) == 3
    for state in states:
        won = np.abs(state["update"]).sum(axis=1) > 0
        assert np.allclose(np.linalg.norm(state["update"][won], axis=1), 1.0)     # NSGD steps to one candidate
        outside = state["update"] - state["projected"]
        assert np.allclose((outside * state["projected"]).sum(axis=1), 0.0, atol=1e-9)   # A an orthogonal projector


# -- klrank.md: Remark 3.3 --------------------------------------------------------------------------------------

def test_two_candidate_kl_cost_is_ranknets_pairwise_loss():
    assert klrank.analysis.pairwise_special_case_gap(draws=200) < 1e-12
    theta = np.array([0.3, -1.0, 2.0])                                    # with three candidates they differ
    assert abs(kl_cost_and_gradient(theta.copy(), 0)[0] - pairwise_loss_and_gradient(theta.copy(), 0)[0]) > 0.1


# -- topk.md: the per-round cost exponent's fit can tell m log m from m^2 ------------------------------------------

def test_cost_exponent_tells_m_log_m_from_quadratic(monkeypatch):
    monkeypatch.setattr(topk.analysis, "round_seconds", lambda surrogate, m, rounds, seed=0: 1e-8 * m * np.log(m))
    topk.analysis.cost_exponent.cache_clear()
    assert topk.analysis.cost_exponent() < 1 + 1 / np.log(1024)
    monkeypatch.setattr(topk.analysis, "round_seconds", lambda surrogate, m, rounds, seed=0: 1e-10 * m ** 2)
    topk.analysis.cost_exponent.cache_clear()
    assert topk.analysis.cost_exponent() == pytest.approx(2.0)
    topk.analysis.cost_exponent.cache_clear()


def test_position_based_model_has_equal_perplexities_by_construction():
    model = PositionBasedClickModel("pbm", (0.2, 0.5, 0.9), 1.0)
    labels = fixed_lists(2)
    q = marginal_click_probabilities(model, labels)
    p = conditional_probabilities(model, ClickLog(labels, np.zeros(labels.shape, dtype=bool)))
    assert np.allclose(q, p)


# -- assumptions W and O for the two pairings (issue #48) ----------------------------------------------------------

def test_pair_chances_match_the_rankers_pairing_by_simulation():
    from olr_core.rankers.clickpairs import independent_pairs
    from olr_core.reproductions.pairing import pair_chances

    rng = np.random.default_rng(3)
    p = rng.uniform(0.2, 0.8, 6)
    for pairing in ("adjacent", "shuffled"):
        counts, n = np.zeros((6, 6)), 40_000
        for _ in range(n):
            win, lose = independent_pairs(rng.random(6) < p, rng, pairing)
            counts[win, lose] += 1
        won, _ = pair_chances(p, pairing)
        assert np.abs(counts / n - won).max() < 0.01


def test_adjacent_pairing_keeps_w_exactly_but_never_forms_pairs_off_its_slots():
    from olr_core.reproductions.pairing import pair_chances, upper_bias

    p = np.random.default_rng(4).uniform(0.1, 0.9, 10)
    assert np.nanmax(np.abs(upper_bias(p, "adjacent"))) < 1e-12
    _, formed = pair_chances(p, "adjacent")
    assert formed[1, 2] == 0 and formed[0, 2] == 0 and formed[0, 1] > 0        # (2,3) and (1,3): q = 0


def test_shuffled_pairing_forms_every_pair_but_its_click_inferred_window_biases_w():
    from olr_core.reproductions.pairing import pair_chances, upper_bias

    p = np.random.default_rng(5).uniform(0.2, 0.8, 10)
    _, formed = pair_chances(p, "shuffled")
    floor = p.min() * (1 - p.max()) / 9              # the lower one clicked, the upper not: 1/max(...) >= 1/(L-1)
    assert formed[np.triu_indices(10, 1)].min() >= floor
    assert np.nanmax(np.abs(upper_bias(p, "shuffled"))) > 0.05    # the window ends one past the last click


def test_shuffled_pairing_keeps_w_when_the_swap_leaves_the_window_alone():
    """The swap argument: with the last position always clicked, the window is the whole list for both click
    statuses of a pair, so P(upper clicked | formed) = sigmoid(h_upper - h_lower) exactly."""
    from olr_core.reproductions.pairing import upper_bias

    p = np.random.default_rng(6).uniform(0.2, 0.8, 8)
    p[-1] = 1 - 1e-12
    assert np.nanmax(np.abs(upper_bias(p, "shuffled")[:-1, :-1])) < 1e-9


@pytest.mark.parametrize("data, user", [(worlds.LINEAR_DATA, worlds.LinearLogisticUser()),
                                        (worlds.NETWORK_DATA, worlds.NetworkLogisticUser())])
def test_the_theory_worlds_users_click_by_the_order_of_their_labels_as_the_runs_load_them(data, user):
    """The runs load a world by reference, which min-max normalises its features per query: the user's h on
    those features must order every query's documents as its labels do (else the world is not well-specified)."""
    from olr_core.data.registry import load_fold

    train = load_fold(data, 1).train
    for q in range(0, train.n_queries, 37):
        query = train.query(q)
        h = user.truth(query.features)
        assert (np.argsort(h) == np.argsort(query.labels)).all()


# -- theory records that can fail (issue #48) ----------------------------------------------------------------------

def _theory_frame(series: dict, seeds: int = 5, rounds: int = 2000) -> pd.DataFrame:
    """Runs of the theory experiment whose per-round mis-ordered pairs follow ``series[algorithm](t, rng)``,
    decorated as the analysis decorates stored runs."""
    from olr_core.reproductions.neural.analysis import lasting_share, loglog_slope

    rows, t = [], np.arange(1, rounds + 1)
    for algorithm, make in series.items():
        for seed in range(seeds):
            per_round = make(t, np.random.default_rng(seed))
            rows.append({"algorithm": algorithm.split("(")[0], "label": algorithm, "seed": seed, "config": "text",
                         "rounds_run": rounds,
                         "regret_slope": loglog_slope(t, np.cumsum(per_round)),
                         "lasting_regret": lasting_share(per_round)})
    return pd.DataFrame(rows)


def linear_after_burn_in(t, rng):
    """Regret a + b t: 12 mis-ordered pairs a round for 300 rounds, then 3 (plus noise)."""
    return np.where(t < 300, 12.0, 3.0) + rng.normal(0, 1, len(t))


def vanishing(t, rng):
    """Per-round regret of a sqrt(T) learner: 20 / sqrt(t) (plus noise)."""
    return 20.0 / np.sqrt(t) + rng.normal(0, 0.2, len(t))


def _theory_claim(paper_claims, claim_id):
    return next(c for c in paper_claims.CLAIMS if c.id == claim_id)


@pytest.mark.parametrize("paper, claim_id, target", [(pairrank, "T8-sublinear", "pairrank_c"),
                                                     (neural, "T4.4-sublinear", "olranknet")])
def test_a_sublinear_record_fails_on_linear_regret_after_a_burn_in_and_carries_its_failing_control(paper, claim_id,
                                                                                                  target):
    """The log-log slope of cumulative regret over the second half is below 1 for a + b t (a burn-in), so the old
    records passed on linear regret; the per-round test fails it, and the control's verdict is in the record."""
    from olr_core.claims import judge

    claim = _theory_claim(paper.claims, claim_id)
    first, second = claim.args["controls"]
    linear = judge(claim, _theory_frame({target: linear_after_burn_in, first: linear_after_burn_in,
                                         second: linear_after_burn_in}), "text")
    assert linear["verdict"] == "not reproduced"
    assert linear["control"] == {"method": first, "verdict": "not reproduced", "ours": linear["control"]["ours"]}
    assert [c["verdict"] for c in linear["controls"]] == ["not reproduced", "not reproduced"]
    learning = judge(claim, _theory_frame({target: vanishing, first: linear_after_burn_in,
                                           second: linear_after_burn_in}), "text")
    assert learning["verdict"] == "reproduced" and learning["control"]["verdict"] == "not reproduced"


@pytest.mark.parametrize("paper, claim_id, target", [(pairrank, "T8-sublinear", "pairrank_c"),
                                                     (neural, "T4.4-sublinear", "olranknet")])
def test_a_sublinear_record_whose_negative_control_passes_is_inconclusive(paper, claim_id, target):
    """A linear floor small beside a falling per-round regret passes the share rule: the record cannot then tell
    the claim from its negation, whatever the target's share."""
    from olr_core.claims import judge

    claim = _theory_claim(paper.claims, claim_id)
    first, second = claim.args["controls"]
    record = judge(claim, _theory_frame({target: vanishing, first: linear_after_burn_in,
                                         second: lambda t, rng: vanishing(t, rng) + 0.01}), "text")
    assert [c["verdict"] for c in record["controls"]] == ["not reproduced", "reproduced"]
    assert record["verdict"] == "inconclusive" and "cannot tell the claim from its negation" in record["reason"]


def test_the_lasting_share_is_bounded_below_by_zero():
    from olr_core.reproductions.neural.analysis import lasting_share

    t = np.arange(1, 2001)
    assert lasting_share(50.0 / t) == 0.0                       # falling faster than 1 / sqrt(t): a < 0, floored
    assert 0.9 < lasting_share(np.full(2000, 3.0) + 1 / np.sqrt(t)) <= 1.0


def test_the_cumulative_slope_cannot_tell_linear_regret_after_a_burn_in_from_sublinear():
    frame = _theory_frame({"a": linear_after_burn_in})
    assert (frame["regret_slope"] < 1).all()                    # what the replaced records tested
    assert (frame["lasting_regret"] > 0.5).all()


def test_every_sublinear_theory_record_runs_its_negative_control_in_the_same_world():
    for paper in (pairrank, neural):
        specs = paper.experiments.experiments("tiny", "text", ["synth-mslr"])["theory"]
        for claim in paper.claims.CLAIMS:
            if "sublinear" in claim.id:
                assert claim.rule == "below_with_control"
                assert {s.label() for s in specs if s.algorithm != claim.args["target"]} == set(claim.args["controls"])
                assert {s.algorithm for s in specs} == {claim.args["target"], "epsilon_greedy"}
        assert {s.params.get("pairing") for s in specs} == {"shuffled"}
        assert len({(s.dataset, s.click_model) for s in specs}) == 1


def test_the_neural_rate_record_is_not_testable_with_the_bound_over_the_trivial_bound_printed():
    from olr_core.claims import judge

    claim = _theory_claim(neural.claims, "T4.4-rate")
    record = judge(claim, _theory_frame({"olranknet": vanishing}), "text")
    assert record["verdict"] == "not testable here"
    ratio = float(record["ours"].split("= ")[1].split(" at")[0].replace(",", ""))
    assert ratio > 1e6


def test_an_upper_bound_rate_above_its_slope_is_inconclusive_not_refuted():
    from olr_core.claims import Claim, judge

    claim = Claim("x", "rate", "Theorem", "regret grows at most like T^(2/3)", "theory", "regret_slope",
                  "rate_at_most", {"threshold": 0.67}, "", ())
    frame = pd.DataFrame({"regret_slope": [0.9, 0.91, 0.92, 0.9, 0.93], "config": "text"})
    assert judge(claim, frame, "text")["verdict"] == "inconclusive"
    below = frame.assign(regret_slope=[0.5, 0.52, 0.51, 0.5, 0.49])
    assert judge(claim, below, "text")["verdict"] == "reproduced"


def test_the_top_k_bound_record_is_not_testable_while_its_bound_exceeds_the_trivial_one():
    from olr_core.claims import judge

    claim = _theory_claim(topk.claims, "T4.1-bound")
    runs = pd.DataFrame({"algorithm": "topk_squared", "config": "text", "rounds_run": 10_000,
                         "bound_slack": [0.9, 0.95, 0.92], "bound_over_trivial": [24.0, 23.0, 25.0]})
    record = judge(claim, runs, "text")
    assert record["verdict"] == "not testable here" and "23 times the trivial bound" in record["reason"]
    tight = runs.assign(bound_over_trivial=0.5)
    assert judge(claim, tight, "text")["verdict"] == "reproduced"


@pytest.mark.parametrize("paper, claim_id", [(topk, "T4.1-rate"), (klrank, "T4.4-rate")])
def test_an_upper_bound_rate_record_is_never_refuted_by_a_steeper_slope(paper, claim_id):
    from olr_core.claims import judge

    claim = _theory_claim(paper.claims, claim_id)
    where = {k: (v[0] if isinstance(v, list) else v) for k, v in claim.where.items()}
    steep = pd.DataFrame({"algorithm": "x", "config": "text", "rounds_run": 1000, **where,
                          "regret_slope": [0.98, 0.99, 1.0, 0.97, 0.99]})
    assert judge(claim, steep, "text")["verdict"] == "inconclusive"


def test_the_replayed_diagnostics_find_q_zero_for_adjacent_pairs_and_a_positive_q_for_shuffled_ones():
    from olr_core.rankers import make_ranker
    from olr_core.reproductions.pairing import observation_diagnostics

    fold, user = worlds.linear_fold(), worlds.LinearLogisticUser()
    found = {pairing: observation_diagnostics(make_ranker("pairrank_c", alpha=0.1, pairing=pairing), fold, user,
                                              300, 0, pairing, every=20, draws=4)
             for pairing in ("adjacent", "shuffled")}
    assert found["adjacent"]["q"] == 0 and found["adjacent"]["never_formed"] > 0
    assert abs(found["adjacent"]["w_bias"]) < 1e-12
    assert found["shuffled"]["q"] > 0 and found["shuffled"]["never_formed"] == 0
    assert found["shuffled"]["lambda_min_per_round"] > found["adjacent"]["lambda_min_per_round"] > 0


@pytest.mark.parametrize("paper, claim_id", [(topk, "T4.1-rate"), (klrank, "T4.4-rate")])
def test_a_linear_regret_with_a_large_burn_in_does_not_pass_an_upper_bound_rate(paper, claim_id):
    """R(T) = a + b T with a = 2 b T_max: the log-log slope of R over the later horizons is about 1/3, below every
    rate; the slope of the increments is 1, so the rate record is not reproduced."""
    from olr_core.claims import judge
    from olr_core.reproductions.topk.experiments import checkpoints

    horizons = checkpoints(20_000) if paper is topk else 2.0 ** np.arange(2, 15) - 1
    read = paper.analysis.rate_slope if paper is topk else (lambda T, R: increment_slope(T[-7:], R[-7:]))
    slopes = [read(horizons, 2 * b * horizons.max() + b * horizons) for b in (1.0, 1.5, 2.0, 2.5, 3.0)]
    assert np.allclose(slopes, 1.0)
    assert paper.analysis.loglog_slope(horizons, 2 * horizons.max() + horizons) < 0.5     # what it read before
    claim = _theory_claim(paper.claims, claim_id)
    where = {k: (v[0] if isinstance(v, list) else v) for k, v in claim.where.items()}
    runs = pd.DataFrame({"algorithm": "x", "config": "text", "rounds_run": 20_000, **where, "regret_slope": slopes})
    assert judge(claim, runs, "text")["verdict"] != "reproduced"


def test_the_increment_slope_is_the_exponent_whatever_the_burn_in():
    T = np.geomspace(100, 20_000, 8).astype(int).astype(float)
    for gamma in (0.25, 0.5, 0.75, 1.0):
        for a in (0.0, 10.0, 1e5):
            assert abs(increment_slope(T, a + 3 * T ** gamma) - gamma) < 1e-8


def test_the_neural_bound_over_the_trivial_bound_counts_every_pair_of_a_round():
    from olr_core.reproductions.pairing import bound_over_trivial

    gap, T, V = 0.1, 1000, 10
    assert bound_over_trivial(gap, T, V) == pytest.approx(V * np.log(T) ** 2 / gap ** 2 / (T * V * (V - 1) / 2))


def test_a_bound_below_the_trivial_one_is_judged_on_the_runs_where_it_is():
    """One run whose bound is below the trivial bound must not decide for the runs whose bound is above it."""
    from olr_core.claims import judge

    claim = _theory_claim(topk.claims, "T4.1-bound")
    runs = pd.DataFrame({"algorithm": "topk_squared", "config": "text", "rounds_run": 10_000,
                         "bound_slack": [0.5, 0.52, -0.3, -0.35, -0.4],
                         "bound_over_trivial": [0.5, 0.6, 3.0, 3.0, 3.0]})
    assert judge(claim, runs, "text")["verdict"] == "reproduced"


def test_dueling_regret_terms_vanish_for_the_best_ranker_and_grow_for_its_opposite():
    from olr_core.data import load_fold
    from olr_core.experiments import reference_weights
    from olr_core.users import make_user

    fold = load_fold("synth-mq", 1)
    best = reference_weights("offline_ranknet", "synth-mq", 1, None)
    user, rng = make_user("perfect", fold.max_grade), np.random.default_rng(1)
    queries = (fold.train.query(int(q)) for q in np.flatnonzero(fold.train.has_relevant()))
    query = next(q for q in queries if np.corrcoef(q.features @ best, q.labels)[0, 1] > 0.5)   # best ranks it well
    assert dsp.analysis.preference(query, best, best, user, rng, 200) == pytest.approx(0.0, abs=0.08)
    assert dsp.analysis.preference(query, best, -best, user, rng, 200) > 0.2
    assert dsp.analysis.theorem33_bound(10_000, 20.0) == pytest.approx(2 * 1000 * np.sqrt(520))
