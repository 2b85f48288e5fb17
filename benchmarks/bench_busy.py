"""Rounds per second from the command line while another process keeps one core busy.

A user runs ``olr run`` on a laptop where something else is working; this is measured
as such: each case is a fresh ``olr run ... --json --no-store`` process, timed once on an
idle machine and once beside a busy-looping process. The rounds per second come from the
run's own ``seconds`` (the loop, without interpreter start-up). One more case lifts the
thread policy (``OLR_BLAS_THREADS`` = all cores) to show what it protects against.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from common import data_dir, olr_run_seconds

CASES = [("pairrank_c", 5_000, {}), ("pdgd", 10_000, {}), ("dbgd", 50_000, {}),
         ("pairrank_c", 5_000, {"OLR_BLAS_THREADS": str(os.cpu_count() or 2)})]
BUSY_LOOP = "import time\nend = time.time() + 3600\nwhile time.time() < end:\n    pass\n"


def _dataset() -> tuple[str, list[str]]:
    root = data_dir()
    if root and (Path(root) / "mq2008").is_dir():
        return "mq2008", ["--data-dir", root]
    return "synth-mq", []


def _olr_run(algorithm: str, rounds: int, env_extra: dict) -> float:
    dataset, extra = _dataset()
    return rounds / olr_run_seconds(algorithm, dataset, rounds, extra=tuple(extra), env_extra=env_extra)


def run(cases=CASES) -> dict:
    dataset, _ = _dataset()
    results = {"dataset": dataset, "cores": os.cpu_count()}
    for algorithm, rounds, env_extra in cases:
        _olr_run(algorithm, 200, env_extra)                       # warm the numba cache
        label = algorithm + "".join(f" {k}={v}" for k, v in env_extra.items())
        idle = _olr_run(algorithm, rounds, env_extra)
        busy_process = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
        try:
            busy = _olr_run(algorithm, rounds, env_extra)
        finally:
            busy_process.kill()
            busy_process.wait()
        results[label] = {"rounds": rounds, "idle_rounds_per_second": round(idle),
                          "one_core_busy_rounds_per_second": round(busy)}
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
