"""The growing-library chapter (Delage, KDD 2009): Plackett-Luce policies, the K-L cost, GPER,
the baselines, the streams and the loop."""

import gzip
import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from olr_core.data import load_library
from olr_core.data.library import (
    LibraryDataError,
    LibraryStream,
    cora_stream,
    entry_order,
)
from olr_core.experiments import RunSpec, execute
from olr_core.library_loop import run_library
from olr_core.params import ParameterError
from olr_core.rankers import LIBRARY_ALGORITHMS, make_ranker
from olr_core.rankers.library import (
    GPER,
    ScaledVector,
    hits_authority,
    kl_cost_and_gradient,
    pagerank,
    pairwise_loss_and_gradient,
    plackett_luce_ranking,
)
from olr_core.users import Choice


def pl_probability(theta, ranking):
    """Exact Plackett-Luce probability of a full ranking."""
    w = np.exp(theta[list(ranking)])
    return float(np.prod([w[i] / w[i:].sum() for i in range(len(w))]))


def test_plackett_luce_sampling_matches_exact_probabilities():
    theta = np.array([0.5, -0.3, 1.2, 0.0])
    rng = np.random.default_rng(0)
    n = 40000
    counts: dict = {}
    for _ in range(n):
        key = tuple(plackett_luce_ranking(theta, rng))
        counts[key] = counts.get(key, 0) + 1
    rankings = list(itertools.permutations(range(4)))
    expected = np.array([pl_probability(theta, r) for r in rankings]) * n
    observed = np.array([counts.get(r, 0) for r in rankings])
    assert expected.sum() == pytest.approx(n)
    assert stats.chisquare(observed, expected).pvalue > 0.001          # fixed seed; false alarm rate 0.1%


def test_plackett_luce_is_stable_at_the_largest_radius():
    theta = np.array([10 * 50_000 ** 0.25, -10 * 50_000 ** 0.25, 0.0])     # alpha T^(1/4) with T = 50,000
    ranking = plackett_luce_ranking(theta, np.random.default_rng(1))
    assert sorted(ranking) == [0, 1, 2] and ranking[0] == 0
    cost, grad = kl_cost_and_gradient(theta, 1)
    assert np.isfinite(cost) and np.isfinite(grad).all() and cost == pytest.approx(2 * theta[0], rel=1e-12)


def test_kl_cost_is_minus_log_first_probability_and_its_gradient():
    theta = np.array([0.2, -1.0, 0.7, 0.1])
    for j in range(4):
        first = sum(pl_probability(theta, r) for r in itertools.permutations(range(4)) if r[0] == j)
        cost, grad = kl_cost_and_gradient(theta, j)
        assert cost == pytest.approx(-math.log(first))
        h = 1e-6
        numeric = [(kl_cost_and_gradient(theta + h * e, j)[0] - kl_cost_and_gradient(theta - h * e, j)[0]) / (2 * h)
                   for e in np.eye(4)]
        np.testing.assert_allclose(grad, numeric, atol=1e-7)
        p = np.exp(theta) / np.exp(theta).sum()
        np.testing.assert_allclose(grad, p - np.eye(4)[j])                     # closed form
    loss, grad = pairwise_loss_and_gradient(theta, 2)
    numeric = [(pairwise_loss_and_gradient(theta + 1e-6 * e, 2)[0] - pairwise_loss_and_gradient(theta - 1e-6 * e, 2)[0])
               / 2e-6 for e in np.eye(4)]
    np.testing.assert_allclose(grad, numeric, atol=1e-7)


