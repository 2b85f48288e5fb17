"""Runs where they decide: one group-sequential design per experiment, from the quick profile through the paper's
to a budget beyond it (``olr claims --budget SECONDS`` adds seeds to the experiments whose claims are still
undecided, cheapest first, until every claim is decided, the design's last look is reached or the budget is spent).

The design and its levels are :mod:`olr_core.sequential`'s (O'Brien-Fleming-type Lan-DeMets spending over
the looks quick -> paper -> budget); this module plans the runs of its looks.

Prices come from :mod:`olr_core.plan` (the store's recorded CPU seconds of the same kinds of run; a kind never
run is priced at :data:`olr_core.budget.ROUNDS_PER_CPU_SECOND`), and a run is priced whether or not the store
already holds it, so that one command gives the same verdicts on a fresh clone and on a full store.
"""

from __future__ import annotations

import contextlib
import io
import math
from dataclasses import dataclass

from .budget import ROUNDS_PER_CPU_SECOND
from .experiments import ResultStore
from .sequential import (  # noqa: F401  (the design's names, read here and by the tests as adaptive's)
    FRACTIONS,
    LOOKS,
    PROFILE_LOOK,
    REFERENCE,
    _no_crossing,
    look_levels,
    profile_level,
    spending_bounds,
    spent,
    worst_case_error,
)

CAN_CHANGE = ("inconclusive", "partly")     # verdicts a later look can still change


def look_seeds(profile_seeds: int, index: int, first: int = 1) -> int:
    """Seeds at look ``index`` (1-based) of a design entered at look ``first`` with the profile's seeds: the
    profile's own at its look, doubled at each later one."""
    if index < first:
        raise ValueError(f"look {index} comes before this profile's look {first}")
    return profile_seeds * 2 ** (index - first)


@dataclass(frozen=True)
class Look:
    """An experiment's look: its index (1-based), seeds and two-sided level."""

    index: int
    seeds: int
    level: float


def another_look(verdict: str, index: int, looks: int = LOOKS) -> bool:
    """The stopping rule: a claim judged ``verdict`` at look ``index`` asks for the next look while the verdict can
    still change (:data:`CAN_CHANGE`) and the design has a look left (the budget decides whether it is paid)."""
    return verdict in CAN_CHANGE and index < looks


class Design:
    """The experiments of ``paper``'s claims at ``profile``: their grids at each look's seeds and their prices."""

    def __init__(self, paper, profile: str, data_dir=None, rankers=(), store: ResultStore | None = None,
                 looks: int = LOOKS):
        from .experiments.costs import stored_costs

        self.paper, self.profile, self.data_dir, self.rankers, self.looks = paper, profile, data_dir, rankers, looks
        self.levels = look_levels(looks)
        self.first = min(PROFILE_LOOK.get(profile, 1), looks)
        self.costs = stored_costs(store or ResultStore())
        self._grids, self._prices = {}, {}
        base = self._grid(None)
        self.groups = sorted({(p, exp) for p, _, exp in base})
        self.profile_seeds = {g: max(len({s.seed for s in specs}) for (p, _, exp), specs in base.items()
                                     if (p, exp) == g) for g in self.groups}

    def _grid(self, seeds: int | None) -> dict:
        from .reproductions.verdicts import claim_grids

        if seeds not in self._grids:
            with contextlib.redirect_stderr(io.StringIO()):      # (notes are printed once, by the runs)
                self._grids[seeds] = claim_grids(self.paper, self.profile, self.data_dir, seeds, self.rankers)
        return self._grids[seeds]

    def specs(self, group: tuple, seeds: int | None) -> dict:
        """{repr: spec} of the group's runs (every configuration) at ``seeds`` (None: the profile's)."""
        return {repr(s): s for (p, _, exp), specs in self._grid(seeds).items() if (p, exp) == group for s in specs}

    def price(self, specs) -> float:
        """Estimated CPU seconds of ``specs`` (plan.py's pricing; unknown kinds at the budget's rate)."""
        from .experiments.costs import estimate_seconds

        total = 0.0
        for spec in specs:
            if repr(spec) not in self._prices:
                seconds, _ = estimate_seconds(spec.canonical(), self.costs)
                self._prices[repr(spec)] = seconds if seconds is not None else spec.rounds / ROUNDS_PER_CPU_SECOND
            total += self._prices[repr(spec)]
        return total

    def look(self, group: tuple, index: int) -> Look:
        return Look(index, look_seeds(self.profile_seeds[group], index, self.first), self.levels[index - 1])

    def first_looks(self) -> dict:
        """Every experiment at the profile's own look (quick: look 1, paper: look 2)."""
        return {g: self.look(g, self.first) for g in self.groups}

    def cost(self, looks: dict) -> float:
        """CPU seconds of every run of the design at ``looks`` (stored or not)."""
        return sum(self.price(self.specs(g, look.seeds).values()) for g, look in looks.items())

    def profile_cost(self) -> float:
        """CPU seconds of the profile's own runs: the default budget (today's cost of the claims' runs)."""
        return sum(self.price(self.specs(g, None).values()) for g in self.groups)

    def step_cost(self, group: tuple, look: Look) -> tuple[float, int]:
        """(CPU seconds, runs) the group's next look adds."""
        now = self.specs(group, look.seeds)
        later = self.specs(group, look_seeds(self.profile_seeds[group], look.index + 1, self.first))
        added = [s for key, s in later.items() if key not in now]
        return self.price(added), len(added)

    def per_seed_cost(self, group: tuple, look: Look) -> float:
        return self.price(self.specs(group, look.seeds).values()) / look.seeds


