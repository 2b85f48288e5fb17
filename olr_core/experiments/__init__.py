"""Experiments: run specs, grids, the results store and tidy result tables.

The tables (:mod:`.results`: pandas and scipy.stats, about a second of imports) load on first use, so that
``olr run`` and a grid's workers, which only run and store, start without them.
"""

from .runner import execute, reference_weights, run_grid, spec_key
from .spec import RunSpec, expand_grid, load_grid
from .store import ResultStore

_TABLES = ("curve_frame", "mean_ci", "run_frame", "summary_frame")

__all__ = ["ResultStore", "RunSpec", "curve_frame", "execute", "expand_grid", "load_grid", "mean_ci",
           "reference_weights", "run_frame", "run_grid", "spec_key", "summary_frame"]


def __getattr__(name: str):
    if name in _TABLES:
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
