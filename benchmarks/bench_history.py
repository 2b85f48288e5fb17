"""Cost per round as the history grows: rounds per second over a run's first 1,000, 10,000 and 50,000 rounds, and
the cost of each block of 500 rounds over its first 10,000 (one timed run per learner).

PairRank refits its RankNet every round. At the book's defaults the refit covers a window of the last 1,000
pairs (older pairs live in a fixed-size quadratic summary), so its cost grows until the window is full (about
round 1,100 on MQ2008 with navigational users, 0.89 pairs a round) and stays flat after. In the authors'
code's configuration (the PairRank chapter's `code`) it refits on the whole history, as the authors' code
does, so a round costs in proportion to the pairs seen so far and the rate falls with the horizon; its
50,000-round run (hours) is not measured, the block curve shows the growth. PDGD keeps no history. olRankNet
and olLambdaRank train a fixed number of mini-batches per round on a bounded replay: flat as well. Writes the
curves and, with matplotlib, ``history_cost.png``.

``pairrank_mslr`` does the same for PairRank_C at the book's defaults on synth-mslr (the quick book's PairRank
data set) to 50,000 rounds, and ``window_cost`` times what grows: one damped Newton refit of the exact window
(:meth:`.OnlinePairwiseLogistic.fit`) against the number of pairs in it. The refit's Hessian is the sum over
the window's pairs of p(1 - p) z z^T at the current estimate, whose weights change with every step, so it
cannot be updated pair by pair without changing the numbers; once the window is full the cost is flat.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from common import data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.rankers.pairwise import OnlinePairwiseLogistic
from olr_core.reproductions.pairrank.experiments import CODE_PAIRRANK
from olr_core.reproductions.sources import plain
from olr_core.threads import blas_threads
from olr_core.users import make_user

CURVE_ROUNDS, BLOCK = 10_000, 500
HORIZONS = (1_000, 10_000, 50_000)
# (label, algorithm, parameters, the length of its timed run)
LEARNERS = [
    ("pairrank_c", "pairrank_c", {}, 50_000),
    ("pairrank_c (code)", "pairrank_c", plain(CODE_PAIRRANK), 10_000),
    ("pdgd", "pdgd", {}, 50_000),
    ("olranknet", "olranknet", {}, 10_000),
    ("ollambdarank", "ollambdarank", {}, 10_000),
]


def timed_run(algorithm: str, params: dict, fold, rounds: int) -> list[float]:
    """CPU seconds from the start of a ``rounds``-round run (evaluation every 10 rounds) to the end of each block
    of ``BLOCK`` rounds (one BLAS thread, so on an idle machine the wall time; on a shared one, not the others'
    load)."""
    marks = []

    def progress(t):
        if t % BLOCK == 0:
            marks.append(time.process_time() - start)

    start = time.process_time()
    run_online(make_ranker(algorithm, **params), fold, make_user("navigational", fold.max_grade), rounds, 0, 10,
               progress=progress)
    return marks


def curve_and_rates(marks: list[float]) -> tuple[list[float], dict]:
    """ms per round of each block of the first ``CURVE_ROUNDS`` rounds, and the rounds per second of the run's
    first 1,000, 10,000 and 50,000 rounds (the same rounds as a run of that length, but its last evaluation)."""
    curve = [round(1000 * (b - a) / BLOCK, 3) for a, b in zip([0.0, *marks], marks)][: CURVE_ROUNDS // BLOCK]
    rates = {f"{h:,} rounds": round(h / marks[h // BLOCK - 1]) for h in HORIZONS if h // BLOCK <= len(marks)}
    return curve, rates


MSLR_LEARNERS = [("pairrank_c", "pairrank_c", {}, 50_000)]
WINDOW_ROWS = (100, 250, 500, 1000)


def pairrank_mslr() -> dict:
    """Rounds per second of PairRank_C (book defaults) on synth-mslr at 1,000, 10,000 and 50,000 rounds."""
    fold = load_fold("synth-mslr")
    rates, curves = {}, {}
    for label, algorithm, params, rounds in MSLR_LEARNERS:
        run_online(make_ranker(algorithm, **params), fold, make_user("navigational", fold.max_grade), 50, 0)
        curves[label], rates[label] = curve_and_rates(timed_run(algorithm, params, fold, rounds))
    return {"dataset": "synth-mslr", "block": BLOCK, "rounds_per_second": rates, "ms_per_round": curves}


def window_cost(n_features: int = 136, repeats: int = 200) -> dict:
    """ms per refit (two Newton steps, PairRank's default) with the exact window holding each of WINDOW_ROWS
    pairs (random pair differences of synth-mslr's width), median of ``repeats``."""
    rng = np.random.default_rng(0)
    out = {}
    for rows in WINDOW_ROWS:
        model = OnlinePairwiseLogistic(n_features, window=1000)
        model.add(rng.standard_normal((rows, n_features)) * 0.1)
        times = []
        with blas_threads():                                   # the runs' thread policy (one BLAS thread)
            for _ in range(repeats):
                model.theta = np.zeros(n_features)
                started = time.process_time()
                model.fit()
                times.append(time.process_time() - started)
        out[f"{rows} pairs"] = round(1000 * float(np.median(times)), 3)
    return {"features": n_features, "ms_per_refit": out}


def run() -> dict:
    try:
        fold = load_fold("mq2008", 1, data_dir())
        name = "mq2008"
    except DataNotFoundError:
        fold, name = load_fold("synth-mq"), "synth-mq"
    for _, algorithm, params, _ in LEARNERS:
        run_online(make_ranker(algorithm, **params), fold, make_user("navigational", fold.max_grade), 50, 0)
    curves, rates = {}, {}
    for label, algorithm, params, rounds in LEARNERS:
        curves[label], rates[label] = curve_and_rates(timed_run(algorithm, params, fold, rounds))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        for label, curve in curves.items():
            ax.plot([BLOCK * (i + 1) for i in range(len(curve))], curve, marker="o", label=label)
        ax.set_xlabel("round")
        ax.set_ylabel(f"ms per round (mean of {BLOCK})")
        ax.set_yscale("log")
        ax.set_title(f"cost per round as the history grows ({name})")
        ax.legend()
        fig.savefig(Path(__file__).with_name("history_cost.png"), bbox_inches="tight")
    except ImportError:
        pass
    return {"dataset": name, "block": BLOCK, "rounds_per_second": rates, "ms_per_round": curves}


if __name__ == "__main__":
    import json

    parts = {"pairrank_mslr": pairrank_mslr, "window_cost": window_cost}
    print(json.dumps({name: parts[name]() for name in sys.argv[1:]} if sys.argv[1:] else run(), indent=2))
