"""The click models of the literature, as simulated users, in two families with one compiled kernel each.

*Chain* models (the cascade family): the user scans the list from the top; at an examined
position with grade g they click with probability ``click[g]``, then stop with probability
``stop[g, clicked]``. The cascade / dependent click model of the papers, the dynamic Bayesian
network (DBN, Chapelle & Zhang 2009), its simplified form SDBN (gamma = 1) and the click chain
model (CCM, Guo et al. 2009) are the same chain with different tables.

*Examination* models: position i (0-based) is examined with probability ``exam[i, d - 1]``,
where d is the distance to the previous click (to the top of the list when there is none), and
an examined document of grade g is clicked with probability ``click[i, g]``. The position-based
model (PBM), the user browsing model (UBM, Dupret & Piwowarski 2008) and trust bias (Agarwal et
al. 2019; the click rates of Vardasbi et al. 2021) are this form with different tables.

:class:`NoisyClicks` wraps any of them: each shown position's click is flipped with probability
epsilon. Every model draws a fixed number of uniforms per round (2 x cutoff; 3 x cutoff with
noise), so rankers run with the same seed meet the same users (common random numbers), and
each states its exact click probability per position for a fixed list
(:meth:`click_probability_by_position`), which the tests hold the simulator to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit


@dataclass(frozen=True)
class Clicks:
    """Clicks on the shown list and the last position the user examined (0-based)."""

    clicks: np.ndarray
    last_examined: int

    @property
    def clicked_positions(self) -> np.ndarray:
        return np.flatnonzero(self.clicks)


# ----------------------------------------------------------------------------------------------- kernels
@njit(cache=True)
def chain_clicks(shown_labels, draws, click_prob, stop_table, clicked):
    """One session of a chain model: fill ``clicked``, return the last examined position.

    ``draws`` (2 x cutoff): row 0 decides the clicks, row 1 the stops; the user stops after
    position i when ``draws[1, i] < stop_table[g, clicked_i]``.
    """
    n = len(shown_labels)
    last = n - 1
    for i in range(n):
        g = shown_labels[i]
        c = draws[0, i] < click_prob[g]
        clicked[i] = c
        if draws[1, i] < stop_table[g, 1 if c else 0]:
            last = i
            break
    for i in range(last + 1, n):
        clicked[i] = False
    return last


@njit(cache=True)
def examination_clicks(shown_labels, draws, exam_table, click_table, clicked):
    """One session of an examination model: fill ``clicked``, return the last examined position (-1: none).

    Position i is examined when ``draws[0, i] < exam_table[i, d - 1]`` (d: distance to the
    previous click, or i + 1 without one) and clicked when also ``draws[1, i] < click_table[i, g]``.
    """
    previous = -1
    last = -1
    for i in range(len(shown_labels)):
        examined = draws[0, i] < exam_table[i, i - previous - 1]
        c = examined and draws[1, i] < click_table[i, shown_labels[i]]
        clicked[i] = c
        if examined:
            last = i
        if c:
            previous = i
    return last


@njit(cache=True)
def flip_clicks(flip_draws, epsilon, clicked, last):
    """Noise: flip each shown position's click where ``flip_draws[i] < epsilon``; return the last examined
    position, moved down to the last click if that is lower."""
    for i in range(len(clicked)):
        if flip_draws[i] < epsilon:
            clicked[i] = not clicked[i]
        if clicked[i] and i > last:
            last = i
    return last


@njit(cache=True)
def chain_sessions(labels, draws, click_prob, stop_table, clicks):
    """:func:`chain_clicks` for every row of ``labels`` (sessions x cutoff, -1 padded at the end)."""
    for s in range(labels.shape[0]):
        n = 0
        while n < labels.shape[1] and labels[s, n] >= 0:
            n += 1
        chain_clicks(labels[s, :n], draws[s], click_prob, stop_table, clicks[s, :n])


@njit(cache=True)
def examination_sessions(labels, draws, exam_table, click_table, clicks):
    """:func:`examination_clicks` for every row of ``labels`` (sessions x cutoff, -1 padded at the end)."""
    for s in range(labels.shape[0]):
        n = 0
        while n < labels.shape[1] and labels[s, n] >= 0:
            n += 1
        examination_clicks(labels[s, :n], draws[s], exam_table, click_table, clicks[s, :n])


@njit(cache=True)
def chain_conditionals(labels, clicks, click_prob, stop_table, out):
    """P(click at i | clicks above i) of a chain model for every session and position (forward filter).

    b is the probability that the user is still scanning at position i given the clicks above:
    a click at i means they were; no click leaves b (1 - a) / (1 - b a) of it; then they go on
    with probability 1 - stop[g, clicked].
    """
    for s in range(labels.shape[0]):
        b = 1.0
        for i in range(labels.shape[1]):
            g = labels[s, i]
            if g < 0:
                break
            a = click_prob[g]
            out[s, i] = b * a
            if clicks[s, i]:
                b = 1.0 - stop_table[g, 1]
            else:
                b = b * (1.0 - a) / max(1.0 - b * a, 1e-300) * (1.0 - stop_table[g, 0])


@njit(cache=True)
def chain_log_likelihood(labels, clicks, click_prob, stop_table, floor):
    """Sum over sessions of log P(clicks) of a chain model (the forward filter of :func:`chain_conditionals`,
    each conditional probability kept in [floor, 1 - floor])."""
    total = 0.0
    for s in range(labels.shape[0]):
        b = 1.0
        for i in range(labels.shape[1]):
            g = labels[s, i]
            if g < 0:
                break
            a = click_prob[g]
            p = min(max(b * a, floor), 1.0 - floor)
            if clicks[s, i]:
                total += np.log(p)
                b = 1.0 - stop_table[g, 1]
            else:
                total += np.log(1.0 - p)
                b = b * (1.0 - a) / max(1.0 - b * a, 1e-300) * (1.0 - stop_table[g, 0])
    return total


@njit(cache=True)
def examination_conditionals(labels, clicks, exam_table, click_table, out):
    """P(click at i | clicks above i) of an examination model: exam[i, d - 1] * click[i, g]."""
    for s in range(labels.shape[0]):
        previous = -1
        for i in range(labels.shape[1]):
            g = labels[s, i]
            if g < 0:
                break
            out[s, i] = exam_table[i, i - previous - 1] * click_table[i, g]
            if clicks[s, i]:
                previous = i


@njit(cache=True)
def noisy_chain_conditionals(labels, clicks, click_prob, stop_table, epsilon, out):
    """P(observed click at i | observed clicks above) of a chain model whose clicks are flipped with
    probability epsilon: a forward filter over (scanning, stopped) with the true click hidden."""
    for s in range(labels.shape[0]):
        scan, stopped = 1.0, 0.0                     # P(state | observations above), normalised
        for i in range(labels.shape[1]):
            g = labels[s, i]
            if g < 0:
                break
            a = click_prob[g]
            out[s, i] = scan * (a * (1 - epsilon) + (1 - a) * epsilon) + stopped * epsilon
            o = clicks[s, i]
            seen_if_click = (1 - epsilon) if o else epsilon          # P(observation | true click)
            seen_if_skip = epsilon if o else (1 - epsilon)           # P(observation | no true click)
            w_click, w_skip = scan * a * seen_if_click, scan * (1 - a) * seen_if_skip
            w_stopped = stopped * seen_if_skip
            scan = w_click * (1 - stop_table[g, 1]) + w_skip * (1 - stop_table[g, 0])
            stopped = w_click * stop_table[g, 1] + w_skip * stop_table[g, 0] + w_stopped
            total = max(scan + stopped, 1e-300)
            scan, stopped = scan / total, stopped / total


@njit(cache=True)
def noisy_examination_conditionals(labels, clicks, exam_table, click_table, epsilon, out):
    """The same for an examination model: a forward filter over the position of the last *true* click."""
    n = labels.shape[1]
    weight = np.zeros(n + 1)                         # weight[j + 1]: P(last true click at j | observations)
    for s in range(labels.shape[0]):
        weight[:] = 0.0
        weight[0] = 1.0
        for i in range(n):
            g = labels[s, i]
            if g < 0:
                break
            o = clicks[s, i]
            seen_if_click = (1 - epsilon) if o else epsilon
            seen_if_skip = epsilon if o else (1 - epsilon)
            p_true, moved = 0.0, 0.0
            for j in range(i + 1):                    # j - 1: the previous true click (-1: none)
                q = exam_table[i, i - (j - 1) - 1] * click_table[i, g]
                p_true += weight[j] * q
                moved += weight[j] * q * seen_if_click
                weight[j] *= (1 - q) * seen_if_skip
            out[s, i] = p_true * (1 - epsilon) + (1 - p_true) * epsilon
            weight[i + 1] = moved
            total = max(weight[: i + 2].sum(), 1e-300)
            weight[: i + 2] /= total


# ----------------------------------------------------------------------------------------------- the two families
class SimulatedClicks:
    """What every simulated click user shares: the call of the ranker protocol and batch simulation."""

    feedback_kind = "clicks"
    draws_per_position = 2

    def draw_rounds(self, rng: np.random.Generator, rounds: int) -> np.ndarray:
        """The uniforms of ``rounds`` consecutive sessions (rounds x draws_per_position x cutoff)."""
        return rng.random((rounds, self.draws_per_position, self.cutoff))

    def __call__(self, query, shown: np.ndarray, rng: np.random.Generator) -> Clicks:
        clicked = np.zeros(len(shown), dtype=np.bool_)
        last = self.clicks_from_draws(np.asarray(query.labels[shown], dtype=np.int64), self.draw_rounds(rng, 1)[0],
                                      clicked)
        return Clicks(clicked, int(last))

    def simulate(self, labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Clicks (sessions x cutoff, bool) on lists of grades ``labels`` (-1 padded); the same draws as
        that many calls."""
        labels = np.ascontiguousarray(labels, dtype=np.int64)
        clicks = np.zeros(labels.shape, dtype=np.bool_)
        self.sessions_from_draws(labels, self.draw_rounds(rng, len(labels))[:, :, :labels.shape[1]], clicks)
        return clicks


