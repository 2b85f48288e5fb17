import numpy as np
import pytest

from olr_core.data import load_fold
from olr_core.data.ranking_data import Fold
from olr_core.experiments import ResultStore, RunSpec, run_grid
from olr_core.loop import NonFiniteModelError, query_sequence, run_online
from olr_core.metrics import misordered_pairs, ndcg_at_k
from olr_core.rankers import make_ranker
from olr_core.rankers.base import BaseRanker, Display
from olr_core.users import TopKRelevanceUser, make_user

from .conftest import tiny_data


class Recorder(BaseRanker):
    """Random ranker that keeps what it saw."""

    def __init__(self):
        self.seen, self.feedback = [], []

    def rank(self, query):
        self.seen.append(query.qid)
        return Display(self.rng.permutation(query.n_docs))

    def learn(self, query, display, feedback):
        self.feedback.append((display.ranking[:10].copy(), feedback.clicks.copy()))
        return {"clicks": int(feedback.clicks.sum())}

    def score(self, docs):
        return np.zeros(len(docs.features))


@pytest.fixture(scope="module")
def fold():
    return load_fold("synth-mq")


def test_same_seed_gives_identical_traces(fold):
    user = make_user("navigational", fold.max_grade)
    a = run_online(make_ranker("random"), fold, user, 200, seed=5)
    b = run_online(make_ranker("random"), fold, user, 200, seed=5)
    c = run_online(make_ranker("random"), fold, user, 200, seed=6)
    np.testing.assert_array_equal(a.online_ndcg, b.online_ndcg)
    np.testing.assert_array_equal(a.offline_ndcg, b.offline_ndcg)
    assert not np.array_equal(a.online_ndcg, c.online_ndcg)


def test_rankers_see_the_same_queries_and_users(fold):
    user = make_user("informational", fold.max_grade)
    r1, r2 = Recorder(), Recorder()
    run_online(r1, fold, user, 50, seed=1)
    run_online(r2, fold, user, 50, seed=1)
    assert r1.seen == r2.seen
    expected = [fold.train.qids[q] for q in query_sequence(fold.train.n_queries, 50, 1)]
    assert r1.seen == expected


def test_recorded_metrics_match_direct_computation(fold):
    ranker = Recorder()
    trace = run_online(ranker, fold, make_user("perfect", fold.max_grade), 40, seed=2, eval_every=7)
    queries = query_sequence(fold.train.n_queries, 40, 2)
    for t, q in enumerate(queries):
        labels = fold.train.query(q).labels
        shown = ranker.feedback[t][0]
        assert trace.online_ndcg[t] == pytest.approx(ndcg_at_k(labels[shown], labels))
    assert list(trace.eval_rounds) == [0, 7, 14, 21, 28, 35, 40]
    np.testing.assert_array_equal(trace.stats["clicks"], [fb[1].sum() for fb in ranker.feedback])


def test_misordered_pairs_recorded_for_the_whole_ranking(fold):
    class Fixed(Recorder):
        def rank(self, query):
            self.full = getattr(self, "full", [])
            d = Display(self.rng.permutation(query.n_docs))
            self.full.append(query.labels[d.ranking])
            return d

    ranker = Fixed()
    trace = run_online(ranker, fold, make_user("perfect", fold.max_grade), 30, seed=3)
    assert list(trace.online_misordered) == [misordered_pairs(lab, cutoff=10) for lab in ranker.full]


def test_oracle_online_and_offline(fold):
    trace = run_online(make_ranker("oracle"), fold, make_user("perfect", fold.max_grade), 100, seed=0)
    assert np.all(trace.offline_ndcg == 1.0)
    queries = query_sequence(fold.train.n_queries, 100, 0)
    has_rel = fold.train.has_relevant()[queries]
    np.testing.assert_allclose(trace.online_ndcg[has_rel], 1.0)
    np.testing.assert_allclose(trace.online_ndcg[~has_rel], 0.0)
    assert trace.online_misordered.sum() == 0


@pytest.mark.parametrize("rounds", [-1, 2.5])
def test_bad_horizon_is_rejected(fold, rounds):
    with pytest.raises(ValueError, match="rounds must be a non-negative integer"):
        run_online(make_ranker("random"), fold, make_user("perfect", 2), rounds, seed=0)


def test_zero_rounds_evaluates_the_initial_ranker(fold):
    trace = run_online(make_ranker("oracle"), fold, make_user("perfect", 2), 0, seed=0)
    assert trace.rounds == 0 and list(trace.eval_rounds) == [0]


