"""The answer first: a one-screen summary of every paper's verdicts, for the intro and the verdicts page.

Everything here is computed from the claim records the verdicts page shows (:func:`.ledger.book_records`):
per paper, the headline verdicts counted (paper scale where a ledger holds them, this build's previews for the
others, never mixed), the scale they rest on beside the paper's, one sentence, and a figure of the counts
coloured by verdict.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ..claims import VERDICTS

PAPER_SCALE, PREVIEW = "paper", "preview"


@dataclass(frozen=True)
class PaperSummary:
    """One paper's headline verdicts at one scale: counts per verdict, where they come from, and their scale
    (fewest to most rounds and runs per cell, ours and the paper's)."""

    paper: str
    name: str
    scale: str                   # "paper" (counted) or "preview" (this build's shorter or fewer runs)
    source: str                  # "the ledger of DATE" or "this build's quick runs"
    counts: dict
    horizons: tuple
    paper_horizons: tuple
    runs: tuple
    paper_runs: tuple

    @property
    def claims(self) -> int:
        return sum(self.counts.values())


def short_name(title: str) -> str:
    """A paper's short name from its registry title: the method named in brackets ("... (DSP), Wang et al."),
    else the title up to its first comma ("PairRank, Jia et al., WWW 2021" -> "PairRank")."""
    bracket = re.search(r"\(([^()]+)\)", title)
    return (bracket.group(1) if bracket else title.split(",")[0]).strip()


def _span(values) -> tuple:
    """(fewest, most) of the numbers among ``values`` (an empty tuple where there is none)."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return (min(numbers), max(numbers)) if numbers else ()


def paper_summaries(records: list[dict], titles: dict[str, str]) -> list[PaperSummary]:
    """One summary per paper (in ``titles``' order) of its headline records: the paper-scale verdicts where it
    has any, else its previews. A paper with both gets one summary per scale (the previews are never counted
    with the paper-scale verdicts)."""
    out = []
    for paper, title in titles.items():
        heads = [r for r in records if r["paper"] == paper and r.get("config_role") == "headline"]
        for scale in (PAPER_SCALE, PREVIEW):
            shown = [r for r in heads if _scale(r) == scale]
            if shown:
                out.append(_summary(paper, short_name(title), scale, shown))
    return out


def _scale(record: dict) -> str:
    """A record's scale for the summary: untestable records count with the scale of their paper's source (a
    ledger's are paper-scale, this build's are previews)."""
    if record.get("scale") in (PAPER_SCALE, PREVIEW):
        return record["scale"]
    return PAPER_SCALE if record.get("verdict_source") == "ledger" else PREVIEW


def _summary(paper: str, name: str, scale: str, records: list[dict]) -> PaperSummary:
    counts = {v: sum(r["verdict"] == v for r in records) for v in VERDICTS}
    ledger = next((r["ledger"] for r in records if r.get("ledger")), None)
    source = f"the ledger of {ledger['date'][:10]}" if ledger else "this build's quick runs"
    measured = [r for r in records if r.get("horizon") is not None or r.get("runs_per_cell") is not None]
    return PaperSummary(paper, name, scale, source, counts,
                        _span(r.get("horizon") for r in measured), _span(r.get("paper_horizon") for r in measured),
                        _span(r.get("runs_per_cell") for r in measured), _span(r.get("paper_runs") for r in measured))


def _range(span: tuple, unit: str) -> str:
    """ "5,000 rounds" or "1,000–20,000 rounds"; "" without numbers; "1 run" for one."""
    if not span:
        return ""
    low, high = (f"{int(v):,}" for v in span)
    text = f"{low} {unit}" if low == high else f"{low}–{high} {unit}"
    return text.replace("1 runs", "1 run") if text.startswith("1 runs") else text


def scale_phrase(summary: PaperSummary) -> str:
    """Ours against the paper's: "20,000 rounds, 10 runs per cell; the paper: 20,000 rounds, 1 run"."""
    ours = ", ".join(p for p in (_range(summary.horizons, "rounds"), _range(summary.runs, "runs per cell")) if p)
    paper = ", ".join(p for p in (_range(summary.paper_horizons, "rounds"), _range(summary.paper_runs, "runs")) if p)
    if not ours:
        return ""
    return ours + (f"; the paper: {paper}" if paper else "")


def counts_phrase(counts: dict) -> str:
    """ "7 reproduced, 3 not reproduced and 4 inconclusive": the non-zero counts in the verdicts' order."""
    parts = [f"{n} {verdict}" for verdict, n in counts.items() if n]
    if len(parts) < 2:
        return parts[0] if parts else "none"
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def sentence(summary: PaperSummary) -> str:
    """The paper's verdicts in one sentence, with the scale they rest on and whether they are counted."""
    scale = scale_phrase(summary)
    if summary.scale == PAPER_SCALE:
        return (f"{summary.name}: {counts_phrase(summary.counts)} of {summary.claims} claims, at the paper's scale "
                f"({summary.source}" + (f": {scale})." if scale else ")."))
    return (f"{summary.name}: preview only, not counted: {counts_phrase(summary.counts)} of {summary.claims} claims "
            f"({summary.source}" + (f": {scale})." if scale else ")."))


def lead_sentence(summaries: list[PaperSummary]) -> str:
    """The answer in one sentence: the paper-scale counts of every paper together, and which papers have only
    previews."""
    total = headline_counts(summaries)
    counted = [s.name for s in summaries if s.scale == PAPER_SCALE]
    previews = [s.name for s in summaries if s.scale == PREVIEW and s.name not in counted]
    lead = (f"At the papers' scale ({_names(counted)}), {sum(total.values())} claims: {counts_phrase(total)}."
            if counted else "No paper has a verdict at its own scale yet.")
    return lead + (f" {_names(previews)} {'has' if len(previews) == 1 else 'have'} previews only, from this "
                   "build's shorter runs." if previews else "")


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def headline_counts(summaries: list[PaperSummary]) -> dict:
    """The paper-scale verdicts of every paper added up (previews left out)."""
    return {v: sum(s.counts[v] for s in summaries if s.scale == PAPER_SCALE) for v in VERDICTS}


def plot_verdicts_by_paper(summaries: list[PaperSummary]):
    """One horizontal bar per paper and scale, split into its verdicts' counts (each labelled), coloured by
    verdict; a preview's bar is hatched and named as one. The figure carries its counts as ``counts``."""
    import matplotlib.pyplot as plt

    from ..plotting import VERDICT_COLOURS, verdict_text_colour

    fig, ax = plt.subplots(figsize=(9.5, 0.36 * len(summaries) + 0.9))
    labels = [s.name + ("" if s.scale == PAPER_SCALE else " (preview)") for s in summaries]
    for y, s in enumerate(summaries):
        left = 0
        for verdict in VERDICTS:
            n = s.counts[verdict]
            if not n:
                continue
            ax.barh(y, n, left=left, color=VERDICT_COLOURS[verdict], edgecolor="white", linewidth=1,
                    hatch="//" if s.scale == PREVIEW else None, label=verdict)
            ax.text(left + n / 2, y, str(n), ha="center", va="center", fontsize=9,
                    color=verdict_text_colour(verdict), fontweight="bold")
            left += n
    ax.set_yticks(range(len(summaries)), labels)
    ax.set_ylim(len(summaries) - 0.5, -0.5)
    ax.set_xlabel("claims (one headline verdict each)")
    ax.grid(axis="y", visible=False)
    handles = {label: h for h, label in zip(*ax.get_legend_handles_labels())}
    ordered = [v for v in VERDICTS if v in handles]
    ax.legend([handles[v] for v in ordered], ordered, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              ncol=len(ordered), fontsize=9, handlelength=1.2, columnspacing=1.0)
    fig.tight_layout()
    fig.counts = {(s.paper, s.scale): dict(s.counts) for s in summaries}
    return fig


def summary_caption(summaries: list[PaperSummary]) -> str:
    """The figure's caption: what the bars count and where they come from."""
    previews = [s.name for s in summaries if s.scale == PREVIEW]
    return ("Headline verdicts per paper, one per claim. Solid bars: at the paper's horizon and runs per cell "
            "(each paper's ledger)" + (f"; hatched: previews from this build's shorter or fewer runs "
                                       f"({', '.join(previews)}), not counted." if previews else "."))


def summary_html(summaries: list[PaperSummary], figure: str, verdicts_href: str,
                 link_text: str = "the verdicts page") -> str:
    """The summary block: the answer in one sentence, the figure (an HTML ``<figure>``), one sentence per paper
    and a link (``link_text``) to the table of every claim."""
    items = "".join(f"<li><b>{html.escape(s.name)}</b>{html.escape(sentence(s).removeprefix(s.name))}</li>"
                    for s in summaries)
    return (f"<div class='olr-answer'><p><strong>{html.escape(lead_sentence(summaries))}</strong></p>{figure}"
            f"<ul class='olr-answer-papers'>{items}</ul>"
            f"<p>Every claim, its numbers and why: <a href='{verdicts_href}'>{html.escape(link_text)}</a>.</p></div>")


def counts_table(summaries: list[PaperSummary], scale: str):
    """Claims per paper and headline verdict at one scale (``"paper"`` or ``"preview"``), with a row adding up
    every paper: the same counts the figure and the sentences show."""
    import pandas as pd

    rows = {s.name: s.counts for s in summaries if s.scale == scale}
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(VERDICTS)).fillna(0).astype(int)
    table.loc["all papers"] = table.sum()
    table.index.name = "paper"
    return table


def paper_counts(summaries: list[PaperSummary], paper: str, scale: str) -> dict:
    """One paper's counts per verdict at ``scale`` (zeros where it has none), and its claims under "claims"."""
    found = next((s for s in summaries if s.paper == paper and s.scale == scale), None)
    counts = dict(found.counts) if found else dict.fromkeys(VERDICTS, 0)
    return {**counts, "claims": sum(counts.values())}
