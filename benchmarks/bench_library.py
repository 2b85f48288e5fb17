"""The growing-library rankers from the command line, and GPER's cost per query as the library grows.

1. Each of the eight rankers plays the whole Cora stream (when the data directory has it;
   else the synthetic library) in a fresh ``olr run ... --json --no-store`` process, one core;
   seconds are the run's own (the loop, without interpreter start-up).
2. NoRegret KLRank on the fast-growing synthetic library (about 20,000 items by the end):
   microseconds per query and per candidate in successive windows of the stream. A cost per
   candidate that stays flat while the library grows a hundredfold shows that an update touches
   only the candidates' parameters (the projection is O(1)).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from common import data_dir, olr_run_seconds

from olr_core.data import load_library
from olr_core.library_loop import run_library
from olr_core.rankers import LIBRARY_ALGORITHMS, make_ranker


def _stream_name() -> tuple[str, tuple]:
    root = data_dir()
    if root and (Path(root) / "cora_mccallum").is_dir():
        return "cora", ("--data-dir", root)
    return "synth-library", ()


def whole_stream() -> dict:
    name, extra = _stream_name()
    queries = load_library(name, extra[1] if extra else None).n_queries
    seconds = {a: round(olr_run_seconds(a, name, queries, "choice", extra), 2) for a in LIBRARY_ALGORITHMS}
    return {"stream": name, "queries": queries, "seconds": seconds, "total_seconds": round(sum(seconds.values()), 1)}


class _Timed:
    """A ranker wrapper that records the wall time of each rank + learn."""

    def __init__(self, ranker):
        self.ranker, self.feedback_kind, self.times = ranker, ranker.feedback_kind, []

    def start(self, stream, rng):
        self.ranker.start(stream, rng)

    def rank(self, query):
        self.began = time.perf_counter()
        return self.ranker.rank(query)

    def learn(self, query, display, feedback):
        out = self.ranker.learn(query, display, feedback)
        self.times.append(time.perf_counter() - self.began)
        return out

    def score(self, query):
        return self.ranker.score(query)


def cost_versus_library_size(windows: int = 8) -> list[dict]:
    stream = load_library("synth-library-fast")
    timed = _Timed(make_ranker("klrank_gper"))
    run_library(timed, stream, seed=0)
    times = np.array(timed.times)
    bounds = np.linspace(0, len(times), windows + 1).astype(int)
    rows = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        rows.append({"queries": f"{lo}-{hi}", "library_size": int(stream.library_size[hi - 1]),
                     "mean_candidates": round(float(stream.n_candidates[lo:hi].mean()), 1),
                     "us_per_query": round(1e6 * float(times[lo:hi].mean()), 1),
                     "us_per_candidate": round(1e6 * float((times[lo:hi] / stream.n_candidates[lo:hi]).mean()), 3)})
    return rows


def run() -> dict:
    return {"whole_stream": whole_stream(), "gper_cost_by_library_size": cost_versus_library_size()}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
