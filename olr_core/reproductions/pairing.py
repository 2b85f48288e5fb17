"""Assumptions W, O and E of the regret theorems, measured in the well-specified worlds of :mod:`.worlds`.

The theorems of the PairRank and neural chapters need, for the independent click pairs a ranker learns from:

- **W**: given that a pair {a, b} is formed, the clicked one is a with probability sigmoid(h_a - h_b);
- **O**: every pair that is uncertain in a round is formed with probability at least q > 0 given the past;
- **E** (PairRank's alternative to O): lambda_min(M_t) >= c t after a burn-in.

With independent clicks of probability p_k at each shown position, the chance that positions a and b form a pair
(and that a is its clicked one) is a finite sum over the 2^L click vectors, computed exactly here for both pairings
of :func:`olr_core.rankers.clickpairs.independent_pairs`: ``adjacent`` (a pair only on positions (1,2), (3,4), ...)
and ``shuffled`` (clicked and unclicked positions of the observed window zipped at random: given the clicks, a
clicked a and an unclicked b are paired with probability 1 / max(#clicked, #unclicked) in the window). The
observed window is the ranker's: through the last click and one position more.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import expit

from ..rankers.clickpairs import observed_length


@functools.cache
def _click_vectors(length: int) -> np.ndarray:
    """All 2^length click vectors (rows, bool)."""
    codes = np.arange(2 ** length)[:, None]
    return ((codes >> np.arange(length)) & 1).astype(bool)


@functools.cache
def _pair_chance_given_clicks(length: int, pairing: str) -> np.ndarray:
    """P(positions a, b form a pair with a clicked | clicks), for every click vector: (2^L, L, L)."""
    clicks = _click_vectors(length)
    window = np.array([observed_length(c) for c in clicks])
    seen = np.arange(length)[None, :] < window[:, None]
    winner_loser = (clicks & seen)[:, :, None] & (~clicks & seen)[:, None, :]
    if pairing == "adjacent":
        slots = np.zeros((length, length), bool)
        first = np.arange(0, length - 1, 2)
        slots[first, first + 1] = slots[first + 1, first] = True
        return winner_loser & slots[None]
    if pairing == "shuffled":
        larger = np.maximum((clicks & seen).sum(1), (~clicks & seen).sum(1))
        return winner_loser / np.maximum(larger, 1)[:, None, None]
    raise ValueError(f"unknown pairing {pairing!r}; valid: adjacent, shuffled")


def pair_chances(click_probability: np.ndarray, pairing: str) -> tuple[np.ndarray, np.ndarray]:
    """For independent clicks with probability ``click_probability[k]`` at position k: ``won[a, b]``, the chance
    that a and b form a pair with a clicked, and ``formed[a, b] = won[a, b] + won[b, a]`` (exact sums)."""
    p = np.asarray(click_probability, float)
    clicks = _click_vectors(len(p))
    weight = np.prod(np.where(clicks, p, 1.0 - p), axis=1)
    won = np.tensordot(weight, _pair_chance_given_clicks(len(p), pairing), axes=1)
    return won, won + won.T


def upper_bias(click_probability: np.ndarray, pairing: str) -> np.ndarray:
    """W's defect for each position pair a < b: P(a clicked | pair formed) - sigmoid(h_a - h_b), where the
    user clicks with probability sigmoid(h - bias) (NaN where the pair is never formed)."""
    p = np.asarray(click_probability, float)
    won, formed = pair_chances(p, pairing)
    logit = np.log(p) - np.log1p(-p)
    with np.errstate(invalid="ignore", divide="ignore"):
        bias = won / formed - expit(logit[:, None] - logit[None, :])
    upper = np.triu(np.ones_like(formed, bool), 1) & (formed > 0)
    return np.where(upper, bias, np.nan)


def smallest_eigenvalue(ranker) -> float:
    """lambda_min of the ranker's Gram matrix (PairRank's M_t, olRankNet's A_t or its diagonal)."""
    if hasattr(ranker, "Minv"):
        return float(1.0 / np.linalg.eigvalsh(ranker.Minv)[-1])
    if getattr(ranker, "A_diag", None) is not None:
        return float(ranker.A_diag.min())
    return float(1.0 / np.linalg.eigvalsh(ranker.A_inv)[-1])


