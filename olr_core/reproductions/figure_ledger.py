"""The figure ledger: what each figure or table of the papers' experiments shows, at the paper profile, shipped.

``ledger/figures/<page>.json`` (gzipped, ``.json.gz``, where large) holds, per *part* of a page (a figure's
curves, a table's runs), the summary its figure or table is drawn from: for curves, per cell (every column but
the run's fold and seed) and evaluation round (at most :data:`MAX_POINTS` rounds, the last kept), the mean, s.d.
and number of runs (``value``, ``value:std``, ``value:n``); for tables, each run's final values (a few numbers a
run; the page's paired comparisons need them, and each cell's mean, s.d. and n follow from them). With it, as in
the claims ledger (:mod:`.ledger`, whose checksum, atomic write and reading it reuses): the profile, code
fingerprint, package version, date, machine, and per part the horizon and the run keys it summarises, each with
the run's description, so that a key the current code would give otherwise marks the part *stale*.

A page calls :func:`paper_scale` once per part on the frame it already computes. At the paper profile that writes
the part; at any other profile, where the part is in the ledger, it returns the ledger's frame for the page to
draw as its headline, shows this build's frame beside it as a smoke check (:func:`smoke_check`) and says where the
numbers come from (:func:`caption_note`); without a ledger the page's own frame comes back unchanged.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..experiments.runner import spec_key
from ..experiments.spec import RunSpec, code_fingerprint
from ..names import in_words
from .ledger import LedgerError, ledger_dir, machine, read_owned, write_checked

FORMAT = 1
MAX_POINTS = 200                          # evaluation rounds kept per curve
GZIP_ABOVE = 200_000                      # bytes of JSON above which the file is gzipped
RUN_COLUMNS = ["fold", "seed"]            # what tells the runs of one cell apart
RESULT_COLUMNS = {"rounds", "final_offline_ndcg10", "discounted_online_ndcg10", "summed_online_ndcg10",
                  "mean_online_ndcg10", "cumulative_misordered_pairs", "seconds"}
SE_RULE = 3                               # the smoke check's width, in combined standard errors


def figures_dir() -> Path:
    return ledger_dir() / "figures"


def figure_path(page: str) -> Path:
    """The page's figure ledger: the ``.json.gz`` where that exists, else the ``.json``."""
    packed = figures_dir() / f"{page}.json.gz"
    return packed if packed.exists() else figures_dir() / f"{page}.json"


def refresh_command(page: str) -> str:
    return (f"OLR_RESULTS_DIR=PAPER_STORE olr book --profile paper --only {page} --no-build --data-dir DATA_DIR")


def read_figures(page: str) -> dict | None:
    """The page's figure ledger (None where there is none), checked; :class:`LedgerError` (one line naming the
    file and the command that remakes it) where it is corrupt, edited or of another format."""
    return read_owned(figure_path(page), "page", page, FORMAT, refresh_command(page))


def write_figures(book: dict) -> Path:
    """Write the figure ledger ``book`` with its checksum, atomically; gzipped above :data:`GZIP_ABOVE` bytes
    (the other form of the file is removed)."""
    import json

    plain = figures_dir() / f"{book['page']}.json"
    packed = plain.with_name(plain.name + ".gz")
    path = packed if len(json.dumps(book, default=str)) > GZIP_ABOVE else plain
    write_checked(book, path)
    (plain if path == packed else packed).unlink(missing_ok=True)
    return path


def decimated(rounds, max_points: int = MAX_POINTS) -> np.ndarray:
    """At most ``max_points`` of the sorted distinct ``rounds``, evenly spread by index, the first and last kept."""
    rounds = np.unique(np.asarray(rounds))
    if len(rounds) <= max_points:
        return rounds
    return rounds[np.unique(np.linspace(0, len(rounds) - 1, max_points).round().astype(int))]


def is_curves(frame: pd.DataFrame) -> bool:
    return {"round", "value"} <= set(frame.columns)


def cell_columns(frame: pd.DataFrame, cells: list[str] | None = None) -> list[str]:
    """The columns naming a cell: ``cells`` (with the round of a curve) where given, else every column but the
    runs' fold and seed, the values and the run results."""
    if cells is not None:
        return [c for c in [*cells, "round"] if c in frame and (c != "round" or is_curves(frame) or "value:n" in frame)]
    skip = {*RUN_COLUMNS, "value", "value:std", "value:n", *RESULT_COLUMNS}
    return [c for c in frame.columns if c not in skip and ":" not in c]


