"""The authors' own code run here: its stored per-run numbers (with provenance) and the fidelity comparison.

A results file (written by ``benchmarks/authors_code.py``) holds the repository, commit, command, run-time
shims, date and machine, and one record per run (algorithm, click model, fold, seed, impressions, the final
cumulative online NDCG@10 ``online`` and the final held-out NDCG@10 ``offline``; optionally ``params``, the
parameters their class was given). :func:`load_runs` refuses a
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
    except FileNotFoundError:
        raise AuthorsCodeFileError(f"{path}: no such file (benchmarks/authors_code.py writes it)") from None
    except json.JSONDecodeError as err:
        raise AuthorsCodeFileError(f"{path}: not JSON ({err.msg} at line {err.lineno})") from None
    try:
        validate(record)
    except AuthorsCodeFileError as err:
        raise AuthorsCodeFileError(f"{path}: {err}") from None
    runs = pd.DataFrame(record["runs"], columns=[*RUN_FIELDS, "params"])
    return {k: v for k, v in record.items() if k != "runs"}, runs


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
PAIRRANK_RESULTS = Path(__file__).resolve().parent / "pairrank" / "authors_code.json"
OURS_METRICS = {"discounted_online_ndcg10": "online", "final_offline_ndcg10": "offline"}


def stored_runs(specs, store, data_dir=None) -> pd.DataFrame:
    """Our runs of ``specs`` that ``store`` already holds, one row per run with the fidelity comparison's columns
    ``online`` and ``offline``; nothing is computed (an empty frame when none is stored)."""
    from ..experiments import spec_key, summary_frame

    held = [spec for spec in specs if store.has(spec_key(spec, data_dir))]
    return summary_frame(held, store, data_dir).rename(columns=OURS_METRICS) if held else pd.DataFrame(
        columns=["algorithm", "click_model", "fold", "seed", *OURS_METRICS.values()])


def all_cells(ours: pd.DataFrame, theirs: pd.DataFrame, paper: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Every cell their code ran (runs, mean, s.d.), with :func:`three_columns`'s comparison where ours ran too
    (NaN, and no explanation needed, where ours did not)."""
    cells = (theirs.groupby(["click_model", "algorithm"], sort=False)[metric]
             .agg(their_runs="size", theirs="mean", their_sd="std").reset_index())
    three = three_columns(ours, theirs, paper, metric) if len(ours) else pd.DataFrame()
    if len(three):
        cells = cells.merge(three.drop(columns=["their_runs", "theirs", "their_sd"]), how="left",
                            on=["click_model", "algorithm"])
    cells["needs_explanation"] = cells.get("needs_explanation", pd.Series(False, index=cells.index)).eq(True)
    return cells


def shown_cells(cells: pd.DataFrame, paper_text: str = "") -> pd.DataFrame:
    """The page's three columns of :func:`all_cells`: user, algorithm, the paper's number (``paper_text`` where
    it has none), their code and ours as mean ± s.d. (runs), ours minus theirs with its interval, and "line below"
    where a cell needs an explanation."""
    from ..tables import mean_sd_text

    def with_runs(means, sds, runs):
        return [f"{text} ({int(n)})" if text else "not stored here" for text, n in zip(mean_sd_text(means, sds), runs)]

    ours = [cells.get(c, pd.Series(np.nan, index=cells.index)) for c in ("ours", "ours_sd", "ours_runs")]
    paper = (mean_sd_text(cells["paper_mean"], cells["paper_sd"]) if "paper_mean" in cells else [""] * len(cells))
    paper = [text or paper_text for text in paper]
    differences = [estimate_text(d, lo, hi) if np.isfinite(d) else ""
                   for d, lo, hi in zip(*(cells.get(c, pd.Series(np.nan, index=cells.index))
                                          for c in ("difference", "low", "high")))]
    theirs = with_runs(cells["theirs"], cells["their_sd"], cells["their_runs"])
    return pd.DataFrame({"user": cells["click_model"], "algorithm": cells["algorithm"].map(name_of),
                         "paper": paper, "their_code": theirs,
                         "ours": with_runs(*ours), "ours_minus_theirs": differences,
                         "gap": cells["needs_explanation"].map({True: "line below", False: ""})})


def provenance_text(provenance: dict, runs: int) -> str:
    """Where their numbers come from, in one paragraph: repository, commit, date, machine, runs, note, shims."""
    return (f"Their code: {provenance['repository']} at `{provenance['commit'][:7]}`, run {provenance['date']} on "
            f"{provenance['machine']}; {runs} runs stored. {provenance.get('note', '')} Protocol: "
            f"{provenance.get('protocol', 'not recorded')}. Shims: "
            + "; ".join(f"`{name}`: {why}" for name, why in provenance["shims"].items()))


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
