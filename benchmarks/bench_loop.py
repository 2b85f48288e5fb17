"""Rounds per second of the online loop, per algorithm and data set, on one core.

Protocol of the papers: offline evaluation on the test split every 10 rounds, navigational
user. Compilation (numba) is excluded by a short warm-up run; the best of three timings
is reported.
"""

from __future__ import annotations

import functools
import os

from common import best_of, data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user

# (algorithm, rounds on MQ2008-sized data, rounds on the MSLR-sized preset); "name:key=value" sets a parameter
CASES = [("random", 10_000, 2_000), ("dbgd", 10_000, 2_000), ("dbgd_dsp", 10_000, 2_000), ("mgd", 10_000, 1_000),
         ("mgd_dsp", 10_000, 1_000), ("mgd:multileave=probabilistic", 3_000, 500),
         ("mgd_dsp:multileave=probabilistic", 3_000, 500), ("nsgd", 5_000, 1_000), ("nsgd_dsp", 5_000, 1_000),
         ("pdgd", 10_000, 2_000), ("pairrank_c", 3_000, 500), ("pairrank_r", 3_000, 500),
         ("epsilon_greedy", 3_000, 500), ("sgd_ranknet", 10_000, 2_000)]
DATASETS = ("mq2008", "synth-mq", "synth-mslr")


def _ranker(case: str):
    name, _, setting = case.partition(":")
    params = dict([setting.split("=")]) if setting else {}
    return make_ranker(name, **params)


def _one(case: str, fold, rounds: int) -> dict:
    user = make_user("navigational", fold.max_grade)
    run_online(_ranker(case), fold, user, 50, seed=0)          # warm-up (compilation)
    seconds = best_of(functools.partial(run_online, _ranker(case), fold, user, rounds, 0, 10), repeats=3)
    return {"rounds": rounds, "seconds": round(seconds, 3), "rounds_per_second": round(rounds / seconds)}


def run(cases=CASES, datasets=DATASETS) -> dict:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    results = {}
    for name in datasets:
        try:
            fold = load_fold(name, 1, data_dir())
        except DataNotFoundError as err:
            results[name] = f"skipped: {err}"
            continue
        mslr_sized = fold.n_features > 100
        results[name] = {algo: _one(algo, fold, mslr_rounds if mslr_sized else rounds)
                         for algo, rounds, mslr_rounds in cases}
    return results


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
