"""Regret-based online ranking for a growing digital library (NoRegret KLRank), Delage, KDD 2009.

:mod:`.experiments`: the grids and :data:`.experiments.PROFILES`, the only copy of their run sizes;
:mod:`.claims`: the claim registry and the rules that judge it; :mod:`.analysis`: frames and derived numbers.
"""

from . import analysis, claims, experiments

__all__ = ["analysis", "claims", "experiments"]
