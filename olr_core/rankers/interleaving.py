"""Interleaving and multileaving: combine rankers' lists into one and credit clicks to rankers.

- Team-draft (Radlinski et al. 2008; multileaving by Schuth et al. 2014): in each round the
  rankers, in random order, each add their highest document not yet placed; a click
  credits the ranker whose team the document joined. Documents of a top prefix on which
  all rankers agree join no team (the reference code's rule; ``shared_prefix=False``
  gives the textbook version).
- Probabilistic multileaving (Schuth et al. 2015): each slot picks a ranker uniformly and
  samples a document with probability proportional to 1 / rank^tau among the documents
  not yet placed, under that ranker. Teams are never revealed: the outcome is
  marginalised over all team assignments consistent with the list, exactly (the
  assignments are independent per slot given the list, see :func:`pm_outcomes`).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _team_draft(rankings, length, order_keys, shared_prefix, n_docs):
    """Reads only the first ``length`` entries of each ranking (a ranker picks its best document not yet
    placed, and fewer than ``length`` are placed), so ``rankings`` may hold just each ranker's top ``length``."""
    m = rankings.shape[0]
    placed = np.zeros(n_docs, dtype=np.bool_)
    shown = np.empty(length, dtype=np.int64)
    team = np.full(length, -1, dtype=np.int64)
    pointer = np.zeros(m, dtype=np.int64)
    pos = 0
    if shared_prefix:
        while pos < length:
            doc = rankings[0, pos]
            agree = True
            for r in range(1, m):
                if rankings[r, pos] != doc:
                    agree = False
                    break
            if not agree:
                break
            shown[pos] = doc
            placed[doc] = True
            pos += 1
    draft = 0
    while pos < length:
        order = np.argsort(order_keys[draft])
        draft += 1
        for r in order:
            if pos >= length:
                break
            while placed[rankings[r, pointer[r]]]:
                pointer[r] += 1
            doc = rankings[r, pointer[r]]
            shown[pos] = doc
            team[pos] = r
            placed[doc] = True
            pos += 1
    return shown, team


def team_draft(rankings: np.ndarray, cutoff: int, rng: np.random.Generator, shared_prefix: bool = True):
    """Team-draft interleave (2 rankers) or multileave (more) of full rankings (m x n).

    Returns the shown list (document indices) and the team of each position (-1: shared prefix).
    """
    m, n = rankings.shape
    length = min(cutoff, n)
    return _team_draft(rankings, length, rng.random((length, m)), shared_prefix, n)


def team_draft_credit(team: np.ndarray, clicks: np.ndarray, n_rankers: int) -> np.ndarray:
    """Clicks credited to each ranker."""
    hit = team[: len(clicks)][clicks]
    return np.bincount(hit[hit >= 0], minlength=n_rankers)


@njit(cache=True)
def _rank_weights(n, tau):
    """1 / rank^tau for ranks 1..n (the same for every ranker) and their sum, added in rank order: the
    weight a ranker puts on its whole list before any slot is filled."""
    by_rank = np.empty(n)
    total = 0.0
    for pos in range(n):
        by_rank[pos] = 1.0 / (pos + 1.0) ** tau
        total += by_rank[pos]
    return by_rank, total


@njit(cache=True)
def _fill_slot(posterior_row, weights_of_doc, remaining):
    """P(slot's team = j | its document) for every ranker j (Bayes with a uniform prior over rankers:
    proportional to the chance that j draws the document from what it has left); then take the
    document's weight off every ranker's remaining mass."""
    total = 0.0
    for j in range(len(remaining)):
        posterior_row[j] = weights_of_doc[j] / remaining[j]
        total += posterior_row[j]
    for j in range(len(remaining)):
        posterior_row[j] /= total
        remaining[j] -= weights_of_doc[j]


@njit(cache=True)
def _ranks_above(score, key, index, s, z, d):
    """Whether the document (score, key, index) ranks above the document (s, z, d) in one ranker's ranking,
    the order of ``np.lexsort((noise, -scores))``: higher score first, then lower noise, then lower index."""
    return score > s or (score == s and (key < z or (key == z and index < d)))


@njit(cache=True)
def _position(scores, noise, doc):
    """0-based position of ``doc`` in one ranker's ranking: the documents that rank above it (the test of
    :func:`_ranks_above`, written branch-free), counted without sorting: O(n)."""
    s, z = scores[doc], noise[doc]
    pos = 0
    for k in range(len(scores)):
        pos += (scores[k] > s) | ((scores[k] == s) & ((noise[k] < z) | ((noise[k] == z) & (k < doc))))
    return pos


