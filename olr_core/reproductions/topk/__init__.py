"""Online learning to rank with top-k feedback (RTop-kF), Chaudhuri and Tewari, AISTATS 2016.

:mod:`.experiments`: the grids and :data:`.experiments.PROFILES`, the only copy of their run sizes;
:mod:`.claims`: the claim registry and the rules that judge it; :mod:`.analysis`: frames and derived numbers.
"""

from . import analysis, claims, experiments

__all__ = ["analysis", "claims", "experiments"]
