"""The growing-library rankers' fast path is their reference path to the last bit: the chosen item's position
counted instead of sorted (:class:`olr_core.rankers.library.SortedOnRead`), HITS and PageRank summed in
compiled code. Exact small cases over many random tie patterns, then whole runs of every library ranker
compared array by array, with the rankers' final state and their random generator's."""

import numpy as np
import pytest

from olr_core.data import load_library
from olr_core.kernels import gathered_bincount, lexsort_position, normalise_and_change, scaled_add
from olr_core.library_loop import run_library, shown_at
from olr_core.metrics import ONE_SORT_FROM, rank_by_scores
from olr_core.rankers import LIBRARY_ALGORITHMS, make_ranker
from olr_core.rankers import library as library_rankers
from olr_core.rankers.base import Display
from olr_core.rankers.library import (
    SortedOnRead,
    hits_authority,
    pagerank,
    plackett_luce_keys,
    plackett_luce_ranking,
    tie_broken_display,
)

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan])


def tied_values(rng, n, levels, special=False):
    """n floats drawn from ``levels`` distinct values (many ties), with signed zeros, infinities and NaN if asked."""
    values = rng.integers(0, levels, n) / levels
    if special:
        where = rng.random(n) < 0.3
        values[where] = rng.choice(SPECIAL, where.sum())
    return values


def test_position_by_counts_is_the_position_in_the_lexsort_ranking_over_random_tie_patterns():
    rng = np.random.default_rng(0)
    for case in range(3000):
        n = int(rng.integers(1, 40))
        special = case % 3 == 0
        primary = tied_values(rng, n, int(rng.integers(1, 5)), special)
        secondary = tied_values(rng, n, int(rng.integers(1, 4)), special)
        order = np.lexsort((secondary, primary))
        stable = np.argsort(primary, kind="stable")
        for item in range(n):
            assert lexsort_position(primary, secondary, item) == np.flatnonzero(order == item)[0], (case, item)
            assert lexsort_position(primary, primary, item) == np.flatnonzero(stable == item)[0], (case, item)


@pytest.mark.parametrize("n", [1, 2, 7, ONE_SORT_FROM - 1, ONE_SORT_FROM, 3 * ONE_SORT_FROM])
def test_a_display_sorted_on_read_is_rank_by_scores_with_the_same_draws(n):
    """Same ranking, same positions, the generator left in the same state; on both sides of rank_by_scores'
    one-sort threshold, with ties and without."""
    for seed in range(40):
        scores = tied_values(np.random.default_rng(seed), n, 3 if seed % 2 else 10 ** 6, special=seed % 4 == 1)
        lazy_rng, eager_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        lazy, eager = tie_broken_display(scores, lazy_rng), rank_by_scores(scores, eager_rng)
        assert lazy_rng.bit_generator.state == eager_rng.bit_generator.state
        positions = [lazy.position(item) for item in range(n)]           # counted: nothing sorted yet
        assert lazy._ranking is None
        assert positions == [int(np.flatnonzero(eager == item)[0]) for item in range(n)]
        assert lazy.ranking.tobytes() == eager.tobytes()
        assert [shown_at(lazy, item) for item in range(n)] == positions   # (looked up once sorted)


@pytest.mark.parametrize("n", [1, 5, 300])
def test_plackett_luce_keys_sorted_on_read_are_the_plackett_luce_ranking(n):
    for seed in range(40):
        theta = tied_values(np.random.default_rng(seed), n, 3) * 5
        lazy_rng, eager_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        lazy, eager = SortedOnRead((plackett_luce_keys(theta, lazy_rng),)), plackett_luce_ranking(theta, eager_rng)
        assert lazy_rng.bit_generator.state == eager_rng.bit_generator.state
        assert [lazy.position(i) for i in range(n)] == [int(np.flatnonzero(eager == i)[0]) for i in range(n)]
        assert lazy.ranking.tobytes() == eager.tobytes()


def test_the_loop_looks_up_a_plain_display_and_counts_a_lazy_one():
    assert shown_at(Display(np.array([2, 0, 1])), 0) == 1
    lazy = SortedOnRead((np.array([0.5, 0.1, 0.9]), np.array([-1.0, -2.0, -2.0])))       # scores 1, 2, 2
    assert [shown_at(lazy, i) for i in range(3)] == [2, 0, 1] and lazy._ranking is None


