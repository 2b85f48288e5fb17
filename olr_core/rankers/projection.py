"""Document-space projection (DSP, Wang et al. 2019, Algorithm 1 lines 13-15).

After a duel is won, the winning direction ``u`` is replaced by its orthogonal projection
``A u`` onto the span of the documents the user examined (the "document space"): an
interleaved comparison only ever reveals the gradient's component in that span.
Examination is inferred as the positions up to the last click plus ``k`` (or read from
the simulator for the oracle variant DSP-GT), and the space is enriched with the ``r``
most recently examined document vectors of earlier rounds.

Two ways to the same projector: :func:`orthonormal_basis` (LAPACK's pivoted QR; it forms
the basis, for explicit matrices and NSGD's null space) and :func:`project_on_span` (the same
factorisation compiled; it never forms a basis and costs a few microseconds, which is what
the per-round update needs). The tests check both against an SVD.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

RTOL = 1e-10          # directions below RTOL x (largest one) count as numerically zero


@functools.cache
def _lapack():
    """scipy's LAPACK wrappers, imported on the first projection (a quarter of a second that runs of
    the methods without DSP do not pay)."""
    import scipy.linalg.lapack

    return scipy.linalg.lapack


@functools.cache
def _qr_workspace(m: int, n: int) -> tuple[int, int]:
    """LAPACK's optimal workspace sizes of dgeqp3 and dorgqr for an m x n matrix (its query, once per shape)."""
    probe = np.zeros((m, n), order="F")
    k = min(m, n)
    pivoted = _lapack().dgeqp3(probe, lwork=-1)[-2]
    orthogonal = _lapack().dorgqr(probe[:, :k], np.zeros(k), lwork=-1)[-2]
    return int(pivoted[0].real), int(orthogonal[0].real)


def orthonormal_basis(D: np.ndarray, rtol: float = RTOL) -> np.ndarray:
    """Rows: an orthonormal basis of the row space of ``D`` (m x d), from a QR factorisation of
    D^T with column pivoting (LAPACK xGEQP3): the rank is the number of diagonal entries of R above
    ``rtol`` times the first, as for :func:`project_on_span` (a quarter of an SVD's cost).

    The LAPACK routines are called directly with the workspace ``scipy.linalg.qr(mode="economic",
    pivoting=True)`` would ask for, so the result is that function's to the last bit (tested) without
    its per-call checks and two workspace queries per call (for NSGD's 25 x 46 matrices about a
    third of the call's time: 78 -> 53 microseconds in one measurement on a loaded machine)."""
    if len(D) == 0:
        return np.zeros((0, D.shape[1]))
    a = np.array(np.asarray(D, dtype=float).T, order="F")
    m, n = a.shape
    pivoted_work, orthogonal_work = _qr_workspace(m, n)
    lapack = _lapack()
    qr, _, tau, _, info = lapack.dgeqp3(a, lwork=pivoted_work, overwrite_a=1)
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK dgeqp3")
    k = min(m, n)
    diagonal = np.abs(np.diag(qr[:k, :k]))
    q, _, info = lapack.dorgqr(qr[:, :k], tau, lwork=orthogonal_work, overwrite_a=1)
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of LAPACK dorgqr")
    return q[:, : int((diagonal > rtol * max(diagonal[0], 1e-300)).sum())].T


def projection_matrix(D: np.ndarray) -> np.ndarray:
    """A = V^T V, the orthogonal projector onto span of the rows of ``D``."""
    V = orthonormal_basis(D)
    return V.T @ V


