"""Offline evaluation batched (#41): the book's run kinds that evaluate on synth-mslr, this tree against a baseline
checkout, interleaved.

Each case is one in-process run at the book's settings (evaluation on the 25,020-document test split every 10
rounds; the top-k learner every rounds / 50, as its chapter) after a warm-up run, in a fresh Python process with
one BLAS thread, timed by the process's CPU seconds; the baseline (``OLR_BASELINE_DIR``: a checkout of the commit
to compare with) and this tree alternate, three times each, and the medians are reported. Every run's arrays are
hashed: ``identical`` says whether the two trees' runs agree to the last bit. ``certified`` / ``fallbacks``
count this tree's batched evaluations whose NDCG was certified (settled, since #51) from the matrix product, and
those recomputed by the GEMV (near ties, exact ties such as the zero model of round 0).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CODE = {"multileave": "probabilistic", "credit_samples": 10_000, "learning_rate": 0.01, "decay": 1.0,
        "dsp_renormalize": True}
# label: (algorithm, parameters, click model, stop rule, rounds, eval_every)
CASES = {"mgd_dsp_code": ("mgd_dsp", CODE, "navigational", "every_position", 2000, 10),
         "mgd_dsp_team_draft": ("mgd_dsp", {}, "navigational", "after_click", 2000, 10),
         "pairrank_c": ("pairrank_c", {}, "navigational", "after_click", 1000, 10),
         "epsilon_greedy": ("epsilon_greedy", {}, "navigational", "after_click", 1000, 10),
         "topk_squared": ("topk_squared", {}, "top1", "after_click", 10_000, 200)}
DATASET = "synth-mslr"
REPEATS = 3

RUN = """
import hashlib, json, sys, time
import olr_core.loop as loop
from olr_core.data import load_fold
from olr_core.rankers import make_ranker
from olr_core.users import make_user
name, params, click_model, stop_rule, rounds, eval_every, dataset = json.loads(sys.argv[1])
counts = {"certified": 0, "fallbacks": 0}
certify = getattr(loop.OfflineEvaluator, "certified", None)
settle = getattr(loop.OfflineEvaluator, "settled", None)
if certify is not None:
    def counting(self, *args):
        value = certify(self, *args)
        counts["certified" if value is not None else "fallbacks"] += 1
        return value
    loop.OfflineEvaluator.certified = counting
elif settle is not None:
    def counting(self, *args):
        values = settle(self, *args)
        counts["certified"] += int((values != -1.0).sum())
        counts["fallbacks"] += int((values == -1.0).sum())
        return values
    loop.OfflineEvaluator.settled = counting
fold = load_fold(dataset, 1)
options = {"stop_rule": stop_rule} if click_model == "navigational" else {}
user = make_user(click_model, fold.max_grade, **options)
loop.run_online(make_ranker(name, **params), fold, user, 30, seed=1, eval_every=10)
counts.update(certified=0, fallbacks=0)
started = time.process_time()
trace = loop.run_online(make_ranker(name, **params), fold, user, rounds, seed=0, eval_every=eval_every)
seconds = time.process_time() - started
digest = hashlib.sha256()
for key, value in sorted(trace.arrays().items()):
    digest.update(key.encode()); digest.update(value.tobytes())
print(json.dumps({"seconds": seconds, "digest": digest.hexdigest(), "evaluations": len(trace.eval_rounds),
                  **(counts if certify is not None or settle is not None else {})}))
"""


def _run(tree: str, case: tuple) -> dict:
    env = {**os.environ, "PYTHONPATH": tree, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", RUN, json.dumps([*case, DATASET])], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _compare(case: tuple, baseline: str | None) -> dict:
    here = str(Path(__file__).resolve().parents[1])
    trees = {"after": here, **({"before": baseline} if baseline else {})}
    runs: dict = {name: [] for name in trees}
    for _ in range(REPEATS):                                         # interleaved
        for name, tree in trees.items():
            runs[name].append(_run(tree, case))
    last = runs["after"][-1]
    row: dict = {"rounds": case[4], "evaluations": last["evaluations"], "certified": last.get("certified"),
                 "fallbacks": last.get("fallbacks")}
    for name, timings in runs.items():
        row[f"{name}_cpu_seconds"] = round(statistics.median(t["seconds"] for t in timings), 3)
    if baseline:
        row["saved_cpu_seconds"] = round(row["before_cpu_seconds"] - row["after_cpu_seconds"], 3)
        row["speedup"] = round(row["before_cpu_seconds"] / row["after_cpu_seconds"], 2)
        row["identical"] = len({t["digest"] for timings in runs.values() for t in timings}) == 1
    return row


def run() -> dict:
    baseline = os.environ.get("OLR_BASELINE_DIR")
    results: dict = {"timing": f"CPU seconds of one run on {DATASET} at the book's settings (one BLAS thread), "
                               f"median of {REPEATS} interleaved",
                     "baseline": "OLR_BASELINE_DIR" if baseline else "none"}
    results.update({label: _compare(case, baseline) for label, case in CASES.items()})
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
