"""olr_core.cache: files written whole or not at all, one-line write errors that say what, where, why and
what to do, one warning per message, and arrays computed once per machine (recomputed when the copy is bad)."""

import errno
import os

import numpy as np
import pytest

from olr_core.cache import WriteError, cached_array, default_store_dir, warn_once, why, write_atomically


def test_a_file_is_renamed_into_place_only_once_it_is_whole(tmp_path):
    target = tmp_path / "deep" / "x.npy"
    seen = []

    def write(partial):
        seen.append(partial)
        partial.write_bytes(b"abc")
        assert not target.exists()                     # the final name appears only after the write

    assert write_atomically(target, write, "the x", "retry") == target
    assert target.read_bytes() == b"abc" and not seen[0].exists()
    assert seen[0].parent == target.parent and str(os.getpid()) in seen[0].name


def test_a_failed_write_leaves_nothing_and_names_what_where_why_and_the_fix(tmp_path):
    target = tmp_path / "x.npy"
    target.write_bytes(b"old")

    def write(partial):
        partial.write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(WriteError) as caught:
        write_atomically(target, write, "the run's result", "free some space")
    assert str(caught.value) == f"cannot write the run's result in {tmp_path}: no space is left on the device; " \
                                "free some space"
    assert caught.value.errno == errno.ENOSPC
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["x.npy"]


def test_a_path_through_a_file_is_a_write_error(tmp_path):
    (tmp_path / "store").write_text("a file")
    expected = r"^cannot write x in .*/store/sub: a part of the path is not a folder; fix it$"
    with pytest.raises(WriteError, match=expected):
        write_atomically(tmp_path / "store" / "sub" / "x.npy", lambda p: p.write_bytes(b""), "x", "fix it")


@pytest.mark.parametrize("code, words", [(errno.EROFS, "the file system is read-only"),
                                         (errno.EACCES, "permission is denied"),
                                         (errno.EDQUOT, "the disk quota is exceeded")])
def test_os_errors_are_given_in_words(code, words):
    assert why(OSError(code, "whatever")) == words


def test_an_unlisted_os_error_keeps_its_own_reason():
    assert why(OSError(errno.EIO, "Input/output error")) == "Input/output error"
    assert why(OSError()) == "OSError"


def test_a_warning_is_printed_once_per_message(capsys):
    for _ in range(3):
        warn_once("test_cache: disk nearly full")
    warn_once("test_cache: another one")
    assert capsys.readouterr().err == ("olr: warning: test_cache: disk nearly full\n"
                                       "olr: warning: test_cache: another one\n")


def test_the_store_folder_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert default_store_dir() == tmp_path / "elsewhere"


def test_an_array_is_computed_once_and_keyed_by_its_parts_and_extra_bytes(tmp_path):
    calls = []

    def compute(value):
        calls.append(value)
        return np.full(3, value)

    first = cached_array("comparator", ["a", 1], lambda: compute(1.0), root=tmp_path)
    again = cached_array("comparator", ["a", 1], lambda: compute(99.0), root=tmp_path)
    np.testing.assert_array_equal(again, first)
    assert calls == [1.0]
    cached_array("comparator", ["a", 2], lambda: compute(2.0), root=tmp_path)
    cached_array("comparator", ["a", 1], lambda: compute(3.0), extra=b"v2", root=tmp_path)
    cached_array("other", ["a", 1], lambda: compute(4.0), root=tmp_path)
    assert calls == [1.0, 2.0, 3.0, 4.0]
    assert len(list((tmp_path / "comparator").glob("*.npy"))) == 3


def test_an_empty_or_truncated_copy_is_computed_again(tmp_path):
    values = np.arange(1000.0)
    cached_array("fit", ["k"], lambda: values, root=tmp_path)
    (stored,) = (tmp_path / "fit").glob("*.npy")
    whole = stored.read_bytes()
    for damaged in (b"", whole[:100]):
        stored.write_bytes(damaged)
        np.testing.assert_array_equal(cached_array("fit", ["k"], lambda: values, root=tmp_path), values)
        assert stored.read_bytes() == whole


def test_an_unwritable_cache_still_returns_the_value_and_warns(tmp_path, capsys):
    (tmp_path / "fit").write_text("a file where the folder should be")
    np.testing.assert_array_equal(cached_array("fit", ["k"], lambda: [1, 2], root=tmp_path), [1, 2])
    err = capsys.readouterr().err
    assert err.startswith("olr: warning: cannot write the cached fit array") and err.count("\n") == 1
