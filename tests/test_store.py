"""olr_core.experiments.store: a truncated or misplaced result is set aside (quarantined), reported and
recomputed, never served; ``olr store check`` finds such files itself."""

import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, expand_grid, run_grid, summary_frame
from olr_core.experiments.store import CorruptResultError

from .conftest import _truncate


def test_a_truncated_result_is_quarantined_reported_and_recomputed(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    specs = expand_grid({"algorithms": ["random", "oracle"], "rounds": 20})
    keys = run_grid(specs, store)
    before = summary_frame(specs, store)
    _truncate(store.path(keys[0]))
    with pytest.raises(CorruptResultError, match=str(store.path(keys[0]))):
        summary_frame(specs, store)
    assert "could not be read" in capsys.readouterr().err
    assert len(list((store.root / "quarantine").iterdir())) == 1
    run_grid(specs, store)                                    # recomputed, identical
    after = summary_frame(specs, store)
    assert after["final_offline_ndcg10"].tolist() == before["final_offline_ndcg10"].tolist()


def test_grid_and_run_commands_survive_a_corrupt_store(tmp_path, capsys):
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random]\nrounds: 20\n")
    results = str(tmp_path / "r")
    assert main(["grid", str(grid), "--results", results]) == 0
    store = ResultStore(results)
    _truncate(store.path(store.keys()[0]))
    capsys.readouterr()
    assert main(["grid", str(grid), "--results", results]) == 0
    assert str(store.root) in capsys.readouterr().err
    _truncate(store.path(store.keys()[0]))
    assert main(["run", "-a", "random", "-T", "20", "--results", results, "--json"]) == 0
    assert main(["store", "check", "--results", results]) == 0
    out = capsys.readouterr().out
    assert "1 readable run(s), 0 set aside now, 2 file(s) in the quarantine" in out and "quarantined:" in out


def test_store_check_finds_corruption_itself(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    keys = run_grid(expand_grid({"algorithms": ["random", "oracle"], "rounds": 10}), store)
    store.path(keys[1]).write_bytes(b"not a zip file at all")
    assert main(["store", "check", "--results", str(store.root)]) == 0
    captured = capsys.readouterr()
    assert "1 readable run(s), 1 set aside now, 1 file(s) in the quarantine" in captured.out
    assert captured.err == ""                                   # the report is printed once, on stdout
    assert not store.has(keys[1]) and store.has(keys[0])


def test_store_keys_skip_the_quarantine(tmp_path):
    store = ResultStore(tmp_path / "r")
    (store.root / "quarantine").mkdir(parents=True)
    (store.root / "quarantine" / "x.npz").write_bytes(b"")
    assert store.keys() == []


def test_a_result_copied_over_another_key_is_quarantined_not_served(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    specs = expand_grid({"algorithms": ["random", "oracle"], "rounds": 30})
    keys = run_grid(specs, store)
    oracle = summary_frame(specs, store)["final_offline_ndcg10"].tolist()[1]
    store.path(keys[1]).write_bytes(store.path(keys[0]).read_bytes())     # random's run under oracle's key
    with pytest.raises(CorruptResultError, match="holds the run"):
        store.load(keys[1])
    assert "holds the run" in capsys.readouterr().err and not store.has(keys[1])
    run_grid(specs, store)                                                 # recomputed: oracle's numbers again
    assert summary_frame(specs, store)["final_offline_ndcg10"].tolist()[1] == oracle
    store.path(keys[1]).write_bytes(store.path(keys[0]).read_bytes())
    assert main(["store", "check", "--results", str(store.root)]) == 0
    captured = capsys.readouterr()
    assert "1 set aside now" in captured.out and "holds the run" in captured.out and captured.err == ""
