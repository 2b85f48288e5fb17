"""The growing-library rankers from the command line, and GPER's cost per query as the library grows.

1. Each of the eight rankers plays the whole Cora stream (when the data directory has it;
   else the synthetic library) in a fresh ``olr run ... --json --no-store`` process, one core;
   seconds are the run's own (the loop, without interpreter start-up).
2. NoRegret KLRank on the fast-growing synthetic library (about 20,000 items by the end):
   microseconds per query and per candidate in successive windows of the stream. A cost per
   candidate that stays flat while the library grows a hundredfold shows that an update touches
   only the candidates' parameters (the projection is O(1)).
3. ``library_runs`` (its own suite): every kind of growing-library run the quick book computes (the KLRank
   pages' algorithm, stream and length), this tree against ``OLR_BASELINE_DIR`` (a checkout of the commit to
   compare with), each run in a fresh process (after a warm-up run that loads the numba cache) timed by its
   CPU seconds with one BLAS thread, the two trees interleaved three times and the medians kept. Every run's
   arrays are hashed: ``identical`` says whether the trees' runs agree to the last bit. The estimated saving
   of each page is its number of runs of each kind times that kind's saving per run (a run the table page
   stored is not run again by the regret page). Without a baseline only this tree is timed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from common import compare_trees, data_dir, olr_run_seconds, page_cost, run_in_tree

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
    run_library(make_ranker("klrank_gper"), stream, 300, seed=1)       # warm-up: compiled kernels loaded
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


# -- 3. the quick book's library runs, this tree against a baseline ----------------------------------------------

REPEATS = 3

RUN = """
import hashlib, json, sys, time
from olr_core.data import load_library
from olr_core.library_loop import run_library
from olr_core.rankers import make_ranker
algorithm, dataset, rounds, root = json.loads(sys.argv[1])
stream = load_library(dataset, root)
run_library(make_ranker(algorithm), stream, 300, seed=1)
started = time.process_time()
trace = run_library(make_ranker(algorithm), stream, rounds, seed=0)
seconds = time.process_time() - started
digest = hashlib.sha256()
for key, value in sorted(trace.arrays().items()):
    digest.update(key.encode()); digest.update(value.tobytes())
print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))
"""


def quick_book_runs(root: str | None) -> dict[str, Counter]:
    """The (algorithm, stream, rounds) of every run each KLRank page computes at the quick profile, counted (the
    regret page's adversarial and growth runs as notebooks/klrank_regret.md lists them; those the table page
    already stored are not counted again)."""
    from olr_core.data import available
    from olr_core.reproductions.klrank.experiments import PROFILES, regret_specs, table2_grid

    table, regret = PROFILES["quick"]["table2"], PROFILES["quick"]["regret"]
    kind = lambda spec: (spec.algorithm, spec.dataset, int(spec.rounds))          # noqa: E731
    pages = {"klrank_table2": Counter(kind(s) for s in table2_grid(available(["synth-library"], ["cora"], root),
                                                                    table["seeds"], table["rounds"], root))}
    three = ("klrank_gper", "klrank_greedy", "random")
    regret_runs = [kind(s) for s in regret_specs(regret["seeds"], regret["rounds"])]
    regret_runs += [(a, "synth-library-adversarial", regret["adversarial_rounds"]) for a in three] * regret["seeds"]
    growth = ("synth-library-slow", "synth-library", "synth-library-fast")
    regret_runs += [(a, name, regret["growth_rounds"]) for name in growth for a in three] * regret["seeds"]
    pages["klrank_regret"] = Counter(k for k in regret_runs if k not in pages["klrank_table2"])
    return pages


def _time_run(tree: str, kind: tuple, root: str | None) -> dict:
    return run_in_tree(tree, RUN, [*kind, root])



def library_runs() -> dict:
    """CPU seconds per run of each library run kind of the quick book, before and after, and per page."""
    baseline = os.environ.get("OLR_BASELINE_DIR")
    root = data_dir()
    trees = {"after": str(Path(__file__).resolve().parents[1]), **({"before": baseline} if baseline else {})}
    pages = quick_book_runs(root)
    kinds = sorted({k for counts in pages.values() for k in counts}, key=lambda k: (k[1], k[0], k[2]))
    rows = {f"{a} {d} {n}": compare_trees(lambda tree, kind=(a, d, n): _time_run(tree, kind, root), trees, REPEATS)
            for a, d, n in kinds}
    results: dict = {"timing": f"CPU seconds of one run (seed 0, after a warm-up run) in a fresh process, one BLAS "
                               f"thread, median of {REPEATS} interleaved", "baseline": baseline or "none",
                     "runs": rows}
    for page, counts in pages.items():
        results[page] = page_cost(counts, rows, trees, lambda kind: "{} {} {}".format(*kind))
    results["total"] = {key: round(sum(results[page][key] for page in pages), 1) for key in results[next(iter(pages))]}
    if baseline:
        results["identical"] = all(row["identical"] for row in rows.values())
    return results



if __name__ == "__main__":
    print(json.dumps(library_runs() if sys.argv[1:] == ["library_runs"] else run(), indent=2))
