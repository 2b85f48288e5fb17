"""Experiments: run specs, grids, the results store and tidy result tables."""

from .results import curve_frame, mean_ci, run_frame, summary_frame
from .runner import execute, reference_weights, run_grid, spec_key
from .spec import RunSpec, expand_grid, load_grid
from .store import ResultStore

__all__ = ["ResultStore", "RunSpec", "curve_frame", "execute", "expand_grid", "load_grid", "mean_ci",
           "reference_weights", "run_frame", "run_grid", "spec_key", "summary_frame"]
