"""The click models of the literature: simulated clicks against their exact probabilities, the name
grammar, the chain kernel against the cascade, and every model fitted back from its own log."""

import numpy as np
import pytest
from scipy.stats import binomtest

from olr_core.click_fitting import BASE_MODELS, ClickLog, evaluate, fit, random_lists, simulate_log
from olr_core.click_models import (
    SimplifiedDBN,
    UserBrowsingModel,
    graded_relevance,
    parse_user_name,
    vardasbi_click_rates,
)
from olr_core.data import load_fold
from olr_core.experiments import RunSpec
from olr_core.users import CASCADE_PRESETS, make_user

NEW_MODELS = ["dbn", "sdbn", "ccm", "ubm", "trust_bias", "pbm", "navigational", "dbn:informational,gamma=0.6",
              "ccm:informational", "ubm:eta=2", "navigational+noise=0.1", "trust_bias+noise=0.05"]
LIST = np.array([2, 0, 1, 4, 0, 3, 1, 0, 2, 4])          # a fixed shown list of grades 0..4


@pytest.fixture(scope="module")
def data():
    return load_fold("synth-mq", 1).train


@pytest.mark.parametrize("name", NEW_MODELS)
def test_simulated_clicks_match_the_exact_probabilities(name):
    """60,000 sessions on one list: at every position the click count is a binomial draw with the exact
    probability; the smallest of the ten two-sided p-values, times ten (Bonferroni), stays above 0.001."""
    user = make_user(name, 4)
    sessions = 60_000
    clicks = user.simulate(np.tile(LIST, (sessions, 1)), np.random.default_rng(7))
    exact = user.click_probability_by_position(LIST)
    p_values = [binomtest(int(k), sessions, float(p)).pvalue for k, p in zip(clicks.sum(axis=0), exact)]
    assert min(p_values) * len(LIST) > 1e-3, (name, clicks.mean(axis=0).round(4), exact.round(4))


@pytest.mark.parametrize("name", NEW_MODELS)
def test_one_call_per_round_draws_what_the_batch_draws(name):
    """Common random numbers: 200 calls of user(query, shown, rng) give the clicks of one batch simulate()."""
    user = make_user(name, 4)
    one, batch = np.random.default_rng(3), np.random.default_rng(3)
    query = type("Q", (), {"labels": LIST})()
    calls = np.array([user(query, np.arange(10), one).clicks for _ in range(200)])
    assert np.array_equal(calls, user.simulate(np.tile(LIST, (200, 1)), batch))


def test_sdbn_with_the_cascade_presets_is_the_papers_cascade_click_for_click():
    cascade = make_user("navigational", 4)
    click, stop = CASCADE_PRESETS[4]["navigational"]
    sdbn = SimplifiedDBN("sdbn", click, stop)
    labels = random_lists(load_fold("synth-mq", 1).train, 5000, np.random.default_rng(0))
    assert np.array_equal(cascade.simulate(labels, np.random.default_rng(1)),
                          sdbn.simulate(labels, np.random.default_rng(1)))


def test_dbn_with_gamma_one_is_sdbn():
    labels = np.tile(LIST, (3000, 1))
    dbn, sdbn = make_user("dbn:gamma=1", 4), make_user("sdbn", 4)
    assert np.array_equal(dbn.simulate(labels, np.random.default_rng(2)),
                          sdbn.simulate(labels, np.random.default_rng(2)))


def test_exact_probabilities_of_small_cases_by_hand():
    # UBM, two positions, examination (1/d): P(c2) = a2 [a1 * 1 + (1 - a1) * 1/2]
    ubm = UserBrowsingModel("u", (0.2, 0.6), eta=1.0, cutoff=2)
    assert np.allclose(ubm.click_probability_by_position([1, 0]), [0.6, 0.2 * (0.6 + 0.4 * 0.5)])
    # DBN: P(examine 2) = gamma (1 - a1 s1)
    dbn = make_user("dbn:gamma=0.5", 2)
    a, s = CASCADE_PRESETS[2]["navigational"]
    assert np.isclose(dbn.click_probability_by_position([2, 1])[1], 0.5 * (1 - a[2] * s[2]) * a[1])
    # trust bias: independent positions, theta_k (eps+ rho + eps- (1 - rho))
    plus, minus = vardasbi_click_rates(10)
    rho = graded_relevance(4)
    expected = (1 / np.arange(1, 11)) * (plus * rho[LIST] + minus * (1 - rho[LIST]))
    assert np.allclose(make_user("trust_bias", 4).click_probability_by_position(LIST), expected)
    # noise flips: eps + (1 - 2 eps) p
    noisy = make_user("navigational+noise=0.2", 4)
    assert np.allclose(noisy.click_probability_by_position(LIST),
                       0.2 + 0.6 * make_user("navigational", 4).click_probability_by_position(LIST))