@njit(cache=True)
def _next_in_ranking(scores, noise, prev):
    """The document ranked right after ``prev`` (-1: the first one) in one ranker's ranking: O(n)."""
    best = -1
    for k in range(len(scores)):
        if prev >= 0 and not _ranks_above(scores[prev], noise[prev], prev, scores[k], noise[k], k):
            continue
        if best < 0 or _ranks_above(scores[k], noise[k], k, scores[best], noise[best], best):
            best = k
    return best


@njit(cache=True)
def _probabilistic_scored(scores, noise, length, tau, u_team, u_doc):
    """Probabilistic multileave of the rankings ``np.lexsort((noise, -scores))`` (m x n): slot by slot, ranker
    ``floor(u_team m)`` draws a document not yet placed with probability proportional to 1 / rank^tau
    (inverse-CDF walk down its ranking with ``u_doc``). Returns the list and P(slot's team = j | list)
    (length x m). Non-finite scores are ranked by sorting first (:func:`_position_scores`)."""
    for r in range(scores.shape[0]):
        for k in range(scores.shape[1]):
            if not np.isfinite(scores[r, k]):
                return _multileave(_position_scores(_sorted_rows(scores, noise)), np.zeros(scores.shape), length,
                                   tau, u_team, u_doc)
    return _multileave(scores, noise, length, tau, u_team, u_doc)


@njit(cache=True)
def _multileave(scores, noise, length, tau, u_team, u_doc):
    """The body of :func:`_probabilistic_scored` for finite scores, without sorting the rankings: a slot walks
    only the top of the one ranker it draws from, and each shown document's rank under every ranker is
    counted (O(m n) per slot). With 49 candidates, 10 slots and ~140 documents this is a quarter of the cost
    of sorting all 50 rankings."""
    m, n = scores.shape
    by_rank, total = _rank_weights(n, tau)
    remaining = np.full(m, total)
    placed = np.zeros(n, dtype=np.bool_)
    shown = np.empty(length, dtype=np.int64)
    posterior = np.empty((length, m))
    weights_of_doc = np.empty(m)
    for slot in range(length):
        r = min(int(u_team[slot] * m), m - 1)
        target = u_doc[slot] * remaining[r]
        acc = 0.0
        doc = -1
        cand = -1
        for pos in range(n):
            cand = _next_in_ranking(scores[r], noise[r], cand)
            if placed[cand]:
                continue
            doc = cand
            acc += by_rank[pos]
            if acc >= target:
                break
        shown[slot] = doc
        placed[doc] = True
        for j in range(m):
            weights_of_doc[j] = by_rank[_position(scores[j], noise[j], doc)]
        _fill_slot(posterior[slot], weights_of_doc, remaining)
    return shown, posterior


@njit(cache=True)
def _sorted_rows(scores, noise):
    """Each row's ranking ``np.lexsort((noise, -scores))`` (any scores, NaN last)."""
    out = np.empty(scores.shape, dtype=np.int64)
    for r in range(scores.shape[0]):
        by_noise = np.argsort(noise[r], kind="mergesort")
        out[r] = by_noise[np.argsort(-scores[r][by_noise], kind="mergesort")]
    return out


@njit(cache=True)
def _position_scores(rankings):
    """Scores under which each row of ``rankings`` is the ranking: minus each document's position."""
    out = np.empty(rankings.shape)
    for r in range(rankings.shape[0]):
        for pos in range(rankings.shape[1]):
            out[r, rankings[r, pos]] = -float(pos)
    return out


def probabilistic_multileave(rankings: np.ndarray, cutoff: int, rng: np.random.Generator, tau: float = 3.0):
    """Probabilistic multileave of full rankings (m x n); returns the list and P(slot's team = r | list) per
    slot (length x m)."""
    m, n = rankings.shape
    length = min(cutoff, n)
    draws = rng.random((2, length))
    return _multileave(_position_scores(np.asarray(rankings, dtype=np.int64)), np.zeros((m, n)), length, float(tau),
                       draws[0], draws[1])


def probabilistic_multileave_scored(scores: np.ndarray, cutoff: int, rng: np.random.Generator, tau: float = 3.0):
    """:func:`probabilistic_multileave` of the rankers' scores (m x n), ties broken at random: the rankings
    are those of :func:`olr_core.metrics.rank_by_scores` with the same draws, but never sorted (for
    finite scores)."""
    m, n = scores.shape
    noise = rng.random((m, n))
    draws = rng.random((2, min(cutoff, n)))
    return _probabilistic_scored(np.ascontiguousarray(scores, dtype=np.float64), noise, draws.shape[1], float(tau),
                                 draws[0], draws[1])


