"""Shared helpers for the benchmarks: timing and where real data is."""

from __future__ import annotations

import json
import os
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
