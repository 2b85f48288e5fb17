"""The neural rankers (olRankNet, olLambdaRank, the GT skyline, neural PDGD / DBGD) from the command line.

Each case is a fresh ``olr run -a NAME ... --json --no-store`` process (navigational users,
offline NDCG@10 every 10 rounds as in the chapter), timed by the run's own seconds, on an
idle machine and beside a process that keeps one core busy. Targets (issue #11): olRankNet
at width 100 >= 300 rounds/s on MQ2008 and >= 50 on the MSLR-sized preset; neural PDGD and
DBGD >= 2,000 on MQ2008. The cost per round over 10,000 rounds is in the history suite.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from common import data_dir, idle_and_busy, olr_run_seconds

CASES = {"mq2008": {"olranknet": 3000, "ollambdarank": 3000, "ollambdarank_gt": 3000, "neural_pdgd": 10_000,
                    "neural_dbgd": 10_000},
         "synth-mslr": {"olranknet": 1000, "neural_pdgd": 3000}}
FALLBACK = "synth-mq-5g"          # MQ2008-sized, when the data directory has no MQ2008


def _rate(algorithm: str, dataset: str, rounds: int, extra: tuple) -> float:
    return rounds / olr_run_seconds(algorithm, dataset, rounds, "navigational", extra)


def run() -> dict:
    root = data_dir()
    has_mq = bool(root) and (Path(root) / "mq2008").is_dir()
    results: dict = {"evaluation": "offline NDCG@10 every 10 rounds", "width": 100}
    for dataset, cases in CASES.items():
        name = dataset if dataset != "mq2008" or has_mq else FALLBACK
        extra = ("--data-dir", root) if name == "mq2008" else ()
        table = {}
        for algorithm, rounds in cases.items():
            _rate(algorithm, name, 100, extra)                            # warm the numba cache
            idle, busy = idle_and_busy(functools.partial(_rate, algorithm, name, rounds, extra))
            table[algorithm] = {"rounds": rounds, "idle_rounds_per_second": round(idle),
                                "one_core_busy_rounds_per_second": round(busy)}
        results[name] = table
    return results


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