class ChainClickModel(SimulatedClicks):
    """Base of the cascade family; a subclass sets the tables with :meth:`_set_tables`."""

    family = "chain"

    def _set_tables(self, click, stop_after_click, stop_after_skip) -> None:
        click = np.asarray(click, dtype=np.float64)
        stop = np.column_stack([np.broadcast_to(stop_after_skip, click.shape),
                                np.broadcast_to(stop_after_click, click.shape)]).astype(np.float64)
        for name, values in (("click", click), ("stop", stop)):
            if not np.all((values >= 0) & (values <= 1)):
                raise ValueError(f"{type(self).__name__} {self.name}: {name} probabilities must lie in [0, 1], "
                                 f"got {np.round(values, 4).tolist()}")
        object.__setattr__(self, "_pc", click)
        object.__setattr__(self, "_stop", np.ascontiguousarray(stop))

    def kernel_arguments(self) -> tuple:
        """(click_prob per grade, stop table grades x [after a skip, after a click]) for :func:`chain_clicks`."""
        return self._pc, self._stop

    def clicks_from_draws(self, shown_labels, draws, clicked) -> int:
        return chain_clicks(shown_labels, draws, self._pc, self._stop, clicked)

    def sessions_from_draws(self, labels, draws, clicks) -> None:
        chain_sessions(labels, np.ascontiguousarray(draws), self._pc, self._stop, clicks)

    def click_probability_by_position(self, shown_labels) -> np.ndarray:
        """Exact P(click at each position): P(scan i) a_i, with P(scan i+1) = P(scan i) [a_i (1 - stop_i,click)
        + (1 - a_i)(1 - stop_i,skip)]."""
        shown_labels = np.asarray(shown_labels)
        a = self._pc[shown_labels]
        go_on = a * (1 - self._stop[shown_labels, 1]) + (1 - a) * (1 - self._stop[shown_labels, 0])
        return np.concatenate([[1.0], np.cumprod(go_on)[:-1]]) * a

    def conditional_click_probabilities(self, labels, clicks) -> np.ndarray:
        out = np.zeros(labels.shape)
        chain_conditionals(np.ascontiguousarray(labels, dtype=np.int64), np.ascontiguousarray(clicks), self._pc,
                           self._stop, out)
        return out


