"""The verdict table a reader reads: one compact row per claim (the claim, the paper's number, ours with its
interval, the verdict as a coloured badge), and under it, folded, everything behind the verdict: each cell's
margin and interval, the other configurations' verdicts, where the verdict comes from and why.

The table is plain HTML with its own stylesheet (:data:`STYLE`, scoped to ``table.olr-verdicts``): it takes
the page's full width (the theme's ``full-width`` container), never breaks a word (long cell names may break
after a ``/``), and below 640 px each row stacks into labelled lines.
"""

from __future__ import annotations

import html
import math
import re

from ..formatting import estimate_text
from .verdict_display import (
    CONFIGURATIONS,
    anchor,
    as_html,
    badge,
    cells_text,
    evidence_href,
    margin_unit,
    number,
    provenance,
    registry,
)

STYLE = """
div.full-width.olr-verdicts-wrap { margin: 0.5em 0 1.5em; position: relative; z-index: 3;
  background: var(--pst-color-background, #fff); }
table.olr-verdicts { width: 100%; border-collapse: collapse; table-layout: auto; font-size: 0.9em; }
table.olr-verdicts th, table.olr-verdicts td { text-align: left; vertical-align: top; padding: 0.4em 0.6em;
  overflow-wrap: normal; word-break: normal; hyphens: manual; border: none; }
table.olr-verdicts thead th { border-bottom: 2px solid #888; white-space: nowrap; }
table.olr-verdicts tbody.olr-claim { border-top: 1px solid #d0d0d0; }
table.olr-verdicts .olr-col-claim { width: 38%; }
table.olr-verdicts .olr-col-paper { width: 22%; }
table.olr-verdicts .olr-col-ours { width: 25%; }
table.olr-verdicts .olr-col-verdict { width: 15%; white-space: nowrap; }
table.olr-verdicts .olr-id { font-weight: 600; white-space: nowrap; }
table.olr-verdicts .olr-small { display: block; font-size: 0.85em; color: #555; }
table.olr-verdicts .olr-number { font-variant-numeric: tabular-nums; }
table.olr-verdicts tr.olr-detail td { padding-top: 0; }
table.olr-verdicts details > summary { cursor: pointer; color: #555; font-size: 0.85em; }
table.olr-verdicts details ul { margin: 0.3em 0 0.3em 1.2em; padding: 0; }
table.olr-verdicts details p { margin: 0.3em 0; }
.olr-badge { display: inline-block; padding: 0.05em 0.55em; border-radius: 0.8em; white-space: nowrap;
  font-weight: 600; font-size: 0.95em; }
@media (max-width: 640px) {
  table.olr-verdicts thead { display: none; }
  table.olr-verdicts, table.olr-verdicts tbody, table.olr-verdicts tr, table.olr-verdicts td {
    display: block; width: auto !important; }
  table.olr-verdicts td { padding: 0.15em 0.2em; }
  table.olr-verdicts td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: #555; }
  table.olr-verdicts td.olr-col-claim::before { content: none; }
}
"""
COLUMNS = {"claim": "claim", "paper": "the paper", "ours": "ours, 95 % interval", "verdict": "verdict"}


class HTMLBlock(str):
    """HTML that a notebook shows as HTML (and ``glue`` stores as text/html) without importing IPython."""

    def _repr_html_(self) -> str:
        return str(self)