def test_feedback_kind_mismatch_is_an_error(fold):
    with pytest.raises(ValueError, match="learns from 'clicks' feedback"):
        run_online(make_ranker("dbgd"), fold, TopKRelevanceUser(), 5, seed=0)


def test_a_user_that_sees_fewer_positions_than_shown_is_an_error(fold):
    with pytest.raises(ValueError, match="examines at most 5 positions but the loop shows 10"):
        run_online(make_ranker("dbgd"), fold, make_user("perfect", 2, cutoff=5), 5, seed=0)
    trace = run_online(make_ranker("dbgd"), fold, make_user("perfect", 2, cutoff=5), 5, seed=0, cutoff=5)
    assert trace.rounds == 5


def test_chunks_cover_the_horizon_in_whole_blocks():
    from olr_core.loop import chunks
    spans = chunks(1000, 7, size=30)
    assert spans[0] == (0, 28) and spans[-1][1] == 1000
    assert all(b == c for (_, b), (c, _) in zip(spans, spans[1:]))
    assert all((last - first) % 7 == 0 for first, last in spans[:-1])
    assert chunks(0, 10) == [] and chunks(5, 10, size=3) == [(0, 5)]


@pytest.mark.parametrize("name", ["pdgd", "dbgd", "pairrank_c"])
def test_a_run_played_in_chunks_equals_one_played_whole(fold, name, monkeypatch):
    """Chunking (queries and shown lists held one chunk at a time) changes no number of the trace."""
    import olr_core.loop as loop
    user = make_user("informational", fold.max_grade)
    monkeypatch.setattr(loop, "SCORED_ROWS", 50)              # scored 50 rounds at a time: pieces span chunks
    whole = run_online(make_ranker(name), fold, user, 230, seed=3, eval_every=7)
    monkeypatch.setattr(loop, "CHUNK_ROUNDS", 20)             # 14-round chunks: 17 of them
    chunked = run_online(make_ranker(name), fold, user, 230, seed=3, eval_every=7)
    for key, value in whole.arrays().items():
        np.testing.assert_array_equal(value, chunked.arrays()[key], err_msg=key)
    assert whole.arrays().keys() == chunked.arrays().keys()


def test_a_runs_working_memory_does_not_grow_with_its_horizon(fold, monkeypatch):
    """Beyond its per-round records, a run holds one chunk of queries and shown lists: with 16,384-round chunks
    the working memory of 140,000 rounds is that of 40,000 (whole-run buffers would add 48 bytes a round: 4.8 MB
    here)."""
    import tracemalloc

    import olr_core.loop as loop
    monkeypatch.setattr(loop, "CHUNK_ROUNDS", 16_384)
    user = make_user("navigational", fold.max_grade)
    run_online(make_ranker("dbgd"), fold, user, 100, seed=1)                # compiled kernels loaded first

    def working_memory(rounds):
        tracemalloc.start()
        try:
            trace = run_online(make_ranker("dbgd"), fold, user, rounds, seed=1, eval_every=1000)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return peak - sum(v.nbytes for v in trace.arrays().values())

    assert working_memory(140_000) - working_memory(40_000) < 1.5e6


def test_diverging_weights_stop_the_run_naming_algorithm_and_round(tmp_path):
    fold = load_fold("synth-mq")
    with pytest.raises(NonFiniteModelError, match=r"PDGD: .* by round \d+"):
        run_online(make_ranker("pdgd", learning_rate=1e300), fold, make_user("perfect", fold.max_grade), 200, 0)
    spec = RunSpec("pdgd", click_model="perfect", rounds=200, params={"learning_rate": 1e300})
    store = ResultStore(tmp_path / "r")
    with pytest.raises(NonFiniteModelError, match=r"pdgd\(learning_rate=1e\+300\) on synth-mq fold 1, seed 0"):
        run_grid([spec], store)
    assert store.keys() == []


def test_the_online_sums_are_named_for_what_they_are():
    data = tiny_data()
    trace = run_online(make_ranker("random"), Fold("tiny", 1, data, data, data), make_user("perfect", 2), 50, seed=0)
    summary = trace.summary()
    assert "cumulative_online_ndcg10" not in summary
    assert summary["summed_online_ndcg10"] == pytest.approx(trace.online_ndcg.sum())
    assert summary["discounted_online_ndcg10"] == pytest.approx(
        float(np.sum(trace.online_ndcg * 0.9995 ** np.arange(50))))