class ExaminationClickModel(SimulatedClicks):
    """Base of the examination family; a subclass sets the tables with :meth:`_set_tables`."""

    family = "examination"

    def _set_tables(self, exam, click) -> None:
        exam, click = np.asarray(exam, dtype=np.float64), np.asarray(click, dtype=np.float64)
        if exam.shape != (self.cutoff, self.cutoff) or click.shape[0] != self.cutoff:
            raise ValueError(f"{type(self).__name__} {self.name}: tables must be cutoff x cutoff and cutoff x grades "
                             f"(cutoff {self.cutoff}), got {exam.shape} and {click.shape}")
        for name, values in (("examination", exam), ("click", click)):
            if not np.all((values >= 0) & (values <= 1)):
                raise ValueError(f"{type(self).__name__} {self.name}: {name} probabilities must lie in [0, 1]")
        object.__setattr__(self, "_exam", np.ascontiguousarray(exam))
        object.__setattr__(self, "_click", np.ascontiguousarray(click))

    def kernel_arguments(self) -> tuple:
        return self._exam, self._click

    def clicks_from_draws(self, shown_labels, draws, clicked) -> int:
        return examination_clicks(shown_labels, draws, self._exam, self._click, clicked)

    def sessions_from_draws(self, labels, draws, clicks) -> None:
        examination_sessions(labels, np.ascontiguousarray(draws), self._exam, self._click, clicks)

    def click_probability_by_position(self, shown_labels) -> np.ndarray:
        """Exact P(click at each position), summing over where the previous click was (O(n^2))."""
        shown_labels = np.asarray(shown_labels)
        n = len(shown_labels)
        previous = np.zeros(n + 1)          # previous[j + 1]: P(previous click at j), previous[0]: none yet
        previous[0] = 1.0
        out = np.zeros(n)
        for i in range(n):
            distances = i - np.arange(-1, i)                      # for previous = -1 .. i - 1
            q = self._exam[i, distances - 1] * self._click[i, shown_labels[i]]
            out[i] = previous[: i + 1] @ q
            previous[: i + 1] *= 1 - q
            previous[i + 1] = out[i]
        return out

    def conditional_click_probabilities(self, labels, clicks) -> np.ndarray:
        out = np.zeros(labels.shape)
        examination_conditionals(np.ascontiguousarray(labels, dtype=np.int64), np.ascontiguousarray(clicks),
                                 self._exam, self._click, out)
        return out


