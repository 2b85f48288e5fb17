"""olr_core.experiments.runner: where runs go (local workers, a Dask scheduler) and what a stored run
records."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, RunSpec


def test_unreachable_dask_scheduler_is_a_clear_error():
    from olr_core.experiments.runner import _iterate_dask

    with pytest.raises(ConnectionError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        list(_iterate_dask([RunSpec("random", rounds=5)], "tcp://127.0.0.1:9", None, timeout=1))


@pytest.mark.slow
def test_grid_workers_exit_when_the_parent_is_killed(tmp_path):
    psutil = pytest.importorskip("psutil")
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [pairrank_c]\ndatasets: [synth-mslr]\nrounds: 200000\nseeds: 4\n")
    env = {**os.environ, "OLR_RESULTS_DIR": str(tmp_path / "r")}
    parent = subprocess.Popen([sys.executable, "-m", "olr_core.cli", "grid", str(grid), "--jobs", "2"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = []
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(children) < 2:
            time.sleep(0.5)
            children = [c for c in psutil.Process(parent.pid).children(recursive=True) if "python" in c.name()]
        assert len(children) >= 2, "the grid did not start its workers"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        gone, alive = psutil.wait_procs(children, timeout=15)
        assert not alive, f"workers still alive 15 s after the parent died: {[p.pid for p in alive]}"
    finally:                                            # only the grid's own processes, never pytest's
        for process in [*children, parent]:
            try:
                psutil.Process(process.pid).kill()
            except psutil.NoSuchProcess:
                pass


def test_olr_run_stores_the_data_fingerprint_and_reuses_the_run(tmp_path, capsys):
    from olr_core.experiments.runner import data_fingerprint

    results = str(tmp_path / "r")
    assert main(["run", "-a", "random", "-T", "20", "--results", results, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    meta, _ = ResultStore(results).load(first["key"])
    assert meta["data"] == data_fingerprint("synth-mq", 1, None) != ""
    assert main(["run", "-a", "random", "-T", "20", "--results", results, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first
