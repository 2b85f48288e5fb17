"""Compiled (numba) inner loops for the hot paths: offline evaluation, list operations and the growing-library
rankers' rounds.

Each kernel has a plain numpy counterpart (elsewhere in the package, or the numpy code it replaced, kept in
its tests) that the tests compare it with; the kernels exist only because per-round work must cost
microseconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit


def flush_stale_cache(dispatcher, *modules) -> None:
    """Drop ``dispatcher``'s on-disk numba cache if any of ``modules`` changed after it was written.

    numba keys a cached kernel on its own source file only, so a kernel that compiles in
    functions of other modules would keep stale machine code after those modules change.
    """
    index = Path(dispatcher._cache._cache_file._index_path)
    if index.exists() and max(Path(m.__file__).stat().st_mtime for m in modules) > index.stat().st_mtime:
        dispatcher._cache.flush()


UNIT_ROUNDOFF = 2.0 ** -53


@njit(cache=True)
def summation_gamma(d):
    """gamma_d = d u / (1 - d u): a sum of d products in any order (FMA included) is within gamma_d sum |x_k v_k|
    of the exact value (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.5); the rounding
    certificates of the BLAS scores (dueling rounds, batched evaluation) rest on it."""
    return d * UNIT_ROUNDOFF / (1.0 - d * UNIT_ROUNDOFF)


@njit(cache=True)
def _better(i, j, scores, keys):
    """Document i ranks above j: higher score, or equal score and higher random key."""
    return scores[i] > scores[j] or (scores[i] == scores[j] and keys[i] > keys[j])


@njit(cache=True)
def segment_top_k(scores, keys, lo, hi, k, buffer):
    """Fill ``buffer`` with the best ``min(k, hi - lo)`` documents of [lo, hi), best first."""
    count = 0
    m = min(k, hi - lo)
    for i in range(lo, hi):
        if count < m:
            pos = count
            count += 1
        elif _better(i, buffer[m - 1], scores, keys):
            pos = m - 1
        else:
            continue
        while pos > 0 and _better(i, buffer[pos - 1], scores, keys):
            buffer[pos] = buffer[pos - 1]
            pos -= 1
        buffer[pos] = i
    return m


@njit(cache=True)
def _ndcg_of_top(buffer, m, gains, ideal):
    """NDCG of the ranked documents buffer[:m]: sum_r gain / log2(r + 2) over the ideal DCG (NaN without one)."""
    dcg = 0.0
    for r in range(m):
        dcg += gains[buffer[r]] / np.log2(r + 2.0)
    return dcg / ideal if ideal > 0 else np.nan


@njit(cache=True)
def segment_ndcg(scores, keys, gains, offsets, ideal, k, out):
    """NDCG@k of every query (documents offsets[q]..offsets[q+1]) ranked by (score, key)."""
    buffer = np.empty(k, dtype=np.int64)
    for q in range(len(offsets) - 1):
        m = segment_top_k(scores, keys, offsets[q], offsets[q + 1], k, buffer)
        out[q] = _ndcg_of_top(buffer, m, gains, ideal[q])
    return out


@njit(cache=True)
def lower_bound_above_half(prob, gram, width):
    """certain[i, j] = prob[i, j] - width * sqrt(max(K_ii + K_jj - 2 K_ij, 0)) > 1/2 for a Gram matrix K: the
    certain-order test of PairRank (Jia et al. 2021, Algorithm 1, line 6) and of its neural form (Jia & Wang
    2022, Definition 3.4) in one pass, each entry by the same operations in the same order as the numpy
    expression (so the same bits), without its n x n temporaries."""
    n = prob.shape[0]
    out = np.empty((n, n), dtype=np.bool_)
    for i in range(n):
        gii = gram[i, i]
        for j in range(n):
            sq = (gii + gram[j, j]) - 2.0 * gram[i, j]
            if sq < 0.0:
                sq = 0.0
            out[i, j] = prob[i, j] - width * np.sqrt(sq) > 0.5
    return out


@njit(cache=True)
def _sorts_before(a, b):
    """a comes before b in numpy's sort order for floats (NaN last, NaNs equal)."""
    return a < b or (b != b and a == a)


@njit(cache=True)
def lexsort_position(primary, secondary, item):
    """The position of ``item`` in ``np.lexsort((secondary, primary))`` without sorting: the number of entries
    that sort before it (a smaller primary key; an equal one and a smaller secondary key; both equal and a
    smaller index, lexsort being stable), by numpy's own comparison of floats."""
    p, s = primary[item], secondary[item]
    count = 0
    for i in range(len(primary)):
        if _sorts_before(primary[i], p):
            count += 1
        elif not _sorts_before(p, primary[i]):
            if _sorts_before(secondary[i], s) or (i < item and not _sorts_before(s, secondary[i])):
                count += 1
    return count


