"""The growing-library loop (Delage, KDD 2009): the sibling of :func:`olr_core.loop.run_online`
for streams whose user reveals the one item they chose.

Each step t: the stream's query (its candidate items, topic, library size), ``ranker.rank``
shows an ordering of the candidates, the user's choice is revealed (the stream's, or with an
adversarial stream the item the ranker scores lowest before it ranks: Remark 3.1 of the
paper), ``ranker.learn`` updates. Rankers follow the protocol of
:mod:`olr_core.rankers.base` with ``feedback_kind = "choice"`` (or ``"any"``); the
feedback is a :class:`olr_core.users.Choice` with the chosen item's index among the
candidates and its position in the shown list (counted without a sort when the display is
sorted only on read, :class:`olr_core.rankers.library.SortedOnRead`: the same position).

Recorded per step: the rank of the chosen item (1 = first) and the K-L cost
-log P(the chosen item is ranked first) under the policy that produced the ranking. A random
policy says so by putting ``log_first`` (log P(first = each candidate)) in its display's
``info`` dict; any other ranker is deterministic, and its cost is 0 when the chosen item is
first and infinite otherwise (the paper's Table 2 convention). The same four random streams as the
other loop (queries are the stream's own, so that stream is unused).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from .data.library import LibraryStream
from .loop import random_streams
from .rankers.library import SortedOnRead, load_kernels
from .threads import blas_threads
from .users import Choice


@dataclass
class LibraryTrace:
    """Everything one growing-library run recorded (one entry per query)."""

    chosen_rank: np.ndarray
    kl_cost: np.ndarray
    n_candidates: np.ndarray
    chosen: np.ndarray              # the chosen item's index among the candidates (the adversary's, if any)
    stats: dict = field(default_factory=dict)
    seconds: float = 0.0
    eval_stats: dict = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        return len(self.chosen_rank)

    def metrics(self) -> dict[str, np.ndarray]:
        """Per query: relative click distance (rank - 1) / |I|, clicked first, NDCG log 2 / log(1 + rank)."""
        rank = self.chosen_rank.astype(float)
        return {"rel_click_distance": (rank - 1) / self.n_candidates, "clicked_first": (rank == 1).astype(float),
                "ndcg": math.log(2) / np.log1p(rank), "kl_cost": self.kl_cost}

    def summary(self, discount: float = 0.9995) -> dict:
        """The paper's Table 2 columns (a deterministic ranker's K-L cost is infinite: ``None`` with a flag)."""
        m = self.metrics()
        cost = float(np.mean(self.kl_cost)) if self.rounds else float("nan")
        infinite = bool(np.isinf(cost))
        return {"rounds": self.rounds, "queries": self.rounds, "avg_kl_cost": None if infinite else cost,
                "kl_cost_infinite": infinite,
                "avg_rel_click_distance": float(m["rel_click_distance"].mean()) if self.rounds else float("nan"),
                "clicked_first_rate": float(m["clicked_first"].mean()) if self.rounds else float("nan"),
                "avg_ndcg": float(m["ndcg"].mean()) if self.rounds else float("nan"), "seconds": self.seconds}

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"library__chosen_rank": self.chosen_rank, "library__kl_cost": self.kl_cost,
               "library__n_candidates": self.n_candidates, "library__chosen": self.chosen}
        out.update({f"stat__{k}": v for k, v in self.stats.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict, seconds: float) -> LibraryTrace:
        return cls(arrays["library__chosen_rank"], arrays["library__kl_cost"], arrays["library__n_candidates"],
                   arrays["library__chosen"], {k[6:]: v for k, v in arrays.items() if k.startswith("stat__")}, seconds)


def run_library(ranker, stream: LibraryStream, rounds: int | None = None, seed: int = 0,
                progress=None) -> LibraryTrace:
    """Play ``stream`` (its first ``rounds`` queries, all by default) with ``ranker``; what
    ``learn`` returns (e.g. the loss of the ranker's parameters on the revealed choice) is
    recorded per step."""
    with blas_threads():
        return _run_library(ranker, stream, rounds, seed, progress)


def _check(ranker, stream: LibraryStream, rounds):
    kind = getattr(ranker, "feedback_kind", "clicks")
    if kind not in ("choice", "any"):
        raise ValueError(f"{type(ranker).__name__} learns from {kind!r} feedback; a growing-library stream "
                         f"({stream.name}) reveals the chosen item only: use a ranker with choice feedback")
    if rounds is not None and (not isinstance(rounds, (int, np.integer)) or rounds < 0):
        raise ValueError(f"rounds must be a non-negative integer or None (the whole stream), got {rounds!r}")


def _run_library(ranker, stream, rounds, seed, progress) -> LibraryTrace:
    _check(ranker, stream, rounds)
    T = stream.n_queries if rounds is None else min(int(rounds), stream.n_queries)
    streams = random_streams(seed)
    load_kernels()                                   # before the clock: a run's seconds are the same in any process
    started = time.perf_counter()
    ranker.start(stream, streams["ranker"])
    chosen_rank = np.zeros(T, dtype=np.int64)
    choices = np.zeros(T, dtype=np.int64)
    kl = np.zeros(T)
    stats: dict = {}
    for t in range(T):
        query = stream.query(t)
        if query.n_docs == 0:
            raise ValueError(f"stream {stream.name}, query {t}: the candidate set is empty (no item of topic "
                             f"{query.topic} in the library yet); drop such queries when building the stream")
        chosen = _adversary_choice(ranker, query) if stream.adversarial else int(stream.chosen[t])
        choices[t] = chosen
        display = ranker.rank(query)
        position = shown_at(display, chosen)
        chosen_rank[t] = position + 1
        log_first = display.info.get("log_first") if isinstance(display.info, dict) else None
        kl[t] = -log_first[chosen] if log_first is not None else (0.0 if position == 0 else np.inf)
        info = ranker.learn(query, display, Choice(chosen, position))
        for key, value in (info or {}).items():
            if key not in stats:
                stats[key] = np.full(T, np.nan)
            stats[key][t] = value
        if progress is not None and (t + 1) % 1000 == 0:
            progress(t + 1)
    return LibraryTrace(chosen_rank, kl, stream.n_candidates[:T].copy(), choices, stats, eval_stats={},
                        seconds=time.perf_counter() - started)


def shown_at(display, item: int) -> int:
    """Where ``display`` shows ``item`` (0 = first): counted without sorting by a display sorted only when read
    (:class:`olr_core.rankers.library.SortedOnRead`), else looked up in its ranking."""
    if isinstance(display, SortedOnRead):
        return display.position(item)
    return int(np.flatnonzero(display.ranking == item)[0])


def _adversary_choice(ranker, query) -> int:
    """Remark 3.1's user: the candidate the ranker scores lowest (ties: the first), fixed before the
    ranker draws its ranking (so a random policy's own coin flips are not seen)."""
    return int(np.argmin(ranker.score(query)))