def curve_summary(frame: pd.DataFrame, max_points: int = MAX_POINTS, cells: list[str] | None = None) -> pd.DataFrame:
    """Per cell and kept round (:func:`decimated`): ``value`` (the mean over runs), ``value:std`` and ``value:n``."""
    kept = frame[frame["round"].isin(decimated(frame["round"], max_points))]
    grouped = kept.groupby(cell_columns(kept, cells), sort=False, dropna=False)["value"]
    return grouped.agg(**{"value": "mean", "value:std": "std", "value:n": "count"}).reset_index()


def _columns(frame: pd.DataFrame) -> dict:
    """The frame as {column: values} (strict JSON: NaN becomes null when written)."""
    return {c: frame[c].tolist() for c in frame.columns}


def _frame(columns: dict) -> pd.DataFrame:
    frame = pd.DataFrame(columns)
    return frame.apply(lambda c: c.astype(float) if c.dtype == object and c.map(_number_or_none).all() else c)


def _number_or_none(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def described_runs(specs, data_dir=None) -> dict[str, dict]:
    """{run key: the run's description} of ``specs`` (a list, or a dict of lists): what its key is made from."""
    flat = [s for group in specs.values() for s in group] if isinstance(specs, dict) else list(specs)
    return {spec_key(s, data_dir): _described(s) for s in flat}


def _described(spec: RunSpec) -> dict:
    canonical = spec.canonical()
    return {k: v for k, v in canonical.items() if k not in ("version", "code", "plugin", "user_plugin")}


def part_entry(frame: pd.DataFrame, specs, rounds: int | None, data_dir=None, cells: list[str] | None = None) -> dict:
    """One part of a figure ledger: its kind, horizon, runs and data (curves summarised, a table's runs kept)."""
    kind = "curves" if is_curves(frame) else "table"
    data = curve_summary(frame, cells=cells) if kind == "curves" else frame
    horizon = rounds if rounds is not None else (int(frame["round"].max()) if kind == "curves" else None)
    return {"kind": kind, "horizon": horizon, "cells": cells, "runs": described_runs(specs, data_dir),
            "columns": _columns(data)}


def with_part(book: dict | None, page: str, profile: str, part: str, entry: dict) -> dict:
    """``book`` with ``part`` replaced and today's provenance; parts of another code fingerprint, version or
    profile are dropped (the page writes all its parts in one execution)."""
    provenance = {"format": FORMAT, "page": page, "profile": profile, "code": code_fingerprint(),
                  "version": __version__, "machine": machine(),
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    same = book is not None and all(book.get(k) == provenance[k] for k in ("code", "version", "profile"))
    return {**provenance, "parts": {**(book["parts"] if same else {}), part: entry}}


def stale_runs(entry: dict, data_dir=None) -> tuple[int, list[str]]:
    """How many of the part's runs the current code would key otherwise, and the data sets not found here (whose
    runs cannot be keyed, so are not judged)."""
    stale, unchecked = 0, set()
    for key, described in entry["runs"].items():
        try:
            again = spec_key(RunSpec(**described), data_dir)
        except (OSError, ValueError, KeyError) as err:       # the data set is not here (or no longer exists)
            unchecked.add(f"{described.get('dataset')} ({type(err).__name__})")
            continue
        stale += again != key
    return stale, sorted(unchecked)


def stale_note(page: str, book: dict, data_dir=None) -> str:
    """One line naming the stale parts of the page's figure ledger and the command that refreshes them, and the
    data sets whose runs could not be checked here ("" where none is stale and every run was checked)."""
    checked = {part: stale_runs(entry, data_dir) for part, entry in book["parts"].items()}
    stale = ", ".join(f"{part} ({n} runs)" for part, (n, _) in checked.items() if n)
    unchecked = sorted({name for _, names in checked.values() for name in names})
    notes = [f"{page}: the figure ledger rests on runs the current code would key differently (stale: {stale}); "
             f"refresh with `{refresh_command(page)}`" if stale else "",
             f"runs on {', '.join(unchecked)} not checked for staleness (the data is not here)" if unchecked else ""]
    return "; ".join(note for note in notes if note)


def smoke_check(quick: pd.DataFrame, paper: pd.DataFrame, metrics: list[str], cells: list[str] | None = None
                ) -> pd.DataFrame:
    """This build's runs against the ledger's, per cell they share and metric: each side's mean, standard error
    and runs, and ``agrees``: |quick mean - paper mean| <= :data:`SE_RULE` x sqrt(se_quick^2 + se_paper^2), a
    quick cell of one run taking the paper's s.d. Curves are compared at the last round both frames have."""
    if is_curves(quick):
        common = set(quick["round"]) & set(paper["round"])
        if not common:
            return pd.DataFrame()
        at = max(common)
        quick, paper = quick[quick["round"] == at], paper[paper["round"] == at]
    out = pd.concat([_compared(quick, paper, metric, cells) for metric in metrics], ignore_index=True)
    if is_curves(quick):
        out["round"] = at
    if len(out):
        combined = np.hypot(out["quick_sd"].fillna(out["paper_sd"]) / np.sqrt(out["quick_n"]),
                            out["paper_sd"].fillna(0) / np.sqrt(out["paper_n"]))
        out["allowed"] = SE_RULE * combined
        out["agrees"] = (out["quick_mean"] - out["paper_mean"]).abs() <= out["allowed"].fillna(0)   # (one run each)
    return out


def _compared(quick: pd.DataFrame, paper: pd.DataFrame, metric: str, cells: list[str] | None) -> pd.DataFrame:
    """Per cell both frames have: each side's mean, s.d. and n of ``metric`` (a curve's ``value``)."""
    def stats(frame, side):
        names = cell_names(frame, cells)
        if f"{metric}:n" in frame:                     # a curve summary: one row a cell already
            return pd.DataFrame({"cell": names, f"{side}_mean": frame[metric], f"{side}_sd": frame[f"{metric}:std"],
                                 f"{side}_n": frame[f"{metric}:n"]}).groupby("cell").first()
        return frame.assign(cell=names).groupby("cell")[metric].agg(
            **{f"{side}_mean": "mean", f"{side}_sd": "std", f"{side}_n": "count"})
    both = stats(quick, "quick").join(stats(paper, "paper"), how="inner")
    return both.reset_index().assign(metric=metric)


def cell_names(frame: pd.DataFrame, cells: list[str] | None = None, without=("label", "round")) -> pd.Series:
    """Each row's cell as text ("mgd / synth-mq / navigational / 0.5"), alike for this build's and the ledger's;
    without the label (a tuned parameter may differ between profiles) and the round."""
    def text(value):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return ""
        return f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)
    columns = sorted(c for c in cell_columns(frame, cells) if c not in without)    # (a written ledger sorts them)
    return frame[columns].apply(lambda column: column.map(text)).agg(" / ".join, axis=1)


def smoke_line(checked: pd.DataFrame, quick_rounds) -> str:
    """The smoke check in one line: agrees / disagrees, with the rule and the cells that disagree."""
    rule = (f"rule: the quick mean within the paper-scale mean ± {SE_RULE} standard errors combined, per cell "
            "both have")
    if not len(checked):
        return f"Smoke check: no cell of this build's runs is in the figure ledger to compare ({rule})."
    off = checked[~checked["agrees"]]
    where = (f"at round {int(checked['round'].iloc[0]):,}" if "round" in checked
             else f"after {horizon_text(quick_rounds)}")
    verdict = "agrees" if off.empty else "disagrees"
    named = in_words("; ".join(f"{r.cell} ({r.metric}: {r.quick_mean:.4g} against {r.paper_mean:.4g})"
                               for r in off.head(3).itertuples()))
    tuned = (" A cell is matched without its tuned parameters, which the quick profile's tuning page may choose "
             "otherwise than the paper profile's: a disagreement can come from them.") if named else ""
    return (f"Smoke check: **{verdict}**. This build's quick runs agree with the paper-scale ledger {where} in "
            f"{int(checked['agrees'].sum())} of {len(checked)} cells ({rule})" + (f"; off: {named}" if named else "")
            + "." + tuned)


def smoke_figure(checked: pd.DataFrame):
    """The smoke check as a small panel: per cell, this build's mean against the ledger's, with the interval the
    rule allows around the diagonal (a cross where the cell disagrees)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(set(checked["metric"])), figsize=(3.4 * checked["metric"].nunique(), 3.0),
                             squeeze=False, layout="constrained")
    for ax, (metric, part) in zip(axes[0], checked.groupby("metric", sort=False)):
        for agrees, marker, name in ((True, "o", "agrees"), (False, "x", "disagrees")):
            cells = part[part["agrees"] == agrees]
            if len(cells):
                ax.errorbar(cells["paper_mean"], cells["quick_mean"], yerr=cells["allowed"], fmt=marker, ms=4,
                            capsize=2, label=f"{name} ({len(cells)})")
        ends = [part[["paper_mean", "quick_mean"]].min().min(), part[["paper_mean", "quick_mean"]].max().max()]
        ax.plot(ends, ends, color="dimgrey", linewidth=0.8)
        ax.set(xlabel="mean at the paper's scale", ylabel="mean of this build's runs",
               title="" if metric == "value" else metric)
        ax.legend(fontsize=8)
    return fig


def caption_note(frame: pd.DataFrame) -> str:
    """The sentence a caption adds where ``frame`` came from the figure ledger (:func:`paper_scale`), else ""."""
    return frame.attrs.get("scale_note", "")


def caption(frame: pd.DataFrame, own: str, title: str) -> str:
    """A table's caption: ``own`` (this build's run sizes) where ``frame`` is this build's, else ``title`` and
    :func:`caption_note`."""
    note = caption_note(frame)
    return f"{title}.{note}" if note else own


def _scale_note(book: dict, entry: dict) -> str:
    runs = _per_cell(entry)
    return (f" Drawn from the figure ledger (paper profile, {runs} runs per cell, horizon "
            f"{horizon_text(entry['horizon'])}, {len(entry['runs']):,} runs, code {book['code']}, "
            f"{book['date'][:10]}); this build's quick runs are the smoke check beside it.")


def horizon_text(rounds: int | None) -> str:
    return "the whole stream" if rounds is None else f"{rounds:,} rounds"


def _per_cell(entry: dict) -> str:
    frame = _frame(entry["columns"])
    if entry["kind"] == "curves":
        counts = frame["value:n"]
    else:
        counts = frame.groupby(cell_columns(frame, entry.get("cells")), dropna=False).size()
    low, high = int(counts.min()), int(counts.max())
    return f"{low}" if low == high else f"{low}-{high}"


def paper_scale(page: str, frame: pd.DataFrame, profile: str, part: str = "figure", specs=(),
                rounds: int | None = None, metrics: list[str] | None = None, cells: list[str] | None = None,
                data_dir=None) -> pd.DataFrame:
    """The frame a page draws its figure or table from. At the paper profile: ``frame`` (its runs ``specs``,
    horizon ``rounds``; ``cells``: the columns naming a cell where not every column but the runs' and the results')
    is written to the page's figure ledger as ``part`` and returned. Elsewhere, where the
    ledger has the part: the ledger's frame (curves summarised, see :func:`curve_summary`; its ``attrs`` carry
    :func:`caption_note`), after showing the smoke check of ``frame`` against it on ``metrics`` (a curve's
    ``value``), and the staleness note; else ``frame`` itself."""
    from IPython.display import Markdown, display

    from ..plotting import show_figure

    if profile == "paper":
        try:
            old = read_figures(page)
        except LedgerError:
            old = None                                   # remade whole below
        write_figures(with_part(old, page, profile, part, part_entry(frame, specs, rounds, data_dir, cells)))
        return frame
    try:
        book = read_figures(page)
    except LedgerError as err:
        display(Markdown(f"Figure ledger refused: {err}; showing this build's quick runs."))
        return frame
    if book is None or part not in book["parts"]:
        return frame
    entry = book["parts"][part]
    paper = _frame(entry["columns"])
    cells = entry.get("cells")
    missing = sorted(set(cell_names(frame, cells)) - set(cell_names(paper, cells)))
    if missing:
        display(Markdown(f"The figure ledger ({figure_path(page).name}, {part}) has no cell {missing[0]} of this "
                         f"build's runs ({len(missing)} missing): shown from this build's runs."))
        return frame
    metrics = metrics or ["value"]
    comparable = entry["kind"] == "curves" or rounds == entry["horizon"]
    checked = smoke_check(frame, paper, metrics, cells) if comparable else pd.DataFrame()
    lines = [smoke_line(checked, rounds) if comparable else
             f"Smoke check: not compared, this build's runs end after {horizon_text(rounds)} and the ledger's after "
             f"{horizon_text(entry['horizon'])} (the final values of other horizons differ by design).",
             stale_note(page, {"parts": {part: entry}}, data_dir)]
    display(Markdown("\n\n".join(line for line in lines if line)))
    if len(checked):
        show_figure(smoke_figure(checked), "Smoke check: each cell's mean from this build's quick runs (vertical) "
                    "against the figure ledger's at the paper's scale (horizontal), with the interval the rule allows "
                    f"({SE_RULE} standard errors combined); on the grey diagonal the two agree exactly.")
    paper.attrs["scale_note"] = _scale_note(book, entry)
    return paper
