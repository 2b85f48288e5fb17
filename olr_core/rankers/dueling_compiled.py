"""Compiled rounds of the dueling family: many DBGD / MGD / NSGD rounds in one numba call.

A round of DBGD is a handful of microseconds of arithmetic, and the Python protocol
around it (``rank`` -> user -> ``learn``) costs several times that. For the common case,
a linear scorer with team-draft interleaving against a chain or an examination click model
(:mod:`..click_models`), :class:`CompiledDuels` plays a whole block of rounds (the rounds
between two offline evaluations) in :func:`play_duels`, which calls the very kernels the protocol path uses (the
scores come from BLAS wherever they decide the feature-order rankings of :func:`.scorers.linear_scores_many`, see
:func:`blas_scores`): the team draft, the user's clicks, the projection
(:func:`.projection.dsp_direction`) and the recent-document queue. It draws the block's
random numbers from the same streams in the same order, so a compiled run is the
protocol run, bit for bit (``tests/test_dueling.py`` checks this).

Random numbers per round, in order: the ranker's direction stream gives the candidates'
Gaussian directions (:func:`.scorers.unit_sphere`, drawn in the compiled call round by round, so a
block never holds more than one round's directions); its uniform stream gives the tie-breaking keys of each ranking
((m + 1) x n) and the team-draft order keys (length x (m + 1)); the user stream gives
the click model's 2 x cutoff uniforms. With probabilistic multileaving and the authors' code's
sampled credit (:func:`play_probabilistic`), the uniform stream gives the rankings' keys, the
multileave's 2 x length draws and, in a round with clicks, samples x clicks draws for the credit,
drawn inside the compiled call from the ranker's own generator. NSGD (:func:`play_null_space`) draws from the
uniform stream its candidates' Gaussians (n_sample x d), then the rankings' and team-draft keys, and in a won round
with several best candidates one integer for the tie.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .. import click_models, kernels
from ..click_models import chain_clicks, compiled_user_arguments, examination_clicks, flip_clicks
from ..kernels import flush_stale_cache, segment_top_k, summation_gamma
from . import interleaving, projection, scorers
from .interleaving import _alias_tables, _convolve_margins, _mean_sampled_signs, _probabilistic_scored, _team_draft
from .projection import dsp_direction, last_examined_position, remember_rows, stack_space
from .scorers import linear_scores_many, unit_sphere


@njit(cache=True)
def _team_margins(clicked, team, n_rankers):
    """Team-draft credit: the clicks on each ranker's team minus the current ranker's (index 0); a click on a
    document no team placed (team -1) counts for none."""
    credit = np.zeros(n_rankers)
    for i in range(len(clicked)):
        if clicked[i] and team[i] >= 0:
            credit[team[i]] += 1.0
    return credit - credit[0]


@njit(cache=True)
def top_rows(scores, keys, k):
    """The first ``min(k, n)`` entries of each row's ranking by descending score, ties by ascending key
    (the first columns of ``np.lexsort((keys, -scores))`` for finite scores): the evaluation's insertion
    top-k (:func:`olr_core.kernels.segment_top_k`, which breaks ties by the higher key) on the negated keys."""
    m, n = scores.shape
    out = np.empty((m, min(k, n)), dtype=np.int64)
    for r in range(m):
        segment_top_k(scores[r], -keys[r], 0, n, k, out[r])
    return out


# -- BLAS scores with exact ties kept ----------------------------------------------------------------
# The rankings must be those of the feature-order scores (:func:`.scorers.linear_scores_many`), which keep exact
# ties between identical documents; a BLAS product is about three times faster but adds in its own order. So
# the compiled rounds rank by the BLAS scores with identical documents given one score (their first copy's),
# and accept a ranking only when every comparison it rests on is decided by more than both sums' rounding
# error: |fl(x . t) - x . t| <= gamma_d sum_f |x_f t_f| <= gamma_d |x| |t| in any summation order (Higham,
# Accuracy and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and eq. 3.5), so two documents whose BLAS
# scores differ by more than 4 gamma_d max|x| |t| are in the same order under the feature-order scores. A
# ranking that rests on a closer call is made again from the feature-order scores.

BLAS_FROM = 16        # rankers from which BLAS and the check beat the feature-order loop (10: 0.9x, 50: 1.2x)


@njit(cache=True)
def first_copies(X):
    """For each row of ``X`` the index of the first row equal to it (itself if none)."""
    n, d = X.shape
    first = np.arange(n)
    for i in range(n):
        for k in range(i):
            if first[k] == k:
                same = True
                for f in range(d):
                    if X[i, f] != X[k, f]:
                        same = False
                        break
                if same:
                    first[i] = k
                    break
    return first


@njit(cache=True)
def query_first_copies(features, offsets, q, copies):
    """``copies`` (one entry per document, -1 until its query is first met) filled for query ``q``; returns
    whether the query has identical documents."""
    lo, hi = offsets[q], offsets[q + 1]
    if copies[lo] < 0:
        copies[lo:hi] = first_copies(features[lo:hi])
    for i in range(hi - lo):
        if copies[lo + i] != i:
            return True
    return False


@njit(cache=True)
def query_largest_square(features, offsets, q, squares):
    """max_i |x_i|^2 over query ``q``'s documents, from ``squares`` (one entry per query, -1 until the query is
    first met): the same number every time, computed once."""
    if squares[q] < 0:
        squares[q] = _largest_square(features[offsets[q]:offsets[q + 1]])
    return squares[q]


@njit(cache=True)
def blas_scores(X, thetas, copies, has_copies, x_square=-1.0):
    """thetas X^T by BLAS (m x n), identical documents given their first copy's scores, and each row's
    margin 4 gamma_d (1 + 1/64) max_i |x_i| |theta_j| (plus d underflow quanta) beyond which a comparison of
    two BLAS scores decides the feature-order comparison (``x_square``: max_i |x_i|^2 if known, else -1)."""
    n, d = X.shape
    scores = np.dot(thetas, X.T)
    if has_copies:
        for i in range(n):
            if copies[i] != i:
                scores[:, i] = scores[:, copies[i]]
    if x_square < 0:
        x_square = _largest_square(X)
    scale = 4.0 * summation_gamma(d) * (1.0 + 1.0 / 64) * np.sqrt(x_square)
    margin = np.empty(len(thetas))
    for j in range(len(thetas)):
        margin[j] = scale * np.sqrt(_largest_square(thetas[j:j + 1])) + d * 2.0 ** -1070
    return scores, margin


@njit(cache=True)
def _largest_square(A):
    """max_i |a_i|^2 over the rows of ``A``."""
    largest = 0.0
    for i in range(A.shape[0]):
        total = 0.0
        for f in range(A.shape[1]):
            total += A[i, f] * A[i, f]
        largest = max(largest, total)
    return largest


@njit(cache=True)
def decided_top(scores, order, copies, margin, complete):
    """Whether the first ``len(order) - 1`` entries of a ranking's top ``order`` (its top k + 1; ``complete``:
    the whole ranking) are the feature-order ranking's: each neighbour pair either identical documents (an exact
    tie both ways) or more than ``margin`` apart. An identical pair at the cut of an incomplete top fails: the
    documents below the cut were compared with neither."""
    for p in range(len(order) - 1):
        a, b = order[p], order[p + 1]
        if copies[a] == copies[b]:
            if not complete and p == len(order) - 2:
                return False
            continue
        gap = scores[a] - scores[b]
        if not (gap > margin and np.isfinite(gap)):
            return False
    return True


@njit(cache=True)
def exact_top_rows(X, thetas, keys, k, copies, has_copies, x_square=-1.0):
    """:func:`top_rows` of the feature-order scores, from the BLAS scores wherever they decide it."""
    scores, margin = blas_scores(X, thetas, copies, has_copies, x_square)
    m, n = scores.shape
    out = np.empty((m, min(k, n)), dtype=np.int64)
    deep = np.empty(min(k + 1, n), dtype=np.int64)
    for r in range(m):
        segment_top_k(scores[r], -keys[r], 0, n, k + 1, deep)
        if decided_top(scores[r], deep, copies, margin[r], len(deep) == n):
            out[r] = deep[: out.shape[1]]
        else:
            segment_top_k(linear_scores_many(X, thetas[r:r + 1])[0], -keys[r], 0, n, k, out[r])
    return out


@njit(cache=True)
def decided_positions(scores, shown, copies, margin):
    """Whether every shown document's position in every ranker's ranking is decided by the BLAS scores: no
    other document (identical ones aside, which tie exactly) within ``margin`` of it, and all scores finite."""
    m, n = scores.shape
    for j in range(m):
        for i in range(n):
            if not np.isfinite(scores[j, i]):
                return False
        for s in shown:
            v, close = scores[j, s], 0
            for i in range(n):
                close += (abs(scores[j, i] - v) <= margin[j]) & (copies[i] != copies[s])
            if close:
                return False
    return True


@njit(cache=True)
def _candidates(theta, step, directions_t):
    """The current ranker and its perturbed copies ``theta + step * u_j`` (rows)."""
    n_rankers, d = directions_t.shape[0] + 1, theta.shape[0]
    thetas = np.empty((n_rankers, d))
    thetas[0] = theta
    for j in range(1, n_rankers):
        thetas[j] = theta + step * directions_t[j - 1]
    return thetas


@njit(cache=True)
def _show(shown, length, shown_length, shown_out_t, grades, user_draws_t, chain, click_prob, stop_table, exam_table,
          exam_click_table, epsilon):
    """Record the top ``min(shown_length, length)`` of the list in ``shown_out_t``; the user's clicks on them
    (``grades``: the query's grades; a chain or an examination model, then the noise wrapper, from the round's
    pre-drawn uniforms) and the last examined position."""
    m = min(shown_length, length)
    shown_out_t[:m] = shown[:m]
    labels = grades[shown[:m]]
    clicked = np.zeros(m, dtype=np.bool_)
    if chain:
        last = chain_clicks(labels, user_draws_t, click_prob, stop_table, clicked)
    else:
        last = examination_clicks(labels, user_draws_t, exam_table, exam_click_table, clicked)
    if epsilon > 0:
        last = flip_clicks(user_draws_t[2], epsilon, clicked, last)
    return clicked, last


@njit(cache=True)
def _learn(theta, lr, decay, directions_t, margins, X, shown, clicked, last, length, dsp, dsp_k, dsp_oracle,
           dsp_lambda, dsp_renormalize, recent, cursor, n_recent, chosen=-1):
    """Lines 13-17 of the DSP paper's Algorithm 1 for a clicked round: the mean of the winning directions
    (margin > 0 against ranker 0; ``chosen`` >= 0: that candidate's direction alone, NSGD's pick), projected
    with DSP on the examined and recent documents, added to ``theta`` in place; the examined documents are
    remembered. Returns (won, lr, rank(A) or NaN, cursor, n_recent)."""
    examined = X[:0]
    if dsp:
        examined = X[shown[: last_examined_position(clicked, last, dsp_k, dsp_oracle, length) + 1]]
    winners = 0
    direction = np.zeros(theta.shape[0])
    for j in range(1, len(margins)):
        if margins[j] > 0:
            direction += directions_t[j - 1]
            winners += 1
    won, rank = 0.0, np.nan
    if winners > 0:
        direction = direction / winners if chosen < 0 else directions_t[chosen].copy()
        if dsp:
            direction, rank = dsp_direction(direction, stack_space(examined, recent, n_recent), dsp_lambda,
                                            dsp_renormalize)
        theta += lr * direction
        won, lr = 1.0, lr * decay
    if dsp:
        cursor, n_recent = remember_rows(recent, examined, cursor, n_recent)
    return won, lr, rank, cursor, n_recent


@njit(cache=True)
def play_duels(features, labels, offsets, copies, squares, queries, direction_rng, n_candidates, rng, user_draws, chain,
               click_prob, stop_table, exam_table, exam_click_table, epsilon, theta, lr, step, decay, list_length,
               shown_length, shared_prefix, dsp, dsp_k, dsp_oracle, dsp_lambda, dsp_renormalize, recent, cursor,
               n_recent, shown_out, won_out, rank_out):
    """Play ``len(queries)`` rounds of DBGD / MGD (Algorithm 1 of the DSP paper, lines 4-17).

    Updates ``theta`` and the queue ``recent`` in place, fills the shown lists, the won
    indicator and rank(A) of every round, and returns (learning rate, cursor, n_recent). Each round draws
    its directions from ``direction_rng`` and its ranking and team-draft keys from ``rng`` as it goes.
    """
    n_rankers = n_candidates + 1
    for t in range(len(queries)):
        lo, hi = offsets[queries[t]], offsets[queries[t] + 1]
        n = hi - lo
        X = features[lo:hi]
        directions_t = unit_sphere(direction_rng, n_candidates, len(theta))
        thetas = _candidates(theta, step, directions_t)
        keys = rng.random((n_rankers, n))
        length = min(list_length, n)
        copies_t = copies[lo:hi]
        has_copies = n_rankers >= BLAS_FROM and query_first_copies(features, offsets, queries[t], copies)
        if n_rankers >= BLAS_FROM:                                            # team draft reads no deeper
            rankings = exact_top_rows(X, thetas, keys, length, copies_t, has_copies,
                                      query_largest_square(features, offsets, queries[t], squares))
        else:
            rankings = top_rows(linear_scores_many(X, thetas), keys, length)
        order_keys = rng.random((length, n_rankers))
        shown, team = _team_draft(rankings, length, order_keys, shared_prefix, n)
        clicked, last = _show(shown, length, shown_length, shown_out[t], labels[lo:hi], user_draws[t], chain,
                              click_prob, stop_table, exam_table, exam_click_table, epsilon)
        won_out[t] = 0.0
        if not clicked.any():
            continue
        won_out[t], lr, rank_out[t], cursor, n_recent = _learn(
            theta, lr, decay, directions_t, _team_margins(clicked, team, n_rankers), X, shown, clicked, last, length,
            dsp, dsp_k, dsp_oracle, dsp_lambda, dsp_renormalize, recent, cursor, n_recent)
    return lr, cursor, n_recent


@njit(cache=True)
def play_probabilistic(features, labels, offsets, copies, squares, queries, direction_rng, n_candidates, rng,
                       user_draws, chain, click_prob, stop_table, exam_table, exam_click_table, epsilon, theta, lr,
                       step, decay, list_length, shown_length, tau, samples, dsp, dsp_k, dsp_oracle, dsp_lambda,
                       dsp_renormalize, recent, cursor, n_recent, shown_out, won_out, rank_out):
    """Play ``len(queries)`` rounds of MGD with probabilistic multileaving and the authors' code's sampled
    credit (``samples`` draws of the clicked slots' teams), as the protocol path plays them.

    The ranker's uniforms come from ``rng`` itself (numba draws from a numpy Generator exactly as numpy
    does), in the protocol's order: the tie-breaking noise of the rankings, the multileave's two draws per
    slot, and, in a round with clicks, the credit's samples x clicks draws (a count no block could know in
    advance). Returns (learning rate, cursor, n_recent) like :func:`play_duels`.
    """
    n_rankers = n_candidates + 1
    for t in range(len(queries)):
        lo, hi = offsets[queries[t]], offsets[queries[t] + 1]
        n = hi - lo
        X = features[lo:hi]
        directions_t = unit_sphere(direction_rng, n_candidates, len(theta))
        thetas = _candidates(theta, step, directions_t)
        copies_t = copies[lo:hi]
        blas = n_rankers >= BLAS_FROM
        if blas:
            scores, margin = blas_scores(X, thetas, copies_t, query_first_copies(features, offsets, queries[t], copies),
                                         query_largest_square(features, offsets, queries[t], squares))
        else:
            scores, margin = linear_scores_many(X, thetas), np.zeros(0)
        noise = rng.random((n_rankers, n))                 # the rankings' tie-breaking keys
        length = min(list_length, n)
        draws = rng.random((2, length))
        shown, posterior = _probabilistic_scored(scores, noise, length, tau, draws[0], draws[1])
        if blas and not decided_positions(scores, shown, copies_t, margin):
            shown, posterior = _probabilistic_scored(linear_scores_many(X, thetas), noise, length, tau, draws[0],
                                                     draws[1])
        clicked, last = _show(shown, length, shown_length, shown_out[t], labels[lo:hi], user_draws[t], chain,
                              click_prob, stop_table, exam_table, exam_click_table, epsilon)
        won_out[t] = 0.0
        if not clicked.any():
            continue
        p = posterior[:len(clicked)][clicked]
        if samples > 0:
            threshold, alias = _alias_tables(p)
            margins = _mean_sampled_signs(threshold, alias, rng.random((samples, len(p))))
        else:
            margins = exact_outcomes(p)
        won_out[t], lr, rank_out[t], cursor, n_recent = _learn(
            theta, lr, decay, directions_t, margins, X, shown, clicked, last, length, dsp, dsp_k, dsp_oracle,
            dsp_lambda, dsp_renormalize, recent, cursor, n_recent)
    return lr, cursor, n_recent


# -- NSGD (Wang et al. 2018) -------------------------------------------------------------------------------------
# Its rounds replay :class:`.dueling.NSGD`'s protocol: the sums numpy makes (a row's squared norm, a score summed
# over features, the clicked DCG) are made as numpy makes them (:func:`pairwise_sum`), its matrix products are
# BLAS calls like numpy's, and the losing span (a pivoted QR by LAPACK) is computed by the ranker itself between
# the compiled stretches: a call returns after the first round that adds a losing direction.


@njit(cache=True)
def _block_sum(a, lo, n):
    """numpy's sum of a run of at most 128 entries: eight running sums combined as a tree, then the rest."""
    if n < 8:
        total = 0.0
        for i in range(lo, lo + n):
            total += a[i]
        return total
    r = a[lo:lo + 8].copy()
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += a[lo + i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += a[lo + i]
        i += 1
    return total


@njit(cache=True)
def pairwise_sum(a, lo, n):
    """sum(a[lo:lo + n]) as ``np.add.reduce`` adds a contiguous run (numpy's pairwise summation: blocks of at most
    128 entries by :func:`_block_sum`, longer runs as the sum of their two halves, the first a multiple of 8 long),
    so the compiled rounds' sums are numpy's to the bit. The halving is walked with a stack of its own (numba's
    cache cannot reload a recursive function: the loading process crashed)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    starts, lengths = np.empty(64, dtype=np.int64), np.empty(64, dtype=np.int64)
    stage, left = np.zeros(64, dtype=np.int64), np.empty(64)
    depth, total = 0, 0.0
    starts[0], lengths[0] = lo, n
    while depth >= 0:
        start, length = starts[depth], lengths[depth]
        if length <= 128:                               # a leaf: its sum goes back to its parent
            total = _block_sum(a, start, length)
            depth -= 1
            continue
        half = length // 2 - (length // 2) % 8
        if stage[depth] == 0:                           # first the left half
            stage[depth] = 1
            depth += 1
            starts[depth], lengths[depth], stage[depth] = start, half, 0
        elif stage[depth] == 1:                         # then the right half, the left's sum kept
            left[depth], stage[depth] = total, 2
            depth += 1
            starts[depth], lengths[depth], stage[depth] = start + half, length - half, 0
        else:                                           # both done: left + right
            total = left[depth] + total
            depth -= 1
    return total


@njit(cache=True)
def null_space_candidates(rng, span, mean_doc, n_sample, n_candidates):
    """:meth:`.dueling.NSGD.propose` for a linear scorer: ``n_sample`` Gaussians with the losing span removed,
    normalised, and the ``n_candidates`` with the largest |u . mean document| (ties in draw order)."""
    d = mean_doc.shape[0]
    samples = rng.standard_normal((n_sample, d))
    if span.shape[0] > 0:
        samples -= np.dot(np.dot(samples, span.T), span)
    for i in range(n_sample):
        samples[i] /= np.sqrt(pairwise_sum(samples[i] * samples[i], 0, d))
    order = np.argsort(-np.abs(np.dot(samples, mean_doc)), kind="mergesort")
    return samples[order[:n_candidates]]


@njit(cache=True)
def clicked_dcg(theta, past_X, past_clicks, past_len, slots, log2_rank):
    """:meth:`.dueling.NSGD._clicked_dcg`: the DCG of the stored difficult queries' clicks (``slots``: their
    ring slots, oldest first) under ``theta``'s rankings, ties in display order; one pairwise sum in that order."""
    total = 0
    for q in slots:
        total += past_len[q]
    values = np.empty(total)
    start = 0
    for q in slots:
        n = past_len[q]
        scores = np.empty(n)
        for i in range(n):
            scores[i] = pairwise_sum(past_X[q, i] * theta, 0, theta.shape[0])
        order = np.argsort(-scores, kind="mergesort")
        for rank in range(n):
            values[start + order[rank]] = past_clicks[q, order[rank]] / log2_rank[rank]
        start += n
    return pairwise_sum(values, 0, total)