@pytest.mark.parametrize("name, message", [
    ("dbn:gamma=2", "gamma must lie in [0, 1]"), ("dbn:foo", "unknown dbn preset 'foo'"),
    ("ubm:gamma=0.5", "unknown ubm parameter 'gamma'; valid: eta"), ("ccm:alpha1=x", "alpha1 needs a number"),
    ("dbn+noise=0.7", "noise epsilon must lie in [0, 0.5]"), ("dbm", "unknown user model 'dbm'"),
    ("trust_bias:navigational", "unknown trust_bias preset")])
def test_a_bad_click_model_name_is_a_one_line_error_naming_it(name, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")) as err:
        RunSpec("pdgd", click_model=name)
    assert "\n" not in str(err.value)


def test_names_parse_into_family_preset_parameters_and_noise():
    parsed = parse_user_name("ccm:informational,alpha1=0.8+noise=0.05")
    assert (parsed.family, parsed.preset, parsed.noise) == ("ccm", "informational", 0.05)
    assert parsed.params == {"alpha1": 0.8}
    assert parse_user_name("navigational").family == "cascade"
    assert make_user("ccm:informational,alpha1=0.8", 4).alpha1 == 0.8
    assert make_user("ccm:informational", 4).alpha3 == 0.6          # the preset's alphas, not the family default


def _close(fitted, true, tolerance):
    return np.max(np.abs(np.asarray(fitted) - np.asarray(true))) <= tolerance


@pytest.fixture(scope="module")
def own_logs(data):
    names = {"cascade": "navigational", "dbn": "dbn", "sdbn": "sdbn", "ccm": "ccm", "pbm": "pbm", "ubm": "ubm",
             "trust_bias": "trust_bias"}
    return {family: (make_user(user, data.max_grade), simulate_log(make_user(user, data.max_grade), data, 100_000,
                                                                  seed=11))
            for family, user in names.items()}


@pytest.mark.parametrize("family", BASE_MODELS)
def test_each_model_fitted_back_from_100k_of_its_own_sessions(family, own_logs):
    """Tolerances: 0.03 on every click and stop probability (per grade) of the chain models; 0.03 on the
    examination probabilities of the cells seen at least 2,000 times and 0.02 on the attractiveness of the
    examination models; 0.02 on trust bias's identifiable products theta eps+ and theta eps-."""
    true, log = own_logs[family]
    fitted = fit(family, log)
    if family in ("cascade", "dbn", "sdbn", "ccm"):
        assert _close(fitted._pc, true._pc, 0.03) and _close(fitted._stop, true._stop, 0.03), (fitted._stop, true._stop)
    elif family == "trust_bias":
        assert _close(fitted._click[:, -1], true._exam[:, 0] * true._click[:, -1], 0.02)     # grade max: rho = 1
        assert _close(fitted._click[:, 0], true._exam[:, 0] * true._click[:, 0], 0.02)       # grade 0: rho = 0
    else:
        from olr_core.click_fitting import _cells

        rank, distance, _, _ = _cells(log)
        seen = np.bincount(rank * 10 + distance, minlength=100).reshape(10, 10) >= 2000
        assert _close(fitted._exam[seen], true._exam[seen], 0.03)
        assert _close(fitted._click, true._click, 0.02)
    assert evaluate(fitted, log)["log_likelihood"] >= evaluate(true, log)["log_likelihood"] - 1e-3


def test_a_model_fitted_to_another_models_log_fits_it_worse(own_logs):
    """Held-out perplexity: the generating family beats a misspecified one on its own users' clicks."""
    for truth, wrong in (("ubm", "cascade"), ("dbn", "pbm"), ("trust_bias", "sdbn"), ("pbm", "dbn")):
        train, test = own_logs[truth][1].split(0.5)
        right_fit, wrong_fit = evaluate(fit(truth, train), test), evaluate(fit(wrong, train), test)
        assert right_fit["perplexity"] < wrong_fit["perplexity"], (truth, wrong)
        assert right_fit["log_likelihood"] > wrong_fit["log_likelihood"]
        assert len(right_fit["perplexity_by_position"]) == 10


def test_a_click_log_round_trips_and_a_corrupt_one_is_a_one_line_error(tmp_path, own_logs):
    log = own_logs["dbn"][1].split(0.01)[0]
    path = log.save(tmp_path / "log.npz")
    again = ClickLog.load(path)
    assert np.array_equal(again.labels, log.labels) and np.array_equal(again.clicks, log.clicks)
    (tmp_path / "bad.npz").write_bytes(b"not a log")
    with pytest.raises(ValueError, match="bad.npz: not a click log written by olr"):
        ClickLog.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="a click on a position past the end"):
        ClickLog(np.array([[1, -1]]), np.array([[False, True]]))


