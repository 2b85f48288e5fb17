"""The command line against a warm Python session: what a user pays for ``olr run`` beyond the run itself.

For each case, ``olr run -a ALGO -d DATA -c navigational -T 5000 --no-store --json`` is timed from process
start to exit (best of three), and the same run (same seed, evaluation every 10 rounds) is timed in a
warm session (after a warm-up run, best of three). The ratio is the CLI's wall time over the warm run's.
The difference is broken down: the interpreter with the run path's imports (a process that only imports
them), and inside the CLI process the run's own ``seconds`` (which include loading numba's cached machine
code on first call; the warm session has it loaded).
"""

from __future__ import annotations

import functools
import json
import subprocess
import time

from common import OLR, best_of, data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user

CASES = ("dbgd", "pdgd", "pairrank_c")
ROUNDS = 5000
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
    user = make_user("navigational", fold.max_grade)
    run_online(make_ranker(algorithm), fold, user, 200, seed=0)              # warm-up: numba's code loaded
    return best_of(functools.partial(run_online, make_ranker(algorithm), fold, user, rounds, 0, 10))


def run(cases=CASES, rounds: int = ROUNDS) -> dict:
    dataset, extra = _dataset()
    fold = load_fold(dataset, 1, data_dir())
    results = {"dataset": dataset, "rounds": rounds, "interpreter_and_imports_seconds": round(import_seconds(), 3)}
    for algorithm in cases:
        cli_seconds(algorithm, dataset, extra, 200)                            # the numba cache is on disk
        timings = [cli_seconds(algorithm, dataset, extra, rounds) for _ in range(3)]
        wall, loop = min(timings)
        warm = warm_seconds(algorithm, fold, rounds)
        results[algorithm] = {"cli_wall_seconds": round(wall, 3), "cli_run_seconds": round(loop, 3),
                              "warm_in_process_seconds": round(warm, 3), "cli_over_warm": round(wall / warm, 2)}
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