@njit(cache=True)
def ring_slots(count, cursor, size):
    """The filled slots of a ring buffer of ``size`` (next write at ``cursor``), oldest first (a deque's order)."""
    first = cursor - count if count < size else cursor
    return np.array([(first + i) % size for i in range(count)], dtype=np.int64)


@njit(cache=True)
def best_candidate(rng, theta, step, directions_t, margins, past_X, past_clicks, past_len, past_state, log2_rank):
    """:meth:`.dueling.NSGD.combine` with ``winners="best"``: the candidates with the largest margin; several:
    those whose clicked DCG on the stored difficult queries is close to the best (``np.isclose``); one of them
    at random. Returns its index (0-based, among the candidates)."""
    best = np.flatnonzero(margins[1:] == margins[1:].max())
    count, size = past_state[2], past_X.shape[0]
    if len(best) > 1 and count > 0:
        slots = ring_slots(count, past_state[3], size)
        quality = np.array([clicked_dcg(theta + step * directions_t[j], past_X, past_clicks, past_len, slots,
                                        log2_rank) for j in best])
        top = quality.max()
        best = best[np.abs(quality - top) <= 1e-08 + 1e-05 * abs(top)]
    return best[rng.integers(0, len(best))]


@njit(cache=True)
def remember_round(margins, directions_t, X, shown, clicked, loser_margin, loser_u, past_X, past_clicks, past_len,
                   past_state):
    """:meth:`.dueling.NSGD.observe`: each losing candidate's (margin, direction) into the ring of losers, and,
    if some candidate won, the shown documents and their clicks into the ring of difficult queries (both rings
    drop their oldest entry when full; ``past_state``: losers' count and cursor, queries' count and cursor).
    Returns whether a loser was added (the losing span changes)."""
    added = False
    for j in range(1, len(margins)):
        if margins[j] < 0:
            c = past_state[1]
            loser_margin[c] = margins[j]
            loser_u[c] = directions_t[j - 1]
            past_state[1] = (c + 1) % len(loser_margin)
            past_state[0] = min(past_state[0] + 1, len(loser_margin))
            added = True
    if margins[1:].max() > 0 and past_X.shape[0] > 0:
        c = past_state[3]
        past_len[c] = len(shown)
        past_clicks[c] = 0.0
        for i in range(len(shown)):
            past_X[c, i] = X[shown[i]]
            past_clicks[c, i] = clicked[i] if i < len(clicked) else 0.0
        past_state[3] = (c + 1) % past_X.shape[0]
        past_state[2] = min(past_state[2] + 1, past_X.shape[0])
    return added


