"""olr_core.quarantine: an unreadable file is moved aside, never deleted, and said so in one line."""

import os

import pytest

from olr_core.quarantine import quarantine_file


def test_the_file_is_moved_into_the_folder_whole_and_reported(tmp_path, capsys):
    bad = tmp_path / "run.npz"
    bad.write_bytes(b"truncated bytes")
    where = quarantine_file(bad, tmp_path / "quarantine", "truncated")
    (kept,) = (tmp_path / "quarantine").iterdir()
    assert not bad.exists() and kept.read_bytes() == b"truncated bytes"
    assert kept.name.startswith("run.npz.") and kept.name.endswith(f".{os.getpid()}")
    assert where == f"moved to {kept}"
    assert capsys.readouterr().err == (f"olr: warning: {bad} could not be read (truncated); moved to {kept}; "
                                       "it will be recomputed\n")


def test_the_same_name_twice_keeps_both_copies(tmp_path, capsys):
    for content in (b"first", b"second"):
        bad = tmp_path / "run.npz"
        bad.write_bytes(content)
        quarantine_file(bad, tmp_path / "q", "bad", quiet=True)
    assert sorted(p.read_bytes() for p in (tmp_path / "q").iterdir()) == [b"first", b"second"]
    assert capsys.readouterr().err == ""


def test_quiet_leaves_the_report_to_the_caller_and_then_replaces_the_ending(tmp_path, capsys):
    bad = tmp_path / "cache.npz"
    bad.write_bytes(b"x")
    quarantine_file(bad, tmp_path / "q", "bad", quiet=True)
    assert capsys.readouterr().err == ""
    bad.write_bytes(b"x")
    quarantine_file(bad, tmp_path / "q", "empty", then="the file is parsed again")
    err = capsys.readouterr().err
    assert err.endswith("; the file is parsed again\n") and err.count("\n") == 1


def test_a_quarantine_path_through_a_file_leaves_the_file_in_place_and_says_why(tmp_path, capsys):
    bad = tmp_path / "run.npz"
    bad.write_bytes(b"x")
    (tmp_path / "blocker").write_text("a file where a folder should be")
    where = quarantine_file(bad, tmp_path / "blocker" / "quarantine", "truncated")
    assert bad.read_bytes() == b"x"
    assert where == f"left in place (it could not be moved to {tmp_path / 'blocker' / 'quarantine'}: Not a directory)"
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_folder_that_cannot_be_written_leaves_the_file_in_place_and_says_why(tmp_path, capsys):
    store = tmp_path / "store"
    store.mkdir()
    bad = store / "run.npz"
    bad.write_bytes(b"x")
    store.chmod(0o555)
    try:
        where = quarantine_file(bad, store / "quarantine", "truncated")
    finally:
        store.chmod(0o755)
    assert bad.read_bytes() == b"x" and not (store / "quarantine").exists()
    assert where.startswith(f"left in place (it could not be moved to {store / 'quarantine'}: ")
    assert "Permission denied" in where
    err = capsys.readouterr().err
    assert where in err and err.count("\n") == 1