_NO_TABLE = np.zeros((1, 1))


def compiled_user_arguments(user) -> tuple | None:
    """(is_chain, click, stop, exam, exam_click, epsilon) for a compiled loop that plays either family's kernel
    (the other family's tables are dummies) and then the noise flips (epsilon 0: none), or None for a user
    without a kernel (your own)."""
    epsilon = 0.0
    if isinstance(user, NoisyClicks):
        user, epsilon = user.user, float(user.epsilon)
    if isinstance(user, ChainClickModel):
        return True, user._pc, user._stop, _NO_TABLE, _NO_TABLE, epsilon
    if isinstance(user, ExaminationClickModel):
        return False, _NO_TABLE[0], _NO_TABLE, user._exam, user._click, epsilon
    return None


def _probabilities(owner: str, name: str, values, length: int | None = None) -> np.ndarray:
    values = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if not np.all((values >= 0) & (values <= 1)):
        raise ValueError(f"{owner}: {name} must lie in [0, 1], got {np.round(values, 4).tolist()}")
    if length is not None and len(values) != length:
        raise ValueError(f"{owner}: {name} needs {length} values, got {len(values)}")
    return values


# ----------------------------------------------------------------------------------------------- chain models
@dataclass(frozen=True)
class DynamicBayesianNetwork(ChainClickModel):
    """DBN (Chapelle & Zhang 2009): click an examined document with its attractiveness a_g; after a click
    the user is satisfied with probability s_g and leaves; otherwise they go on with probability gamma.

    Chain tables: click a_g; stop after a click 1 - gamma (1 - s_g); stop after a skip 1 - gamma.
    """

    name: str
    attractiveness: tuple
    satisfaction: tuple
    gamma: float = 0.9
    cutoff: int = 10

    def __post_init__(self):
        a = _probabilities(self.name, "attractiveness", self.attractiveness)
        s = _probabilities(self.name, "satisfaction", self.satisfaction, len(a))
        gamma = float(_probabilities(self.name, "gamma", self.gamma, 1)[0])
        self._set_tables(a, 1 - gamma * (1 - s), np.full(len(a), 1 - gamma))


@dataclass(frozen=True)
class SimplifiedDBN(ChainClickModel):
    """SDBN: the DBN with gamma = 1 (the user leaves only when satisfied). With the cascade presets'
    click and stop probabilities as attractiveness and satisfaction it *is* the papers' cascade."""

    name: str
    attractiveness: tuple
    satisfaction: tuple
    cutoff: int = 10

    def __post_init__(self):
        a = _probabilities(self.name, "attractiveness", self.attractiveness)
        s = _probabilities(self.name, "satisfaction", self.satisfaction, len(a))
        self._set_tables(a, s, np.zeros(len(a)))


