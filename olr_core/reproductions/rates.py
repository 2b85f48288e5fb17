"""The growth rate of a cumulative regret, read from its increments so that a burn-in cannot lower it."""

from __future__ import annotations

import numpy as np


def increment_slope(T, regret, iterations: int = 100) -> float:
    """The exponent gamma of R(T) = a + b T^gamma, whatever a, from the increments of the cumulative regret between
    successive horizons T_{k-1} < T_k: D_k = R(T_k) - R(T_{k-1}) = b T_k^gamma (1 - rho_k^gamma) with
    rho_k = T_{k-1} / T_k, so gamma is the least-squares slope of log(D_k / |1 - rho_k^gamma|) on log T_k, iterated
    to its fixed point. With T_{k-1} = T_k / 2 it is the slope of log(R(T) - R(T/2)) on log T. The log-log slope of
    R itself is b T^gamma / (a + b T^gamma) times gamma, below gamma after a burn-in (a > 0): a linear regret with a
    large burn-in looks sublinear to it, not to this one. NaN unless every increment is positive (at least two)."""
    T, regret = np.asarray(T, float), np.asarray(regret, float)
    increments, rho, log_t = np.diff(regret), T[:-1] / T[1:], np.log(T[1:])
    if len(increments) < 2 or (increments <= 0).any():
        return float("nan")
    gamma = float(np.polyfit(log_t, np.log(increments), 1)[0])
    for _ in range(iterations):
        away_from_zero = gamma if abs(gamma) > 1e-9 else 1e-9
        corrected = np.log(increments) - np.log(np.abs(1 - rho ** away_from_zero))
        new = float(np.polyfit(log_t, corrected, 1)[0])
        if abs(new - gamma) < 1e-12:
            return new
        gamma = new
    return gamma
