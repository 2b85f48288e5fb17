"""Document-space projection (DSP, Wang et al. 2019, Algorithm 1 lines 13-15).

After a duel is won, the winning direction ``u`` is replaced by its orthogonal projection
``A u`` onto the span of the documents the user examined (the "document space"): an
interleaved comparison only ever reveals the gradient's component in that span.
Examination is inferred as the positions up to the last click plus ``k`` (or read from
the simulator for the oracle variant DSP-GT), and the space is enriched with the ``r``
most recently examined document vectors of earlier rounds.
"""

from __future__ import annotations

import numpy as np


def orthonormal_basis(D: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Rows: an orthonormal basis of the row space of ``D`` (m x d), from its SVD."""
    if len(D) == 0:
        return np.zeros((0, D.shape[1]))
    _, s, vt = np.linalg.svd(D, full_matrices=False)
    return vt[s > rtol * max(s[0], 1e-300)]


def projection_matrix(D: np.ndarray) -> np.ndarray:
    """A = V^T V, the orthogonal projector onto span of the rows of ``D``."""
    V = orthonormal_basis(D)
    return V.T @ V


def project(u: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """A u for A = basis^T basis."""
    return basis.T @ (basis @ u)


class DocumentSpace:
    """Builds the document space of each round and remembers recently examined documents."""

    def __init__(self, n_features: int, k: int = 3, r: int = 10, oracle: bool = False):
        self.k, self.r, self.oracle = int(k), int(r), bool(oracle)
        self.recent = np.zeros((self.r, n_features))
        self.n_recent = 0
        self.cursor = 0

    def last_examined(self, clicks: np.ndarray, true_last: int) -> int:
        """Last examined position: the simulator's (oracle) or the last click plus k."""
        if self.oracle:
            return int(true_last)
        return int(np.flatnonzero(clicks)[-1]) + self.k

    def examined(self, features: np.ndarray, shown: np.ndarray, feedback) -> np.ndarray:
        last = min(self.last_examined(feedback.clicks, feedback.last_examined), len(shown) - 1)
        return features[shown[: last + 1]]

    def basis(self, examined: np.ndarray) -> np.ndarray:
        """Orthonormal basis of span(examined documents of this round and the r recent ones)."""
        return orthonormal_basis(np.vstack([examined, self.recent[: self.n_recent]]))

    def remember(self, examined: np.ndarray) -> None:
        """Push this round's examined documents into the ring buffer of the r most recent ones."""
        if self.r == 0:
            return
        rows = examined[-self.r:]
        slots = (self.cursor + np.arange(len(rows))) % self.r
        self.recent[slots] = rows
        self.cursor = (self.cursor + len(rows)) % self.r
        self.n_recent = min(self.n_recent + len(rows), self.r)