@dataclass(frozen=True)
class ClickChainModel(ChainClickModel):
    """CCM (Guo et al. 2009): click an examined document with its relevance r_g; without a click go on
    with probability alpha1, after a click with alpha2 (1 - r_g) + alpha3 r_g."""

    name: str
    relevance: tuple
    alpha1: float = 1.0
    alpha2: float = 0.5
    alpha3: float = 0.5
    cutoff: int = 10

    def __post_init__(self):
        r = _probabilities(self.name, "relevance", self.relevance)
        a1, a2, a3 = (float(_probabilities(self.name, k, getattr(self, k), 1)[0]) for k in ("alpha1", "alpha2",
                                                                                          "alpha3"))
        self._set_tables(r, 1 - (a2 * (1 - r) + a3 * r), np.full(len(r), 1 - a1))


# ----------------------------------------------------------------------------------------------- examination models
def rank_examination(eta: float, cutoff: int) -> np.ndarray:
    """(1 / rank)^eta for ranks 1..cutoff: the position bias of the PBM and of trust bias."""
    return (1.0 / np.arange(1, cutoff + 1)) ** eta


@dataclass(frozen=True)
class PositionBasedClickModel(ExaminationClickModel):
    """PBM: examine rank r (1-based) with probability (1/r)^eta, click an examined document with click_prob[g]."""

    name: str
    click_prob: tuple
    eta: float = 1.0
    cutoff: int = 10

    def __post_init__(self):
        if not self.eta >= 0:
            raise ValueError(f"{self.name}: eta must be >= 0, got {self.eta}")
        click = _probabilities(self.name, "click_prob", self.click_prob)
        exam = np.repeat(rank_examination(self.eta, self.cutoff)[:, None], self.cutoff, axis=1)
        self._set_tables(exam, np.tile(click, (self.cutoff, 1)))


@dataclass(frozen=True)
class UserBrowsingModel(ExaminationClickModel):
    """UBM (Dupret & Piwowarski 2008): examination depends on the rank and the distance d to the previous
    click (to the top when none); an examined document is clicked with its attractiveness a_g.

    By default gamma(r, d) = (1/d)^eta: a click resets the user's attention. ``examination`` (cutoff x
    cutoff, row rank - 1, column d - 1) gives the whole table instead (what the fitter estimates).
    """

    name: str
    attractiveness: tuple
    eta: float = 1.0
    examination: tuple | None = None
    cutoff: int = 10

    def __post_init__(self):
        if not self.eta >= 0:
            raise ValueError(f"{self.name}: eta must be >= 0, got {self.eta}")
        a = _probabilities(self.name, "attractiveness", self.attractiveness)
        if self.examination is None:
            exam = np.tile(rank_examination(self.eta, self.cutoff), (self.cutoff, 1))
        else:
            exam = np.asarray(self.examination, dtype=np.float64)
        self._set_tables(exam, np.tile(a, (self.cutoff, 1)))

    @property
    def examination_table(self) -> np.ndarray:
        return self._exam


def vardasbi_click_rates(cutoff: int) -> tuple[np.ndarray, np.ndarray]:
    """Trust bias click rates of an examined document at rank k (Vardasbi et al. 2021, Eqs. 10-11):
    relevant 1 - (min(k, 20) + 1) / 100, not relevant 0.65 / min(k, 10)."""
    k = np.arange(1, cutoff + 1)
    return 1 - (np.minimum(k, 20) + 1) / 100, 0.65 / np.minimum(k, 10)


def graded_relevance(max_grade: int) -> np.ndarray:
    """P(relevant | grade g) = (2^g - 1) / (2^max_grade - 1)."""
    return (2.0 ** np.arange(max_grade + 1) - 1) / (2.0 ** max_grade - 1)


@dataclass(frozen=True)
class TrustBiasModel(ExaminationClickModel):
    """Trust bias (Agarwal et al. 2019): rank k is examined with probability theta_k = (1/k)^eta; the
    document is relevant with probability rho_g; an examined document is clicked with probability
    eps+_k if relevant and eps-_k if not, both falling with the rank (users trust the top).

    Click probability at rank k: theta_k (eps+_k rho_g + eps-_k (1 - rho_g)). Only the products
    theta_k eps+_k and theta_k eps-_k can be told apart from clicks; the fitter estimates those.
    """

    name: str
    relevance: tuple
    true_positive: tuple
    false_positive: tuple
    eta: float = 1.0
    examination: tuple | None = None
    cutoff: int = 10

    def __post_init__(self):
        if not self.eta >= 0:
            raise ValueError(f"{self.name}: eta must be >= 0, got {self.eta}")
        rho = _probabilities(self.name, "relevance", self.relevance)
        plus = _probabilities(self.name, "true_positive", self.true_positive, self.cutoff)
        minus = _probabilities(self.name, "false_positive", self.false_positive, self.cutoff)
        theta = (rank_examination(self.eta, self.cutoff) if self.examination is None
                 else _probabilities(self.name, "examination", self.examination, self.cutoff))
        self._set_tables(np.repeat(theta[:, None], self.cutoff, axis=1),
                         plus[:, None] * rho[None, :] + minus[:, None] * (1 - rho[None, :]))


