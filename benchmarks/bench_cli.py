"""The command line against a warm Python session: what a user pays for ``olr run`` beyond the run itself.

For each case and horizon (1,000 and 5,000 rounds), ``olr run -a ALGO -d DATA -c navigational -T ROUNDS
--no-store --json`` is timed from process start to exit, and the same run (same seed, evaluation every 10
rounds) in a warm session (after a warm-up run); the CLI and the warm runs alternate three times and the
medians are kept. Reported: the CLI's wall time, the run's own ``seconds`` inside the CLI process, the warm
run's, and the two ratios to it. The difference is broken down: the interpreter with the run path's imports
(a process that only imports them), and the run's ``seconds``, which since #41 exclude the process's first
compiled call (numba's runtime set-up and the evaluation kernel's cache load, made before the run's clock
starts) but still include loading the learner's own compiled rounds on their first call.
"""

from __future__ import annotations

import json
import subprocess
import time

import numpy as np
from common import OLR, best_of, data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user

CASES = ("dbgd", "pdgd", "pairrank_c")
HORIZONS = (1000, 5000)
RUN_PATH_IMPORTS = "import olr_core.cli, olr_core.experiments, olr_core.rankers, olr_core.users, olr_core.data"


def _dataset() -> tuple[str, list[str]]:
    root = data_dir()
    try:
        load_fold("mq2008", 1, root)
        return "mq2008", ["--data-dir", root]
    except DataNotFoundError:
        return "synth-mq", []


def cli_seconds(algorithm: str, dataset: str, extra: list[str], rounds: int) -> tuple[float, float]:
    """(wall seconds of a fresh ``olr run`` process, the run's own ``seconds`` reported in its JSON)."""
    command = [*OLR, "run", "-a", algorithm, "-d", dataset, "-c", "navigational", "-T", str(rounds), "-s", "0",
               "--json", "--no-store", *extra]
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - started, json.loads(out)["seconds"]


def import_seconds() -> float:
    """Wall seconds of a process that starts Python and imports what ``olr run`` imports, and nothing else."""
    return best_of(lambda: subprocess.run([OLR[0], "-c", RUN_PATH_IMPORTS], check=True))


def warm_seconds(algorithm: str, fold, rounds: int) -> float:
    """Wall seconds of one run in this (warm) session."""
    user = make_user("navigational", fold.max_grade)
    started = time.perf_counter()
    run_online(make_ranker(algorithm), fold, user, rounds, 0, 10)
    return time.perf_counter() - started


def case(algorithm: str, dataset: str, extra: list[str], fold, rounds: int) -> dict:
    """Medians of three interleaved CLI and warm runs of ``rounds`` rounds."""
    cli, warm = [], []
    for _ in range(3):
        cli.append(cli_seconds(algorithm, dataset, extra, rounds))
        warm.append(warm_seconds(algorithm, fold, rounds))
    wall, loop = (float(np.median(column)) for column in zip(*cli))
    warm_run = float(np.median(warm))
    return {"rounds": rounds, "cli_wall_seconds": round(wall, 3), "cli_run_seconds": round(loop, 3),
            "warm_in_process_seconds": round(warm_run, 3), "cli_wall_over_warm": round(wall / warm_run, 2),
            "cli_run_seconds_over_warm": round(loop / warm_run, 2)}


def run(cases=CASES, horizons=HORIZONS) -> dict:
    dataset, extra = _dataset()
    fold = load_fold(dataset, 1, data_dir())
    results = {"dataset": dataset, "horizons": list(horizons),
               "interpreter_and_imports_seconds": round(import_seconds(), 3)}
    for algorithm in cases:
        cli_seconds(algorithm, dataset, extra, 200)                            # the numba cache is on disk
        warm_seconds(algorithm, fold, 200)                                     # and loaded in this session
        for rounds in horizons:
            results[f"{algorithm}, {rounds:,} rounds"] = case(algorithm, dataset, extra, fold, rounds)
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
