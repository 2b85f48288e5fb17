"""How claim records are shown to a reader: the verdict table's rows (each cell's margin and 95 % interval in
the claim's units, the paper's number beside ours, a link to the page holding the runs), the "claims decided
here" box of each figure/table page, the forest plot with one panel per unit, and the links a built book must
resolve (:func:`claim_links`, checked by :func:`olr_book.htmlcheck.check_claim_links`)."""

from __future__ import annotations

import functools
import html
import math
import re

import numpy as np
import pandas as pd

from ..formatting import count_text, estimate_text, number_text, range_text
from ..names import in_words, name_of

CHAPTER_ANCHOR = "does-it-reproduce"        # the chapters' "Does it reproduce?" section
VERDICTS_PAGE = "claims"                    # the verdicts page (a generated page, like the figure/table pages)
COLOURS = {"reproduced": "#d8f0d8", "partly": "#fdf1c7", "smaller than reported": "#fbe3c8",
           "not reproduced": "#f8d4d4", "inconclusive": "#e3e3ef", "not testable here": "#e8e8e8"}
WIDTHS = {"claim": "22%", "paper": "12%", "ours": "17%", "cells": "22%", "verdict": "12%", "reason": "15%"}
CONFIGURATIONS = {
    "text": "the method as the paper's text describes it (the headline verdict)",
    "code": "the method as the authors' public code runs it, where it differs from the text",
    "written-sign": "RTop-kF with SmoothDCG's surrogate taken as the paper writes it: Algorithm 1 steps against "
                    "the gradient of the smoothed DCG@1 itself, a gain, so the learner lowers it; the other learners "
                    "as in the text (the text configuration minimises the negative, as the surrogate intends)",
}


def anchor(record: dict, kind: str = "claim") -> str:
    """The HTML id of a claim: ``claim-...`` in the box of its figure/table page, ``verdict-...`` on the verdicts
    page's row."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"{kind}-{record['paper']}-{record['id']}")


def evidence_href(record: dict, where: str = "generated") -> str:
    """The link from a verdict row to the runs: the claim's entry in the box of the page that shows them, or (for
    a claim no figure/table shows) its chapter's "Does it reproduce?" section. ``where``: the folder of the page
    holding the row, "generated" (the verdicts page) or "book" (a chapter)."""
    prefix = "" if where == "generated" else "generated/"
    if record.get("page"):
        return f"{prefix}{record['page']}.html#{anchor(record)}"
    chapter = f"../{record['paper']}.html" if where == "generated" else f"{record['paper']}.html"
    return f"{chapter}#{CHAPTER_ANCHOR}"


def number(x, digits: int = 3) -> str:
    """A signed number with ``digits`` significant digits (:func:`olr_core.formatting.number_text`): never "-0",
    "inf" or "n/a" (an infinite value is "infinite", a missing one "not estimable")."""
    return number_text(x, sign=True, digits=digits)


def margin_unit(record: dict) -> str:
    """The unit of the record's margins: the claim's metric, as the rule transforms it (a slope per unit of the
    parameter, a log-log slope for a rate); the claim is found in its paper's registry."""
    claim = registry().get((record["paper"], record["id"]))
    if claim is None:
        return "the claim's margin"
    metric = name_of(claim.metric)
    if claim.rule == "increasing":
        return f"{metric} per unit of {name_of(claim.args['parameter'])}"
    if claim.rule == "within_sd":
        return f"{metric} (paper s.d. allowed minus |ours - paper|)"
    if claim.rule == "flat" and claim.args.get("relative"):        # a share of the cell's mean, not the metric
        return f"share of the mean {metric}"
    return metric


@functools.cache
def registry() -> dict:
    """{(paper, id): Claim} of every paper's claims."""
    from .verdicts import PAPERS

    return {(c.paper, c.id): c for package in PAPERS.values() for c in package.claims.CLAIMS}


