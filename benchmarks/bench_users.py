"""The click models' cost, against the cascade's (issue: none slower than 2x the cascade).

Two measurements per user model: (1) sessions per second of the user alone (best of three), on 200,000 random
lists of the synthetic MQ2008-sized preset, in one batch (``user.simulate``) and one call per
session (``user(query, shown, rng)``, what the protocol loop pays); (2) rounds per second of a
whole learner from the command line (a fresh ``olr run ... --json --no-store`` process, the loop's
own seconds): DBGD, which plays compiled rounds against every model with a kernel, and PDGD, which
plays the protocol, on an idle machine and beside a process that keeps one core busy.
"""

from __future__ import annotations

import functools
import json

import numpy as np
from common import best_of, idle_and_busy, olr_run_seconds

from olr_core.click_fitting import random_lists
from olr_core.data import load_fold
from olr_core.users import make_user

USERS = ["navigational", "sdbn", "dbn", "ccm", "pbm", "ubm", "trust_bias", "navigational+noise=0.1"]
SESSIONS = 200_000
CALLS = 20_000
LEARNERS = {"dbgd": 20_000, "pdgd": 5_000}


def _sessions_per_second(user, labels, rng) -> tuple[float, float]:
    """Best of three timings each: a batch of ``labels``, and ``CALLS`` calls on one list of ten."""
    user.simulate(labels[:100], rng)                                       # compile
    batch = len(labels) / best_of(lambda: user.simulate(labels, rng))
    query = type("Query", (), {"labels": labels[0]})()
    shown = np.arange(10)

    def calls():
        for _ in range(CALLS):
            user(query, shown, rng)

    return batch, CALLS / best_of(calls)


def _rate(algorithm: str, user: str, rounds: int) -> float:
    return rounds / olr_run_seconds(algorithm, "synth-mq", rounds, user, ("--eval-every", "1000"))


def run(users=USERS) -> dict:
    data = load_fold("synth-mq", 1).train
    rng = np.random.default_rng(0)
    labels = random_lists(data, SESSIONS, rng)
    results: dict = {"data": "synth-mq fold 1, random lists of 10", "users": {}}
    for name in users:
        batch, calls = _sessions_per_second(make_user(name, data.max_grade), labels, rng)
        row = {"batch_sessions_per_second": round(batch), "call_sessions_per_second": round(calls)}
        for algorithm, rounds in LEARNERS.items():
            _rate(algorithm, name, 200)                                      # warm the numba cache
            idle, busy = idle_and_busy(functools.partial(_rate, algorithm, name, rounds))
            row[f"{algorithm}_idle_rounds_per_second"] = round(idle)
            row[f"{algorithm}_busy_rounds_per_second"] = round(busy)
        results["users"][name] = row
    cascade = results["users"][users[0]]
    for row in results["users"].values():
        row["slowdown_vs_cascade"] = {key: round(cascade[key] / row[key], 2) for key in cascade
                                      if key.endswith("per_second")}
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