def test_kl_cost_hessian_is_the_covariance_of_the_first_item():
    theta = np.array([0.3, -0.4, 1.0])
    p = np.exp(theta) / np.exp(theta).sum()
    h = 1e-5
    hessian = np.array([(kl_cost_and_gradient(theta + h * e, 0)[1] - kl_cost_and_gradient(theta - h * e, 0)[1])
                        / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(hessian, np.diag(p) - np.outer(p, p), atol=1e-8)
    assert np.linalg.eigvalsh(hessian).min() > -1e-9                        # convex


def test_consistency_property_of_plackett_luce_policies():
    """P(I1 above I2) is the same within any candidate set containing both (Proposition A.1)."""
    theta = np.array([0.4, -0.2, 1.1, 0.0, -0.8])
    pair = math.exp(theta[0]) / (math.exp(theta[0]) + math.exp(theta[1]))
    for subset in ([0, 1], [0, 1, 2], [0, 1, 3, 4], [0, 1, 2, 3, 4]):
        sub = theta[subset]
        above = sum(pl_probability(sub, r) for r in itertools.permutations(range(len(subset)))
                    if r.index(0) < r.index(1))
        assert above == pytest.approx(pair, abs=1e-12)


def test_scaled_vector_projection_and_sparse_updates():
    v = ScaledVector(6)
    v.add(np.array([1, 3]), np.array([3.0, 4.0]))
    assert v.norm() == pytest.approx(5.0)
    v.project(1.0)
    np.testing.assert_allclose(v.dense(), [0, 0.6, 0, 0.8, 0, 0])
    v.project(1.0)
    np.testing.assert_allclose(v.dense(), [0, 0.6, 0, 0.8, 0, 0])                # idempotent
    v.add(np.array([0]), np.array([0.5]))
    assert v.norm() == pytest.approx(np.linalg.norm(v.dense()))
    for _ in range(2000):                                                     # many shrinking projections
        v.add(np.array([2]), np.array([1.0]))
        v.project(1e-3)
    assert v.norm() == pytest.approx(1e-3) and np.isfinite(v.dense()).all()


def test_gper_doubling_schedule():
    g = GPER(alpha=10.0)
    assert [g.cycle(t) for t in (1, 2, 3, 4, 7, 8, 15, 16)] == [1, 2, 2, 3, 3, 4, 4, 5]
    # the paper's radius alpha T_m^(1/4), T_m = 2^m - 1: D_m F_m = 2 alpha T_m^(1/4) < K 2^(m/4) strictly (K = 2 alpha)
    assert g.radius(1) == pytest.approx(10.0) and g.radius(8) == pytest.approx(10 * 15 ** 0.25)
    for m in range(1, 40):
        assert 2 * g.radius(2 ** (m - 1)) < 2 * 10.0 * 2 ** (m / 4)
    # the step restarts at each power of two: the first step of cycle m is r_m / sqrt(2)
    for m in range(1, 8):
        t = 2 ** (m - 1)
        assert g.step(t) == pytest.approx(g.radius(t) / math.sqrt(2))
        if m > 1:
            assert g.step(t - 1) < g.step(t)
    assert g.step(6) == pytest.approx(g.radius(6) / math.sqrt(2 * 3))


def small_stream(n_items=6, queries=40, seed=0):
    rng = np.random.default_rng(seed)
    topic_items = (np.arange(0, n_items, 2), np.arange(1, n_items, 2))
    topic = rng.integers(2, size=queries)
    n_candidates = np.array([len(topic_items[k]) for k in topic])
    chosen = np.array([rng.integers(n) for n in n_candidates])
    return LibraryStream("small", n_items, topic_items, topic, n_candidates, chosen, np.full(queries, n_items))


def test_gper_stays_in_its_growing_ball_and_restarts():
    stream = small_stream(queries=300)
    ranker = make_ranker("klrank_gper", alpha=0.5)
    run_library(ranker, stream, seed=1)
    assert ranker.theta.norm() <= ranker.schedule.radius(300) + 1e-12
    # with reset=True, the first step of each cycle (t = 2, 4, 8, ...) starts from theta = 0: afterwards
    # only that query's candidates are non-zero; without it the earlier steps' items stay non-zero too
    kept, reset = make_ranker("klrank_gper", alpha=0.5), make_ranker("klrank_gper", alpha=0.5, reset=True)
    for ranker in (kept, reset):
        ranker.start(stream, np.random.default_rng(0))
    kept_wider = False
    for t in range(1, 17):
        query = stream.query(t)
        for ranker in (kept, reset):
            ranker.learn(query, ranker.rank(query), Choice(int(stream.chosen[t]), 0))
        if t in (2, 4, 8, 16):
            outside = np.setdiff1d(np.arange(stream.n_items), query.candidates)
            assert np.all(reset.theta.dense()[outside] == 0), t
            kept_wider |= bool(np.any(kept.theta.dense()[outside] != 0))
    assert kept_wider


def test_mcrank_online_matches_its_offline_closed_form():
    """Replaying a fixed stream many times, sigmoid(theta_i) tends to the empirical choice proportion."""
    stream = small_stream(queries=60, seed=3)
    ranker = make_ranker("mcrank", learning_rate=2.0)
    ranker.start(stream, np.random.default_rng(0))
    for _ in range(400):
        for t in range(stream.n_queries):
            query = stream.query(t)
            display = ranker.rank(query)
            j = int(stream.chosen[t])
            ranker.learn(query, display, Choice(j, int(np.flatnonzero(display.ranking == j)[0])))
    chosen_items = np.array([stream.query(t).candidates[stream.chosen[t]] for t in range(stream.n_queries)])
    appearances = np.zeros(stream.n_items)
    for t in range(stream.n_queries):
        appearances[stream.query(t).candidates] += 1
    proportion = np.bincount(chosen_items, minlength=stream.n_items) / appearances
    online = 1 / (1 + np.exp(-ranker.theta.dense()))
    np.testing.assert_allclose(online, proportion, atol=0.02)


def test_hits_and_pagerank_match_dense_solvers():
    citing = np.array([0, 0, 1, 2, 3, 3, 4, 5, 5])
    cited = np.array([1, 2, 2, 0, 2, 1, 2, 4, 0])
    n = 6
    A = np.zeros((n, n))
    A[citing, cited] = 1
    values, vectors = np.linalg.eigh(A.T @ A)
    top = np.abs(vectors[:, -1])
    np.testing.assert_allclose(hits_authority(citing, cited, n, tolerance=1e-13, max_iterations=5000), top,
                               atol=1e-8)
    d = 0.85
    out = A.sum(axis=1)
    P = np.where(out[:, None] > 0, A / np.where(out[:, None] > 0, out[:, None], 1), 1.0 / n)   # dangling: uniform
    G = d * P.T + (1 - d) / n
    w, v = np.linalg.eig(G)
    stationary = np.real(v[:, np.argmax(np.real(w))])
    stationary /= stationary.sum()
    np.testing.assert_allclose(pagerank(citing, cited, n, d, tolerance=1e-14, max_iterations=5000), stationary,
                               atol=1e-10)


def test_graph_rankers_see_only_citations_made_inside_the_library():
    stream = LibraryStream("g", 4, (np.arange(4),), np.array([0, 0]), np.array([3, 4]), np.array([0, 1]),
                           np.array([3, 4]), np.array([[1, 0], [2, 0], [3, 1], [3, 2]]))
    ranker = make_ranker("hits", refresh_every=1)
    ranker.start(stream, np.random.default_rng(0))
    early = ranker.score(stream.query(0))                      # papers 0..2: citations 1->0 and 2->0
    assert early[0] > 0 and early[1] == 0 and early[2] == 0
    late = ranker.score(stream.query(1))                       # paper 3 entered: it cites 1 and 2
    assert late[1] > 0 and late[2] > 0


def write_cora(tmp_path, classification, references):
    folder = tmp_path / "cora_mccallum"
    folder.mkdir()
    with gzip.open(folder / "classification_papers.json.gz", "wt") as f:
        json.dump(classification, f)
    with gzip.open(folder / "paper_references.json.gz", "wt") as f:
        json.dump(references, f)
    return folder


def test_cora_stream_orders_cited_before_citing_and_counts_skips(tmp_path):
    classification = {"A": [1, 2, 3, 4, 5], "A/x": [1, 2, 3, 4], "A/y": [5], "B": [6]}
    references = [[2, 1], [3, 1], [3, 2], [4, 3], [4, 9], [5, 1], [1, 4], [6, 1]]
    stream = cora_stream(write_cora(tmp_path, classification, references))
    assert stream.notes["skipped_unknown_paper"] == 1                  # 4 -> 9: paper 9 has no topic
    assert stream.notes["skipped_cycle_forward"] >= 1                  # 1 -> 4 -> 3 -> 1 is a cycle
    for t in range(stream.n_queries):
        query = stream.query(t)
        chosen_item = query.candidates[stream.chosen[t]]
        assert chosen_item < query.library_size                        # the cited paper is already in the library
        assert query.n_docs >= 2
    # cited papers come first in a cycle-free chain 1 <- 2 <- 3
    order = entry_order(np.array([1, 2, 3]), np.array([2, 3, 3]), np.array([1, 1, 2]))
    assert list(order) == [1, 2, 3]


def test_missing_or_malformed_cora_files_are_one_line_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="paper_references.json.gz is missing"):
        folder = tmp_path / "only"
        folder.mkdir()
        with gzip.open(folder / "classification_papers.json.gz", "wt") as f:
            json.dump({"A": [1]}, f)
        cora_stream(folder)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "classification_papers.json.gz").write_bytes(b"not gzip")
    (broken / "paper_references.json.gz").write_bytes(b"not gzip")
    with pytest.raises(LibraryDataError, match="classification_papers.json.gz: not a readable"):
        cora_stream(broken)
    from olr_core.data import DataNotFoundError

    with pytest.raises(DataNotFoundError, match="cora not found"):
        load_library("cora", tmp_path)