def _undecided(records: list[dict]) -> dict[tuple, list[dict]]:
    out = {}
    for r in records:
        if r["verdict"] in CAN_CHANGE:
            out.setdefault((r["paper"], r.get("experiment")), []).append(r)
    return out


def next_steps(design: Design, looks: dict, undecided: dict, remaining: float) -> list[tuple]:
    """The groups whose next look to take: those with an undecided claim and a look left, decisive ones first
    (:func:`_tier`: a claim's ``runs_needed`` within the runs of the design's last look; those showing no spread
    last), then by CPU seconds per undecided record; taken in that order while the remaining budget pays."""
    candidates = []
    for group, records in undecided.items():
        look = looks.get(group)
        records = [r for r in records if look is not None and another_look(r["verdict"], look.index, design.looks)]
        if not records:
            continue
        seconds, runs = design.step_cost(group, look)
        if not runs:
            continue                                    # more seeds add no run (a computed statistic)
        candidates.append((_tier(records, 2 ** (design.looks - look.index)), seconds / len(records), seconds, group))
    chosen = []
    for _, _, seconds, group in sorted(candidates):
        if seconds <= remaining:
            chosen.append(group)
            remaining -= seconds
    return chosen


def _tier(records: list[dict], growth: int) -> int:
    """0: a record the design's last look (``growth`` times today's runs) can decide by its ``runs_needed``;
    1: a partly record, or one needing more; 2: only records showing no spread or margin yet (so far the same
    in every run: more seeds may show none either)."""
    def needed(r):
        return r.get("runs_needed")

    if any(needed(r) and r.get("cells") and needed(r) <= growth * max(c["runs"] for c in r["cells"])
           for r in records):
        return 0
    return 1 if any(needed(r) or r["verdict"] == "partly" for r in records) else 2


@dataclass
class Spend:
    """What a budgeted request did: its budget, the priced cost of its runs, the looks each experiment reached."""

    budget: float
    spent: float
    profile_cost: float
    looks: dict

    def describe(self) -> str:
        reached = {}
        for look in self.looks.values():
            reached[look.index] = reached.get(look.index, 0) + 1
        at = ", ".join(f"{n} at look {k}" for k, n in sorted(reached.items()))
        return (f"budget {self.budget:,.0f} CPU s (the profile's runs: {self.profile_cost:,.0f} s), spent "
                f"~{self.spent:,.0f} s; experiments: {at} (of {LOOKS} looks at levels "
                f"{', '.join(f'{v:.3g}' for v in look_levels())}: O'Brien-Fleming-type Lan-DeMets error spending)")


def budgeted_records(paper: str | None, profile: str, budget, data_dir=None, jobs: int = 1,
                     store: ResultStore | None = None, rankers=(), keep_runs: bool = False) -> tuple[list[dict], Spend]:
    """The claims' records under the sequential design: every experiment at its first look, then further looks
    (:func:`next_steps`) while an undecided claim's experiment has one and the budget (CPU seconds, or "auto":
    the profile's own runs' cost) pays for it. Records still undecided say what deciding them would take.
    ``keep_runs``: the last looks' records carry their runs (a ledger's, :func:`.verdicts.claim_records`)."""
    from .reproductions.verdicts import claim_records

    store = store or ResultStore()
    design = Design(paper, profile, data_dir, rankers, store)
    budget = design.profile_cost() if budget == "auto" else _budget_seconds(budget)
    looks = design.first_looks()
    while True:
        records = claim_records(paper, profile, data_dir, jobs, store, rankers=rankers, looks=looks,
                                keep_runs=keep_runs)
        steps = next_steps(design, looks, _undecided(records), budget - design.cost(looks))
        if not steps:
            break
        looks.update({g: design.look(g, looks[g].index + 1) for g in steps})
    spend = Spend(budget, design.cost(looks), design.profile_cost(), looks)
    for record in records:
        if record["verdict"] in CAN_CHANGE:
            _say_what_it_needs(record, design, looks.get((record["paper"], record.get("experiment"))))
    return records, spend


def _budget_seconds(budget) -> float:
    try:
        seconds = float(budget)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"--budget {budget!r} is invalid; give CPU seconds (a number >= 0) or 'auto' (the "
                         "profile's own cost)")
    return seconds


def _say_what_it_needs(record: dict, design: Design, look: Look | None) -> None:
    """An undecided record's reason gains the runs per cell and CPU seconds that would decide it (beyond the
    budget or the design's last look)."""
    needed, cells = record.get("runs_needed"), record.get("cells") or []
    if look is None or not cells:
        return
    if not needed:
        record["reason"] += (f"; still partly at look {look.index} of {design.looks}: more seeds may decide its "
                             "undecided cells" if record["verdict"] == "partly" else
                             "; beyond this budget, and the runs that would decide it are not estimable"
                             + (f" ({record['runs_needed_not_estimable']})"
                                if record.get("runs_needed_not_estimable") else ""))
        return
    now = max(c["runs"] for c in cells)
    seeds = math.ceil(needed / max(1, now / look.seeds))
    seconds = max(0.0, (seeds - look.seeds) * design.per_seed_cost((record["paper"], record["experiment"]), look))
    record["needs"] = {"runs_per_cell": int(needed), "seeds": seeds, "cpu_seconds": round(seconds, 1)}
    stop = "the design's last look" if look.index == design.looks else "the budget's end"
    record["reason"] += (f"; undecided at {stop} (look {look.index} of {design.looks}, {look.seeds} seed"
                         f"{'s' * (look.seeds != 1)}): deciding it needs about {needed:,} runs per cell "
                         f"({seeds:,} seeds), ~{seconds:,.0f} CPU s more")