def project(u: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """A u for A = basis^T basis."""
    return basis.T @ (basis @ u)


@njit(cache=True)
def _dot_from(x, y, k):
    """sum_{i >= k} x_i y_i with four running sums (a serial sum waits on every addition)."""
    s0 = s1 = s2 = s3 = 0.0
    i, n = k, len(x)
    while i + 4 <= n:
        s0 += x[i] * y[i]
        s1 += x[i + 1] * y[i + 1]
        s2 += x[i + 2] * y[i + 2]
        s3 += x[i + 3] * y[i + 3]
        i += 4
    while i < n:
        s0 += x[i] * y[i]
        i += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def _reflect(v, k, y):
    """y[k:] <- (I - 2 v v^T) y[k:] for a unit Householder vector v (stored in v[k:])."""
    s = 2.0 * _dot_from(v, y, k)
    for i in range(k, len(y)):
        y[i] -= s * v[i]


@njit(cache=True)
def project_on_span(D, u, rtol=RTOL):
    """(A u, rank A) for A the orthogonal projector onto the span of the rows of ``D``.

    Householder QR with column pivoting of D^T, stored by rows (one document per row): at
    step k the document with the largest residual norm is reflected onto e_k; the rank is
    the number of steps whose residual norm exceeds ``rtol`` times the first. Residual
    norms are downdated, and recomputed when cancellation makes the downdate unreliable
    (as LAPACK's xLAQP2). Then A u = Q_r Q_r^T u, applied as reflections: O(d m rank).
    """
    m, d = D.shape
    W = D.astype(np.float64).copy()
    V = np.zeros((min(m, d), d))                  # Householder vectors, row k lives in [k:]
    norm2 = np.empty(m)
    exact2 = np.empty(m)
    for j in range(m):
        norm2[j] = exact2[j] = _dot_from(W[j], W[j], 0)
    rank, first = 0, 0.0
    for k in range(min(m, d)):
        best = k
        for j in range(k + 1, m):
            if norm2[j] > norm2[best]:
                best = j
        if best != k:                             # pivot: swap documents k and best
            for i in range(d):
                W[k, i], W[best, i] = W[best, i], W[k, i]
            norm2[k], norm2[best] = norm2[best], norm2[k]
            exact2[k], exact2[best] = exact2[best], exact2[k]
        norm = np.sqrt(_dot_from(W[k], W[k], k))
        if k == 0:
            first = norm
        if norm == 0.0 or norm <= rtol * first:
            break
        alpha = -norm if W[k, k] >= 0 else norm
        V[k, k:] = W[k, k:]
        V[k, k] -= alpha
        vnorm = np.sqrt(_dot_from(V[k], V[k], k))
        for i in range(k, d):
            V[k, i] /= vnorm
        for j in range(k + 1, m):
            _reflect(V[k], k, W[j])
            norm2[j] -= W[j, k] * W[j, k]
            if norm2[j] <= 1e-8 * exact2[j]:      # downdate lost its digits: recompute
                norm2[j] = exact2[j] = _dot_from(W[j], W[j], k + 1)
        rank = k + 1
    y = u.astype(np.float64).copy()
    for k in range(rank):
        _reflect(V[k], k, y)
    y[rank:] = 0.0
    for k in range(rank - 1, -1, -1):
        _reflect(V[k], k, y)
    return y, rank


@njit(cache=True)
def dsp_direction(direction, D, lam, renormalize):
    """lambda * A u + (1 - lambda) * u (Figure 3's interpolation), optionally rescaled to unit
    norm as the reference code does; and rank(A)."""
    projected, rank = project_on_span(D, direction)
    out = lam * projected + (1.0 - lam) * direction
    if renormalize:
        norm = np.sqrt(np.sum(out * out))
        if norm > 0:
            out = out / norm
    return out, rank


@njit(cache=True)
def last_examined_position(clicks, true_last, k, oracle, length):
    """Algorithm 1's examination estimate: the last click plus ``k`` (or the simulator's own
    last examined position for DSP-GT), capped at the end of the list."""
    last = true_last
    if not oracle:
        last = -1
        for i in range(len(clicks)):
            if clicks[i]:
                last = i
        last += k
    return min(last, length - 1)


@njit(cache=True)
def stack_space(examined, recent, n_recent):
    """This round's examined documents on top of the remembered ones (the rows spanning A)."""
    D = np.empty((len(examined) + n_recent, examined.shape[1]))
    D[: len(examined)] = examined
    D[len(examined):] = recent[:n_recent]
    return D


@njit(cache=True)
def remember_rows(recent, rows, cursor, n_recent):
    """Push ``rows`` into the ring buffer ``recent`` (r x d); returns the new (cursor, count)."""
    r = len(recent)
    if r == 0:
        return cursor, n_recent
    start = max(len(rows) - r, 0)
    for i in range(start, len(rows)):
        recent[cursor] = rows[i]
        cursor = (cursor + 1) % r
    return cursor, min(n_recent + len(rows) - start, r)


class DocumentSpace:
    """Builds the document space of each round and remembers recently examined documents."""

    def __init__(self, n_features: int, k: int = 3, r: int = 10, oracle: bool = False):
        self.k, self.r, self.oracle = int(k), int(r), bool(oracle)
        self.recent = np.zeros((self.r, n_features))
        self.n_recent = 0
        self.cursor = 0

    def examined(self, features: np.ndarray, shown: np.ndarray, feedback) -> np.ndarray:
        """Feature vectors of the documents taken as examined this round (display order)."""
        last = last_examined_position(np.asarray(feedback.clicks, dtype=np.bool_), int(feedback.last_examined),
                                      self.k, self.oracle, len(shown))
        return features[shown[: last + 1]]

    def rows(self, examined: np.ndarray) -> np.ndarray:
        """The rows spanning this round's document space: examined now and the r recent ones."""
        return stack_space(np.ascontiguousarray(examined, dtype=np.float64), self.recent, self.n_recent)

    def basis(self, examined: np.ndarray) -> np.ndarray:
        """Orthonormal basis of the document space (SVD; for inspection and tests)."""
        return orthonormal_basis(self.rows(examined))

    def project(self, direction: np.ndarray, examined: np.ndarray, lam: float = 1.0, renormalize: bool = False):
        """(lambda * A u + (1 - lambda) * u, rank A) for this round's document space."""
        return dsp_direction(np.asarray(direction, dtype=np.float64), self.rows(examined), float(lam),
                             bool(renormalize))

    def remember(self, examined: np.ndarray) -> None:
        """Push this round's examined documents into the ring buffer of the r most recent ones."""
        self.cursor, self.n_recent = remember_rows(self.recent, np.ascontiguousarray(examined, dtype=np.float64),
                                                   self.cursor, self.n_recent)