def pm_outcomes(posterior: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """E[sign(credit_j - credit_0)] for every ranker j, marginalised exactly over team assignments."""
    dist = margin_distribution(posterior, clicks)
    c = dist.shape[1] // 2
    return dist @ np.sign(np.arange(-c, c + 1))


def margin_distribution(posterior: np.ndarray, clicks: np.ndarray) -> np.ndarray:
    """P(credit_j - credit_0 = d) for every ranker j (rows) and d = -c .. c (columns), c clicks.

    Given the list, slot i's team is r with probability ``posterior[i, r]`` independently of
    the other slots, so the credit difference is a sum of independent {-1, 0, +1} steps
    over the clicked slots; its distribution is built by convolution.
    """
    return _convolve_margins(np.ascontiguousarray(posterior[: len(clicks)][clicks]))


@njit(cache=True)
def _convolve_margins(p):
    """The convolution of :func:`margin_distribution` for clicked-slot posteriors ``p`` (c x m): per
    slot, ranker j's margin steps up with p[slot, j], down with p[slot, 0] and stays otherwise
    (ranker 0 against itself never moves)."""
    c, m = p.shape
    width = 2 * c + 1
    dist = np.zeros((m, width))
    dist[:, c] = 1.0
    row = np.empty(width)
    for slot in range(c):
        for j in range(1, m):
            up, down = p[slot, j], p[slot, 0]
            stay = 1.0 - up - down
            for d in range(width):
                row[d] = dist[j, d] * stay + dist[j, (d - 1) % width] * up + dist[j, (d + 1) % width] * down
            dist[j] = row
    return dist


def pm_outcomes_sampled(posterior: np.ndarray, clicks: np.ndarray, samples: int, rng) -> np.ndarray:
    """The authors' code's estimate of :func:`pm_outcomes`: the mean of sign(credit_j - credit_0) over
    ``samples`` draws of the clicked slots' teams (their default: 10,000). Unlike the exact value it
    is never exactly 0, so a candidate that ties with the current ranker wins about half the time.

    With two rankers (interleaving) the estimate is (N+ - N-) / samples for counts
    (N+, N0, N-) ~ Multinomial(samples; P(d > 0), P(d = 0), P(d < 0)), the same distribution as
    the draw-by-draw count, and drawn that way in O(1)."""
    if posterior.shape[1] == 2:
        dist = margin_distribution(posterior, clicks)[1]
        c = len(dist) // 2
        probs = np.clip([dist[c + 1:].sum(), dist[c], dist[:c].sum()], 0.0, None)
        wins, _, losses = rng.multinomial(samples, probs / probs.sum())
        return np.array([0.0, (wins - losses) / samples])
    p = posterior[: len(clicks)][clicks]            # clicked slots x m
    threshold, alias = _alias_tables(p)
    return _mean_sampled_signs(threshold, alias, rng.random((samples, len(p))))


@njit(cache=True)
def _alias_tables(p):
    """Walker's alias tables (Vose's construction) for each row of ``p``: a uniform u in [0, 1) picks
    column k = floor(u m) and the team is k if the remainder u m - k < threshold[k], else alias[k]."""
    c, m = p.shape
    threshold = np.ones((c, m))
    alias = np.zeros((c, m), dtype=np.int64)
    small = np.empty(m, dtype=np.int64)
    large = np.empty(m, dtype=np.int64)
    for i in range(c):
        scaled = p[i] * (m / p[i].sum())
        ns = nl = 0
        for r in range(m):
            if scaled[r] < 1.0:
                small[ns] = r
                ns += 1
            else:
                large[nl] = r
                nl += 1
        while ns > 0 and nl > 0:
            ns -= 1
            lo = small[ns]
            hi = large[nl - 1]
            threshold[i, lo] = scaled[lo]
            alias[i, lo] = hi
            scaled[hi] -= 1.0 - scaled[lo]
            if scaled[hi] < 1.0:
                nl -= 1
                small[ns] = hi
                ns += 1
        for r in range(m):                          # leftovers (rounding): keep their own column
            alias[i, r] = alias[i, r] if threshold[i, r] < 1.0 else r
    return threshold, alias


@njit(cache=True)
def _team_table(alias):
    """choices[i, k] = (alias[i, k], k): the two teams column k of clicked slot i can give, looked up by
    the outcome of the remainder test (:func:`_team`)."""
    c, m = alias.shape
    choices = np.empty((c, m, 2), dtype=np.int64)
    for i in range(c):
        for k in range(m):
            choices[i, k, 0], choices[i, k, 1] = alias[i, k], k
    return choices


@njit(cache=True)
def _team(threshold, choices, i, u):
    """The team of clicked slot ``i`` for the uniform ``u`` (alias method, O(1)): column k = floor(u m), kept
    if the remainder u m - k is below threshold[k], else its alias. The test's outcome indexes ``choices``
    (:func:`_team_table`) instead of picking by a branch: it is a coin flip the processor cannot predict, and a
    branch cost about four times as much per draw (measured, 10,000 draws over 50 teams)."""
    x = u * threshold.shape[1]
    k = int(x)
    return choices[i, k, np.int64(x - k < threshold[i, k])]


@njit(cache=True)
def _one_click_signs(threshold, alias, uniforms):
    """:func:`_mean_sampled_signs` for one clicked slot: a draw credits one team t, so sign(credit_j -
    credit_0) is +1 for j = t != 0, -1 for every j != 0 when t = 0, else 0; summed over the draws that is
    hits_j - hits_0 (integers, so exact in any order)."""
    samples, m = uniforms.shape[0], threshold.shape[1]
    choices = _team_table(alias)
    hits = np.zeros(m, dtype=np.int64)
    for s in range(samples):
        hits[_team(threshold, choices, 0, uniforms[s, 0])] += 1
    total = np.zeros(m)
    for j in range(1, m):
        total[j] = hits[j] - hits[0]
    return total / samples


@njit(cache=True)
def _two_click_signs(threshold, alias, uniforms):
    """:func:`_mean_sampled_signs` for two clicked slots from the histogram of the draws' team pairs (a, b):
    a pair sets sign(credit_j - credit_0) for every ranker j, so each pair's signs are counted once, times
    how often it was drawn (integers, so exact in any order)."""
    samples, m = uniforms.shape[0], threshold.shape[1]
    choices = _team_table(alias)
    pairs = np.zeros((m, m), dtype=np.int64)
    for s in range(samples):
        pairs[_team(threshold, choices, 0, uniforms[s, 0]), _team(threshold, choices, 1, uniforms[s, 1])] += 1
    total = np.zeros(m, dtype=np.int64)
    teams = np.empty(2, dtype=np.int64)
    counts = np.zeros(m, dtype=np.int64)
    common = 0
    for a in range(m):
        for b in range(m):
            if pairs[a, b]:
                teams[0], teams[1] = a, b
                common += _add_draw_signs(teams, counts, total, pairs[a, b])
    total[1:] += common
    return total.astype(np.float64) / samples


@njit(cache=True)
def _add_draw_signs(teams, counts, total, weight):
    """total[j] += weight * (sign(credit_j - credit_0) - common) for the rankers j != 0 that one draw credits
    (``teams``: the clicked slots' teams; ``counts``: zeros, left zero); returns weight * common, the sign
    every ranker the draw leaves out gets (sign(-credit_0)), which the caller adds to every j != 0 once: O(clicks)."""
    for t in teams:
        counts[t] += 1
    common = -1 if counts[0] > 0 else 0
    for t in teams:
        if t != 0 and counts[t] > 0:
            d = counts[t] - counts[0]
            total[t] += weight * ((1 if d > 0 else (-1 if d < 0 else 0)) - common)
            counts[t] = 0
    counts[0] = 0
    return weight * common


@njit(cache=True)
def _mean_sampled_signs(threshold, alias, uniforms):
    """For each draw (a row of ``uniforms``, one per clicked slot) the team of each slot by the alias
    method; the mean over draws of sign(credit_j - credit_0) for every ranker j (the authors' code's
    estimate, ProbabilisticMultileave.py:55).

    The signs are integers, so they are summed as integers and divided once: the same number whatever
    the order. One click (the common case) or two: histograms of the draws' teams or team pairs
    (:func:`_one_click_signs`, :func:`_two_click_signs`); more: draw by draw (:func:`_add_draw_signs`)."""
    samples, c = uniforms.shape
    m = threshold.shape[1]
    if c == 1:
        return _one_click_signs(threshold, alias, uniforms)
    if c == 2 and m * m <= 4 * samples:
        return _two_click_signs(threshold, alias, uniforms)
    total = np.zeros(m, dtype=np.int64)
    counts = np.zeros(m, dtype=np.int64)
    teams = np.empty(c, dtype=np.int64)
    choices = _team_table(alias)
    common = 0
    for s in range(samples):
        for i in range(c):
            teams[i] = _team(threshold, choices, i, uniforms[s, i])
        common += _add_draw_signs(teams, counts, total, 1)
    total[1:] += common
    return total.astype(np.float64) / samples