# -- ScaledVector.add, HITS and PageRank: the numpy code they replace, kept here as the reference -----------

def reference_hits_authority(citing, cited, n, start=None, tolerance=1e-8, max_iterations=100, size=None):
    a = np.ones(n) if start is None or not np.any(start) else np.where(start > 0, start, 1e-3)
    a /= np.linalg.norm(a) or 1.0
    for _ in range(max_iterations):
        hub = np.bincount(citing, a[cited], n)
        new = np.bincount(cited, hub[citing], n)
        norm = np.linalg.norm(new)
        if norm == 0:
            break
        new /= norm
        done = np.abs(new - a).max() < tolerance
        a = new
        if done:
            break
    return np.pad(a, (0, (size or n) - n))


def reference_pagerank(citing, cited, n, damping=0.85, start=None, tolerance=1e-8, max_iterations=100, size=None):
    out_degree = np.bincount(citing, minlength=n).astype(float)
    p = np.full(n, 1.0 / n) if start is None or not np.any(start) else np.where(start > 0, start, 1.0 / n)
    p /= p.sum()
    dangling = out_degree == 0
    weight = 1.0 / np.where(dangling, 1.0, out_degree)
    for _ in range(max_iterations):
        flow = np.bincount(cited, (p * weight)[citing], n)
        new = (1 - damping) / n + damping * (flow + p[dangling].sum() / n)
        done = np.abs(new - p).sum() < tolerance
        p = new
        if done:
            break
    return np.pad(p, (0, (size or n) - n))


def reference_add(self, items, delta):
    old = self.v[items]
    new = old + delta / self.scale
    self.v[items] = new
    self.sq += float(new @ new - old @ old)


def random_graph(rng, n, edges):
    citing = np.sort(rng.integers(0, n, edges))
    return citing, rng.integers(0, n, edges)


def test_compiled_sums_are_numpys_to_the_last_bit():
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        to, fro = random_graph(rng, n, int(rng.integers(0, 300)))
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
        out = np.full(n, np.nan)
        gathered_bincount(to, fro, values, out)
        assert out.tobytes() == np.bincount(to, values[fro], n).tobytes()
        new, old, norm = rng.standard_normal(n), rng.standard_normal(n), float(rng.random() + 0.1)
        if rng.random() < 0.2:
            new[rng.integers(n)] = np.nan
        expected = new / norm
        change = normalise_and_change(new, norm, old)
        assert new.tobytes() == expected.tobytes()
        assert np.array_equal(change, np.abs(expected - old).max(), equal_nan=True)


def test_a_scaled_vector_step_is_numpys_to_the_last_bit():
    """ScaledVector.add's compiled element steps: old = v[items], new = old + delta / scale, v[items] = new."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        size = int(rng.integers(1, 50))
        v = rng.standard_normal(size) * 10.0 ** rng.integers(-5, 5, size)
        items = rng.permutation(size)[: int(rng.integers(0, size + 1))]
        delta, scale = rng.standard_normal(len(items)), float(rng.choice([1.0, 0.37, 3e-7]))
        old, new, expected_v = np.empty(len(items)), np.empty(len(items)), v.copy()
        expected_old = expected_v[items]
        expected_new = expected_old + delta / scale
        expected_v[items] = expected_new
        scaled_add(v, items, delta, scale, old, new)
        assert (v.tobytes(), old.tobytes(), new.tobytes()) == \
            (expected_v.tobytes(), expected_old.tobytes(), expected_new.tobytes())


def test_hits_and_pagerank_are_their_numpy_reference_to_the_last_bit():
    rng = np.random.default_rng(2)
    for case in range(60):
        n = int(rng.integers(1, 80))
        citing, cited = random_graph(rng, n, int(rng.integers(0, 4 * n)))
        start = None if case % 3 == 0 else np.abs(rng.standard_normal(n)) * (rng.random(n) < 0.8)
        for fast, slow in ((hits_authority, reference_hits_authority), (pagerank, reference_pagerank)):
            got = fast(citing, cited, n, start=None if start is None else start.copy(), size=n + 3)
            assert got.tobytes() == slow(citing, cited, n, start=start, size=n + 3).tobytes(), (case, fast.__name__)


def test_a_citation_outside_the_library_is_refused_in_one_line():
    with pytest.raises(ValueError, match="outside the 3 papers"):
        hits_authority(np.array([0, 1]), np.array([2, 3]), 3)


# -- whole runs: the fast path against the reference path, array by array ----------------------------------

def final_state(ranker) -> dict:
    """What a run leaves behind: the generator's state and every parameter array (theta as scale, v, ||v||^2)."""
    state = {"rng": ranker.rng.bit_generator.state}
    theta = getattr(ranker, "theta", None)
    if theta is not None:
        state.update(v=theta.v.tobytes(), scale=theta.scale, sq=theta.sq)
    state.update({name: getattr(ranker, name).tobytes() for name in ("seen", "scores") if hasattr(ranker, name)})
    return state


