import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olr_core.metrics import (
    average_relevant_position,
    batch_ndcg_at_k,
    cosine_similarity,
    cumulative_online,
    dcg_at_k,
    misordered_pairs,
    ndcg_at_k,
    rank_by_scores,
)

grades = st.lists(st.integers(0, 4), min_size=1, max_size=30)


def test_dcg_exact_small_case():
    # (2^2-1)/log2(2) + (2^0-1)/log2(3) + (2^1-1)/log2(4) = 3 + 0 + 0.5
    assert dcg_at_k([2, 0, 1], 10) == pytest.approx(3.5)
    assert dcg_at_k([2, 0, 1], 1) == pytest.approx(3.0)


def test_ideal_dcg_uses_the_full_label_list():
    # shown list [1] but a grade-2 document exists below the cutoff
    assert ndcg_at_k([1], [1, 2, 0], k=1) == pytest.approx(1 / 3)


def test_query_without_relevant_documents():
    assert ndcg_at_k([0, 0], [0, 0, 0]) == 0.0
    out = batch_ndcg_at_k(np.array([[0.3, 0.1]]), np.array([[0, 0]]), np.ones((1, 2), bool))
    assert np.isnan(out[0])


@given(grades)
def test_oracle_ranking_has_ndcg_one(labels):
    labels = np.array(labels)
    ranked = labels[rank_by_scores(labels.astype(float), np.random.default_rng(0))]
    if labels.max() > 0:
        assert ndcg_at_k(ranked, labels) == pytest.approx(1.0)
        assert misordered_pairs(ranked) == 0


@settings(max_examples=50)
@given(st.lists(grades, min_size=1, max_size=5), st.integers(0, 1000))
def test_batch_ndcg_equals_per_query_ndcg(queries, seed):
    rng = np.random.default_rng(seed)
    width = max(map(len, queries))
    labels = np.zeros((len(queries), width), int)
    mask = np.zeros_like(labels, bool)
    for i, q in enumerate(queries):
        labels[i, :len(q)], mask[i, :len(q)] = q, True
    scores = rng.random(labels.shape)
    batch = batch_ndcg_at_k(scores, labels, mask, 10)
    for i, q in enumerate(queries):
        q = np.array(q)
        ranked = q[np.argsort(-scores[i, :len(q)])]
        expected = ndcg_at_k(ranked, q) if q.max() > 0 else np.nan
        np.testing.assert_allclose(batch[i], expected)


@given(grades, st.integers(0, 100))
def test_rank_by_scores_returns_a_permutation(labels, seed):
    order = rank_by_scores(np.array(labels, float), np.random.default_rng(seed))
    assert sorted(order) == list(range(len(labels)))


def test_ties_are_broken_at_random():
    orders = {tuple(rank_by_scores(np.zeros(3), np.random.default_rng(s))) for s in range(30)}
    assert len(orders) == 6


def test_misordered_pairs_exact_cases():
    assert misordered_pairs([0, 1, 2]) == 3
    assert misordered_pairs([2, 0, 1]) == 1
    assert misordered_pairs([0, 1, 2], cutoff=1) == 2
    assert misordered_pairs([1, 1, 0]) == 0


def test_cumulative_online_and_other_metrics():
    assert cumulative_online([1, 1, 1], 0.5) == pytest.approx(1.75)
    assert average_relevant_position([0, 1, 0, 2]) == pytest.approx(3.0)
    assert np.isnan(average_relevant_position([0, 0]))
    assert cosine_similarity([1, 0], [2, 0]) == pytest.approx(1.0)
    assert cosine_similarity([1, 0], [0, 0]) == 0.0


def test_compiled_evaluation_equals_the_numpy_reference():
    from olr_core.data import load_fold
    from olr_core.loop import OfflineEvaluator

    data = load_fold("synth-mq").test
    index, mask = data.padded()
    labels = np.where(mask, data.labels[index], 0)
    scores = np.random.default_rng(0).random(data.n_docs)
    compiled = OfflineEvaluator(data).per_query(scores, np.random.default_rng(1))
    reference = batch_ndcg_at_k(scores[index], labels, mask, 10, np.random.default_rng(1))
    np.testing.assert_allclose(compiled, reference)