def _finite(*values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def headline_estimate(record: dict) -> tuple[str, str]:
    """Our one number for the claim and what it is: the paper's quantity where the record compares ours with the
    paper's number (its first such cell), else the margin of the cell that decides the claim (the lowest margin:
    the claim fails first there); ("", "") where nothing was measured."""
    sized = [c for c in (record.get("magnitude") or {}).get("cells", []) if "paper" in c and "ours" in c]
    unit = (record.get("magnitude") or {}).get("unit", "")
    if sized:
        c = sized[0]
        return estimate_text(c["ours"], c.get("low"), c.get("high")), f"{c['cell']}, in {unit}".strip(", ")
    cells = [c for c in record.get("cells") or [] if _finite(c.get("margin"))]
    if not cells:
        return "", ""
    c = min(cells, key=lambda c: c["margin"])
    where = c["cell"] if len(cells) == 1 else f"lowest of {len(cells)} cells: {c['cell']}"
    return estimate_text(c["margin"], c.get("ci_low"), c.get("ci_high")), f"{where}; margin in {margin_unit(record)}"


def _breakable(text: str) -> str:
    """Generated text as HTML (:func:`.verdict_display.as_html`) that may break after a slash outside its tags (long
    cell names such as mq2008/informational/nsgd)."""
    return re.sub(r"/(?![^<]*>)", "/<wbr>", as_html(text))


def _paper_number(record: dict) -> str:
    value = record.get("paper_number")
    if isinstance(value, dict):
        return "; ".join(f"{k}: {number(v)}" for k, v in value.items())
    return number(value) if isinstance(value, (int, float)) else ""


CLAIM_CHARS = 200          # a longer claim is cut (at a sentence or word) in its row, and given whole in its details


def short_claim(claim: str, limit: int = CLAIM_CHARS) -> str:
    """The claim as its row shows it: whole up to ``limit`` characters, else its first sentence if that fits, else
    cut at a word, with an ellipsis."""
    if len(claim) <= limit:
        return claim
    sentence = re.match(r"(.+?[.:;])\s", claim)
    if sentence and len(sentence.group(1)) <= limit:
        return sentence.group(1).rstrip(".:;") + " \u2026"
    return claim[:limit].rsplit(" ", 1)[0] + " \u2026"


def stated(record: dict, field: str) -> str:
    """What the claim says (``claim``) or what the paper reports (``paper_value``) as the registry states it today
    (a ledger's record keeps the words of its day; its numbers are the ledger's), else as the record has it."""
    claim = registry().get((record["paper"], record["id"]))
    return (getattr(claim, field, "") if claim is not None else "") or record.get(field) or ""


def claim_td(record: dict, where: str) -> str:
    link = f"<a class='claim-evidence' href='{evidence_href(record, where)}'>{html.escape(record['source'])}</a>"
    ident = f" id='{anchor(record, 'verdict')}'" if where == "generated" else ""
    return (f"<td class='olr-col-claim'><span class='olr-id'{ident}>{html.escape(record['id'])}</span> ({link}): "
            f"{_breakable(short_claim(stated(record, 'claim')))}</td>")


def paper_td(record: dict) -> str:
    extra = _paper_number(record)
    small = f"<span class='olr-small'>the paper's number: {_breakable(extra)}</span>" if extra else ""
    return f"<td class='olr-col-paper' data-label='the paper'>{_breakable(stated(record, 'paper_value'))}{small}</td>"


def ours_td(record: dict) -> str:
    value, what = headline_estimate(record)
    if not value:
        return "<td class='olr-col-ours' data-label='ours'>not measured</td>"
    return (f"<td class='olr-col-ours' data-label='ours'><span class='olr-number'>{html.escape(value)}</span>"
            f"<span class='olr-small'>{_breakable(what)}</span></td>")


def verdict_td(record: dict) -> str:
    scale = {"paper": "paper scale", "preview": "preview, not counted"}.get(record.get("scale"), "")
    return (f"<td class='olr-col-verdict' data-label='verdict'>{badge(record['verdict'])}"
            + (f"<span class='olr-small'>{scale}</span>" if scale else "") + "</td>")


def details(record: dict, others: list[dict]) -> str:
    """Everything behind the row, folded: what we measured, where the verdict comes from, the other
    configurations' verdicts, each cell's margin and interval, and the reason."""
    measured = record.get("ours") or ""
    if record.get("setup"):
        measured += f" [{record['setup']}]"
    whole = stated(record, "claim")
    parts = [f"<p><b>The claim in full:</b> {_breakable(whole)}</p>" if short_claim(whole) != whole else "",
             f"<p><b>What we measured:</b> {_breakable(measured)}</p>" if measured.strip() else "",
             f"<p><b>Where the verdict comes from:</b> {_breakable(provenance(record))}</p>"
             if provenance(record) else ""]
    if others:
        listed = "; ".join(f"<span title='{html.escape(CONFIGURATIONS.get(o['config'], o['config']), quote=True)}'>"
                           f"{html.escape(o['config'])}</span>: {badge(o['verdict'])}" for o in others)
        parts.append(f"<p><b>Other configurations</b> (sensitivity, not counted): {listed}</p>")
    cells = cells_text(record)
    if cells:
        items = "".join(f"<li>{_breakable(line)}</li>" for line in cells)
        parts.append(f"<p><b>Each cell</b> (margin in {_breakable(margin_unit(record))}, 95 % interval as the "
                     f"verdict uses it):</p><ul>{items}</ul>")
    parts.append(f"<p><b>Why:</b> {as_html(record['rule'] + ': ' + record['reason'])}</p>")
    summary = "cells, reason" + (", other configurations" if others else "")
    return f"<details><summary>{summary}</summary>{''.join(parts)}</details>"


def claim_rows(record: dict, others: list[dict], where: str) -> str:
    """One claim: its compact row and, under it, its folded details (one ``tbody``)."""
    return (f"<tbody class='olr-claim'><tr class='olr-row'>{claim_td(record, where)}{paper_td(record)}"
            f"{ours_td(record)}{verdict_td(record)}</tr>"
            f"<tr class='olr-detail'><td colspan='4'>{details(record, others)}</td></tr></tbody>")


def verdict_table(records: list[dict], where: str = "generated") -> HTMLBlock:
    """The verdict table of ``records`` (one row per headline record, the sensitivity configurations in its
    details) at the page's full width. ``where``: the folder of the page holding it ("generated": the verdicts
    page, which carries the rows' anchors; "book": a chapter)."""
    heads = [r for r in records if r.get("config_role") == "headline"]
    sensitivity = {}
    for r in records:
        if r.get("config_role") == "sensitivity":
            sensitivity.setdefault((r["paper"], r["id"]), []).append(r)
    head = "".join(f"<th class='olr-col-{key}'>{html.escape(label)}</th>" for key, label in COLUMNS.items())
    body = "".join(claim_rows(r, sensitivity.get((r["paper"], r["id"]), []), where) for r in heads)
    return HTMLBlock(f"<div class='full-width olr-verdicts-wrap'><style>{STYLE}</style>"
                     f"<table class='olr-verdicts'><thead><tr>{head}</tr></thead>{body}</table></div>")
