"""The neural rankers (olRankNet, olLambdaRank, the GT skyline, neural PDGD / DBGD) from the command line.

Each case is a fresh ``olr run -a NAME ... --json --no-store`` process (navigational users,
offline NDCG@10 every 10 rounds as in the chapter), timed by the run's own seconds, on an
idle machine and beside a process that keeps one core busy. Targets (issue #11): olRankNet
at width 100 >= 300 rounds/s on MQ2008 and >= 50 on the MSLR-sized preset; neural PDGD and
DBGD >= 2,000 on MQ2008. The cost per round over 10,000 rounds is in the history suite.

With ``OLR_BASELINE_DIR`` (a checkout of an earlier commit) ``before_after`` also times the quick book's
model-based learners at its own settings (1,000 rounds, navigational users, NDCG@10 every 10 rounds: the
neural ones on MQ2008, PairRank on synth-mslr) in this tree and the baseline, interleaved, each run in a
fresh process by its CPU seconds (median of 3), and says whether the two trees' runs agree to the last bit
(every array of the trace and the final weights hashed).
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import data_dir, idle_and_busy, olr_run_seconds

CASES = {"mq2008": {"olranknet": 3000, "ollambdarank": 3000, "ollambdarank_gt": 3000, "neural_pdgd": 10_000,
                    "neural_dbgd": 10_000},
         "synth-mslr": {"olranknet": 1000, "neural_pdgd": 3000}}
FALLBACK = "synth-mq-5g"          # MQ2008-sized, when the data directory has no MQ2008


BOOK = {"alpha": 0.1, "l2": 0.01, "learning_rate": 0.01}         # the neural chapter's untuned defaults
BOOK_CASES = {"olranknet": ("olranknet", "mq2008", BOOK), "ollambdarank": ("ollambdarank", "mq2008", BOOK),
              "ollambdarank_gt": ("ollambdarank_gt", "mq2008", {"learning_rate": 0.01}),
              "pairrank_c": ("pairrank_c", "synth-mslr", {"alpha": 0.1, "l2": 0.1}),
              "pairrank_r": ("pairrank_r", "synth-mslr", {"alpha": 0.1, "l2": 0.1})}
BOOK_ROUNDS, REPEATS = 1000, 3
BEFORE_AFTER_TIMING = (f"CPU seconds of one {BOOK_ROUNDS:,}-round run at the quick book's settings, this tree "
                       f"against OLR_BASELINE_DIR, median of {REPEATS} interleaved")
RUN = """
import hashlib, json, sys, time
from olr_core.data import load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user
name, dataset, params, rounds, root = json.loads(sys.argv[1])
fold = load_fold(dataset, 1, root)
user = make_user("navigational", fold.max_grade)
run_online(make_ranker(name, **params), fold, user, 30, seed=1, eval_every=10)
started = time.process_time()
ranker = make_ranker(name, **params)
trace = run_online(ranker, fold, user, rounds, seed=0, eval_every=10)
seconds = time.process_time() - started
digest = hashlib.sha256()
for key, value in sorted(trace.arrays().items()):
    digest.update(key.encode()); digest.update(value.tobytes())
digest.update(ranker.weights().tobytes())
print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))
"""


def _book_run(tree: str, case: tuple, root: str | None) -> dict:
    env = {**os.environ, "PYTHONPATH": tree, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", RUN, json.dumps([*case, BOOK_ROUNDS, root])], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def before_after(cases=BOOK_CASES) -> dict:
    """CPU seconds of each book case in this tree and in ``OLR_BASELINE_DIR``, interleaved, medians of 3."""
    baseline, root = os.environ.get("OLR_BASELINE_DIR"), data_dir()
    trees = {"after": str(Path(__file__).resolve().parents[1]), **({"before": baseline} if baseline else {})}
    results: dict = {}
    for label, case in cases.items():
        runs: dict = {name: [] for name in trees}
        for _ in range(REPEATS):
            for name, tree in trees.items():
                runs[name].append(_book_run(tree, case, root))
        row: dict = {"dataset": case[1]}
        row.update({f"{name}_cpu_seconds": round(statistics.median(r["seconds"] for r in rs), 3)
                    for name, rs in runs.items()})
        if baseline:
            row["speedup"] = round(row["before_cpu_seconds"] / row["after_cpu_seconds"], 2)
            row["identical"] = len({r["digest"] for rs in runs.values() for r in rs}) == 1
        results[label] = row
    return results


def _rate(algorithm: str, dataset: str, rounds: int, extra: tuple) -> float:
    return rounds / olr_run_seconds(algorithm, dataset, rounds, "navigational", extra)


def run() -> dict:
    root = data_dir()
    has_mq = bool(root) and (Path(root) / "mq2008").is_dir()
    results: dict = {"evaluation": "offline NDCG@10 every 10 rounds", "width": 100}
    for dataset, cases in CASES.items():
        name = dataset if dataset != "mq2008" or has_mq else FALLBACK
        extra = ("--data-dir", root) if name == "mq2008" else ()
        table = {}
        for algorithm, rounds in cases.items():
            _rate(algorithm, name, 100, extra)                            # warm the numba cache
            idle, busy = idle_and_busy(functools.partial(_rate, algorithm, name, rounds, extra))
            table[algorithm] = {"rounds": rounds, "idle_rounds_per_second": round(idle),
                                "one_core_busy_rounds_per_second": round(busy)}
        results[name] = table
    if os.environ.get("OLR_BASELINE_DIR"):
        results["before_after_timing"] = BEFORE_AFTER_TIMING
        results["before_after"] = before_after()
    return results


if __name__ == "__main__":
    print(json.dumps(before_after() if sys.argv[1:] == ["before_after"] else run(), indent=2))
