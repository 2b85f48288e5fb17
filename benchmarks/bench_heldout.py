"""Held-out evaluation at the limit (#51): MQ2008 Fold 1's test split (156 queries, 2,874 documents, 46 features),
NDCG@10, this tree against a baseline checkout.

``per_evaluation``: the CPU microseconds of one evaluation of a learned DBGD model (2,000 rounds), in a warm process
with one BLAS thread, each path timed in 9 batches of calls, three times over interleaved, median (and fastest)
reported: today's path (kept in this tree as the reference: the ranker's GEMV, the finiteness sums, the keys drawn,
``segment_ndcg`` per query and numpy's mean), the one compiled pass over the GEMV's scores
(``OfflineEvaluator.of_stream``) and the batched product of 64 evaluations settled in one compiled call
(``BatchedEvaluation``, per evaluation). ``identical``: the three give the same bits and stream state.

``cli``: DBGD and PDGD, 10,000 rounds, navigational users, ``olr run ... --no-store --json`` in a fresh process,
the run's own ``seconds``, evaluating every 10 rounds and every 10,000 (at rounds 0 and 10,000), best of 3, this
tree and the baseline (``OLR_BASELINE_DIR``) interleaved; ``ratio`` is every-10 over every-10,000, and
``identical`` says whether every run of a case printed the same numbers (final offline NDCG, online sums).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import OLR, data_dir

REPEATS = 3
LEARNERS = ("dbgd", "pdgd")
EVERY = (10, 10_000)

PER_EVALUATION = """
import json, time
import numpy as np
from olr_core.data import load_fold
from olr_core.loop import BatchedEvaluation, OfflineEvaluator, _finite_weights, run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user
fold = load_fold("mq2008", 1)
test = fold.test
evaluator = OfflineEvaluator(test, 10)
evaluator.load_kernel()
ranker = make_ranker("dbgd")
run_online(ranker, fold, make_user("navigational", fold.max_grade), 2000, seed=0, eval_every=10**6)
rng = np.random.default_rng(0)
def today():
    scores = ranker.score(test)
    np.isfinite(float(np.add.reduce(scores, axis=None)) + float(np.add.reduce(ranker.weights())))
    return evaluator(scores, rng)
def one_pass():
    value = evaluator.of_stream(ranker.score(test), rng)
    _finite_weights(ranker)
    return value
offline = [0.0] * 64
def batched():
    batch = BatchedEvaluation(ranker, evaluator, test, rng, offline, 64)
    for e in range(64):
        batch.take(e, e, ranker.theta)
    batch.flush()
def cpu_us(fn, calls, per=1):
    out = []
    for _ in range(9):
        started = time.process_time()
        for _ in range(calls):
            fn()
        out.append((time.process_time() - started) / calls / per * 1e6)
    return out
timings = {"today": [], "one_pass": [], "batched": []}
for _ in range(3):
    timings["today"] += cpu_us(today, 500)
    timings["one_pass"] += cpu_us(one_pass, 500)
    timings["batched"] += cpu_us(batched, 10, 64)
a, b, c = (np.random.default_rng(7) for _ in range(3))
scores = ranker.score(test)
values = [evaluator(scores, a), evaluator.of_stream(scores, b)]
offline[:] = [0.0] * 64
batch = BatchedEvaluation(ranker, evaluator, test, c, offline, 64)
batch.take(0, 0, ranker.theta)
batch.flush()
values.append(offline[0])
same = len({np.float64(v).tobytes() for v in values}) == 1 and len({g.random() for g in (a, b, c)}) == 1
print(json.dumps({"timings": timings, "identical": same}))
"""


def _python(tree: str, args: list) -> str:
    """The output of ``python ARGS`` run in ``tree`` with that tree's package, one BLAS thread."""
    env = {**os.environ, "PYTHONPATH": tree, "OPENBLAS_NUM_THREADS": "1"}
    if data_dir():
        env["OLR_DATA_DIR"] = data_dir()
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=True,
                          cwd=tree).stdout


def per_evaluation() -> dict:
    """CPU microseconds of one evaluation by each path (module docstring)."""
    here = str(Path(__file__).resolve().parents[1])
    out = json.loads(_python(here, ["-c", PER_EVALUATION]).strip().splitlines()[-1])
    row: dict = {"identical": out["identical"]}
    for name, values in out["timings"].items():
        row[f"{name}_us"] = round(statistics.median(values), 1)
        row[f"{name}_fastest_us"] = round(min(values), 1)
    row["one_pass_speedup"] = round(row["today_us"] / row["one_pass_us"], 2)
    row["batched_speedup"] = round(row["today_us"] / row["batched_us"], 2)
    return row


def _cli(tree: str, learner: str, every: int) -> dict:
    command = [*OLR[1:], "run", "-a", learner, "-d", "mq2008", "-c", "navigational", "-T", "10000", "-s", "0",
               "--eval-every", str(every), "--no-store", "--json"]
    return json.loads(_python(tree, command))


def cli() -> dict:
    """Every-10 against every-10,000 from the CLI, this tree and the baseline interleaved (module docstring)."""
    here = str(Path(__file__).resolve().parents[1])
    baseline = os.environ.get("OLR_BASELINE_DIR")
    trees = {"after": here, **({"before": baseline} if baseline else {})}
    runs: dict = {}
    for learner in LEARNERS:                      # warm-up: numba's cache of each tree compiled and loaded once
        for tree in trees.values():
            _cli(tree, learner, 10)
    for _ in range(REPEATS):
        for learner in LEARNERS:
            for every in EVERY:
                for name, tree in trees.items():
                    runs.setdefault((learner, name, every), []).append(_cli(tree, learner, every))
    out: dict = {}
    for learner in LEARNERS:
        row: dict = {}
        for name in trees:
            best = {every: min(r["seconds"] for r in runs[(learner, name, every)]) for every in EVERY}
            row[f"{name}_every_10_s"], row[f"{name}_once_s"] = round(best[10], 4), round(best[10_000], 4)
            row[f"{name}_ratio"] = round(best[10] / best[10_000], 2)
        numbers = {json.dumps([r["final_offline_ndcg10"], r["discounted_online_ndcg10"], r["summed_online_ndcg10"]])
                   for name in trees for r in runs[(learner, name, 10)]}
        row["identical"] = len(numbers) == 1
        out[learner] = row
    return out


def run() -> dict:
    return {"timing": "per_evaluation: CPU us in a warm process, median of 27 batches (3 interleaved rounds); cli: "
                      "the run's own seconds, best of 3, trees interleaved",
            "baseline": "OLR_BASELINE_DIR" if os.environ.get("OLR_BASELINE_DIR") else "none",
            "per_evaluation": per_evaluation(), "cli": cli()}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
