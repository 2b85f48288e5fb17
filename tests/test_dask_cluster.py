"""Runs sent through a real Dask scheduler with two workers on 127.0.0.1 (``dask scheduler`` and ``dask worker``
processes): stored runs are bit-identical to local ones, and a worker killed mid-grid loses nothing."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, expand_grid, run_grid

ROOT = Path(__file__).resolve().parents[1]


def _wait(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} within {seconds:.0f} s")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(scheduler address, the two worker processes): a scheduler and two single-threaded workers without
    nannies (a killed worker stays dead), all on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("dask")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "OLR_CACHE_DIR": str(folder / "cache")}
    dask = str(Path(sys.executable).with_name("dask"))
    log = open(folder / "cluster.log", "w")
    scheduler_file = folder / "scheduler.json"
    processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", str(scheduler_file)], env=env, stdout=log, stderr=log)]
    try:
        _wait(scheduler_file.exists, 30, "no scheduler started")
        address = json.loads(scheduler_file.read_text())["address"]
        processes += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                        "--host", "127.0.0.1", "--name", f"worker-{i}"], env=env, stdout=log,
                                       stderr=log) for i in range(2)]
        from dask.distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=30)
        yield address, processes[1:]
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
                process.wait(10)
        log.close()


def _runs(store: ResultStore) -> dict:
    """{key: (recorded spec and data, every array of the run)}: the stored run without its timings."""
    out = {}
    for key in store.keys():
        with np.load(store.path(key), allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            out[key] = ((meta["spec"], meta["data"]), {k: z[k].copy() for k in z.files if k != "__meta__"})
    return out


def _assert_same_runs(a: ResultStore, b: ResultStore) -> None:
    runs_a, runs_b = _runs(a), _runs(b)
    assert runs_a and sorted(runs_a) == sorted(runs_b)
    for key, (meta, arrays) in runs_a.items():
        assert runs_b[key][0] == meta and sorted(runs_b[key][1]) == sorted(arrays)
        for name, values in arrays.items():
            assert values.dtype == runs_b[key][1][name].dtype
            assert np.array_equal(values, runs_b[key][1][name], equal_nan=values.dtype.kind == "f"), (key, name)


def test_claims_at_the_tiny_profile_through_the_cluster_store_the_local_runs(cluster, tmp_path, capsys):
    address, _ = cluster
    from dask.distributed import Client, get_task_stream

    remote, local = ResultStore(tmp_path / "remote"), ResultStore(tmp_path / "local")
    with Client(address, timeout=30) as client, get_task_stream(client) as stream:
        assert main(["claims", "klrank", "--profile", "tiny", "--json", "--dask", address,
                     "--results", str(remote.root)]) == 0
        through_dask = capsys.readouterr().out
    ran_there = [t for t in stream.data if str(t["key"]).startswith("('_execute_keyed") or
                 str(t["key"]).startswith("_execute_keyed")]
    assert len(ran_there) == len(remote.keys()) > 0            # every stored run was computed by a worker
    assert "OLR_DASK" not in os.environ                   # the address reached the grids only while claims ran
    assert main(["claims", "klrank", "--profile", "tiny", "--json", "--results", str(local.root)]) == 0
    assert without_prices(capsys.readouterr().out) == without_prices(through_dask)
    _assert_same_runs(remote, local)


def without_prices(text: str) -> str:
    """Records without the price of the command that decides an inconclusive claim: it comes from the CPU seconds
    each store's runs took, which differ from one computation to the next."""
    return re.sub(r"costs about [\d,.]+ CPU-(seconds|hours)", "costs about N", text)


def test_a_worker_killed_mid_grid_loses_nothing(cluster, tmp_path):
    address, workers = cluster
    specs = expand_grid({"algorithms": ["pdgd"], "click_models": ["informational"], "rounds": 600, "seeds": 14})
    remote = ResultStore(tmp_path / "remote")
    finished = {}
    grid = threading.Thread(target=lambda: finished.update(keys=run_grid(specs, remote, dask=address)))
    grid.start()
    _wait(lambda: len(remote.keys()) >= 2, 60, "no run finished on the cluster")
    stored_at_kill = len(remote.keys())
    workers[0].send_signal(signal.SIGKILL)
    grid.join(120)
    assert not grid.is_alive() and stored_at_kill < len(specs)             # killed mid-grid, and it finished
    assert workers[0].wait(10) == -signal.SIGKILL
    assert len(finished["keys"]) == len(specs) and sorted(set(finished["keys"])) == remote.keys()
    local = ResultStore(tmp_path / "local")
    run_grid(specs, local)
    _assert_same_runs(remote, local)
