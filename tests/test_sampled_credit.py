"""The sampled probabilistic credit (the authors' code's 10,000-draw estimate) against the kernels it replaced,
kept here as the reference: the same uniforms give the same estimate to the last bit."""

import numpy as np
import pytest
from numba import njit

from olr_core.rankers.interleaving import _alias_tables, _mean_sampled_signs, probabilistic_multileave


@njit(cache=True)
def _reference_team(threshold, alias, i, u):
    x = u * threshold.shape[1]
    k = int(x)
    return k if x - k < threshold[i, k] else alias[i, k]


@njit(cache=True)
def _reference_one_click_signs(threshold, alias, uniforms):
    samples, m = uniforms.shape[0], threshold.shape[1]
    hits = np.zeros(m, dtype=np.int64)
    for s in range(samples):
        hits[_reference_team(threshold, alias, 0, uniforms[s, 0])] += 1
    total = np.zeros(m)
    for j in range(1, m):
        total[j] = hits[j] - hits[0]
    return total / samples


@njit(cache=True)
def _reference_mean_sampled_signs(threshold, alias, uniforms):
    """The kernel as it was before the branch-free teams and the pair histogram (commit 465078c)."""
    samples, c = uniforms.shape
    m = threshold.shape[1]
    if c == 1:
        return _reference_one_click_signs(threshold, alias, uniforms)
    total = np.zeros(m)
    common = 0.0
    counts = np.zeros(m, dtype=np.int64)
    teams = np.empty(c, dtype=np.int64)
    for s in range(samples):
        for i in range(c):
            teams[i] = _reference_team(threshold, alias, i, uniforms[s, i])
            counts[teams[i]] += 1
        left_out = -1.0 if counts[0] > 0 else 0.0
        common += left_out
        for i in range(c):
            j = teams[i]
            if j != 0 and counts[j] > 0:
                d = counts[j] - counts[0]
                total[j] += (1.0 if d > 0 else (-1.0 if d < 0 else 0.0)) - left_out
                counts[j] = 0
        counts[0] = 0
    total[1:] += common
    return total / samples


def _posteriors(rng, m, clicks, kind):
    """Clicked-slot posteriors (clicks x m) of one of three kinds: a multileave of random rankings, one of
    identical rankings (every team equally likely), or rows with impossible teams (zeros)."""
    if kind == "impossible":
        p = rng.dirichlet(np.full(m, 0.5), size=clicks)
        p[:, rng.choice(m, size=m // 3, replace=False)] = 0.0
        return p / p.sum(axis=1, keepdims=True)
    rankings = np.array([rng.permutation(30) for _ in range(m)])
    if kind == "identical":
        rankings[:] = rankings[0]
    _, post = probabilistic_multileave(rankings, 10, rng)
    return post[rng.choice(10, size=clicks, replace=False)]


@pytest.mark.parametrize("kind", ["multileave", "identical", "impossible"])
@pytest.mark.parametrize("m", [3, 10, 50])
@pytest.mark.parametrize("clicks", [1, 2, 3, 6])
def test_sampled_credit_equals_the_reference_kernel_to_the_last_bit(kind, m, clicks):
    for seed in range(4):
        rng = np.random.default_rng([seed, m, clicks])
        threshold, alias = _alias_tables(_posteriors(rng, m, clicks, kind))
        for samples in (1, 7, 10_000):
            uniforms = rng.random((samples, clicks))
            new, old = _mean_sampled_signs(threshold, alias, uniforms), _reference_mean_sampled_signs(
                threshold, alias, uniforms)
            assert new.tobytes() == old.tobytes(), (seed, samples)


def test_two_click_histogram_counts_ties_and_self_pairs_exactly():
    """An exact small case: three rankers, two clicked slots, four draws whose team pairs are (0, 0), (1, 1),
    (1, 2) and (0, 2): sign(credit_j - credit_0) per draw is (-1, -1), (+1, 0), (+1, +1), (-1, 0) for
    j = 1, 2, so the means are 0 and 0."""
    threshold = np.ones((2, 3))
    alias = np.tile(np.arange(3), (2, 1))
    column = np.array([[0, 0], [1, 1], [1, 2], [0, 2]])
    uniforms = (column + 0.5) / 3                        # each draw keeps its column: the team is the column
    np.testing.assert_array_equal(_mean_sampled_signs(threshold, alias, uniforms), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(_mean_sampled_signs(threshold, alias, uniforms[1:3]), [0.0, 1.0, 0.5])


@pytest.mark.parametrize("name, params, click_model, seed", [
    ("mgd_dsp", {"credit_samples": 10_000, "learning_rate": 0.01, "decay": 1.0, "dsp_renormalize": True},
     "navigational", 0),                                                     # the DSP chapter's code configuration
    ("mgd_dsp", {"credit_samples": 10_000, "learning_rate": 0.01, "decay": 1.0, "dsp_renormalize": True},
     "informational", 3),
    ("mgd", {"credit_samples": 2_000, "n_candidates": 8}, "perfect", 1),
    ("mgd", {"credit_samples": 500, "n_candidates": 3, "tau": 2.0}, "trust_bias+noise=0.1", 2),
])
def test_compiled_runs_equal_the_protocol_runs_on_the_reference_credit(monkeypatch, name, params, click_model, seed):
    """Every stored array of a compiled run (the new credit kernels) equals that of the protocol run with the
    reference kernel in their place, the runs as they were computed before the change."""
    from olr_core.data import load_fold
    from olr_core.loop import run_online
    from olr_core.rankers import interleaving, make_ranker
    from olr_core.users import make_user

    fold = load_fold("synth-mq")
    user = make_user(click_model, fold.max_grade, stop_rule="every_position")
    params = {"multileave": "probabilistic", **params}
    fast = run_online(make_ranker(name, **params), fold, user, 300, seed=seed, eval_every=25)
    monkeypatch.setattr(interleaving, "_mean_sampled_signs", _reference_mean_sampled_signs)
    reference = run_online(make_ranker(name, **params), fold, user, 300, seed=seed, eval_every=25, compiled=False)
    assert fast.arrays().keys() == reference.arrays().keys()
    for key, value in fast.arrays().items():
        assert value.tobytes() == reference.arrays()[key].tobytes(), key
    assert np.nanmean(fast.stats["won"]) > 0.05            # candidates won, so the credit moved the model


@pytest.mark.parametrize("name, params, click_model, dataset", [
    ("mgd_dsp", {}, "navigational", "synth-mq"),                                  # 50 rankers: BLAS scores
    ("mgd", {"n_candidates": 6, "tau": 2.0}, "informational", "synth-mq"),
    ("dbgd", {}, "perfect", "synth-mq"),                                          # interleaving, exact credit
    ("mgd_dsp", {"learning_rate": 0.01, "decay": 1.0}, "navigational", "synth-mslr"),
])
def test_compiled_exact_credit_replays_the_protocol_bit_for_bit(name, params, click_model, dataset):
    """Probabilistic multileaving with exact credit (``credit_samples=0``) in compiled rounds: every stored array,
    the final weights and the learning rate equal the protocol run's, on two seeds."""
    from olr_core.data import load_fold
    from olr_core.users import make_user

    from .conftest import assert_compiled_replays_protocol

    fold = load_fold(dataset)
    user = make_user(click_model, fold.max_grade, stop_rule="every_position")
    params = {"multileave": "probabilistic", **params}
    for _, _, fast in assert_compiled_replays_protocol(name, params, fold, user, 300, (0, 7), 25):
        assert np.nanmean(fast.stats["won"]) > 0.05
