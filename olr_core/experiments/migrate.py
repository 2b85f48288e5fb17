"""Carry stored runs across a change of code that changes no number: ``olr store migrate``.

A run's key hashes the package's code (:func:`~olr_core.experiments.spec.code_fingerprint`), so any edit
of an algorithm, user or loop module leaves every stored run unreachable, also when the edit is a pure
refactoring or a speed-up. Migration re-keys them, but only where it is shown safe: the stored runs are
grouped by kind (the same description but for the seed), ``sample`` runs of each kind are computed again
with today's code, and a kind is carried over only if every recomputed run equals its stored one bit for
bit (every per-round record). A kind whose recomputation differs, a run of a plug-in, or a run whose data
changed is left where it is, to be recomputed when asked for. Old files are kept (their keys are simply
no longer asked for); nothing is overwritten.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from .runner import execute, spec_key
from .spec import RunSpec, code_fingerprint
from .store import ResultStore

NOT_DESCRIBED = ("version", "code", "plugin", "user_plugin")


@dataclass
class Migration:
    """What a migration did: runs carried over, kinds left (with why), runs already current."""

    carried: int = 0
    current: int = 0
    recomputed: int = 0
    left: list[str] = field(default_factory=list)


def stored_meta(store: ResultStore, key: str) -> dict:
    with np.load(store.path(key), allow_pickle=False) as z:
        return json.loads(str(z["__meta__"]))


def _kind(described: dict) -> str:
    return json.dumps({k: v for k, v in described.items() if k != "seed"}, sort_keys=True, default=str)


def _label(described: dict) -> str:
    params = ",".join(f"{k}={v}" for k, v in sorted(described.get("params", {}).items()))
    return (f"{described['algorithm']}{f'({params})' if params else ''} on {described['dataset']} "
            f"fold {described['fold']}, {described['click_model']}, {described['rounds']} rounds")


def same_records(a, b) -> bool:
    """Two traces hold the same per-round records, bit for bit (NaN where the other has NaN)."""
    left, right = a.arrays(), b.arrays()
    return left.keys() == right.keys() and all(
        left[k].dtype == right[k].dtype and np.array_equal(left[k], right[k], equal_nan=left[k].dtype.kind == "f")
        for k in left)


def migrate_store(store: ResultStore, data_dir: str | None = None, sample: int = 1, report=print) -> Migration:
    """Re-key the runs of ``store`` computed by other code where ``sample`` recomputed runs per kind agree
    bit for bit with their stored ones (module docstring)."""
    if sample < 1:
        raise ValueError(f"option --sample={sample} is invalid: recompute at least 1 run of each kind")
    result, kinds = Migration(), defaultdict(list)
    for key in store.keys():
        meta = stored_meta(store, key)
        if meta["spec"].get("code") == code_fingerprint():
            result.current += 1
        elif "plugin" in meta["spec"] or "user_plugin" in meta["spec"]:
            result.left.append(f"{key}: a plug-in's run (its source is part of its key): recomputed when asked for")
        else:
            described = {k: v for k, v in meta["spec"].items() if k not in NOT_DESCRIBED}
            kinds[_kind(described)].append((key, meta, described))
    for runs in kinds.values():
        _migrate_kind(store, sorted(runs, key=lambda r: r[2]["seed"]), data_dir, sample, result, report)
    return result


def _migrate_kind(store, runs, data_dir, sample, result: Migration, report) -> None:
    label = _label(runs[0][2])
    specs = [RunSpec(**described) for _, _, described in runs]
    new_keys = [spec_key(spec, data_dir) for spec in specs]
    if any(spec.key(meta.get("data", "")) != new for spec, (_, meta, _), new in zip(specs, runs, new_keys)):
        result.left.append(f"{label}: its data changed since it was stored: recomputed when asked for")
        return
    if all(store.has(new) for new in new_keys):
        result.current += len(runs)                       # (carried over before)
        return
    for spec, (old, _, _) in list(zip(specs, runs))[:sample]:
        trace = execute(spec, data_dir)
        result.recomputed += 1
        if not same_records(trace, store.load(old, quiet=True)[1]):
            result.left.append(f"{label}: seed {spec.seed} gives other numbers with today's code: recomputed when "
                               "asked for")
            return
    for spec, (old, meta, _), new in zip(specs, runs, new_keys):
        if not store.has(new):
            trace = store.load(old, quiet=True)[1]
            store.save(new, spec, trace, meta.get("data", ""), meta.get("cpu_seconds"))
            result.carried += 1
    report(f"carried over: {label}, {len(runs)} run(s)")