# ----------------------------------------------------------------------------------------------- noise
@dataclass(frozen=True)
class NoisyClicks(SimulatedClicks):
    """Any click user whose every shown position's click is flipped with probability epsilon (a missed
    click or a click at random). The last examined position becomes the last click if that is lower."""

    user: SimulatedClicks
    epsilon: float

    def __post_init__(self):
        if not 0 <= self.epsilon <= 0.5:
            raise ValueError(f"noise: epsilon must lie in [0, 0.5], got {self.epsilon}; e.g. navigational+noise=0.1")

    @property
    def name(self) -> str:
        return f"{self.user.name}+noise={self.epsilon:g}"

    @property
    def cutoff(self) -> int:
        return self.user.cutoff

    @property
    def draws_per_position(self) -> int:
        return self.user.draws_per_position + 1

    def clicks_from_draws(self, shown_labels, draws, clicked) -> int:
        last = self.user.clicks_from_draws(shown_labels, draws[:-1], clicked)
        return flip_clicks(draws[-1], self.epsilon, clicked, last)

    def sessions_from_draws(self, labels, draws, clicks) -> None:
        self.user.sessions_from_draws(labels, np.ascontiguousarray(draws[:, :-1]), clicks)
        clicks ^= (draws[:, -1, : labels.shape[1]] < self.epsilon) & (labels >= 0)

    def click_probability_by_position(self, shown_labels) -> np.ndarray:
        p = self.user.click_probability_by_position(shown_labels)
        return p * (1 - self.epsilon) + (1 - p) * self.epsilon

    def conditional_click_probabilities(self, labels, clicks) -> np.ndarray:
        """P(observed click at i | observed clicks above): a forward filter with the true clicks hidden."""
        out = np.zeros(labels.shape)
        labels, clicks = np.ascontiguousarray(labels, dtype=np.int64), np.ascontiguousarray(clicks)
        if isinstance(self.user, ChainClickModel):
            noisy_chain_conditionals(labels, clicks, self.user._pc, self.user._stop, float(self.epsilon), out)
        elif isinstance(self.user, ExaminationClickModel):
            noisy_examination_conditionals(labels, clicks, self.user._exam, self.user._click, float(self.epsilon), out)
        else:
            raise ValueError(f"{self.name}: no likelihood for a noisy {type(self.user).__name__}")
        return out


# ----------------------------------------------------------------------------------------------- names and presets
# Per-grade click and stop probabilities of the cascade presets (REFERENCE_NOTES, Table 1 of PairRank).
CASCADE_PRESETS = {
    2: {
        "perfect": ((0.0, 0.5, 1.0), (0.0, 0.0, 0.0)),
        "navigational": ((0.05, 0.5, 0.95), (0.2, 0.5, 0.9)),
        "informational": ((0.4, 0.7, 0.9), (0.1, 0.3, 0.5)),
    },
    4: {
        "perfect": ((0.0, 0.2, 0.4, 0.8, 1.0), (0.0, 0.0, 0.0, 0.0, 0.0)),
        "navigational": ((0.05, 0.3, 0.5, 0.7, 0.95), (0.2, 0.3, 0.5, 0.7, 0.9)),
        "informational": ((0.4, 0.6, 0.7, 0.8, 0.9), (0.1, 0.2, 0.3, 0.4, 0.5)),
    },
}
STOP_RULES = ("after_click", "every_position")
MAX_TABLE_GRADE = max(CASCADE_PRESETS)      # the click models' grade tables cover grades 0 .. 4


