"""Rounds per second of the online loop with the random ranker (offline evaluation every 10 rounds)."""

from __future__ import annotations

from common import best_of, data_dir

from olr_core.data import DataNotFoundError, load_fold
from olr_core.loop import run_online
from olr_core.rankers import make_ranker
from olr_core.users import make_user

ROUNDS = 5000


def run() -> dict:
    results = {}
    for name in ("synth-mq", "synth-mslr", "mq2008"):
        try:
            fold = load_fold(name, 1, data_dir())
        except DataNotFoundError as err:
            results[name] = f"skipped: {err}"
            continue
        user = make_user("navigational", fold.max_grade)
        seconds = best_of(lambda: run_online(make_ranker("random"), fold, user, ROUNDS, seed=0, eval_every=10))
        results[name] = {"rounds": ROUNDS, "seconds": round(seconds, 3), "rounds_per_second": round(ROUNDS / seconds)}
    return results


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
