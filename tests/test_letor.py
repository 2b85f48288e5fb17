"""olr_core.data.letor: LETOR files that are damaged, truncated or not UTF-8 fail with a one-line error
naming the file and line; a damaged or misplaced parse cache is set aside and the file parsed again."""

import gzip
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olr_core.data import DataFormatError, read_letor, write_letor
from olr_core.data.ranking_data import RankingData

from .conftest import _truncate, tiny_data


def test_a_truncated_parse_cache_is_set_aside_and_the_file_reparsed(tmp_path, capsys):
    path = tmp_path / "d.txt"
    write_letor(tiny_data(), path)
    first = read_letor(path)
    (cached,) = (tmp_path / "cache" / "parsed").glob("*.npz")
    _truncate(cached)
    again = read_letor(path)
    np.testing.assert_array_equal(again.features, first.features)
    assert "could not be read" in capsys.readouterr().err
    assert (cached.parent / "quarantine").is_dir() and cached.exists()


def test_a_truncated_gzip_file_names_the_file(tmp_path):
    path = tmp_path / "d.txt.gz"
    write_letor(tiny_data(n_queries=40), path)
    _truncate(path, path.stat().st_size // 2)
    with pytest.raises(DataFormatError, match=r"d\.txt\.gz: the gzip stream is truncated"):
        read_letor(path, use_cache=False)


def test_non_utf8_bytes_in_a_comment_are_ignored_and_elsewhere_named(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes(b"1 qid:1 1:0.5 # caf\xe9\n0 qid:1 1:0.1\n")
    assert read_letor(path, use_cache=False).n_docs == 2
    path.write_bytes(b"1 qid:1 1:0.5\n0 qid:1 1:0.1 caf\xe9\n")
    with pytest.raises(DataFormatError, match="line 2: bytes that are not UTF-8"):
        read_letor(path, use_cache=False)


VALID = b"2 qid:1 1:0.5 2:0.25 # doc a\n0 qid:1 1:0.1\n1 qid:2 2:1 3:0.75\n0 qid:2 1:0.2 3:0.1 # doc d\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.binary(min_size=0, max_size=3)),
                      min_size=1, max_size=4))
def test_fuzzed_letor_files_parse_or_fail_with_a_named_line(tmp_path, edits):
    data = bytearray(VALID)
    for position, replacement in edits:
        position = min(position, len(data))
        data[position: position + 1] = replacement
    path = tmp_path / "fuzz.txt"
    path.write_bytes(bytes(data))
    try:
        parsed = read_letor(path, use_cache=False)
    except DataFormatError as err:
        message = str(err)
        assert "fuzz.txt" in message and "\n" not in message
        return
    assert parsed.n_docs == len(parsed.labels) == parsed.offsets[-1]
    assert np.isfinite(parsed.features).all() and (parsed.labels >= 0).all()


def test_a_whole_gzip_file_still_parses(tmp_path):
    gz = tmp_path / "x.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(VALID)
    assert read_letor(gz, use_cache=False).n_queries == 2


def test_a_parse_cache_copied_over_another_is_set_aside_and_the_file_reparsed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OLR_CACHE_DIR", str(tmp_path / "cache"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    data = tiny_data()
    write_letor(data, a)
    write_letor(RankingData(data.features, np.zeros_like(data.labels), data.offsets, data.qids, data.max_grade,
                            "b"), b)
    read_letor(a)
    read_letor(b)
    cached = sorted((tmp_path / "cache").rglob("*.npz"), key=os.path.getmtime)
    cached[1].write_bytes(cached[0].read_bytes())                          # a's arrays under b's name
    again = read_letor(b)
    assert (again.labels == 0).all()                                        # b's own labels, parsed again
    assert "holds the arrays of" in capsys.readouterr().err
