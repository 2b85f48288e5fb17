"""The authors' own code run here: its stored per-run numbers (with provenance) and the fidelity comparison.

A results file (written by ``benchmarks/authors_code.py``) holds the repository, commit, command, run-time
shims, date and machine, and one record per run (algorithm, click model, fold, seed, impressions, the final
cumulative online NDCG@10 ``online`` and the final held-out NDCG@10 ``offline``). :func:`load_runs` refuses a
file that lacks any of these, with one line saying what is wrong.

Fidelity (ours against their code, same protocol) is a comparison per cell, apart from the verdicts: the
difference of means, ours minus theirs, with Welch's 95 % interval (the two sets of runs are independent and
their variances need not agree). A cell *needs an explanation* when that interval excludes zero by more than
half the s.d. of their runs: the nearer end of the interval lies further than 0.5 s.d. from zero.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

PROVENANCE = ("repository", "commit", "command", "shims", "date", "machine", "runs")
RUN_FIELDS = {"algorithm": str, "click_model": str, "fold": int, "seed": int, "impressions": int,
              "online": float, "offline": float}
EXPLAIN_SD = 0.5     # an interval this many of their run s.d. away from zero needs an explanation line


class AuthorsCodeFileError(ValueError):
    """A results file of the authors' code that cannot be used (its message is one line)."""


def run_key(run: dict) -> tuple:
    """What identifies a run: (algorithm, click model, fold, seed)."""
    return run["algorithm"], run["click_model"], int(run["fold"]), int(run["seed"])


def _checked_run(index: int, run) -> None:
    if not isinstance(run, dict):
        raise AuthorsCodeFileError(f"run {index} is not a record")
    for field, kind in RUN_FIELDS.items():
        value = run.get(field)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) if kind is not str else \
            isinstance(value, str)
        if not ok or (kind is float and not math.isfinite(value)) or (kind is int and value != int(value)):
            raise AuthorsCodeFileError(f"run {index}: {field} is {value!r}, expected a finite {kind.__name__}")


def validate(record) -> dict:
    """``record`` if it has every provenance field and well-formed, distinct runs; else AuthorsCodeFileError."""
    if not isinstance(record, dict):
        raise AuthorsCodeFileError("not a JSON object with provenance and runs")
    missing = [field for field in PROVENANCE if not record.get(field) and field != "runs"]
    if missing or not isinstance(record.get("runs"), list):
        raise AuthorsCodeFileError(f"missing provenance: {', '.join(missing or ['runs'])}")
    for index, run in enumerate(record["runs"]):
        _checked_run(index, run)
    keys = [run_key(r) for r in record["runs"]]
    if len(set(keys)) != len(keys):
        raise AuthorsCodeFileError("the same run (algorithm, click model, fold, seed) is stored twice")
    return record


def load_runs(path: str | Path) -> tuple[dict, pd.DataFrame]:
    """(provenance without the runs, one row per run) of a results file; AuthorsCodeFileError if unusable."""
    try:
        record = json.loads(Path(path).read_text())
    except json.JSONDecodeError as err:
        raise AuthorsCodeFileError(f"{path}: not JSON ({err.msg} at line {err.lineno})") from None
    try:
        validate(record)
    except AuthorsCodeFileError as err:
        raise AuthorsCodeFileError(f"{path}: {err}") from None
    return {k: v for k, v in record.items() if k != "runs"}, pd.DataFrame(record["runs"], columns=[*RUN_FIELDS])


def fidelity_table(ours: pd.DataFrame, theirs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (click model, algorithm) cell present on both sides: runs, means, their s.d., ours minus theirs with
    Welch's 95 % interval, and whether the interval excludes zero by more than EXPLAIN_SD of their s.d.
    ``ours`` and ``theirs``: one row per run, columns algorithm, click_model and ``metric``."""
    rows = []
    for (click_model, algorithm), their_runs in theirs.groupby(["click_model", "algorithm"], sort=False):
        mine = ours.loc[(ours["click_model"] == click_model) & (ours["algorithm"] == algorithm), metric].to_numpy()
        them = their_runs[metric].to_numpy()
        if len(mine) < 2 or len(them) < 2:
            continue
        interval = stats.ttest_ind(mine, them, equal_var=False).confidence_interval(0.95)
        sd = float(np.std(them, ddof=1))
        gap = max(interval.low, -interval.high, 0.0)          # distance of the interval from zero
        rows.append({"click_model": click_model, "algorithm": algorithm, "ours_runs": len(mine),
                     "their_runs": len(them), "ours": float(mine.mean()), "theirs": float(them.mean()),
                     "their_sd": sd, "difference": float(mine.mean() - them.mean()), "low": float(interval.low),
                     "high": float(interval.high), "needs_explanation": bool(gap > EXPLAIN_SD * sd)})
    return pd.DataFrame(rows)