@njit(cache=True)
def play_null_space(features, labels, offsets, means, queries, first, rng, span, n_sample, n_candidates, best_only,
                    user_draws, chain, click_prob, stop_table, exam_table, exam_click_table, epsilon, theta, lr, step,
                    decay, list_length, shown_length, shared_prefix, dsp, dsp_k, dsp_oracle, dsp_lambda,
                    dsp_renormalize, recent, cursor, n_recent, loser_margin, loser_u, past_X, past_clicks, past_len,
                    past_state, log2_rank, shown_out, won_out, rank_out):
    """Play NSGD's rounds ``first``, ``first + 1``, ... of ``queries`` as :class:`.dueling.NSGD` plays them
    through the protocol (team draft of the current ranker and its candidates from the null space of ``span``),
    until the block ends or a round adds a losing direction. Updates ``theta``, the rings and the DSP queue in
    place; returns (next round, learning rate, cursor, n_recent, whether the losers changed)."""
    n_rankers = n_candidates + 1
    for t in range(first, len(queries)):
        q = queries[t]
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        X = features[lo:hi]
        directions_t = null_space_candidates(rng, span, means[q], n_sample, n_candidates)
        thetas = _candidates(theta, step, directions_t)
        length = min(list_length, n)
        rankings = top_rows(linear_scores_many(X, thetas), rng.random((n_rankers, n)), length)
        shown, team = _team_draft(rankings, length, rng.random((length, n_rankers)), shared_prefix, n)
        clicked, last = _show(shown, length, shown_length, shown_out[t], labels[lo:hi], user_draws[t], chain,
                              click_prob, stop_table, exam_table, exam_click_table, epsilon)
        won_out[t] = 0.0
        if not clicked.any():
            continue
        margins = _team_margins(clicked, team, n_rankers)
        added = remember_round(margins, directions_t, X, shown, clicked, loser_margin, loser_u, past_X,
                               past_clicks, past_len, past_state)
        chosen = -1
        if best_only and margins[1:].max() > 0:
            chosen = best_candidate(rng, theta, step, directions_t, margins, past_X, past_clicks, past_len,
                                    past_state, log2_rank)
        won_out[t], lr, rank_out[t], cursor, n_recent = _learn(
            theta, lr, decay, directions_t, margins, X, shown, clicked, last, length, dsp, dsp_k, dsp_oracle,
            dsp_lambda, dsp_renormalize, recent, cursor, n_recent, chosen)
        if added:
            return t + 1, lr, cursor, n_recent, True
    return len(queries), lr, cursor, n_recent, False


