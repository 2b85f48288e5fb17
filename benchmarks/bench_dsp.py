"""The dueling family's costliest runs, this tree against a baseline checkout, interleaved.

Each case is one in-process run (after a warm-up that loads the numba cache) in a fresh Python process,
timed by the process's CPU seconds; the baseline (``OLR_BASELINE_DIR``: a checkout of the commit to
compare with) and this tree alternate, three times each, and the medians are reported (the machine is
shared, so single timings move by half). Every run's arrays are hashed: ``identical`` says whether the
two trees' runs agree to the last bit. Without a baseline only this tree is timed.

Cases: MGD-DSP as the authors' code ran it (probabilistic multileaving of 49 candidates, 10,000 sampled
credits, the DSP paper's code configuration) and as the text says (team draft of 9), on the MSLR-sized
synthetic preset and on MQ2008 when the data directory has it; MGD-DSP with probabilistic multileaving and exact
credit (the chapter's ablation; compiled rounds since #41); NSGD-DSP as the text says (compiled rounds since
#41; before, the Python protocol); one evaluation at the end, so the figures are the learners' own cost (a book
run also evaluates every 10 rounds, which no change here touches).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from common import data_dir

CODE = {"multileave": "probabilistic", "credit_samples": 10_000, "learning_rate": 0.01, "decay": 1.0,
        "dsp_renormalize": True}
CASES = {"mgd_dsp_code": ("mgd_dsp", CODE, "every_position"), "mgd_dsp_text": ("mgd_dsp", {}, "after_click"),
         "mgd_dsp_exact_credit": ("mgd_dsp", {"multileave": "probabilistic"}, "after_click"),
         "nsgd_dsp_text": ("nsgd_dsp", {}, "after_click")}
ROUNDS = {"synth-mslr": 1000, "mq2008": 3000}
REPEATS = 3

RUN = """
import hashlib, json, sys, time
from olr_core.data import load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user
name, params, stop_rule, dataset, rounds, root = json.loads(sys.argv[1])
fold = load_fold(dataset, 1, root)
user = make_user("navigational", fold.max_grade, stop_rule=stop_rule)
run_online(make_ranker(name, **params), fold, user, 30, seed=1, eval_every=30)
started = time.process_time()
trace = run_online(make_ranker(name, **params), fold, user, rounds, seed=0, eval_every=rounds)
seconds = time.process_time() - started
digest = hashlib.sha256()
for key, value in sorted(trace.arrays().items()):
    digest.update(key.encode()); digest.update(value.tobytes())
print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))
"""


def _run(tree: str, case: tuple, dataset: str, rounds: int, root: str | None) -> dict:
    env = {**os.environ, "PYTHONPATH": tree, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", RUN, json.dumps([*case, dataset, rounds, root])], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _compare(case: tuple, dataset: str, rounds: int, root: str | None, baseline: str | None) -> dict:
    here = str(Path(__file__).resolve().parents[1])
    trees = {"after": here, **({"before": baseline} if baseline else {})}
    runs: dict = {name: [] for name in trees}
    for _ in range(REPEATS):                                         # interleaved
        for name, tree in trees.items():
            runs[name].append(_run(tree, case, dataset, rounds, root))
    row: dict = {"rounds": rounds}
    for name, timings in runs.items():
        row[f"{name}_cpu_seconds"] = round(statistics.median(t["seconds"] for t in timings), 3)
    if baseline:
        row["speedup"] = round(row["before_cpu_seconds"] / row["after_cpu_seconds"], 2)
        row["identical"] = len({t["digest"] for timings in runs.values() for t in timings}) == 1
    return row


def run() -> dict:
    baseline = os.environ.get("OLR_BASELINE_DIR")
    root = data_dir()
    datasets = [d for d in ROUNDS if d != "mq2008" or (root and (Path(root) / "mq2008").is_dir())]
    results: dict = {"timing": f"CPU seconds of one run, median of {REPEATS} interleaved; evaluation once at the end",
                     "baseline": "OLR_BASELINE_DIR" if baseline else "none"}
    for dataset in datasets:
        results[dataset] = {label: _compare(case, dataset, ROUNDS[dataset], root, baseline)
                            for label, case in CASES.items()}
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
