"""Runs where they decide: one group-sequential design per experiment, from the quick profile through the paper's
to a budget beyond it (``olr claims --budget SECONDS`` adds seeds to the experiments whose claims are still
undecided, cheapest first, until every claim is decided, the design's last look is reached or the budget is spent).

The design has :data:`LOOKS` looks. The quick profile is look 1, the paper profile look 2, and a budget's further
seeds look 3 (:data:`PROFILE_LOOK`); a look at a profile holds that profile's seeds, a later look twice the previous
one's (:func:`look_seeds`), so a look never has fewer than the quick profile's 5 runs per cell (:data:`MIN_PAIRS`).
The error is spent over the looks by the O'Brien-Fleming-type spending function of Lan and DeMets (1983),
``alpha*(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt t)`` at the planned information fractions :data:`FRACTIONS`
(t = runs per cell at the look / runs at the last look: 1/4, 1/2, 1). The two-sided nominal level of look k,
``alpha_k`` (:func:`look_levels`), is the one whose boundary ``c_k`` makes the chance of a first crossing at look
k, under no effect, equal to ``alpha*(t_k) - alpha*(t_{k-1})``: the z statistics of the looks are jointly normal
with correlation ``sqrt(t_i / t_j)`` (Jennison and Turnbull 2000, ch. 7), whose rectangle probabilities
scipy.stats.multivariate_normal gives. So whatever the stopping rule (a claim takes the next look only while its
verdict can still change), the chance that a false claim is ever called "reproduced" (one-sided) over the
quick -> paper -> budget path is at most alpha / 2 at the planned fractions, and, by Bonferroni's inequality, at
most half the sum of the nominal levels (:func:`worst_case_error`, 5.1 % two-sided) whatever the fractions
turn out to be. Each verdict of :mod:`olr_core.claims` reads only the level in force, so the design holds for every
rule. The early looks spend little (look 1 about 0.01 %), so the quick profile decides only large effects and
keeps nearly the whole 5 % for the paper's scale. One path per claim: rerunning a look at a profile
(a second budget on the quick profile, say) spends its level again.

Prices come from :mod:`olr_core.plan` (the store's recorded CPU seconds of the same kinds of run; a kind never
run is priced at :data:`olr_core.budget.ROUNDS_PER_CPU_SECOND`), and a run is priced whether or not the store
already holds it, so that one command gives the same verdicts on a fresh clone and on a full store.
"""

from __future__ import annotations

import contextlib
import io
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, stats

from .budget import ROUNDS_PER_CPU_SECOND
from .claims import ALPHA
from .experiments import ResultStore

LOOKS = 3                                   # the design's looks: quick, paper, a budget beyond the paper's
FRACTIONS = (0.25, 0.5, 1.0)                # planned information (runs per cell) at each look, of the last look's
PROFILE_LOOK = {"tiny": 1, "quick": 1, "paper": 2}   # the look a profile's own runs are
CAN_CHANGE = ("inconclusive", "partly")     # verdicts a later look can still change
REFERENCE = ("Lan and DeMets (1983), Discrete sequential boundaries for clinical trials, Biometrika 70(3); "
             "Jennison and Turnbull (2000), Group Sequential Methods with Applications to Clinical Trials, ch. 7")


def spent(t, alpha: float = ALPHA):
    """The O'Brien-Fleming-type spending function of Lan and DeMets (1983): the two-sided error spent by
    information fraction t, ``2 - 2 Phi(z_{1 - alpha/2} / sqrt t)`` (alpha at t = 1)."""
    t = np.asarray(t, float)
    return 2 * stats.norm.sf(stats.norm.isf(alpha / 2) / np.sqrt(t))


def _no_crossing(bounds: tuple, fractions: tuple) -> float:
    """P(|Z_j| < c_j for every look j) under no effect, the looks' z statistics jointly normal with correlation
    sqrt(t_i / t_j) (the statistic's independent increments)."""
    if not bounds:
        return 1.0
    t = np.asarray(fractions[:len(bounds)], float)
    corr = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    c = np.asarray(bounds, float)
    if len(c) == 1:
        return float(1 - 2 * stats.norm.sf(c[0]))
    mvn = stats.multivariate_normal(mean=np.zeros(len(c)), cov=corr, seed=46, maxpts=50_000 * len(c),
                                    abseps=1e-6, releps=1e-6)
    return float(mvn.cdf(c, lower_limit=-c))


@lru_cache(maxsize=32)
def spending_bounds(fractions: tuple = FRACTIONS, alpha: float = ALPHA) -> tuple[float, ...]:
    """The two-sided z boundaries c_k: look k's first-crossing probability equals the error spent between looks
    k - 1 and k (:func:`spent`), solved one look at a time (brentq on the multivariate normal's rectangle)."""
    if not fractions or any(b <= a for a, b in zip(fractions, fractions[1:])) or not 0 < fractions[0] \
            or fractions[-1] != 1:
        raise ValueError(f"fractions={fractions!r} are invalid; information fractions rise strictly to 1")
    bounds: tuple = ()
    for k, t in enumerate(fractions):
        target = float(spent(t, alpha) - (spent(fractions[k - 1], alpha) if k else 0.0))
        before = _no_crossing(bounds, fractions)

        def excess(c, bounds=bounds, before=before, target=target):
            return before - _no_crossing((*bounds, c), fractions) - target
        bounds = (*bounds, float(optimize.brentq(excess, 0.5, 12.0, xtol=1e-6)))
    return bounds


def look_levels(looks: int = LOOKS, alpha: float = ALPHA, fractions: tuple | None = None) -> tuple[float, ...]:
    """alpha_k of each look: the two-sided nominal level of O'Brien-Fleming-type Lan-DeMets spending at the
    information ``fractions`` (default :data:`FRACTIONS` for :data:`LOOKS` looks, else equally spaced)."""
    if not isinstance(looks, int) or looks < 1:
        raise ValueError(f"looks={looks!r} is invalid; a sequential design has a whole number of looks >= 1")
    if fractions is None:
        fractions = FRACTIONS if looks == LOOKS else tuple((k + 1) / looks for k in range(looks))
    if len(fractions) != looks:
        raise ValueError(f"{looks} looks need {looks} information fractions, not {len(fractions)}")
    return tuple(float(2 * stats.norm.sf(c)) for c in spending_bounds(tuple(fractions), alpha))


def worst_case_error(looks: int = LOOKS, alpha: float = ALPHA) -> float:
    """The sum of the looks' nominal levels: the two-sided error bound (Bonferroni) whatever the looks' actual
    information fractions."""
    return float(sum(look_levels(looks, alpha)))


def profile_level(profile: str) -> float:
    """The level a profile's own verdicts are judged at: its look's (:data:`PROFILE_LOOK`) in the design."""
    return look_levels()[PROFILE_LOOK.get(profile, 1) - 1]


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
                     store: ResultStore | None = None, rankers=()) -> tuple[list[dict], Spend]:
    """The claims' records under the sequential design: every experiment at its first look, then further looks
    (:func:`next_steps`) while an undecided claim's experiment has one and the budget (CPU seconds, or "auto":
    the profile's own runs' cost) pays for it. Records still undecided say what deciding them would take."""
    from .reproductions.verdicts import claim_records

    store = store or ResultStore()
    design = Design(paper, profile, data_dir, rankers, store)
    budget = design.profile_cost() if budget == "auto" else _budget_seconds(budget)
    looks = design.first_looks()
    while True:
        records = claim_records(paper, profile, data_dir, jobs, store, rankers=rankers, looks=looks)
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
