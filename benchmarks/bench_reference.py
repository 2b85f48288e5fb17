"""Side by side with the authors' research code, on one protocol, on the same machine load.

The reference code (HCDM/OnlineLearningToRank, which holds the DSP, PairRank and neural papers' code) is
never copied into this repository: point this benchmark at a checkout of it, and at a Python that can run
it (it was written for numpy 1.x: ``float()`` of a 1x1 array, which numpy 2 refuses; and it imports
``sympy`` and ``networkx``):

    python -m venv ref && ref/bin/pip install "numpy<2" scipy sympy networkx
    python benchmarks/bench_reference.py --reference-dir /path/to/OnlineLearningToRank \
        --reference-python ref/bin/python [--rounds 1000] [--only PDGD PairRank_C]

or set ``OLR_REFERENCE_DIR`` and ``OLR_REFERENCE_PYTHON`` (then ``python benchmarks/run_all.py reference``).
A pair whose reference class cannot run is reported as skipped with the error. The reference code also
uses numpy aliases that numpy 1.24 removed (``np.complex``); they are restored as the builtins numpy's
deprecation note names.

The protocol is the reference's own training loop (``utils/singlesimulation.py`` without held-out
evaluation) on both sides: MQ2008 Fold 1's training queries (``synth-mq`` without the real data), a query
drawn uniformly each round, the navigational cascade user (click 0.05 / 0.5 / 0.95, stop 0.2 / 0.5 / 0.9 per
grade), the top 10 shown, its NDCG@10 computed every round, and the learner's update. Ours is
:func:`olr_core.loop.run_online` with one offline evaluation at the start and one at the end (counted against
us). The reference runs in a child process of its interpreter, timed inside it (its start-up and imports are
not counted against it). Each pair runs after a warm-up (numba's compilation, the reference's imports), then
ours and theirs alternate three times so that both meet the same machine load; the median time of each is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.reproductions.pairrank.experiments import CODE_PAIRRANK
from olr_core.reproductions.sources import plain
from olr_core.users import make_user

CUTOFF = 10
PCLICK, PSTOP = np.array([0.05, 0.5, 0.95]), np.array([0.2, 0.5, 0.9])     # the reference's 3-grade navigational

# (label, setting, our algorithm and parameters, the reference's module, class and constructor arguments). Each
# learner runs at the book's defaults ("book": our defaults against the reference class the text describes) and at
# the authors' code's configuration ("code": the DSP chapter's `code` choices for DBGD and MGD, probabilistic
# multileaving with 10,000 credit samples and MGD's 49 candidates; the PairRank chapter's for PairRank_C, the
# mean-form objective on shuffled pairs, the transitive closure, a refit on the whole history). PDGD's two
# settings differ only in step size, which does not change the cost of a round, so it runs once. The reference
# has no window or adjacent pairing, so PairRank_C's book setting meets its closest form (independent pairs,
# no closure). Step sizes match where the two codes share them.
_DECAY = 0.9999977
_PROBABILISTIC = {"multileave": "probabilistic", "credit_samples": 10_000, "learning_rate": 0.01}
_THEIR_PROBABILISTIC = {"PM_n_samples": 10_000, "PM_tau": 3.0, "learning_rate": 0.01}
_THEIR_PAIRRANK = {"alpha": 0.1, "_lambda": 0.1, "rank": "certain", "update": "gd", "learning_rate": 0.1,
                   "learning_rate_decay": 1.0, "ind": True}
PAIRS = [
    ("TD-DBGD", "book", "dbgd", {},
     "algorithms.DBGD.tddbgd", "TD_DBGD", {"learning_rate": 0.01, "learning_rate_decay": _DECAY}),
    ("P-DBGD", "code", "dbgd", {**_PROBABILISTIC, "decay": 1.0},
     "algorithms.DBGD.pdbgd", "P_DBGD", {**_THEIR_PROBABILISTIC, "learning_rate_decay": 1.0}),
    ("TD-MGD", "book", "mgd", {"n_candidates": 9},
     "algorithms.DBGD.tdmgd", "TD_MGD", {"n_candidates": 9, "learning_rate": 0.01, "learning_rate_decay": _DECAY}),
    ("P-MGD", "code", "mgd", {**_PROBABILISTIC, "n_candidates": 49, "decay": 1.0},
     "algorithms.DBGD.pmgd", "P_MGD", {**_THEIR_PROBABILISTIC, "n_candidates": 49, "learning_rate_decay": 1.0}),
    ("PDGD", "book and code", "pdgd", {"learning_rate": 0.1},
     "algorithms.PDGD.pdgd", "PDGD", {"learning_rate": 0.1, "learning_rate_decay": _DECAY}),
    ("PairRank_C", "book", "pairrank_c", {"alpha": 0.1},
     "algorithms.PairRank.PairRank", "PairRank", {**_THEIR_PAIRRANK, "refine": False}),
    ("PairRank_C", "code", "pairrank_c", {"alpha": 0.1, **plain(CODE_PAIRRANK)},
     "algorithms.PairRank.PairRank", "PairRank", {**_THEIR_PAIRRANK, "refine": True}),
]


def reference_dir(given: str | None) -> Path | None:
    """The checkout named by ``--reference-dir`` or ``$OLR_REFERENCE_DIR``; None if neither is set."""
    path = given or os.environ.get("OLR_REFERENCE_DIR")
    if not path:
        return None
    root = Path(path).expanduser().resolve()
    if not (root / "algorithms" / "basiconlineranker.py").is_file():
        raise SystemExit(f"{root}: not a checkout of HCDM/OnlineLearningToRank (no algorithms/basiconlineranker.py)")
    return root


def _load_fold():
    try:
        return load_fold("mq2008", 1, data_dir())
    except DataNotFoundError:
        return load_fold("synth-mq")


def their_run(python: str, root: Path, data: Path, pair, rounds: int, seed: int) -> float:
    """Seconds of ``rounds`` rounds of the reference ranker in the reference's own loop (reference_loop.py)."""
    _, _, _, _, module, name, params = pair
    command = [python, str(Path(__file__).with_name("reference_loop.py")), str(root), str(data), module, name,
               json.dumps(params), str(rounds), str(seed)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["no output"])[-1])
    return float(done.stdout.split()[-1])