def test_olr_run_writes_the_click_log_of_its_own_run(tmp_path, monkeypatch):
    from olr_core.cli import main

    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "results"))
    for model in ("dbn", "sdbn", "ubm", "ccm", "trust_bias"):
        assert main(["run", "-a", "pdgd", "-c", model, "-T", "50", "--click-log", str(tmp_path / f"{model}.npz")]) == 0
        log = ClickLog.load(tmp_path / f"{model}.npz")
        assert log.sessions == 50 and log.clicks.any()


def test_olr_fit_scores_every_family_on_a_log(tmp_path, capsys, own_logs):
    import json

    from olr_core.cli import main

    path = own_logs["ubm"][1].split(0.05)[0].save(tmp_path / "ubm.npz")
    assert main(["fit", str(path), "--holdout", "-m", "ubm", "-m", "cascade", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["ubm"]["perplexity"] < rows["cascade"]["perplexity"]
    assert len(rows["ubm"]["parameters"]["examination by rank, no click above"]) == 10


@pytest.mark.parametrize("name", ["navigational", "dbn", "ccm", "pbm", "ubm", "trust_bias", "navigational+noise=0.2",
                                  "dbn+noise=0.1", "ubm+noise=0.15", "trust_bias+noise=0.05"])
def test_the_likelihood_of_every_click_vector_sums_to_one_and_matches_the_marginals(name):
    """Over all 2^4 click vectors of a list of four, the products of the conditional click probabilities
    sum to 1, and summing them by position gives the exact marginal click probabilities."""
    import itertools

    user = make_user(name, 4)
    grades = np.array([[3, 0, 4, 1, -1]])
    vectors = np.array(list(itertools.product([False, True], repeat=4)))
    clicks = np.zeros((len(vectors), 5), dtype=bool)
    clicks[:, :4] = vectors
    labels = np.repeat(grades, len(vectors), axis=0)
    p = user.conditional_click_probabilities(labels, clicks)[:, :4]
    likelihood = np.prod(np.where(vectors, p, 1 - p), axis=1)
    assert np.isclose(likelihood.sum(), 1.0)
    assert np.allclose(likelihood @ vectors, user.click_probability_by_position(grades[0, :4]))


def test_noise_of_zero_leaves_the_likelihood_of_the_user_unchanged(own_logs):
    for family, user_name in (("dbn", "dbn"), ("ubm", "ubm")):
        log = own_logs[family][1].split(0.02)[0]
        plain, noisy = make_user(user_name, 2), make_user(f"{user_name}+noise=0", 2)
        assert np.allclose(plain.conditional_click_probabilities(log.labels, log.clicks),
                           noisy.conditional_click_probabilities(log.labels, log.clicks))


def test_a_noisy_cascade_is_fitted_back_with_its_flip_rate(data):
    """50,000 sessions of the navigational cascade with 10 % of clicks flipped: epsilon within 0.01, the
    click and stop probabilities within 0.03, and a better fit than the cascade without noise."""
    user = make_user("navigational+noise=0.1", data.max_grade)
    log = simulate_log(user, data, 50_000, seed=3)
    fitted = fit("cascade+noise", log)
    assert abs(fitted.epsilon - 0.1) <= 0.01
    assert _close(fitted.user._pc, user.user._pc, 0.03) and _close(fitted.user._stop, user.user._stop, 0.03)
    assert evaluate(fitted, log)["log_likelihood"] > evaluate(fit("cascade", log), log)["log_likelihood"]