def test_a_topic_with_one_paper_gives_no_query(tmp_path):
    stream = cora_stream(write_cora(tmp_path, {"T": [1, 2], "U": [3, 4, 5]}, [[2, 1], [4, 3], [5, 3], [5, 4]]))
    # 2 -> 1 (topic T held only paper 1) and 4 -> 3 (topic U held only paper 3) rank nothing; 5 -> 3 and 5 -> 4 stay
    assert stream.notes["skipped_single_candidate"] == 2 and stream.n_queries == 2
    assert all(stream.query(t).n_docs >= 2 for t in range(stream.n_queries))


@pytest.mark.parametrize("name", LIBRARY_ALGORITHMS)
def test_every_library_ranker_shows_a_permutation_and_is_reproducible(name):
    stream = load_library("synth-library")
    a = run_library(make_ranker(name), stream, rounds=300, seed=4)
    b = run_library(make_ranker(name), stream, rounds=300, seed=4)
    np.testing.assert_array_equal(a.chosen_rank, b.chosen_rank)
    assert ((a.chosen_rank >= 1) & (a.chosen_rank <= a.n_candidates)).all()
    summary = a.summary()
    random_policy = name in ("klrank_gper", "random")
    assert summary["kl_cost_infinite"] == (not random_policy) or summary["clicked_first_rate"] == 1.0
    assert (summary["avg_kl_cost"] is None) == summary["kl_cost_infinite"]


