"""The papers' own scale per experiment, and the horizon rule that separates a headline verdict from a preview.

A claim's headline verdict rests on runs at the paper's horizon (for a claim the paper states *by* a round, at
least that round) and with at least the paper's runs per cell; a verdict from shorter or fewer runs is a
*preview*: shown beside the headline, never counted with it (:func:`scale_fields`).

:data:`PAPER_SCALE` gives, per paper and experiment, the paper's horizon (rounds, or queries of a stream) and its
runs per cell, read from the paper's text (the sentence that states them is in ``source``). For an experiment
the paper does not run (a theory check, a tuning or ablation of ours) it is the book's paper profile
(``experiments.PROFILES['paper']``), and ``source`` says so. ``horizon`` :data:`WHOLE_STREAM`: the whole
stream of the data set (the length of the paper profile's runs); None: the experiment has no rounds (a
computation over samples), where only the run count is checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..claims import Claim, _select

WHOLE_STREAM = "whole stream"
OURS = "no such experiment in the paper: the book's paper profile"


@dataclass(frozen=True)
class Scale:
    """The paper's horizon and runs per cell for one experiment, and where they come from."""

    horizon: int | str | None
    runs: int
    source: str


PAPER_SCALE = {
    "dsp": {"main": Scale(10_000, 15, "Tables 2-3: 15 runs (5 folds x 3 seeds) after 10,000 queries"),
            "lambda": Scale(10_000, 15, "Figures 3-4: 15 runs over 10,000 queries"),
            "gt": Scale(10_000, 15, "Figure 3: 15 runs over 10,000 queries"),
            "k": Scale(10_000, 15, "Figure 4: 15 runs over 10,000 queries"),
            "r": Scale(10_000, 15, "Figure 4: 15 runs over 10,000 queries"),
            "cosine": Scale(5000, 15, "Figure 2: " + OURS)},
    "pairrank": {"main": Scale(5000, 20, "Figures 3-7: 20 runs, 5,000 queries"),
                 "convergence": Scale(5000, 20, "Figures 3-7: 20 runs, 5,000 queries"),
                 "theory": Scale(5000, 5, OURS), "tuning": Scale(5000, 5, OURS),
                 "ablation": Scale(5000, 20, OURS), "simulation": Scale(50_000, 10, OURS)},
    "neural": {"main": Scale(5000, 10, "Figures 4-6: 10 runs, 5,000 queries"),
               "theory": Scale(10_000, 5, OURS), "tuning": Scale(2000, 1, OURS), "ablation": Scale(2000, 5, OURS),
               "lda": Scale(None, 1, "Figure 3: one LDA projection per data set")},
    "klrank": {"table2": Scale(WHOLE_STREAM, 1, "Table 2: one pass over the 22,000 Cora queries"),
               "regret": Scale(16_383, 10, OURS)},
    "topk": {"figure1": Scale(100_000, 1, "Figure 1: one run of 100,000 (Yandex) or 200,000 (Yahoo!) queries"),
             "regret": Scale(200_000, 10, OURS)},
}


def paper_scale(paper: str, experiment: str) -> Scale | None:
    """The paper's scale for ``experiment`` (None for an experiment not declared, e.g. a method of your own)."""
    return PAPER_SCALE.get(paper, {}).get(experiment)


def claim_rows(claim: Claim, frame: pd.DataFrame | None, config: str) -> pd.DataFrame:
    """The runs a claim's verdict rests on: the configuration's rows of ``frame`` at the claim's horizon (at or
    beyond it for a "by" claim) and within the claim's ``where`` (as :func:`olr_core.claims.judged` selects
    them); empty where there are none."""
    if frame is None or frame.empty:
        return pd.DataFrame()
    if "config" in frame:
        frame = frame[frame["config"] == config]
    if claim.horizon and "rounds_run" in frame:
        rounds = frame["rounds_run"]
        frame = frame[rounds >= claim.horizon if claim.by_horizon else rounds == claim.horizon]
    return _select(frame, claim.where)


def paper_horizon(claim: Claim, scale: Scale | None, whole_stream: int | None) -> int | None:
    """The horizon the paper states the claim at: the claim's own (``Claim.horizon``) where it names one, else its
    experiment's; a whole stream's is ``whole_stream`` (its length at the paper profile)."""
    if claim.horizon:
        return int(claim.horizon)
    if scale is None or scale.horizon is None:
        return None
    return whole_stream if scale.horizon == WHOLE_STREAM else int(scale.horizon)


def scale_fields(claim: Claim, record: dict, rows: pd.DataFrame, scale: Scale | None,
                 whole_stream: int | None = None) -> dict:
    """``horizon`` (the fewest rounds of the runs the record rests on), ``paper_horizon``, ``runs_per_cell`` (the
    fewest runs of its cells), ``paper_runs`` and ``scale``: "paper" where the horizon is at least the paper's
    (a claim stated *at* a horizon is judged only at it, so at least is exactly there) and the runs per cell at
    least the paper's, else "preview". A record without cells (not testable) gets no scale."""
    cells = record.get("cells") or []
    if record["verdict"] == "not testable here" or not cells:
        return {}
    horizon = int(rows["rounds_run"].min()) if "rounds_run" in rows and not rows.empty else None
    wanted = paper_horizon(claim, scale, whole_stream)
    runs = min(int(c["runs"]) for c in cells)
    needed = scale.runs if scale is not None else None
    at_horizon = wanted is None or (horizon is not None and horizon >= wanted)
    enough = needed is not None and runs >= needed
    return {"horizon": horizon, "paper_horizon": wanted, "runs_per_cell": runs, "paper_runs": needed,
            "scale": "paper" if at_horizon and enough else "preview"}


def is_headline(record: dict) -> bool:
    """Counted among the headline verdicts: the headline configuration, at the paper's scale."""
    return record.get("config_role") == "headline" and record.get("scale") == "paper"