@njit(cache=True)
def gathered_bincount(to, fro, values, out):
    """out = np.bincount(to, values[fro], len(out)) (entries of ``to`` below len(out)), summed entry by entry in
    bincount's order (so the same bits), without the gathered temporary."""
    out[:] = 0.0
    for e in range(len(to)):
        out[to[e]] += values[fro[e]]


@njit(cache=True)
def normalise_and_change(new, norm, old):
    """new /= norm in place; returns np.abs(new - old).max() (NaN if any difference is NaN, as numpy's max)."""
    change, undefined = -np.inf, False
    for i in range(len(new)):
        new[i] /= norm
        d = abs(new[i] - old[i])
        if d != d:
            undefined = True
        elif d > change:
            change = d
    return np.nan if undefined else change


@njit(cache=True)
def scaled_add(v, items, delta, scale, old, new):
    """old = v[items]; new = old + delta / scale; v[items] = new (``items`` distinct), element by element with
    numpy's operations in numpy's order (so the same bits), in one pass over the items."""
    for k in range(len(items)):
        old[k] = v[items[k]]
        new[k] = old[k] + delta[k] / scale
        v[items[k]] = new[k]


KEYS_NEEDED = -1.0     # what :func:`settled_ndcg_mean` returns when the keys (or the GEMV) must decide an NDCG


@njit(cache=True)
def _block_sum(a, lo, n):
    """numpy's pairwise sum of a block of at most 128 terms (a[lo:lo + n]): below 8 one by one, else in eight
    interleaved partial sums added as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the rest."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r = a[lo: lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    for rest in range(lo + i, lo + n):
        res += a[rest]
    return res


@njit(cache=True)
def _left_half(n):
    """The size of the first half numpy's pairwise sum splits n terms into: n // 2 rounded down to a multiple
    of 8."""
    half = n // 2
    return half - half % 8


@njit(cache=True)
def numpy_pairwise_sum(a, lo, n):
    """The sum of a[lo:lo + n] as numpy's ``np.add.reduce`` makes it on a contiguous float64 array, bit for bit:
    its pairwise summation (numpy/_core/src/umath/loops_utils.h.src, ``pairwise_sum``), blocks of up to 128
    terms (:func:`_block_sum`) added as a binary tree (the first half of a split: :func:`_left_half`), added to
    the reduction's identity 0.0 (so an empty or all -0.0 sum is +0.0). The recursion is unrolled on a stack
    of frames (start, size, left sum if done): numba's cache does not reload recursive functions safely."""
    start, size = np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64)
    left, left_done = np.empty(64), np.zeros(64, dtype=np.bool_)
    d = 0
    start[0], size[0] = lo, n
    while True:
        if size[d] > 128:                                   # descend into the left half
            start[d + 1], size[d + 1], left_done[d + 1] = start[d], _left_half(size[d]), False
            d += 1
            continue
        value = _block_sum(a, start[d], size[d])
        d -= 1
        while d >= 0 and left_done[d]:                      # a right half: add it to its left, go up
            value = left[d] + value
            d -= 1
        if d < 0:
            return 0.0 + value                              # (the reduction starts from its identity, +0.0)
        left[d], left_done[d] = value, True                 # a left half: now the right one
        half = _left_half(size[d])
        start[d + 1], size[d + 1], left_done[d + 1] = start[d] + half, size[d] - half, False
        d += 1


@njit(cache=True)
def top_k_by_score(scores, lo, hi, k, buffer):
    """:func:`segment_top_k` by score alone (a tie kept in document order): the best ``min(k, hi - lo)`` documents
    of [lo, hi), best first; the scores in ``buffer`` are those of the top k by (score, key) for any keys."""
    count = 0
    m = min(k, hi - lo)
    for i in range(lo, hi):
        if count < m:
            pos = count
            count += 1
        elif scores[i] > scores[buffer[m - 1]]:
            pos = m - 1
        else:
            continue
        while pos > 0 and scores[i] > scores[buffer[pos - 1]]:
            buffer[pos] = buffer[pos - 1]
            pos -= 1
        buffer[pos] = i
    return m


@njit(cache=True)
def _one_gain_placed(gains, buffer, first, last):
    """The documents at positions first..last of ``buffer`` have the same gain."""
    for r in range(first + 1, last + 1):
        if gains[buffer[r]] != gains[buffer[first]]:
            return False
    return True


@njit(cache=True)
def _one_gain_between(scores, gains, lo, hi, top, bottom, slack):
    """The documents of [lo, hi) scored at most ``top`` and at least ``bottom - slack`` (the computed difference
    at most ``slack``: rounding is monotone, so no document within it in exact arithmetic is left out) have the
    same gain."""
    first = -1.0
    for i in range(lo, hi):
        if scores[i] <= top and bottom - scores[i] <= slack:
            if first < 0.0:
                first = gains[i]
            elif gains[i] != first:
                return False
    return True


