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

from ..formatting import estimate_text, number_text
from ..names import name_of

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
    ``ours`` and ``theirs``: one row per run, columns algorithm, click_model and ``metric``; with a ``fold`` column
    on both, only our runs on the folds their runs of the cell cover are compared (folds differ a lot)."""
    rows = []
    for (click_model, algorithm), their_runs in theirs.groupby(["click_model", "algorithm"], sort=False):
        same_cell = (ours["click_model"] == click_model) & (ours["algorithm"] == algorithm)
        if "fold" in ours and "fold" in their_runs:                   # the folds their runs cover, no others
            same_cell &= ours["fold"].isin(their_runs["fold"])
        mine = ours.loc[same_cell, metric].to_numpy()
        them = their_runs[metric].to_numpy()
        if len(mine) < 2 or len(them) < 2:
            continue
        interval = stats.ttest_ind(mine, them, equal_var=False).confidence_interval(0.95)
        sd = float(np.std(them, ddof=1))
        gap = max(interval.low, -interval.high, 0.0)          # distance of the interval from zero
        rows.append({"click_model": click_model, "algorithm": algorithm, "ours_runs": len(mine),
                     "their_runs": len(them), "ours": float(mine.mean()), "ours_sd": float(np.std(mine, ddof=1)),
                     "theirs": float(them.mean()),
                     "their_sd": sd, "difference": float(mine.mean() - them.mean()), "low": float(interval.low),
                     "high": float(interval.high), "needs_explanation": bool(gap > EXPLAIN_SD * sd)})
    return pd.DataFrame(rows)


PAPER_RUNS = 15      # the DSP paper's runs per cell


def paper_differs(theirs: pd.DataFrame, paper_mean: float, paper_sd: float, runs: int = PAPER_RUNS) -> float:
    """p-value of Welch's test between their code's runs here and the paper's printed mean and s.d. over
    ``runs`` runs (scipy.stats.ttest_ind_from_stats); NaN without a paper number or two runs of theirs."""
    values = np.asarray(theirs, dtype=float)
    if len(values) < 2 or not np.isfinite(paper_mean) or not np.isfinite(paper_sd):
        return float("nan")
    return float(stats.ttest_ind_from_stats(values.mean(), values.std(ddof=1), len(values), paper_mean, paper_sd,
                                            runs, equal_var=False).pvalue)


def three_columns(ours: pd.DataFrame, theirs: pd.DataFrame, paper: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per cell both sides ran: the paper's mean and s.d., their code's and ours (one row per run, column
    ``metric``), the fidelity comparison of :func:`fidelity_table`, and the p-value of the paper's number
    against their code's runs (:func:`paper_differs`). ``paper``: algorithm, click_model, paper_mean, paper_sd."""
    table = fidelity_table(ours, theirs, metric)
    if table.empty:
        return table
    table = table.merge(paper[["algorithm", "click_model", "paper_mean", "paper_sd"]],
                        on=["algorithm", "click_model"], how="left")
    groups = dict(iter(theirs.groupby(["click_model", "algorithm"])))
    table["paper_vs_code_p"] = [paper_differs(groups[(row.click_model, row.algorithm)][metric], row.paper_mean,
                                              row.paper_sd) for row in table.itertuples()]
    return table


DSP_RESULTS = Path(__file__).resolve().parent / "dsp" / "authors_code.json"


def gap_lines(table: pd.DataFrame, notes: dict, open_note: str) -> list[str]:
    """One line per cell that needs an explanation: the note for (click model, algorithm) from ``notes``
    (a difference found, and the run that shows it) or ``open_note`` (what was tried)."""
    lines = []
    for row in table[table["needs_explanation"]].itertuples():
        note = notes.get((row.click_model, row.algorithm), f"open: {open_note}")
        difference = estimate_text(row.difference, row.low, row.high)
        lines.append(f"{row.click_model} / {name_of(row.algorithm)}: ours minus theirs {difference}, their s.d. "
                     f"{number_text(row.their_sd, digits=2)}. {note}")
    return lines


def paper_lines(table: pd.DataFrame, level: float = 0.05) -> list[str]:
    """One line per cell where the paper's printed number and their own code run here differ (Welch's test at
    ``level``, the paper's 15 runs against ours of their code)."""
    differs = table[table["paper_vs_code_p"] < level]
    return [f"{row.click_model} / {name_of(row.algorithm)}: the paper prints {number_text(row.paper_mean)}, their "
            f"code gives {number_text(row.theirs)} here over {row.their_runs} runs "
            f"(p = {number_text(row.paper_vs_code_p, digits=2)})"
            for row in differs.itertuples()]