@dataclass(frozen=True)
class CascadeClickModel(ChainClickModel):
    """Cascade-family user (dependent click model).

    The user scans from the top; at position r with grade g they click with probability
    ``click_prob[g]``. Stop rule ``after_click`` (the papers' dependent click model): after
    a click they stop with probability ``stop_prob[g]``. Stop rule ``every_position`` (the
    public reference code): the stop draw happens at every examined position, clicked or not.
    As a chain model: stop after a click ``stop_prob[g]``, after a skip 0 (``after_click``) or
    ``stop_prob[g]`` (``every_position``).
    """

    name: str
    click_prob: tuple[float, ...]
    stop_prob: tuple[float, ...]
    stop_rule: str = "after_click"
    cutoff: int = 10

    def __post_init__(self):
        if self.stop_rule not in STOP_RULES:
            raise ValueError(f"unknown stop rule {self.stop_rule!r}; valid: {', '.join(STOP_RULES)}")
        stop = np.asarray(self.stop_prob, dtype=np.float64)
        self._set_tables(self.click_prob, stop, stop if self.stop_rule == "every_position" else np.zeros_like(stop))


@dataclass(frozen=True)
class Family:
    """A click model family as named from the CLI: presets, the scalar parameters ``-c family:key=value``
    may set (with defaults per preset), and the source of the preset values."""

    default_preset: str
    presets: tuple
    params: dict           # name -> (default, low, high)
    source: str


FAMILIES = {
    "cascade": Family("navigational", ("perfect", "navigational", "informational"), {},
                      "per-grade click and stop probabilities of the OL2R literature (PairRank Table 1; DSP paper)"),
    "dbn": Family("navigational", ("perfect", "navigational", "informational"), {"gamma": (0.9, 0.0, 1.0)},
                  "attractiveness = the cascade preset's click, satisfaction = its stop probability; gamma 0.9 "
                  "is our choice"),
    "sdbn": Family("navigational", ("perfect", "navigational", "informational"), {},
                   "the cascade preset's click and stop probabilities (gamma = 1)"),
    "ccm": Family("navigational", ("perfect", "navigational", "informational"),
                  {"alpha1": (0.95, 0.0, 1.0), "alpha2": (0.7, 0.0, 1.0), "alpha3": (0.2, 0.0, 1.0)},
                  "relevance = the cascade preset's click probability; the alphas are our choice: navigational "
                  "(0.95, 0.7, 0.2), informational (0.95, 0.9, 0.6), perfect (1, 1, 1)"),
    "pbm": Family("informational", ("perfect", "navigational", "informational"), {"eta": (1.0, 0.0, 10.0)},
                  "click = the cascade preset's click probability, examination (1/rank)^eta (Joachims et al. 2017)"),
    "ubm": Family("informational", ("perfect", "navigational", "informational"), {"eta": (1.0, 0.0, 10.0)},
                  "attractiveness = the cascade preset's click probability; examination (1/d)^eta with d the "
                  "distance to the previous click (our choice)"),
    "trust_bias": Family("vardasbi", ("vardasbi",), {"eta": (1.0, 0.0, 10.0)},
                         "examination (1/rank)^eta, click rates of Vardasbi et al. 2021 (Eqs. 10-11), relevance "
                         "(2^g - 1)/(2^max - 1)"),
}
CCM_ALPHAS = {"navigational": (0.95, 0.7, 0.2), "informational": (0.95, 0.9, 0.6), "perfect": (1.0, 1.0, 1.0)}
NOISE_SUFFIX = re.compile(r"\+noise=([^+]*)$")


@dataclass(frozen=True)
class UserName:
    """A parsed click model name: ``family[:preset][,key=value...][+noise=EPS]``."""

    family: str
    preset: str
    params: dict
    noise: float | None