@njit(cache=True)
def gains_settled(scores, gains, lo, hi, buffer, m, k, slack):
    """The gains at the first min(k, n) positions of the query [lo, hi) are the same for every order by
    (scores', keys) with scores' within ``slack / 2`` of ``scores``, document by document, and any keys.
    ``buffer[:m]`` holds the query's top m = min(k + 1, n) by score. A gap between adjacent positions above
    ``slack`` is a certain cut: the documents above it are the same set in every such order. Between certain
    cuts the order is open, so those documents must share one gain; the open stretch across the cutoff
    (positions first..k - 1 and below) can take any document scored between the cutoff's score less ``slack``
    and the stretch's top, so all of those must (:func:`_one_gain_between`). With ``slack = 0`` the open
    stretches are exact ties, and only the tie keys order them."""
    top_k = min(k, hi - lo)
    first = 0
    for r in range(top_k):
        if r + 1 < m and not scores[buffer[r]] - scores[buffer[r + 1]] > slack:
            continue                                   # (rounding is monotone: a computed gap > slack is one)
        if r > first and not _one_gain_placed(gains, buffer, first, r):
            return False
        first = r + 1
    if first < top_k:
        return _one_gain_between(scores, gains, lo, hi, scores[buffer[first]], scores[buffer[top_k - 1]], slack)
    return True


@njit(cache=True)
def _all_finite(values):
    """No NaN or infinity in ``values``: x - x is 0 for a finite x and NaN otherwise (one branch-free pass)."""
    finite = True
    for x in values:
        finite &= x - x == 0.0
    return finite


@njit(cache=True)
def _discounts(k):
    """log2(r + 2) for r < k, each computed as :func:`_ndcg_of_top` computes it."""
    out = np.empty(k)
    for r in range(k):
        out[r] = np.log2(r + 2.0)
    return out


@njit(cache=True)
def settled_ndcg_mean(scores, slack, gains, offsets, ideal, keep, k, discounts, buffer, compact):
    """The mean NDCG@k over the queries in ``keep`` of scores known to within ``slack[q] / 2`` of the ranker's
    (0: these are the ranker's), in one pass over the split and without the tie keys: each query's top k by
    score (:func:`top_k_by_score`), its DCG with the discounts computed once, over its precomputed ideal DCG,
    and the mean by numpy's pairwise sum over the kept queries in order (:func:`numpy_pairwise_sum`). Bit for
    bit ``mean(segment_ndcg(ranker's scores, keys, ...)[keep])`` for any keys, when every query's gains are
    settled (:func:`gains_settled`); ``KEYS_NEEDED`` otherwise: the caller then draws the keys and takes
    :func:`segment_ndcg` of the ranker's scores. The scores must be finite numbers."""
    kept = 0
    for q in range(len(offsets) - 1):
        if not keep[q]:
            continue
        lo, hi = offsets[q], offsets[q + 1]
        m = top_k_by_score(scores, lo, hi, k + 1, buffer)
        if ideal[q] > 0 and not gains_settled(scores, gains, lo, hi, buffer, m, k, slack[q]):
            return KEYS_NEEDED
        dcg = 0.0
        for r in range(min(m, k)):
            dcg += gains[buffer[r]] / discounts[r]
        compact[kept] = dcg / ideal[q] if ideal[q] > 0 else np.nan
        kept += 1
    return numpy_pairwise_sum(compact, 0, kept) / kept


@njit(cache=True)
def split_ndcg_mean(scores, gains, offsets, ideal, keep, k, compact):
    """:func:`settled_ndcg_mean` of the ranker's own scores (no slack): ``KEYS_NEEDED`` only where a tie among a
    query's best k + 1 joins documents of different gains, or where a score is not finite."""
    if not _all_finite(scores):
        return KEYS_NEEDED
    return settled_ndcg_mean(scores, np.zeros(len(offsets) - 1), gains, offsets, ideal, keep, k, _discounts(k),
                             np.empty(k + 1, dtype=np.int64), compact)


@njit(cache=True)
def batch_ndcg_means(scores, slack, gains, offsets, ideal, keep, k, compact, out):
    """:func:`settled_ndcg_mean` of each row of ``scores`` (one evaluation each, in order, ``slack`` row by row)
    into ``out``. The rows are a product of finite vectors whose scores cannot overflow
    (:meth:`olr_core.loop.BatchedEvaluation.take`), so finite."""
    discounts, buffer = _discounts(k), np.empty(k + 1, dtype=np.int64)
    for row in range(scores.shape[0]):
        out[row] = settled_ndcg_mean(scores[row], slack[row], gains, offsets, ideal, keep, k, discounts, buffer,
                                     compact)