def cells_text(record: dict) -> list[str]:
    """One line per cell: its margin and 95 % interval (Holm-corrected where the verdict counts cells) in the
    margin's unit, and, where the paper states a number, the paper's number beside our interval in its units."""
    sizes = {c["cell"]: c for c in (record.get("magnitude") or {}).get("cells", [])}
    unit = (record.get("magnitude") or {}).get("unit", "")
    lines = []
    for c in record.get("cells") or []:
        text = (f"{in_words(c['cell'])}: {estimate_text(c['margin'], c['ci_low'], c['ci_high'])}, "
                f"{count_text(c['runs'], 'run')}")
        size = sizes.get(c["cell"])
        if size and "paper" in size:
            text += (f"; paper {number(size['paper'])} vs ours "
                     f"{estimate_text(size['ours'], size['low'], size['high'], unit=in_words(unit))}")
        elif size and "ours_minus_paper_sd" in size:         # a table cell: ours against the paper's mean
            text += (f"; ours - paper {estimate_text(size['ours_minus_paper_sd'], size['low'], size['high'])} "
                     f"paper s.d. ({size['outcome']})")
        lines.append(text)
    return lines


def as_html(text: str) -> str:
    """Generated text as HTML: names in words (:func:`olr_core.names.in_words`), escaped, `code` spans as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(in_words(text)))


def folded(reason: str) -> str:
    """The reason folded: its first clause (the margin) shown, the rest one click away."""
    head, _, rest = reason.partition("; ")
    return f"<details><summary>{as_html(head)}</summary>{as_html(rest)}</details>" if rest else as_html(head)


def others_by_claim(records: list[dict]) -> dict:
    """{(paper, id): "config: verdict; ..."} of the sensitivity configurations."""
    out: dict = {}
    for r in records:
        if r.get("config_role") == "sensitivity":
            out.setdefault((r["paper"], r["id"]), []).append(f"{r['config']}: {r['verdict']}")
    return {k: "; ".join(v) for k, v in out.items()}


def verdict_cell(verdict: str, other: str) -> str:
    """The headline verdict (never broken), and below it in small type the other configurations' verdicts, each
    configuration's meaning in its tooltip."""
    def config_span(part):
        name = part.split(":")[0]
        return f"<span title='{html.escape(CONFIGURATIONS.get(name, name))}'>{html.escape(part)}</span>"
    below = "; ".join(config_span(p) for p in other.split("; ")) if other else ""
    return (f"<span style='white-space: nowrap'>{verdict}</span>"
            + (f"<br><span style='font-size: 0.85em; color: #555'>{below}</span>" if below else ""))


def cells_cell(record: dict) -> str:
    """The cells' margins and intervals (unit stated once), one per line."""
    lines = cells_text(record)
    if not lines:
        return ""
    return (f"<span style='color: #555'>margin in {as_html(margin_unit(record))}, its 95 % interval as the "
            "verdict uses it:</span><br>"
            + "<br>".join(as_html(line) for line in lines))


def claim_cell(record: dict, where: str) -> str:
    """The claim with its id (the row's anchor) and source, linked to the page holding the runs."""
    link = f'<a class="claim-evidence" href="{evidence_href(record, where)}">{html.escape(record["source"])}</a>'
    return (f"<b id='{anchor(record, 'verdict') if where == 'generated' else ''}'>{html.escape(record['id'])}</b> "
            f"({link}): {as_html(record['claim'])}")


def paper_cell(record: dict) -> str:
    """What the paper reports, with its number(s) where the claim carries them."""
    number_ = record.get("paper_number")
    extra = ""
    if isinstance(number_, dict):
        extra = "; ".join(f"{k}: {number(v)}" for k, v in number_.items())
    elif isinstance(number_, (int, float)):
        extra = number(number_)
    text = as_html(record.get("paper_value") or "")
    return text + (f"<br><span style='color: #555'>paper's number: {html.escape(extra)}</span>" if extra else "")


def scale_text(record: dict) -> str:
    """The record's scale beside the paper's (:mod:`.scale`): "paper scale" or "preview, not counted"."""
    if not record.get("scale"):
        return ""
    ours = f"{record['horizon']:,} rounds" if record.get("horizon") is not None else "no rounds"
    paper = f"{record['paper_horizon']:,} rounds" if record.get("paper_horizon") is not None else "no rounds"
    head = "paper scale" if record["scale"] == "paper" else "preview, not counted"
    runs = [c["runs"] for c in record.get("cells") or []] or [record["runs_per_cell"]]   # the cells shown beside it
    needed = record["paper_runs"]
    return f"{head}: {ours}, {range_text(runs, 'run')} per cell (the paper: {paper}, {count_text(needed, 'run')})"


