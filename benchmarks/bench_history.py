"""Cost per round as the history grows: PairRank_C and PDGD over a long run, timed in blocks.

PairRank refits its RankNet every round; its cost must stay flat once the fitting window
is full (older pairs live in a fixed-size quadratic summary). olRankNet and olLambdaRank train
a fixed number of mini-batches per round on a bounded replay: flat as well. Writes the curve (ms per
round for each block of rounds) and, with matplotlib, ``history_cost.png``.
"""

from __future__ import annotations

import time
from pathlib import Path

from common import data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user

ROUNDS, BLOCK = 10_000, 500


def cost_curve(algorithm: str, fold) -> list[float]:
    marks = []

    def progress(t):
        if t % BLOCK == 0:
            marks.append(time.perf_counter())

    start = time.perf_counter()
    run_online(make_ranker(algorithm), fold, make_user("navigational", fold.max_grade), ROUNDS, 0, 10,
               progress=progress)
    times = [start, *marks]
    return [round(1000 * (b - a) / BLOCK, 3) for a, b in zip(times, times[1:])]


def run() -> dict:
    try:
        fold = load_fold("mq2008", 1, data_dir())
        name = "mq2008"
    except DataNotFoundError:
        fold, name = load_fold("synth-mq"), "synth-mq"
    curves = {algo: cost_curve(algo, fold) for algo in ("pairrank_c", "pdgd", "olranknet", "ollambdarank")}
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        for algo, curve in curves.items():
            ax.plot([BLOCK * (i + 1) for i in range(len(curve))], curve, marker="o", label=algo)
        ax.set_xlabel("round")
        ax.set_ylabel(f"ms per round (mean of {BLOCK})")
        ax.set_title(f"cost per round as the history grows ({name})")
        ax.legend()
        fig.savefig(Path(__file__).with_name("history_cost.png"), bbox_inches="tight")
    except ImportError:
        pass
    return {"dataset": name, "block": BLOCK, "ms_per_round": curves}


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
