import numpy as np
import pytest

from olr_core.data import Query, load_fold
from olr_core.users import (
    CASCADE_PRESETS,
    CascadeClickModel,
    ChoiceUser,
    TopKRelevanceUser,
    click_through_table,
    make_user,
)


def Q(labels):
    """A query known only by its grades (what label-based users read)."""
    labels = np.asarray(labels)
    return Query(np.zeros((len(labels), 0)), labels)

@pytest.mark.parametrize("rule", ["after_click", "every_position"])
@pytest.mark.parametrize("name", ["perfect", "navigational", "informational"])
def test_simulated_click_rates_match_the_model(name, rule):
    """Fixed list of grades; 40,000 sessions; every position within 4 binomial standard errors."""
    user = make_user(name, 4, rule)
    labels = np.array([0, 4, 1, 2, 0, 3, 0, 0, 4, 1])
    shown = np.arange(10)
    rng = np.random.default_rng(7)
    n = 40_000
    clicks = np.zeros(10)
    for _ in range(n):
        clicks += user(Q(labels), shown, rng).clicks
    p = user.click_probability_by_position(labels)
    se = np.sqrt(np.maximum(p * (1 - p), 1e-12) / n)
    assert np.all(np.abs(clicks / n - p) <= 4 * se + 1e-12)


def test_presets_follow_the_grade_scale():
    assert make_user("navigational", 2).click_prob == CASCADE_PRESETS[2]["navigational"][0]
    assert make_user("navigational", 4).click_prob == CASCADE_PRESETS[4]["navigational"][0]
    binary = make_user("perfect", 1)
    assert binary.click_prob == (0.0, 1.0)


def test_stop_rules_differ_as_documented():
    labels, _shown = np.array([0] * 9 + [2]), np.arange(10)
    after = make_user("navigational", 2, "after_click").click_probability_by_position(labels)
    every = make_user("navigational", 2, "every_position").click_probability_by_position(labels)
    assert after[-1] == pytest.approx(0.95 * 0.99 ** 9)
    assert every[-1] == pytest.approx(0.95 * 0.8 ** 9)      # about 0.13, the reference code's behaviour


def test_perfect_user_examines_everything_and_clicks_by_grade():
    user = make_user("perfect", 2)
    fb = user(Q([2, 0, 1, 2]), np.arange(4), np.random.default_rng(0))
    assert fb.last_examined == 3
    assert fb.clicks[0] and not fb.clicks[1] and fb.clicks[3]


def test_same_random_stream_gives_the_same_user():
    user = make_user("informational", 2)
    labels = np.array([1, 0, 2, 1, 0])
    a = [user(Q(labels), np.arange(5), np.random.default_rng(3)).clicks for _ in range(2)]
    np.testing.assert_array_equal(*a)


def test_no_clicks_after_the_stop():
    user = make_user("navigational", 2)
    rng = np.random.default_rng(1)
    for _ in range(500):
        fb = user(Q([2, 2, 2, 1, 0, 2]), np.arange(6), rng)
        assert not fb.clicks[fb.last_examined + 1:].any()


def test_unknown_click_model_and_stop_rule():
    with pytest.raises(ValueError, match="valid: perfect"):
        make_user("impatient", 2)
    with pytest.raises(ValueError, match="valid: after_click"):
        CascadeClickModel("x", (0, 1), (0, 0), "sometimes")


def test_position_based_model_examination_decays():
    user = make_user("pbm", 4, eta=1.0)
    rng = np.random.default_rng(0)
    labels = np.full(10, 4)
    clicks = sum(user(Q(labels), np.arange(10), rng).clicks for _ in range(20000)) / 20000
    np.testing.assert_allclose(clicks, 0.9 / np.arange(1, 11), atol=0.015)


def test_other_feedback_kinds():
    labels, shown = np.array([0, 2, 1]), np.array([2, 0, 1])
    assert list(TopKRelevanceUser(k=2)(Q(labels), shown, None).labels) == [1, 0]
    picks = [ChoiceUser()(Q(labels), shown, np.random.default_rng(s)) for s in range(200)]
    assert all(p.document in (1, 2) for p in picks)
    share = np.mean([p.document == 1 for p in picks])
    assert abs(share - 3 / 4) < 0.1          # P = (2^2-1) / ((2^2-1) + (2^1-1))
    assert all(shown[p.position] == p.document for p in picks)


def test_click_through_table_agrees_with_exact_probabilities():
    fold = load_fold("synth-mq")
    table = click_through_table(make_user("navigational", 2), fold.train, 4000, seed=0)
    cells = table[table.impressions > 300]
    se = np.sqrt(cells.exact * (1 - cells.exact) / cells.impressions)
    assert ((cells.ctr - cells.exact).abs() <= 4 * se + 1e-9).all()
