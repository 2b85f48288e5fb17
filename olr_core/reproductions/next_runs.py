"""What decides an inconclusive claim: the command that gives every cell the runs its reach calculation asks for
(:func:`olr_core.claims.reach`: the runs per cell that end "inconclusive", one decided cell, with 80 % assurance),
at the paper's horizon, and what that command costs from the store's recorded run costs. A record whose reach is
not estimable gets no seed count, only the paper-scale command."""

from __future__ import annotations

import math

import pandas as pd

from ..experiments.costs import estimate_seconds
from ..formatting import significant

TARGET_PROFILE = "paper"                    # a verdict is decided at the paper's horizon, not a shorter one's


def runs_per_seed(specs: list, frame: pd.DataFrame | None, record: dict) -> int | None:
    """The runs one more seed adds to the claim's thinnest cell at the suggested profile: the fewest runs of one
    seed's layout (``specs``) sharing data set, user, method and parameters (one per fold); without a layout,
    this build's thinnest cell over its seeds. None where neither names seeds."""
    if specs:
        groups: dict = {}
        for s in specs:
            key = (s.dataset, s.click_model, s.algorithm, repr(sorted(s.params.items())))
            groups[key] = groups.get(key, 0) + 1
        return min(groups.values())
    cells = [c for c in record.get("cells") or [] if c["runs"]]
    if frame is None or "seed" not in frame or frame.empty or not cells:
        return None
    return max(1, min(c["runs"] for c in cells) // frame["seed"].nunique())


def grid_cost(layout: dict, costs: dict) -> tuple[float, int]:
    """(CPU seconds of every run of ``layout`` ({(configuration, experiment): specs}), runs of unknown cost), each
    run priced by :func:`olr_core.experiments.costs.estimate_seconds` from the store's recorded ``costs``."""
    seconds, unknown = 0.0, 0
    for specs in layout.values():
        for spec in specs:
            estimate, _ = estimate_seconds(spec.canonical(), costs)
            seconds, unknown = (seconds + estimate, unknown) if estimate is not None else (seconds, unknown + 1)
    return seconds, unknown


def hours(seconds: float) -> str:
    """An estimated CPU time to the two significant digits an estimate supports ("89 CPU-hours", "1,350 CPU-seconds"
    below an hour, whole)."""
    return f"{significant(seconds / 3600, 2)} CPU-hours" if seconds >= 3600 else f"{seconds:,.0f} CPU-seconds"


def decide_command(record: dict, frame: pd.DataFrame | None, profile: str, experiment: str | None,
                   layout: dict, price=None) -> str:
    """The reason's last clause for an inconclusive record: the command that gives every cell about
    ``runs_needed`` runs at the paper's horizon (seeds = ceil(runs needed / runs one seed adds to the thinnest
    cell); ``layout``: the paper's claim runs at :data:`TARGET_PROFILE` with one seed, {(configuration,
    experiment): specs}), and its CPU time: ``price(seeds)`` gives (CPU seconds, runs of unknown cost) of every
    claim run of the paper at that profile with one seed (1) or the profile's own (None), :func:`grid_cost`;
    one seed's cost times the seeds."""
    paper, needed, target = record["paper"], record.get("runs_needed"), TARGET_PROFILE
    specs = layout.get((record.get("config"), experiment), [])
    per_seed = runs_per_seed(specs, frame, record)
    if not needed or not per_seed:
        seeds, text = None, f"; `olr claims {paper} --profile {target}` runs the paper's scale"
    else:
        seeds = math.ceil(needed / per_seed)
        text = (f"; to end 'inconclusive', `olr claims {paper} --profile {target} --seeds {seeds}` gives every cell at "
                f"least {seeds * per_seed:,} runs ({seeds} seeds x {per_seed} per seed)")
    rounds = sorted({int(s.rounds) for s in specs})
    if rounds:
        text += f" at the paper's horizon of {', '.join(f'{r:,}' for r in rounds)} queries"
    if seeds and profile != target:
        text += f" (the count assumes the spread this build measured at {_horizon(frame)})"
    if price is not None:
        seconds, unknown = price(1 if seeds else None)
        text += (f"; the whole command costs about {hours(seconds * (seeds or 1))} if none of its runs is stored"
                 + (f" ({unknown * (seeds or 1):,} runs of unknown cost not counted)" if unknown else ""))
    return text


def _horizon(frame: pd.DataFrame | None) -> str:
    if frame is None or "rounds_run" not in frame:
        return "this profile's horizon"
    return ", ".join(f"{int(r):,}" for r in sorted(frame["rounds_run"].unique())) + " queries"


