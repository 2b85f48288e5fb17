"""The book's one group-sequential design, from the quick profile through the paper's to a budget beyond it:
the looks, their information fractions and the level each look's verdicts are judged at.

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

:mod:`olr_core.adaptive` plans the runs of the looks; :mod:`olr_core.reproductions.verdicts` judges a profile's
runs at its look's level (:func:`profile_level`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import optimize, stats

from .claims import ALPHA

LOOKS = 3                                   # the design's looks: quick, paper, a budget beyond the paper's
FRACTIONS = (0.25, 0.5, 1.0)                # planned information (runs per cell) at each look, of the last look's
PROFILE_LOOK = {"tiny": 1, "quick": 1, "paper": 2}   # the look a profile's own runs are
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
