"""The top-k learners (RTop-kF) and full-feedback ListNet from the command line, as a user runs them.

Each case is a fresh ``olr run -a NAME -c top<k> ... --json --no-store`` process with the
user that gives the learner its feedback; rounds per second come from the run's own seconds
(the loop, without interpreter start-up), on an idle machine and beside a process that keeps
one core busy. Offline evaluation every 1,000 rounds: the chapter's metric is the online
average NDCG@10, computed from every round. Also the paper's horizon (100,000 rounds, its
Yandex run) on the MSLR-sized synthetic default, in seconds.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from common import data_dir, idle_and_busy, olr_run_seconds

from olr_core.reproductions.topk.experiments import USERS

LEARNERS = ["topk_squared", "topk_kl", "topk_ranksvm", "topk_smoothdcg", "listnet_full"]
ROUNDS = {"mq2008": 20_000, "synth-mq": 20_000, "synth-mslr": 5_000}
PAPER_HORIZON = 100_000
EVAL = ("--eval-every", "1000")


def _datasets() -> tuple[list[str], tuple]:
    root = data_dir()
    if root and (Path(root) / "mq2008").is_dir():
        return ["mq2008", "synth-mslr"], ("--data-dir", root)
    return ["synth-mq", "synth-mslr"], ()


def _rate(algorithm: str, dataset: str, rounds: int, extra: tuple) -> float:
    return rounds / olr_run_seconds(algorithm, dataset, rounds, USERS[algorithm], EVAL + extra)


def run(learners=LEARNERS) -> dict:
    datasets, extra = _datasets()
    results: dict = {"evaluation": "offline NDCG@10 every 1,000 rounds"}
    for dataset in datasets:
        rounds = ROUNDS[dataset]
        table = {}
        for algorithm in learners:
            _rate(algorithm, dataset, 200, extra)                       # warm the numba cache
            idle, busy = idle_and_busy(functools.partial(_rate, algorithm, dataset, rounds, extra))
            table[algorithm] = {"rounds": rounds, "idle_rounds_per_second": round(idle),
                                "one_core_busy_rounds_per_second": round(busy)}
        results[dataset] = table
    results["paper_horizon_synth_mslr_seconds"] = {
        a: round(olr_run_seconds(a, "synth-mslr", PAPER_HORIZON, USERS[a], EVAL), 1) for a in learners}
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