def uncertain_pairs(certain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Document pairs (i < j) with neither order certain."""
    i, j = np.triu_indices(len(certain), 1)
    keep = ~certain[i, j] & ~certain[j, i]
    return i[keep], j[keep]


def round_observation(ranker, query, click_probability: np.ndarray, pairing: str, rng, draws: int):
    """For the round's uncertain pairs: the chance that each is formed, averaged over ``draws`` fresh draws of
    the ranker's randomised list (its certain orders fixed, as given the past), and the bias of W on the
    shown positions. Returns (chances per uncertain pair, formed-weighted mean of P(upper clicked | formed)
    - sigmoid)."""
    from ..rankers.pairwise import display_certain_orders

    certain, scores = ranker.certain_pairs(query.features)
    first, second = uncertain_pairs(certain)
    chance, bias_sum, formed_sum = np.zeros(len(first)), 0.0, 0.0
    for _ in range(draws):
        ranking = display_certain_orders(certain, scores, rng, conservative=True).ranking
        won, formed = pair_chances(click_probability[ranking], pairing)
        position = np.empty(len(ranking), int)
        position[ranking] = np.arange(len(ranking))
        chance += formed[position[first], position[second]] / draws
        bias = upper_bias(click_probability[ranking], pairing)
        upper = np.triu(formed, 1)
        bias_sum += np.nansum(bias * upper)
        formed_sum += upper.sum()
    return chance, bias_sum / max(formed_sum, 1e-300)


def click_probability_of(user):
    """The per-document click probability sigmoid(h(x) - bias) of a logistic user: a world's (``truth``) or
    :class:`olr_core.users.LogisticClickUser` (``theta_star``)."""
    if hasattr(user, "truth"):
        return lambda features: expit(user.truth(features) - user.bias)
    return lambda features: expit(features @ np.asarray(user.theta_star) - user.bias)


def replay(ranker, fold, user, rounds: int, streams, observe) -> None:
    """The theory worlds' replay: play ``rounds`` rounds of ``ranker`` (built, not started) on ``fold.train``
    against ``user``, with ``streams`` = (the ranker's generator, the rounds' generator, which draws each query
    and the user's clicks), calling ``observe(t, query)`` (t = 0, 1, ...) before each round's ranking, so that
    an observation sees the ranker as the past left it. The experimenter's instrument, outside the book's one
    online loop (:func:`olr_core.loop.run_online`), which has no such hook."""
    ranker_stream, round_stream = streams
    train = fold.train
    ranker.start(train, ranker_stream)
    for t in range(rounds):
        query = train.query(int(round_stream.integers(train.n_queries)))
        observe(t, query)
        display = ranker.rank(query)
        ranker.learn(query, display, user(query, display.ranking[: user.cutoff], round_stream))


def observation_diagnostics(ranker, fold, user, rounds: int, seed: int, pairing: str, every: int = 10,
                            draws: int = 8) -> dict:
    """Replay ``ranker`` (already built) for ``rounds`` rounds of ``fold`` against the logistic ``user`` and
    measure, every ``every`` rounds: O's chance of each uncertain pair (its smallest value is the measured q),
    W's bias and E's lambda_min(M_t) / t. The replay uses its own random streams (the run's settings, not the
    stored run's draws)."""
    click_probability = click_probability_of(user)
    ranker_stream, round_stream, draw_stream = np.random.default_rng(seed).spawn(3)
    chances, biases, eigen, at = [], [], [], []

    def observe(t, query):
        if (t + 1) % every == 0:
            chance, bias = round_observation(ranker, query, click_probability(query.features), pairing,
                                             draw_stream, draws)
            chances.append(chance)
            biases.append(bias)
            eigen.append(smallest_eigenvalue(ranker) / (t + 1))
            at.append(t + 1)

    replay(ranker, fold, user, rounds, (ranker_stream, round_stream), observe)
    every_chance = np.concatenate(chances) if chances else np.zeros(0)
    return {"pairing": pairing, "q": float(every_chance.min()) if len(every_chance) else float("nan"),
            "never_formed": float(np.mean(every_chance == 0)) if len(every_chance) else float("nan"),
            "mean_chance": float(every_chance.mean()) if len(every_chance) else float("nan"),
            "uncertain_pair_rounds": int(len(every_chance)), "w_bias": float(np.mean(biases)),
            "lambda_min_per_round": float(eigen[-1]), "rounds": np.array(at), "lambda_series": np.array(eigen)}


def world_gaps(fold, truth) -> tuple[float, float]:
    """Assumption G's Delta_min in a world: the smallest |sigmoid(h_i - h_j) - 1/2| over the pairs of every query,
    and the share of pairs whose gap is below 0.05."""
    data = fold.train
    h = truth(data.features).reshape(-1, data.docs_per_query[0])
    first, second = np.triu_indices(h.shape[1], 1)
    gaps = np.abs(expit(h[:, first] - h[:, second]) - 0.5)
    return float(gaps.min()), float(np.mean(gaps < 0.05))


def bound_over_trivial(gap: float, rounds: int, docs: int) -> float:
    """The chapter's poly-logarithmic regret bound O(V d~^2 log^2 T / (q Delta^2)) over the trivial bound at
    ``rounds`` = T, with the factors the runs cannot measure set to effective dimension d~ = 1, q = 1 and the hidden
    constant 1: V log^2 T / Delta^2 over T V (V - 1) / 2, the trivial bound of every one of the V (V - 1) / 2 pairs
    of a round's V = ``docs`` documents mis-ordered; that is 2 log^2 T / (Delta^2 T (V - 1))."""
    return float(2 * np.log(rounds) ** 2 / (gap ** 2 * rounds * (docs - 1)))