def provenance(record: dict) -> str:
    """Where the verdict comes from: the ledger (with this build's quick run as a smoke check, and "stale" where
    the current code would key a run of it differently) or this build's runs; and its scale."""
    parts = [scale_text(record)]
    if record.get("verdict_source") == "ledger":
        quick = f" ({record['quick_verdict']})" if record.get("quick_verdict") else ""
        parts.append(f"from the ledger; this build's quick run: {record['smoke']}{quick}")
        if record.get("stale"):
            parts.append("stale: the current code would key some of its runs differently")
    elif record.get("verdict_source") == "this build":
        parts.append("from this build's runs (no ledger)")
    return "; ".join(p for p in parts if p)


def _small(text: str) -> str:
    return f"<br><span style='font-size: 0.85em; color: #555'>{as_html(text)}</span>" if text else ""


def verdict_rows(records: list[dict], where: str = "generated") -> pd.DataFrame:
    """One row per claim (its headline record) as HTML cells: claim (linked), paper, ours, cells, verdict,
    reason."""
    heads = [r for r in records if r.get("config_role") == "headline"]
    others = others_by_claim(records)
    return pd.DataFrame({
        "claim": [claim_cell(r, where) for r in heads],
        "paper": [paper_cell(r) for r in heads],
        "ours": [as_html(f"{r['ours']} [{r['setup']}]" if r.get("setup") else r["ours"])
                 + _small(provenance(r)) for r in heads],
        "cells": [cells_cell(r) for r in heads],
        "verdict": [verdict_cell(r["verdict"], others.get((r["paper"], r["id"]), "")) for r in heads],
        "reason": [folded(f"{r['rule']}: {r['reason']}") for r in heads],
    }, columns=list(WIDTHS))


def verdict_table(records: list[dict], where: str = "generated"):
    """The verdict table (a pandas Styler) of ``records``: fixed layout at page width, verdicts unbroken."""
    table = verdict_rows(records, where)
    styles = [{"selector": "", "props": "table-layout: fixed; width: 100%; font-size: 0.8em;"},
              {"selector": "td, th", "props": "text-align: left; vertical-align: top; overflow-wrap: anywhere;"}]
    styles += [{"selector": f"th.col{i}", "props": f"width: {w};"} for i, w in enumerate(WIDTHS.values())]
    column = list(WIDTHS).index("verdict")
    styles += [{"selector": f"td.col{column}, th",
                "props": "overflow-wrap: normal; word-break: keep-all; hyphens: none;"}]
    return (table.style.hide(axis="index").set_table_styles(styles)
            .map(lambda v: f"background-color: {COLOURS.get(re.sub('<[^>]+>', '', v).split('<')[0], '')}",
                 subset=["verdict"]))


def claims_box(records: list[dict], page: str) -> str:
    """The "claims decided here" box of a figure/table page: each claim whose runs the page shows, with its
    headline verdict, the other configurations' verdicts, its cells' margins and intervals, and a link to its
    row on the verdicts page; each entry carries the anchor the verdict rows link to."""
    heads = [r for r in records if r.get("config_role") == "headline" and r.get("page") == page]
    if not heads:
        return "<p>No claim of the registry is decided on this page.</p>"
    others = others_by_claim(records)
    items = []
    for r in heads:
        other = others.get((r["paper"], r["id"]), "")
        cells = "".join(f"<li>{as_html(line)}</li>" for line in cells_text(r))
        unit = f" (margin in {as_html(margin_unit(r))}, its 95 % interval as the verdict uses it)" if cells else ""
        items.append(
            f"<li id='{anchor(r)}'><b>{html.escape(r['id'])}</b> ({html.escape(r['source'])}): "
            f"{as_html(r['claim'])} <span style='background-color: {COLOURS[r['verdict']]}; "
            f"white-space: nowrap; padding: 0 0.3em'>{r['verdict']}</span>"
            + (f" <span style='font-size: 0.85em; color: #555'>({html.escape(other)})</span>" if other else "")
            + f" <a href='{VERDICTS_PAGE}.html#{anchor(r, 'verdict')}'>row on the verdicts page</a>{unit}"
            + _small(provenance(r))
            + (f"<ul>{cells}</ul>" if cells else "") + "</li>")
    return ("<div class='admonition note claims-decided-here'>"
            f"<ul>{''.join(items)}</ul></div>")