def parse_user_name(name: str) -> UserName:
    """Parse e.g. ``dbn``, ``dbn:informational``, ``ubm:eta=2``, ``ccm:navigational,alpha1=0.8``,
    ``navigational+noise=0.1``; a one-line error names the bad part and the valid choices."""
    text, noise = str(name), None
    match = NOISE_SUFFIX.search(text)
    if match:
        try:
            noise = float(match.group(1))
        except ValueError:
            raise ValueError(f"user {name!r}: noise needs a number, e.g. {text[:match.start()]}+noise=0.1") from None
        if not 0 <= noise <= 0.5:
            raise ValueError(f"user {name!r}: noise epsilon must lie in [0, 0.5], got {noise}")
        text = text[:match.start()]
    head, _, rest = text.partition(":")
    if head in FAMILIES["cascade"].presets:          # the papers' names: perfect, navigational, informational
        head, rest = "cascade", head + ("," + rest if rest else "")
    if head not in FAMILIES:
        raise ValueError(f"unknown click model {head!r} in {name!r}; valid: {', '.join(FAMILIES)} (with "
                         f":preset, :key=value, +noise=EPS), perfect, navigational, informational")
    family = FAMILIES[head]
    preset, params, named = family.default_preset, {}, set()
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            if key not in family.presets:
                raise ValueError(f"user {name!r}: unknown {head} preset {key!r}; valid: {', '.join(family.presets)}")
            if named:
                raise ValueError(f"user {name!r} names two presets ({', '.join([*named, key])}); name one")
            preset = key
            named.add(key)
            continue
        if key in params:
            raise ValueError(f"user {name!r} gives {key} twice ({params[key]:g} and {value}); give each parameter "
                             "once")
        if key not in family.params:
            valid = ", ".join(family.params) or "none"
            raise ValueError(f"user {name!r}: unknown {head} parameter {key!r}; valid: {valid}")
        _, low, high = family.params[key]
        try:
            params[key] = float(value)
        except ValueError:
            raise ValueError(f"user {name!r}: {key} needs a number, got {value!r}") from None
        if not low <= params[key] <= high:
            raise ValueError(f"user {name!r}: {key} must lie in [{low:g}, {high:g}], got {value}")
    return UserName(head, preset, params, noise)


def is_click_model_name(name: str) -> bool:
    """Whether ``name`` is written as one of :data:`FAMILIES` (it may still have a bad preset or value)."""
    head = NOISE_SUFFIX.sub("", str(name)).partition(":")[0]
    return head in FAMILIES or head in FAMILIES["cascade"].presets


def preset_tables(preset: str, max_grade: int) -> tuple[tuple, tuple]:
    """(click, stop) per grade of a cascade preset for a data set whose highest grade is ``max_grade``:
    the 5-grade table for 3 and above, the 3-grade one for 2, the extremes of the 3-grade one for binary."""
    click, stop = CASCADE_PRESETS[4 if max_grade >= 3 else 2][preset]
    if max_grade < 2:
        click, stop = (click[0], click[-1]), (stop[0], stop[-1])
    return tuple(click), tuple(stop)


def build_click_model(name: str, max_grade: int, stop_rule: str = "after_click", cutoff: int = 10):
    """The click model a name of :func:`parse_user_name`'s grammar describes."""
    return click_model_of(parse_user_name(name), NOISE_SUFFIX.sub("", str(name)), max_grade, stop_rule, cutoff)


def click_model_of(parsed: UserName, label: str, max_grade: int, stop_rule: str = "after_click", cutoff: int = 10):
    """The click model of an already parsed name (``label``: the name without its noise suffix)."""
    family = FAMILIES[parsed.family]
    p = {k: parsed.params.get(k, default) for k, (default, _, _) in family.params.items()}
    if parsed.family == "trust_bias":
        plus, minus = vardasbi_click_rates(cutoff)
        model = TrustBiasModel(label, tuple(graded_relevance(max(max_grade, 1))), tuple(plus), tuple(minus),
                               p["eta"], cutoff=cutoff)
    else:
        click, stop = preset_tables(parsed.preset, max_grade)
        if parsed.family == "cascade":
            model = CascadeClickModel(label, click, stop, stop_rule, cutoff)
        elif parsed.family == "dbn":
            model = DynamicBayesianNetwork(label, click, stop, p["gamma"], cutoff)
        elif parsed.family == "sdbn":
            model = SimplifiedDBN(label, click, stop, cutoff)
        elif parsed.family == "ccm":
            alphas = CCM_ALPHAS[parsed.preset]
            model = ClickChainModel(label, click, *(parsed.params.get(f"alpha{i + 1}", alphas[i]) for i in range(3)),
                                    cutoff=cutoff)
        elif parsed.family == "pbm":
            model = PositionBasedClickModel(label, click, p["eta"], cutoff)
        else:
            model = UserBrowsingModel(label, click, p["eta"], cutoff=cutoff)
    return NoisyClicks(model, parsed.noise) if parsed.noise is not None else model


def describe_families() -> list[str]:
    """One line per family for ``olr list``."""
    lines = []
    for name, family in FAMILIES.items():
        params = ", ".join(f"{k}={d:g} in [{lo:g}, {hi:g}]" for k, (d, lo, hi) in family.params.items()) or "none"
        lines.append(f"  {name:<11} presets {'/'.join(family.presets)} (default {family.default_preset}); "
                     f"parameters {params}; values: {family.source}")
    lines.append("  any of them +noise=EPS: each shown click flipped with probability EPS in [0, 0.5]")
    return lines
