"""Budgets before spending: a request (a grid, ``olr claims``) is planned before any run is described.

A plan counts the runs, the rounds they play, the CPU time that takes at a conservative rate and the
memory the request holds at once (each run's description while it is planned, and the per-round records
of the runs in flight). Beyond :data:`LIMITS` the command says what it plans and starts only with
``--yes``; a single run is bounded by :data:`MAX_ROUNDS`.
"""

from __future__ import annotations

from dataclasses import dataclass

# A run plays its horizon in chunks (olr_core.loop.CHUNK_ROUNDS rounds' queries and shown lists at a time, a few
# MB) and keeps only its per-round records until it ends: online NDCG and mis-ordered pairs (16 bytes a round)
# and each diagnostic a ranker reports (8 bytes a round each; up to four here), so 10 million rounds hold about
# 0.5 GB and are stored as a trace of that size.
MAX_ROUNDS = 10_000_000
BYTES_PER_ROUND = 48
BYTES_PER_PLANNED_RUN = 4_096          # a run's checked description and key while the request is planned
BYTES_PER_WORKER = 200_000_000         # a grid worker process: interpreter, numpy, numba's runtime, a fold's data
ROUNDS_PER_CPU_SECOND = 1_000          # conservative: the dueling learners play 1,500-2,700 (benchmarks/)
LIMITS = {"runs": 20_000, "cpu_hours": 8.0, "memory_gb": 4.0}


class BudgetError(ValueError):
    """A request larger than the limits, made without ``--yes`` (one line: what it plans, how to start it)."""


@dataclass(frozen=True)
class Plan:
    """What a request would compute: ``runs`` runs of ``rounds`` rounds in all, the longest ``longest``,
    ``workers`` of them at once."""

    runs: int
    rounds: int
    longest: int
    workers: int = 1

    @property
    def cpu_hours(self) -> float:
        return self.rounds / ROUNDS_PER_CPU_SECOND / 3600

    @property
    def memory_gb(self) -> float:
        """The planned runs' descriptions, each run in flight's per-round records and, with more than one at once,
        each worker process's own memory (one run at a time plays in the requesting process)."""
        processes = self.workers if self.workers > 1 else 0
        return (self.runs * BYTES_PER_PLANNED_RUN + self.workers * self.longest * BYTES_PER_ROUND
                + processes * BYTES_PER_WORKER) / 1e9

    def over(self) -> list[str]:
        """The limits this plan exceeds (empty: within budget)."""
        values = {"runs": self.runs, "cpu_hours": self.cpu_hours, "memory_gb": self.memory_gb}
        return [name for name, limit in LIMITS.items() if values[name] > limit]

    def describe(self) -> str:
        return (f"{self.runs:,} runs ({self.rounds:,} rounds), about {self.cpu_hours:,.1f} CPU hours at "
                f"{ROUNDS_PER_CPU_SECOND:,} rounds/s and {self.memory_gb:,.1f} GB of memory")


def require_approval(plan: Plan, approved: bool, what: str) -> None:
    """Stop a request beyond :data:`LIMITS` unless ``approved`` (``--yes``), saying what it plans."""
    if approved or not plan.over():
        return
    units = {"runs": "runs", "cpu_hours": "CPU hours", "memory_gb": "GB of memory"}
    limits = ", ".join(f"{LIMITS[name]:,g} {units[name]}" for name in plan.over())
    raise BudgetError(f"{what} plans {plan.describe()}, beyond the limit of {limits}; nothing was started. Run "
                      "it again with --yes to start it, or ask for fewer seeds, rounds or cells")


def check_rounds(rounds) -> None:
    """One run's horizon within :data:`MAX_ROUNDS` (its per-round records are kept and stored whole)."""
    if isinstance(rounds, int) and rounds > MAX_ROUNDS:
        raise BudgetError(f"option rounds={rounds:,} is too long for one run: its per-round records would take "
                          f"about {rounds * BYTES_PER_ROUND / 1e9:,.0f} GB; use at most {MAX_ROUNDS:,} rounds a run "
                          "(more seeds measure more)")
