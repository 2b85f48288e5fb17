"""What a stored run's numbers must look like, given the spec it claims: checked on every load and on every
import, so that a forged or damaged run (NDCG above 1 or below 0, NaN, two rounds recorded for a 200-round
spec, strings where numbers belong) is never served, whatever file or bundle it came in.

No built-in run records a NaN NDCG: online NDCG counts a query without a relevant document as 0, offline NDCG
averages over the queries that have one, and a run whose evaluation split has none is refused before it starts
(``olr_core.loop._require_relevant``); so a NaN here is a forgery or damage, and such a run is set aside."""

from __future__ import annotations

import numpy as np

NUMERIC = "biuf"
SLACK = 1e-9                # NDCG may exceed 1 by rounding (an ideal ranking's DCG divided by itself)


def _numbers(name: str, array, length: int | None = None, low=None, high=None, integer: bool = False,
             finite: bool = True) -> np.ndarray:
    """``array`` checked: numeric (integer if asked), ``length`` long, within [low, high], finite if asked."""
    if not isinstance(array, np.ndarray) or array.dtype.kind not in ("biu" if integer else NUMERIC):
        raise ValueError(f"its {name} is not an array of {'whole numbers' if integer else 'numbers'} "
                         f"({getattr(array, 'dtype', type(array).__name__)})")
    if array.ndim != 1 or (length is not None and len(array) != length):
        raise ValueError(f"its {name} holds {array.shape} entries where its spec implies {length}")
    values = array.astype(float)
    if finite and not np.isfinite(values).all():
        raise ValueError(f"its {name} holds a value that is not finite")
    checked = values[~np.isnan(values)]
    if (low is not None and (checked < low).any()) or (high is not None and (checked > high).any()):
        raise ValueError(f"its {name} leaves [{low}, {high}]")
    return array


def evaluations(rounds: int, eval_every: int) -> int:
    """How many offline evaluations a run of ``rounds`` records (as the loop schedules them)."""
    return rounds // eval_every + 1 + (rounds % eval_every != 0)


def check_trace(spec: dict, trace) -> None:
    """Raise :class:`ValueError` (saying what is wrong) unless ``trace`` could be a run of ``spec``."""
    rounds = spec.get("rounds")
    if not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"its spec's rounds {rounds!r} is not a count")
    for name, value in {**getattr(trace, "stats", {}), **getattr(trace, "eval_stats", {})}.items():
        if not isinstance(value, np.ndarray) or value.dtype.kind not in NUMERIC + "c":
            raise ValueError(f"its record {name} is not numbers ({getattr(value, 'dtype', type(value).__name__)})")
    if hasattr(trace, "chosen_rank"):
        _check_library(rounds, trace)
        return
    eval_every = spec.get("eval_every", 10)
    if not isinstance(eval_every, int) or eval_every < 1:
        raise ValueError(f"its spec's eval_every {eval_every!r} is not a positive count")
    _numbers("online NDCG", trace.online_ndcg, rounds, 0.0, 1.0 + SLACK)
    _numbers("mis-ordered pairs", trace.online_misordered, rounds, 0, None, integer=True)
    n = evaluations(rounds, eval_every)
    points = _numbers("evaluation rounds", trace.eval_rounds, n, 0, rounds, integer=True)
    if n > 1 and (np.diff(points) <= 0).any():
        raise ValueError("its evaluation rounds are not increasing")
    _numbers("offline NDCG", trace.offline_ndcg, n, 0.0, 1.0 + SLACK)


def _check_library(rounds: int, trace) -> None:
    """A growing-library run: one record per query (at most ``rounds``; a stream may end sooner)."""
    n = len(_numbers("chosen ranks", trace.chosen_rank, None, 1, None, integer=True))
    if n > rounds:
        raise ValueError(f"it records {n} queries where its spec allows {rounds}")
    candidates = _numbers("candidate counts", trace.n_candidates, n, 1, None, integer=True)
    rank = _numbers("chosen ranks", trace.chosen_rank, n, 1, None, integer=True)
    if (rank > candidates).any():
        raise ValueError("a chosen rank lies beyond its candidates")
    _numbers("K-L costs", trace.kl_cost, n, 0.0, None, finite=False)
    if np.isnan(trace.kl_cost.astype(float)).any():
        raise ValueError("its K-L costs hold NaN")
    _numbers("chosen items", trace.chosen, n, None, None, integer=True)