@njit(cache=True)
def exact_outcomes(p):
    """:func:`.interleaving.pm_outcomes` of the clicked slots' posteriors ``p``: the margin distributions
    (:func:`.interleaving._convolve_margins`) times sign(d), d = -c .. c, by BLAS as numpy's product makes it."""
    c = p.shape[0]
    signs = np.sign(np.arange(-c, c + 1)).astype(np.float64)
    return np.dot(_convolve_margins(p), signs)


for _kernel in (play_duels, play_probabilistic, play_null_space):
    flush_stale_cache(_kernel, click_models, kernels, interleaving, projection, scorers)


class CompiledDuels:
    """Plays blocks of rounds of a :class:`.dueling.DuelingRanker` against a chain or an examination click model.

    Holds no state of its own: the ranker's ``theta``, learning rate and document space are
    read and written back, so ``ranker.score`` is current between blocks.
    """

    def __init__(self, ranker, user, train, cutoff: int):
        self.ranker, self.user, self.train = ranker, user, train
        self.shown_length = min(int(cutoff), ranker.cutoff)
        self.features = np.ascontiguousarray(train.features, dtype=np.float64)
        self.labels = np.ascontiguousarray(train.labels, dtype=np.int64)
        self.copies = np.full(len(self.labels), -1, dtype=np.int64)     # first identical document, per query
        self.squares = np.full(train.n_queries, -1.0)                    # max |x|^2 of each query's documents

    def play(self, queries: np.ndarray, user_rng: np.random.Generator, shown_out: np.ndarray) -> dict:
        """Play one round per query; fill ``shown_out`` (rounds x cutoff, -1 padded); return the stats."""
        r = self.ranker
        r.theta = r.theta.copy()            # updated in place below; earlier references keep their values
        rounds, m = len(queries), r.n_candidates
        user_draws = self.user.draw_rounds(user_rng, rounds)
        won, rank = np.zeros(rounds), np.full(rounds, np.nan)
        space = r.space
        recent, cursor, n_recent = (space.recent, space.cursor, space.n_recent) if space else (np.zeros((0, 1)), 0, 0)
        user = compiled_user_arguments(self.user)
        dsp = (r.dsp, r.dsp_k, r.dsp_oracle, r.dsp_lambda, r.dsp_renormalize, recent, cursor, n_recent)
        data = (self.features, self.labels, self.train.offsets, self.copies, self.squares)
        if r.multileave == "probabilistic":
            r.lr, cursor, n_recent = play_probabilistic(
                *data, queries, r.direction_rng, m, r.rng, user_draws, *user, r.theta, r.lr, r.step, r.decay, r.cutoff,
                self.shown_length, r.tau, r.credit_samples, *dsp, shown_out, won, rank)
        else:
            r.lr, cursor, n_recent = play_duels(
                *data, queries, r.direction_rng, m, r.rng, user_draws, *user, r.theta, r.lr, r.step, r.decay, r.cutoff,
                self.shown_length, r.shared_prefix, *dsp, shown_out, won, rank)
        if space:
            space.cursor, space.n_recent = cursor, n_recent
            return {"won": won, "doc_space_rank": rank}
        return {"won": won}


