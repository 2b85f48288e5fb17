"""Shared helpers for the benchmarks: timing and where real data is."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OLR = [sys.executable, "-m", "olr_core.cli"]


def data_dir() -> str | None:
    """``$OLR_DATA_DIR``, else ``../shared/data`` beside the checkout if it exists."""
    env = os.environ.get("OLR_DATA_DIR")
    if env:
        return env
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    return str(shared) if shared.is_dir() else None


def best_of(fn, repeats: int = 3) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()`` in seconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def olr_run_seconds(algorithm: str, dataset: str, rounds: int, click_model: str = "navigational",
                    extra: tuple = (), env_extra: dict | None = None) -> float:
    """The loop's own seconds (no interpreter start-up) of a fresh ``olr run ... --json --no-store`` process."""
    command = [*OLR, "run", "-a", algorithm, "-d", dataset, "-c", click_model, "-T", str(rounds), "--json",
               "--no-store", *extra]
    env = {k: v for k, v in os.environ.items() if k != "OLR_BLAS_THREADS"}
    env.update(env_extra or {})
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["seconds"]


BUSY_LOOP = "import time\nend = time.time() + 3600\nwhile time.time() < end:\n    pass\n"


def idle_and_busy(rate) -> tuple[float, float]:
    """``rate()`` measured on an idle machine and again beside a process that keeps one core busy."""
    import sys

    idle = rate()
    busy_process = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
    try:
        busy = rate()
    finally:
        busy_process.kill()
        busy_process.wait()
    return idle, busy


def run_in_tree(tree: str, script: str, payload) -> dict:
    """The JSON ``script`` prints last, run by ``python -c`` in a fresh process on ``tree``'s code (one BLAS
    thread), given ``payload`` as its one argument. The process starts in ``tree``: python -c puts the working
    directory first on the path, so started elsewhere it would time that folder's code."""
    env = {**os.environ, "PYTHONPATH": tree, "OPENBLAS_NUM_THREADS": "1", "OLR_BLAS_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", script, json.dumps(payload)], env=env, cwd=tree,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare_trees(time_run, trees: dict[str, str], repeats: int = 3) -> dict:
    """``time_run(tree)`` (a run in a fresh process: ``{"seconds", "digest"}``) in each tree, the trees interleaved
    ``repeats`` times: each tree's median CPU seconds and, with a ``before`` tree, the speedup and whether every
    run's digest was the same."""
    runs: dict = {name: [] for name in trees}
    for _ in range(repeats):                                                       # interleaved
        for name, tree in trees.items():
            runs[name].append(time_run(tree))
    row = {f"{name}_cpu_seconds": round(statistics.median(t["seconds"] for t in timings), 3)
           for name, timings in runs.items()}
    if "before" in trees:
        row["speedup"] = round(row["before_cpu_seconds"] / row["after_cpu_seconds"], 2)
        row["identical"] = len({t["digest"] for timings in runs.values() for t in timings}) == 1
    return row


def page_cost(counts, rows: dict, trees: dict, label) -> dict:
    """A page's runs and their CPU seconds in each tree (``counts[kind]`` runs of a kind times the median of
    ``rows[label(kind)]``), and the saving."""
    cost = {name: sum(n * rows[label(kind)][f"{name}_cpu_seconds"] for kind, n in counts.items()) for name in trees}
    out = {"runs": sum(counts.values()), **{f"{name}_cpu_seconds": round(v, 1) for name, v in cost.items()}}
    if "before" in trees:
        out["estimated_saving_cpu_seconds"] = round(cost["before"] - cost["after"], 1)
    return out
