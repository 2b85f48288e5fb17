"""Sentences for the pages, generated from the claims' records: a page states a verdict, a rule, a count or a
comparison only as :func:`olr_core.claims.judge` computed it on the page's own runs.

:func:`page_record` judges one claim of a paper on a page's run frame (the same function, rule and paper numbers
as ``olr claims``); :func:`verdict_sentence` says what the record says: the verdict, the margin the rule measures,
in how many cells its interval lies above 0, below 0 or neither, and the size beside the paper's number where
the paper gives one. Nothing in these sentences is computed here.
"""

from __future__ import annotations

import pandas as pd

from ..claims import judge
from ..names import in_words


def find_claim(module, claim_id: str):
    """The claim ``claim_id`` of a paper's claims module."""
    for claim in module.CLAIMS:
        if claim.id == claim_id:
            return claim
    raise ValueError(f"{module.PAPER} has no claim {claim_id!r}; valid: {', '.join(c.id for c in module.CLAIMS)}")


def page_record(module, claim_id: str, frame: pd.DataFrame | None, config: str) -> dict:
    """The record of ``claim_id`` judged on a page's runs (``frame``: a run frame of the claim's experiment) in
    ``config``, by :func:`olr_core.claims.judge` with the paper's numbers the claims module supplies."""
    claim = find_claim(module, claim_id)
    if frame is not None:
        frame = frame.assign(config=config)
    return judge(claim, frame, config, **module.paper_cells(claim))


def cell_counts(record: dict) -> dict:
    """How many of the record's cells have their 95 % interval above 0, below 0, or neither (the counts
    :func:`olr_core.claims.verdict_of` decides on)."""
    cells = record.get("cells") or []
    above = sum(c["ci_low"] is not None and c["ci_low"] > 0 for c in cells)
    below = sum(c["ci_high"] is not None and c["ci_high"] < 0 for c in cells)
    return {"above": above, "below": below, "undecided": len(cells) - above - below, "cells": len(cells)}


def within_count(record: dict) -> tuple[int, int]:
    """(cells whose margin is at least 0, cells): for a ``within_sd`` claim, the cells whose mean lies within the
    band of the paper's mean; the point estimates, not the verdict."""
    cells = record.get("cells") or []
    return sum(c["margin"] is not None and c["margin"] >= 0 for c in cells), len(cells)


def decision_text(record: dict) -> str:
    """"95 % interval lies above 0 in a, below 0 in b and on neither side in c of n cells" (the record's counts)."""
    n = cell_counts(record)
    return (f"95 % interval lies above 0 in {n['above']}, below 0 in {n['below']} and on neither side in "
            f"{n['undecided']} of {n['cells']} cell{'s' * (n['cells'] != 1)}")


def why_text(record: dict) -> str:
    """What decided the record, for a table beside its verdict: the cell counts and, when inconclusive, the runs per
    cell that would decide it (both from the record)."""
    if record["verdict"] == "not testable here":
        return record["reason"].split(";")[0]
    text = decision_text(record)
    if record.get("runs_needed"):
        text += f"; about {record['runs_needed']:,} runs per cell would decide it"
    return text


def margin_words(record: dict) -> str:
    """The margin the record's rule measures, as its reason names it."""
    first = record["reason"].split(";")[0]
    return first.removeprefix("margin: ")


def verdict_sentence(record: dict, title: str | None = None) -> str:
    """One sentence of the record, as plain text (pages paste it as it is, so it carries no Markdown) with names in
    words: "T2-cells (as the text says): inconclusive; margin ...: its 95 % interval lies above 0 in a, below 0 in b
    and on neither side in c of n cells." (plus the size beside the paper's number)."""
    name = f"{record['id']} ({title or record['config']})"
    if record["verdict"] == "not testable here":
        return in_words(f"{name}: not testable here; {record['reason'].split(';')[0]}.", markup=False)
    text = f"{name}: {record['verdict']}; margin: {margin_words(record)}; its {decision_text(record)}."
    magnitude = record.get("magnitude")
    if magnitude:
        text += f" Beside the paper's numbers ({magnitude['unit']}): {magnitude['summary']}."
    return in_words(text, markup=False)


def page_records(module, claim_ids, grids: dict, store, data_dir=None) -> list[dict]:
    """The records of ``claim_ids`` judged on a page's runs: ``grids`` {config: run specs} (the page's grids,
    computed into ``store``); each claim in each of its configurations the page ran."""
    from ..experiments import run_frame

    frames = {config: run_frame(specs, store, data_dir) for config, specs in grids.items() if specs}
    return [page_record(module, claim_id, frames[config], config)
            for claim_id in claim_ids for config in find_claim(module, claim_id).configs if config in frames]


def records_text(records: list[dict], titles: dict | None = None) -> str:
    """The records' sentences, one after another (``titles``: {config: its name in words})."""
    return " ".join(verdict_sentence(r, (titles or {}).get(r["config"])) for r in records)