def test_random_ranker_kl_cost_is_log_of_the_candidates():
    stream = load_library("synth-library")
    trace = run_library(make_ranker("random"), stream, rounds=200, seed=0)
    np.testing.assert_allclose(trace.kl_cost, np.log(trace.n_candidates))


def test_adversarial_users_drive_a_deterministic_ranker_to_the_bottom():
    stream = load_library("synth-library-adversarial")
    greedy = run_library(make_ranker("klrank_greedy"), stream, rounds=2000, seed=0)
    gper = run_library(make_ranker("klrank_gper"), stream, rounds=2000, seed=0)
    late = slice(1000, 2000)
    assert (greedy.chosen_rank[late] == greedy.n_candidates[late]).mean() > 0.95     # last, nearly always
    assert np.isfinite(gper.kl_cost).all()
    assert (gper.chosen_rank[late] == 1).sum() > 0                                   # sometimes first


def test_gper_regret_stays_under_the_bound_on_the_synthetic_library():
    from olr_core.reproductions import klrank

    stream = load_library("synth-library-slow")
    trace = run_library(make_ranker("klrank_gper"), stream, rounds=2047, seed=0)
    curve = klrank.analysis.regret_curve(stream, trace, alpha=10.0)
    assert (curve["regret"] <= curve["bound"]).all()
    assert curve["regret"].iloc[-1] > -1e-6                      # a fixed policy cannot beat itself by much


def test_library_specs_and_bad_input():
    spec = RunSpec("klrank_gper", "synth-library", click_model="choice", rounds=100)
    trace = execute(spec)
    assert trace.rounds == 100
    with pytest.raises(ParameterError, match="use click model 'choice'"):
        RunSpec("klrank_gper", "synth-library", click_model="navigational")
    with pytest.raises(ParameterError, match="does not run on synth-library"):
        RunSpec("pdgd", "synth-library", click_model="choice")
    with pytest.raises(ParameterError, match="does not run on synth-mq"):
        RunSpec("klrank_gper", "synth-mq")
    with pytest.raises(ParameterError, match="option alpha=-1"):
        make_ranker("klrank_gper", alpha=-1)
    with pytest.raises(ValueError, match="reveals the chosen item only"):
        run_library(make_ranker("pdgd"), load_library("synth-library"), rounds=5)


def test_an_empty_candidate_set_is_a_one_line_error():
    stream = LibraryStream("hand-made", 3, (np.arange(3),), np.array([0, 0]), np.array([2, 0]), np.array([1, 0]),
                           np.array([3, 3]))
    with pytest.raises(ValueError, match="hand-made, query 1: the candidate set is empty"):
        run_library(make_ranker("klrank_gper"), stream)


def test_the_synthetic_library_has_an_informative_citation_graph():
    """HITS and PageRank are the paper's baselines only with a link graph: each arriving item cites earlier
    items of its topic, good ones more often, so authority follows fitness; the queries are unchanged."""
    from dataclasses import replace

    from scipy import stats

    from olr_core.data.library import LIBRARY_PRESETS, synthetic_stream
    from olr_core.rankers.library import hits_authority, pagerank

    preset = LIBRARY_PRESETS["synth-library"]
    stream = synthetic_stream(preset)
    citing, cited = stream.citations[:, 0], stream.citations[:, 1]
    assert len(citing) > 5 * stream.n_items // 2 and (cited < citing).all() and (np.diff(citing) >= 0).all()
    topic = np.empty(stream.n_items, dtype=np.int64)
    for k, items in enumerate(stream.topic_items):
        topic[items] = k
    assert (topic[citing] == topic[cited]).all()
    for authority in (hits_authority(citing, cited, stream.n_items), pagerank(citing, cited, stream.n_items)):
        assert stats.spearmanr(authority, stream.fitness).statistic > 0.3
    without = synthetic_stream(replace(preset, citations_per_item=0.0))
    assert len(without.citations) == 0
    np.testing.assert_array_equal(without.chosen, stream.chosen)
    np.testing.assert_array_equal(without.topic, stream.topic)