def our_run(algorithm: str, params: dict, fold, rounds: int, seed: int) -> float:
    """Seconds of ``rounds`` rounds of our ranker in :func:`run_online` (two offline evaluations included)."""
    user = make_user("navigational", fold.max_grade)
    started = time.perf_counter()
    run_online(make_ranker(algorithm, **params), fold, user, rounds, seed, eval_every=rounds)
    return time.perf_counter() - started


def side_by_side(python: str, root: Path, data: Path, pair, fold, rounds: int, repeats: int = 3) -> dict:
    _, setting, ours, our_params, module, name, _ = pair
    try:
        their_run(python, root, data, pair, 20, seed=0)                 # warm-up, and can it run at all?
    except RuntimeError as err:
        return {"skipped": f"{module}.{name} does not run under {python}: {err}"}
    our_run(ours, our_params, fold, 50, seed=0)                          # warm-up: numba compilation
    our_times, their_times = [], []
    for repeat in range(repeats):                                       # interleaved: the same machine load
        our_times.append(our_run(ours, our_params, fold, rounds, seed=repeat))
        their_times.append(their_run(python, root, data, pair, rounds, seed=repeat))
    ours_rate, theirs_rate = rounds / np.median(our_times), rounds / np.median(their_times)
    return {"setting": setting, "ours": ours, "params": our_params, "reference": f"{module}.{name}", "rounds": rounds,
            "ours_rounds_per_second": round(ours_rate), "reference_rounds_per_second": round(theirs_rate, 1),
            "speed_up": round(ours_rate / theirs_rate, 1)}


def run(reference: str | None = None, python: str | None = None, rounds: int = 1000, pairs=PAIRS) -> dict:
    """{pair label: rates and speed-up}, or why the comparison was skipped."""
    root = reference_dir(reference)
    if root is None:
        return {"skipped": "no reference checkout named (--reference-dir or OLR_REFERENCE_DIR)"}
    python = python or os.environ.get("OLR_REFERENCE_PYTHON") or sys.executable
    fold = _load_fold()
    results = {"dataset": fold.train.name or fold.name, "rounds": rounds, "reference_python": python,
               "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "train.npz"
        np.savez(data, features=fold.train.features, labels=fold.train.labels, offsets=fold.train.offsets)
        for pair in pairs:
            results[f"{pair[0]} ({pair[1]})"] = side_by_side(python, root, data, pair, fold, rounds)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference-dir", help="a checkout of HCDM/OnlineLearningToRank")
    parser.add_argument("--reference-python", help="a Python that runs it (numpy 1.x, scipy, sympy, networkx)")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--only", nargs="*", help="learners (default: all): " + ", ".join({p[0]: 0 for p in PAIRS}))
    args = parser.parse_args()
    chosen = [p for p in PAIRS if not args.only or p[0] in args.only]
    print(json.dumps(run(args.reference_dir, args.reference_python, args.rounds, chosen), indent=2))