def reference_run(name, stream, rounds, seed, monkeypatch):
    """The run as it was played before the fast path: a full sort every round, theta's steps, HITS and PageRank
    in numpy."""
    ranker = make_ranker(name)
    ranker.sort_every_round = True
    with monkeypatch.context() as patched:
        patched.setattr(library_rankers.ScaledVector, "add", reference_add)
        patched.setattr(library_rankers, "hits_authority", reference_hits_authority)
        patched.setattr(library_rankers, "pagerank", reference_pagerank)
        return ranker, run_library(ranker, stream, rounds, seed)


def assert_fast_run_is_the_reference(name, stream, rounds, seed, monkeypatch):
    fast_ranker = make_ranker(name)
    fast = run_library(fast_ranker, stream, rounds, seed)
    slow_ranker, slow = reference_run(name, stream, rounds, seed, monkeypatch)
    assert fast.arrays().keys() == slow.arrays().keys()
    for key, value in fast.arrays().items():
        assert value.dtype == slow.arrays()[key].dtype and value.tobytes() == slow.arrays()[key].tobytes(), key
    assert final_state(fast_ranker) == final_state(slow_ranker)


# rounds per stream (None: the whole stream); on the fast-growing library the whole stream for the rankers the
# regret page runs there, the first 4,000 queries for the others (the whole stream would add ~25 s)
STREAMS = {"synth-library-slow": None, "synth-library-fast": 4000, "synth-library-adversarial": 1500}
WHOLE_FAST_STREAM = ("klrank_gper", "klrank_greedy", "random")


@pytest.mark.parametrize("stream_name", list(STREAMS))
@pytest.mark.parametrize("name", LIBRARY_ALGORITHMS)
def test_every_library_ranker_plays_its_reference_run_on_the_synthetic_libraries(name, stream_name, monkeypatch):
    whole = stream_name == "synth-library-fast" and name in WHOLE_FAST_STREAM
    assert_fast_run_is_the_reference(name, load_library(stream_name), None if whole else STREAMS[stream_name], 3,
                                     monkeypatch)


@pytest.mark.parametrize("name", LIBRARY_ALGORITHMS)
def test_every_library_ranker_plays_its_reference_run_on_cora(name, monkeypatch):
    import os

    data = os.environ.get("OLR_DATA_DIR")
    if not data or not os.path.isdir(os.path.join(data, "cora_mccallum")):
        pytest.skip("needs OLR_DATA_DIR pointing at a folder with cora_mccallum/ (e.g. ../shared/data)")
    assert_fast_run_is_the_reference(name, load_library("cora", data), 4000, 1, monkeypatch)


def test_the_reference_path_really_sorts_and_the_fast_path_does_not():
    """(So that the comparisons above compare two paths.)"""
    stream = load_library("synth-library")
    fast, slow = make_ranker("klrank_greedy"), make_ranker("klrank_greedy")
    slow.sort_every_round = True
    for ranker in (fast, slow):
        ranker.start(stream, np.random.default_rng(0))
    query = stream.query(50)
    assert isinstance(fast.rank(query), SortedOnRead) and not isinstance(slow.rank(query), SortedOnRead)


def test_the_kernels_a_run_calls_are_loaded_before_its_clock_starts():
    """load_kernels dispatches each kernel with the argument types a run passes it, so a run adds no
    specialisation (the first compiled call of a process, numba's load, is outside the run's seconds)."""
    from olr_core import kernels
    from olr_core.rankers.library import load_kernels

    load_kernels()
    used = (kernels.lexsort_position, kernels.scaled_add, kernels.gathered_bincount, kernels.normalise_and_change)
    before = [list(kernel.signatures) for kernel in used]
    for name in LIBRARY_ALGORITHMS:
        run_library(make_ranker(name), load_library("synth-library"), 300, seed=0)
    assert [list(kernel.signatures) for kernel in used] == before
