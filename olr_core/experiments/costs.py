"""What runs cost: the CPU seconds of the runs a store holds, by kind of run, and the estimate of a run not yet
computed from them (the plan before a spend, the price of the command that decides a claim)."""

from __future__ import annotations

import json
import zipfile

import numpy as np

from .store import COST_PARAMETERS, ResultStore


def cost_kind(spec: dict) -> tuple[str, str]:
    """A run's kind as the execution page names it, without its horizon: (algorithm with the parameters that
    change a round's cost, data set)."""
    shown = ",".join(f"{k}={v}" for k, v in sorted(spec.get("params", {}).items()) if k in COST_PARAMETERS)
    return (f"{spec['algorithm']}({shown})" if shown else spec["algorithm"]), spec["dataset"]


def stored_costs(store: ResultStore) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """{(kind, data set): [(rounds, CPU seconds)]} of every run the store holds (wall seconds where a run
    recorded no CPU time), from the runs' metadata alone."""
    costs = {}
    for key in store.keys():
        try:
            with np.load(store.path(key), allow_pickle=False) as z:
                meta = json.loads(str(z["__meta__"]))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError):
            continue
        seconds = float(meta.get("cpu_seconds", meta.get("seconds", 0.0)))
        costs.setdefault(cost_kind(meta["spec"]), []).append((int(meta["spec"]["rounds"]), seconds))
    return costs


LEDGER_KIND = "ledger:"      # costs entries of a paper's ledger runs: (LEDGER_KIND + algorithm, data set)


def estimate_seconds(spec: dict, costs: dict) -> tuple[float | None, str]:
    """(estimated CPU seconds, basis) of a run: the mean of stored runs of its kind, data set and horizon
    ("measured"); else the per-round cost of its kind on its data set ("scaled"), on any data set ("other data")
    or of its algorithm with other parameters ("other parameters"), or of its algorithm in the repository's
    ledgers (``LEDGER_KIND`` entries: "ledger runs", on its data set first), times its rounds; else
    (None, "unknown")."""
    kind, dataset = cost_kind(spec)
    rounds = int(spec["rounds"])
    exact = [s for r, s in costs.get((kind, dataset), []) if r == rounds]
    if exact:
        return float(np.mean(exact)), "measured"
    algorithm = spec["algorithm"]
    for basis, match in (("scaled", lambda k, d: (k, d) == (kind, dataset)), ("other data", lambda k, d: k == kind),
                         ("other parameters", lambda k, d: k.split("(")[0] == algorithm),
                         ("ledger runs", lambda k, d: (k, d) == (LEDGER_KIND + algorithm, dataset)),
                         ("ledger runs, other data", lambda k, d: k == LEDGER_KIND + algorithm)):
        runs = [(r, s) for (k, d), pairs in costs.items() if match(k, d) for r, s in pairs]
        if runs and sum(r for r, _ in runs) > 0:
            return rounds * sum(s for _, s in runs) / sum(r for r, _ in runs), basis
    return None, "unknown"