class CompiledNullSpace:
    """Plays blocks of rounds of a :class:`.dueling.NSGD` with a linear scorer against a chain or an examination
    click model (:func:`play_null_space`). Like :class:`CompiledDuels` it holds no state of its own: the
    ranker's ``theta``, learning rate, losers, difficult queries and document space are read and written back."""

    def __init__(self, ranker, user, train, cutoff: int):
        self.ranker, self.user, self.train = ranker, user, train
        self.shown_length = min(int(cutoff), ranker.cutoff)
        self.features = np.ascontiguousarray(train.features, dtype=np.float64)
        self.labels = np.ascontiguousarray(train.labels, dtype=np.int64)
        self.means = np.array([train.query(q).features.mean(axis=0) for q in range(train.n_queries)])
        self.log2_rank = np.log2(np.arange(ranker.cutoff) + 2.0)      # numpy's, as the protocol's DCG takes them

    def play(self, queries: np.ndarray, user_rng: np.random.Generator, shown_out: np.ndarray) -> dict:
        """Play one round per query; fill ``shown_out`` (rounds x cutoff, -1 padded); return the stats."""
        r = self.ranker
        r.theta = r.theta.copy()
        rounds = len(queries)
        user_draws = self.user.draw_rounds(user_rng, rounds)
        won, rank = np.zeros(rounds), np.full(rounds, np.nan)
        space = r.space
        recent, cursor, n_recent = (space.recent, space.cursor, space.n_recent) if space else (np.zeros((0, 1)), 0, 0)
        rings = self._rings()
        first = 0
        while first < rounds:
            span = np.ascontiguousarray(r.losing_span(), dtype=np.float64)
            first, r.lr, cursor, n_recent, changed = play_null_space(
                self.features, self.labels, self.train.offsets, self.means, queries, first, r.rng, span, r.n_sample,
                r.n_candidates, r.winners == "best", user_draws, *compiled_user_arguments(self.user), r.theta, r.lr,
                r.step, r.decay, r.cutoff, self.shown_length, r.shared_prefix, r.dsp, r.dsp_k, r.dsp_oracle,
                r.dsp_lambda, r.dsp_renormalize, recent, cursor, n_recent, *rings, self.log2_rank, shown_out, won,
                rank)
            if changed:
                self._write_losers(*rings[:2], rings[-1])
        self._write_difficult(*rings[2:])
        if space:
            space.cursor, space.n_recent = cursor, n_recent
            return {"won": won, "doc_space_rank": rank}
        return {"won": won}

    def _rings(self):
        """The ranker's losers and difficult queries as ring buffers (oldest first from slot 0) and their state
        (losers' count and cursor, queries' count and cursor)."""
        r, d = self.ranker, len(self.ranker.theta)
        loser_margin, loser_u = np.zeros(r.history), np.zeros((r.history, d))
        for i, (margin, u) in enumerate(r.losers):
            loser_margin[i], loser_u[i] = margin, u
        past_X, past_clicks = np.zeros((r.n_difficult, r.cutoff, d)), np.zeros((r.n_difficult, r.cutoff))
        past_len = np.zeros(r.n_difficult, dtype=np.int64)
        for i, (features, clicks) in enumerate(r.difficult):
            past_len[i] = len(features)
            past_X[i, : len(features)], past_clicks[i, : len(clicks)] = features, clicks
        state = np.array([len(r.losers), len(r.losers) % r.history, len(r.difficult),
                          len(r.difficult) % max(r.n_difficult, 1)], dtype=np.int64)
        return loser_margin, loser_u, past_X, past_clicks, past_len, state

    def _write_losers(self, loser_margin, loser_u, state) -> None:
        r = self.ranker
        r.losers.clear()
        r.losers.extend((float(loser_margin[i]), loser_u[i].copy()) for i in ring_slots(state[0], state[1], r.history))
        r._span = None

    def _write_difficult(self, past_X, past_clicks, past_len, state) -> None:
        r = self.ranker
        r.difficult.clear()
        for i in ring_slots(state[2], state[3], max(r.n_difficult, 1)):
            n = past_len[i]
            r.difficult.append((past_X[i, :n].copy(), past_clicks[i, :n].astype(bool)))
        r._stacked = None