def claim_links(records: list[dict], where: str = "generated") -> dict[str, str]:
    """{claim: href} of every headline row: the links a built book must resolve."""
    return {f"{r['paper']}:{r['id']}": evidence_href(r, where) for r in records if r.get("config_role") == "headline"}


def evidence_pages() -> list[str]:
    """Every figure/table page (notebook name) a paper's claims name as showing their runs: each has a box."""
    from .verdicts import PAPERS

    return sorted({page for package in PAPERS.values() for page in package.claims.PAGES.values()})


# -- the forest plot -----------------------------------------------------------------------------------------

def unit_groups(records: list[dict]) -> dict[str, list[dict]]:
    """{unit: records with cells}, in the order the units first appear."""
    groups: dict = {}
    for r in records:
        if r.get("cells"):
            groups.setdefault(margin_unit(r), []).append(r)
    return groups


def plot_margins_by_unit(records: list[dict], title: str = ""):
    """A forest plot with one panel per margin unit (rows of one unit share an x-axis in that unit): one row per
    (claim, configuration), one interval per cell, green above 0, red below, grey across; an unbounded end is
    drawn to the panel's edge with an arrow."""
    import matplotlib.pyplot as plt

    groups = unit_groups(records)
    if not groups:
        return None
    heights = [len(rows) + 1.5 for rows in groups.values()]
    fig, axes = plt.subplots(len(groups), 1, figsize=(8.0, 0.3 * sum(heights) + 0.6),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (unit, rows) in zip(axes[:, 0], groups.items()):
        _forest_panel(ax, rows, unit)
    if title:
        axes[0, 0].set_title(title, loc="left", fontsize=10)
    fig.tight_layout()
    return fig


def _forest_panel(ax, rows: list[dict], unit: str) -> None:
    from ..plotting import VERDICT_COLOURS

    ends = [abs(v) for r in rows for c in r["cells"] for v in (c["ci_low"], c["ci_high"], c["margin"])
            if v is not None and np.isfinite(v)]
    edge = 1.1 * (max(ends) if ends and max(ends) > 0 else 1.0)
    for y, record in enumerate(rows):
        cells = record["cells"]
        for i, c in enumerate(cells):
            offset = (i - (len(cells) - 1) / 2) * min(0.6 / len(cells), 0.12)
            low, high = _end(c["ci_low"], -edge), _end(c["ci_high"], edge)
            colour = "#2e7d32" if low > 0 else "#c62828" if high < 0 else "#9e9e9e"
            ax.plot([low, high], [y + offset] * 2, color=colour, lw=1.4, solid_capstyle="butt")
            for end, side in ((low, -1), (high, 1)):
                if abs(end) >= edge:
                    ax.annotate("", (end, y + offset), (end - side * 0.08 * edge, y + offset),
                                arrowprops={"arrowstyle": "->", "color": colour, "lw": 1})
            if c["margin"] is not None and np.isfinite(c["margin"]):
                ax.plot(c["margin"], y + offset, "o", ms=2.5, color=colour)
        ax.annotate(record["verdict"], (1.02, y), xycoords=("axes fraction", "data"), va="center", fontsize=8,
                    color=VERDICT_COLOURS[record["verdict"]], annotation_clip=False)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(rows)), [f"{r['id']} ({r['config']})" for r in rows], fontsize=8)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(-edge, edge)
    ax.set_xlabel(f"margin in {unit}   (right of 0: the claim holds in that cell)", fontsize=8)


def _end(value, unbounded: float) -> float:
    if value is None or not np.isfinite(value):
        return unbounded if value is None or np.isnan(value) else math.copysign(abs(unbounded), value)
    return float(np.clip(value, -abs(unbounded), abs(unbounded)))