def test_compiled_evaluation_breaks_ties_uniformly():
    """Two tied documents, one relevant: each order in about half of 4,000 evaluations (4 s.e.)."""
    from olr_core.kernels import segment_ndcg

    gains, offsets, ideal = np.array([0.0, 1.0]), np.array([0, 2]), np.array([1.0])
    rng = np.random.default_rng(0)
    first = [segment_ndcg(np.zeros(2), rng.random(2), gains, offsets, ideal, 1, np.empty(1))[0] for _ in range(4000)]
    assert abs(np.mean(first) - 0.5) < 4 * np.sqrt(0.25 / 4000)


def test_one_colour_and_line_style_per_algorithm_on_every_figure():
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    from olr_core.plotting import ALGORITHM_STYLES, plot_curves, style_of

    def curves(algorithms):
        return pd.DataFrame([{"algorithm": a, "click_model": c, "round": r, "seed": s, "value": 0.5 + 0.01 * s}
                             for a in algorithms for c in ("navigational", "perfect") for r in (0, 10)
                             for s in range(3)])

    first = plot_curves(curves(["pdgd", "mgd_dsp", "dbgd"]), hue="algorithm")
    second = plot_curves(curves(["mgd_dsp", "random"]), hue="algorithm")
    colour = {line.get_label(): (line.get_color(), line.get_linestyle())
              for fig in (first, second) for line in fig.axes[0].get_lines()}
    expected = ALGORITHM_STYLES["mgd_dsp"]
    assert matplotlib.colors.to_rgb(colour["MGD-DSP"][0]) == matplotlib.colors.to_rgb(expected["color"])
    assert colour["MGD-DSP"][1] == "--" and colour["PDGD"][1] == "-"
    assert len({matplotlib.colors.to_hex(style_of(a)["color"]) + str(style_of(a)["linestyle"])
                for a in ALGORITHM_STYLES}) == len(ALGORITHM_STYLES)
    assert [t.get_text() for t in first.subfigs[0].legends[0].get_texts()] == ["PDGD", "DBGD", "MGD-DSP"]
    assert [ax.get_title() for ax in first.axes] == ["perfect", "navigational"]


def test_band_is_a_confidence_interval_only_with_five_runs():
    import pandas as pd

    from olr_core.experiments import mean_ci
    from olr_core.plotting import band

    three = pd.DataFrame({"g": 1, "value": [1.0, 2.0, 3.0]})
    half, note = band(mean_ci(three, ["g"]))
    assert half[0] == pytest.approx(1.0 / np.sqrt(3)) and "standard error over 3 runs" in note
    five = pd.DataFrame({"g": 1, "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    half, note = band(mean_ci(five, ["g"]))
    assert half[0] == pytest.approx(2.776445 * np.std([1, 2, 3, 4, 5], ddof=1) / np.sqrt(5), rel=1e-5)
    assert "95% t-interval of the mean over 5 runs" in note


@pytest.mark.parametrize("shape", [(50, 40), (20,)])          # with and without the one-sort shortcut
@pytest.mark.parametrize("ties", ["none", "some", "all", "nan"])
def test_rank_by_scores_is_the_lexsort_of_scores_then_noise_and_advances_the_generator_alike(ties, shape):
    """The one-sort shortcut for rows without ties must give the tie-broken order exactly."""
    rng = np.random.default_rng(3)
    scores = rng.normal(size=shape)
    if ties == "some":
        scores = np.round(scores, 1)
    elif ties == "all":
        scores[:] = 0.0
        scores[::2] = -0.0
    elif ties == "nan":
        scores[..., [4, 9]] = np.nan
    a, b = np.random.default_rng(7), np.random.default_rng(7)
    expected = np.lexsort((b.random(scores.shape), -scores), axis=-1)
    assert np.array_equal(rank_by_scores(scores, a), expected)
    assert a.random() == b.random()                       # the same number of draws either way


def test_a_cumulative_metric_is_plotted_inside_its_axes():
    """A cumulative NDCG (hundreds) is not clamped to NDCG's [0, 1]: its curve lies inside the axes. A per-round
    NDCG still is bounded to [0, 1]."""
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    from olr_core.plotting import plot_curves

    frame = pd.DataFrame([{"algorithm": "pdgd", "click_model": "perfect", "round": r, "seed": s,
                           "value": 0.4 * r + s} for r in range(0, 1001, 100) for s in range(3)])
    fig = plot_curves(frame, hue="algorithm", ylabel="cumulative online NDCG@10")
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    line = ax.get_lines()[0].get_ydata()
    assert low <= line.min() and line.max() <= high and high > 300
    per_round = plot_curves(frame.assign(value=frame["value"] / 1000), hue="algorithm", ylabel="online NDCG@10")
    assert per_round.axes[0].get_ylim()[1] <= 1.0
