"""Document pairs inferred from clicks on a shown list.

- ``pdgd_pairs``: every clicked document against every unclicked document above the last
  click and the one right after it (Oosterhuis & de Rijke 2018).
- ``independent_pairs``: disjoint position pairs among the observed positions (up to the
  last click and the next one), keeping those with different clicks. ``adjacent``
  (PairRank's paper): positions (1,2), (3,4), ...; ``shuffled`` (reference code): clicked
  and unclicked positions shuffled and zipped.

Both return ``(winners, losers)``: indices into the shown list, winner clicked.
"""

from __future__ import annotations

import numpy as np


def observed_length(clicks: np.ndarray) -> int:
    """Positions treated as examined: up to the last click and one more (0 without clicks)."""
    clicked = np.flatnonzero(clicks)
    return 0 if len(clicked) == 0 else min(int(clicked[-1]) + 2, len(clicks))


def pdgd_pairs(clicks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = observed_length(clicks)
    seen = clicks[:n]
    win, lose = np.flatnonzero(seen), np.flatnonzero(~seen)
    return np.repeat(win, len(lose)), np.tile(lose, len(win))


def independent_pairs(clicks: np.ndarray, rng: np.random.Generator | None = None, pairing: str = "adjacent"):
    n = observed_length(clicks)
    seen = clicks[:n]
    if pairing == "adjacent":
        a, b = np.arange(0, n - 1, 2), np.arange(1, n, 2)
        differ = seen[a] != seen[b]
        a, b = a[differ], b[differ]
        first_clicked = seen[a]
        return np.where(first_clicked, a, b), np.where(first_clicked, b, a)
    if pairing == "shuffled":
        win, lose = rng.permutation(np.flatnonzero(seen)), rng.permutation(np.flatnonzero(~seen))
        m = min(len(win), len(lose))
        return win[:m], lose[:m]
    raise ValueError(f"unknown pairing {pairing!r}; valid: adjacent, shuffled")
