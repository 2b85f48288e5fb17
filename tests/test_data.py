import gzip

import numpy as np
import pytest

from olr_core.data import (
    DataFormatError,
    DataNotFoundError,
    describe,
    generate,
    get_spec,
    letor,
    load_fold,
    read_letor,
    synthetic_fold,
    verify_checksums,
    write_letor,
)
from olr_core.data.synthetic import PRESETS

from .conftest import tiny_data


def test_reader_round_trips_a_written_file(tmp_path):
    data = tiny_data()
    path = tmp_path / "d.txt.gz"
    write_letor(data, path, comment="docid = x")
    back = read_letor(path, n_features=4)
    np.testing.assert_array_equal(back.labels, data.labels)
    np.testing.assert_array_equal(back.offsets, data.offsets)
    np.testing.assert_array_equal(back.qids, data.qids)
    np.testing.assert_allclose(back.features, data.features, rtol=0, atol=0)


def test_non_contiguous_queries_are_grouped_and_absent_features_are_zero(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("2 qid:7 1:0.5 3:1 # a\n0 qid:3 2:2\n1 qid:7 2:4\n\n0 qid:3 1:1 # b\n")
    data = read_letor(path)
    assert list(data.qids) == ["7", "3"]
    np.testing.assert_array_equal(data.labels, [2, 1, 0, 0])
    np.testing.assert_array_equal(data.offsets, [0, 2, 4])
    np.testing.assert_array_equal(data.features, [[0.5, 0, 1], [0, 4, 0], [0, 2, 0], [1, 0, 0]])


def test_variant_without_qid_uses_query_file(tmp_path):
    path = tmp_path / "rank.train"
    path.write_text("1 1:1\n0 2:1\n2 1:3\n0 3:1 2:1\n")
    (tmp_path / "rank.train.query").write_text("3\n1\n")
    data = read_letor(path)
    np.testing.assert_array_equal(data.offsets, [0, 3, 4])
    (tmp_path / "rank.train.query").write_text("2\n1\n")
    with pytest.raises(DataFormatError, match="add up to 3"):
        read_letor(path, use_cache=False)


@pytest.mark.parametrize("line, message", [
    ("x qid:1 1:0.5", "line 2: relevance label 'x' is not a number"),
    ("1 1:0.5 2:0.1", "line 2: missing 'qid:<id>'"),
    ("1 qid:1 1:NULL", "line 2: feature '1:NULL' has a non-numeric id or value"),
    ("1 qid:1 9:0.5", "line 2: feature id 9 exceeds the declared 5 features"),
    ("1 qid:1 0.5", "line 2: token '0.5' is not"),
    ("1.5 qid:1 1:0.5", "line 2: relevance label '1.5' is not a non-negative integer"),
    ("1 qid:1 1:0.5 1:0.7", "line 2: feature id 1 appears twice"),
    ("1 qid: 1:0.5", "line 2: empty query id"),
    ("inf qid:1 1:0.5", "line 2: relevance label 'inf'"),
    ("nan qid:1 1:0.5", "line 2: relevance label 'nan'"),
])
def test_malformed_lines_name_file_line_and_fix(tmp_path, line, message):
    path = tmp_path / "bad.txt"
    path.write_text("0 qid:1 1:0.1\n" + line + "\n")
    with pytest.raises(DataFormatError) as err:
        read_letor(path, n_features=5)
    assert str(path) in str(err.value) and message in str(err.value)


def test_parsing_twice_uses_the_cache_and_new_content_is_reparsed(tmp_path, monkeypatch):
    path = tmp_path / "d.txt"
    path.write_text("1 qid:1 1:1\n0 qid:1 1:2\n")
    first = read_letor(path)
    monkeypatch.setattr(letor, "parse_letor", lambda *a, **k: pytest.fail("parsed again"))
    np.testing.assert_array_equal(read_letor(path).features, first.features)
    monkeypatch.undo()
    path.write_text("1 qid:1 1:5\n0 qid:1 1:2\n")     # same name, new content: a new key
    assert read_letor(path).features[0, 0] == 5


def test_gzip_and_plain_parse_identically(tmp_path):
    text = "1 qid:1 1:1 2:3\n0 qid:1 1:2\n2 qid:2 2:1\n"
    (tmp_path / "a.txt").write_text(text)
    with gzip.open(tmp_path / "b.txt.gz", "wt") as fh:
        fh.write(text)
    a, b = read_letor(tmp_path / "a.txt"), read_letor(tmp_path / "b.txt.gz")
    np.testing.assert_array_equal(a.features, b.features)


def test_query_minmax_normalisation_maps_each_query_to_unit_range():
    data = tiny_data(3).query_minmax_normalized()
    for q in range(data.n_queries):
        x = data.query(q).features
        assert x.min() >= 0 and x.max() <= 1
        span = x.max(axis=0) - x.min(axis=0)
        np.testing.assert_allclose(x.max(axis=0)[span > 0], 1)
        np.testing.assert_allclose(x.min(axis=0), 0)


def test_subset_and_padding_index_documents_correctly():
    data = tiny_data(1)
    sub = data.subset([3, 0])
    np.testing.assert_array_equal(sub.query(0).features, data.query(3).features)
    index, mask = data.padded()
    np.testing.assert_array_equal(data.labels[index[2][mask[2]]], data.query(2).labels)


def test_synthetic_is_deterministic_by_seed_and_matches_its_targets():
    preset = PRESETS["synth-mq"]
    a, b, c = generate(preset), generate(preset), generate(preset, seed=1)
    np.testing.assert_array_equal(a.features, b.features)
    assert not np.array_equal(a.labels, c.labels)
    shares = np.bincount(a.labels) / a.n_docs
    np.testing.assert_allclose(shares, preset.grade_shares, atol=0.01)
    no_relevant = 1 - a.has_relevant().mean()
    assert 0.1 < no_relevant < 0.45          # realistic share of queries without relevant documents
    assert a.n_features == 46 and 15 <= np.median(a.docs_per_query) <= 25


def test_synthetic_relevance_is_not_linear_in_the_features():
    """A least-squares linear fit of the grades leaves most of their variance unexplained."""
    data = generate(PRESETS["synth-mq"])
    X = np.c_[data.features, np.ones(data.n_docs)]
    residual = data.labels - X @ np.linalg.lstsq(X, data.labels, rcond=None)[0]
    assert residual.var() / data.labels.var() > 0.4


def test_folds_partition_the_queries():
    fold = synthetic_fold("synth-mq", 2)
    ids = [set(s.qids) for s in (fold.train, fold.vali, fold.test)]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    assert sum(map(len, ids)) == PRESETS["synth-mq"].n_queries


def test_unknown_names_and_missing_directories_explain_themselves(tmp_path, monkeypatch):
    with pytest.raises(KeyError, match="valid names: .*mq2008"):
        get_spec("mq2009")
    monkeypatch.delenv("OLR_DATA_DIR", raising=False)
    with pytest.raises(DataNotFoundError, match="OLR_DATA_DIR"):
        load_fold("mq2008")
    with pytest.raises(DataNotFoundError, match="does not exist"):
        load_fold("mq2008", data_dir=tmp_path / "nowhere")
    with pytest.raises(DataNotFoundError, match="To obtain it"):
        load_fold("mq2008", data_dir=tmp_path)
    with pytest.raises(ValueError, match="folds 1..5"):
        load_fold("synth-mq", fold=6)


@pytest.mark.realdata
def test_mq2008_from_the_shared_data(real_data_dir):
    assert all(verify_checksums("mq2008", real_data_dir).values())
    fold = load_fold("mq2008", 1, real_data_dir)
    total = sum(s.n_queries for s in (fold.train, fold.vali, fold.test))
    docs = sum(s.n_docs for s in (fold.train, fold.vali, fold.test))
    assert (total, docs, fold.n_features) == (784, 15211, 46)
    info = describe(fold.train)
    assert info["docs_per_query"]["min"] >= 5 and info["docs_per_query"]["max"] <= 121
    assert fold.train.features.min() >= 0 and fold.train.features.max() <= 1


@pytest.mark.realdata
def test_lightgbm_sample_reads_query_files(real_data_dir):
    fold = load_fold("lightgbm-sample", 1, real_data_dir)
    assert fold.train.n_queries + fold.vali.n_queries == 201 and fold.test.n_queries == 50
    assert fold.train.n_docs + fold.vali.n_docs == 3005 and fold.max_grade == 4


def test_the_linear_preset_is_ranked_well_by_a_linear_model_and_the_default_is_not():
    from olr_core.loop import OfflineEvaluator
    from olr_core.rankers import make_ranker

    scores = {}
    for name in ("synth-mq-linear", "synth-mq"):
        fold = load_fold(name)
        ranker = make_ranker("offline_ranknet")
        ranker.start(fold.train, np.random.default_rng(0))
        scores[name] = OfflineEvaluator(fold.test)(ranker.score(fold.test), np.random.default_rng(0))
        assert fold.train.features.min() >= 0 and fold.train.features.max() <= 1
    assert scores["synth-mq-linear"] > scores["synth-mq"] + 0.05, scores


def test_a_synthetic_preset_is_the_same_whatever_the_blas_threads(tmp_path, monkeypatch):
    """Generated with 1 or 4 BLAS threads (a grid worker or a test's parent process), the data is identical:
    otherwise its fingerprint, and every run key, would differ between processes."""
    from threadpoolctl import threadpool_limits

    from olr_core.data.synthetic import PRESETS, generate

    fingerprints = []
    for threads in (1, 4):
        monkeypatch.setenv("OLR_CACHE_DIR", str(tmp_path / f"cache{threads}"))
        with threadpool_limits(limits=threads):
            fingerprints.append(generate(PRESETS["synth-mq"]).fingerprint())
    assert fingerprints[0] == fingerprints[1]


def test_a_derived_table_is_computed_once_and_shared_read_only():
    """The loop's per-data-set tables (ideal DCGs, grade counts, feature ranges) are built once per data set and
    shared by every run on it, so no run can change them for the next."""
    from olr_core.loop import OfflineEvaluator, OnlineScorer

    fold = load_fold("synth-mq")
    calls = []

    def compute(data):
        calls.append(1)
        return np.arange(3.0), np.ones(2)

    first = fold.test.derived("probe", compute)
    assert fold.test.derived("probe", compute) is first and len(calls) == 1
    assert not first[0].flags.writeable and not first[1].flags.writeable
    a, b = OfflineEvaluator(fold.test, 10), OfflineEvaluator(fold.test, 10)
    assert a.ideal is b.ideal and a.gains is b.gains and not a.ideal.flags.writeable
    assert OfflineEvaluator(fold.test, 5).ideal is not a.ideal                 # one table per cutoff
    assert OnlineScorer(fold.train, 10).better_than is OnlineScorer(fold.train, 10).better_than
    with pytest.raises(ValueError):
        a.ideal[0] = 1.0
