"""Shared helpers for the benchmarks: timing and where real data is."""

from __future__ import annotations

import os
import time
from pathlib import Path


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
