"""Simulated users: click models and the other feedback kinds of the ranker protocol.

Every user model is called as ``user(query, shown, rng)``: the query (its documents'
``labels`` and ``features``), the indices of the shown documents in display order (at most
``cutoff``) and a random generator; it returns a feedback object. Most users read only the
labels; :class:`LogisticClickUser` clicks by a known function of the features. A click model always draws the
same number of random numbers per round, so that two rankers run with the same seed
meet the same users (common random numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from numba import njit

from .plugins import USER_GROUP, PluginError, load_reference, resolve

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
FEEDBACK_KINDS = ("clicks", "topk_labels", "all_labels", "choice")


@dataclass(frozen=True)
class Clicks:
    """Clicks on the shown list and the last position the user examined (0-based)."""

    clicks: np.ndarray
    last_examined: int

    @property
    def clicked_positions(self) -> np.ndarray:
        return np.flatnonzero(self.clicks)


@dataclass(frozen=True)
class TopKLabels:
    """Explicit relevance labels of the top ``k`` shown documents (RTop-kF feedback)."""

    labels: np.ndarray


@dataclass(frozen=True)
class AllLabels:
    """The true grades of every document of the query, in document order (full-information feedback)."""

    labels: np.ndarray


@dataclass(frozen=True)
class Choice:
    """The one document the user picked (its position in the shown list, or -1 if not shown)."""

    document: int
    position: int


@dataclass(frozen=True)
class CascadeClickModel:
    """Cascade-family user (dependent click model).

    The user scans from the top; at position r with grade g they click with probability
    ``click_prob[g]``. Stop rule ``after_click`` (the papers' dependent click model): after
    a click they stop with probability ``stop_prob[g]``. Stop rule ``every_position`` (the
    public reference code): the stop draw happens at every examined position, clicked or not.
    """

    name: str
    click_prob: tuple[float, ...]
    stop_prob: tuple[float, ...]
    stop_rule: str = "after_click"
    cutoff: int = 10
    feedback_kind = "clicks"

    def __post_init__(self):
        if self.stop_rule not in STOP_RULES:
            raise ValueError(f"unknown stop rule {self.stop_rule!r}; valid: {', '.join(STOP_RULES)}")
        object.__setattr__(self, "_pc", np.asarray(self.click_prob))
        object.__setattr__(self, "_ps", np.asarray(self.stop_prob))

    def __call__(self, query, shown: np.ndarray, rng: np.random.Generator) -> Clicks:
        clicked = np.zeros(len(shown), dtype=np.bool_)
        last = cascade_clicks(query.labels[shown], self.draw_rounds(rng, 1)[0], *self.kernel_arguments(), clicked)
        return Clicks(clicked, last)

    def kernel_arguments(self) -> tuple:
        """(click_prob, stop_prob, every_position): the parameters :func:`cascade_clicks` takes."""
        return self._pc, self._ps, self.stop_rule == "every_position"

    def draw_rounds(self, rng: np.random.Generator, rounds: int) -> np.ndarray:
        """The random numbers of ``rounds`` consecutive calls (rounds x 2 x cutoff), as they would draw them."""
        return rng.random((rounds, 2, self.cutoff))

    def click_probability_by_position(self, shown_labels) -> np.ndarray:
        """Exact P(click at each position) for a fixed shown list (used to test the simulator)."""
        pc, ps = self._pc[shown_labels], self._ps[shown_labels]
        stop = pc * ps if self.stop_rule == "after_click" else ps
        examined = np.concatenate([[1.0], np.cumprod(1.0 - stop)[:-1]])
        return examined * pc


@njit(cache=True)
def cascade_clicks(shown_labels, draws, click_prob, stop_prob, every_position, clicked):
    """One cascade session: fill ``clicked`` and return the last examined position.

    ``draws`` (2 x cutoff) are the session's uniforms: row 0 decides clicks, row 1 stops.
    """
    n = len(shown_labels)
    last = n - 1
    for i in range(n):
        g = shown_labels[i]
        clicked[i] = draws[0, i] < click_prob[g]
        if draws[1, i] < stop_prob[g] and (every_position or clicked[i]):
            last = i
            break
    for i in range(last + 1, n):
        clicked[i] = False
    return last


@dataclass(frozen=True)
class PositionBasedClickModel:
    """Position-based model: examine rank r (1-based) with prob (1/r)^eta, click if attracted."""

    name: str
    click_prob: tuple[float, ...]
    eta: float = 1.0
    cutoff: int = 10
    feedback_kind = "clicks"

    def __call__(self, query, shown, rng) -> Clicks:
        draws = rng.random((2, self.cutoff))
        shown_labels = query.labels[shown]
        n = len(shown_labels)
        examined = draws[0, :n] < (1.0 / np.arange(1, n + 1)) ** self.eta
        clicked = examined & (draws[1, :n] < np.asarray(self.click_prob)[shown_labels])
        last = int(np.flatnonzero(examined)[-1]) if examined.any() else -1
        return Clicks(clicked, last)


@dataclass(frozen=True)
class TopKRelevanceUser:
    """Reveals the true grades of the top ``k`` shown documents and nothing else (feedback at the top).

    Built as ``make_user("top<k>")``, e.g. ``top1``, ``top2``. A list shorter than ``k``
    reveals all of its grades.
    """

    k: int = 1
    feedback_kind = "topk_labels"

    def __post_init__(self):
        if not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ValueError(f"top-k user: k must be an integer >= 1, got {self.k!r}; use click model top1, top2, ...")

    @property
    def name(self) -> str:
        return f"top{self.k}"

    def __call__(self, query, shown, rng) -> TopKLabels:
        return TopKLabels(query.labels[shown[: self.k]].copy())


@dataclass(frozen=True)
class AllLabelsUser:
    """Reveals the grades of all the query's documents, shown or not (full-information baselines)."""

    name: str = "full"
    feedback_kind = "all_labels"

    def __call__(self, query, shown, rng) -> AllLabels:
        return AllLabels(query.labels.copy())


@dataclass(frozen=True)
class ChoiceUser:
    """Wants one document, drawn with probability proportional to 2^grade - 1, and picks it."""

    name: str = "choice"
    feedback_kind = "choice"

    def __call__(self, query, shown, rng) -> Choice:
        weights = 2.0 ** query.labels - 1.0
        u = rng.random()
        if weights.sum() == 0:
            return Choice(-1, -1)
        target = int(np.searchsorted(np.cumsum(weights) / weights.sum(), u, side="right"))
        hits = np.flatnonzero(shown == target)
        return Choice(target, int(hits[0]) if len(hits) else -1)


@dataclass(frozen=True)
class LogisticClickUser:
    """Examines every shown position and clicks document x with probability sigmoid(theta* . x - bias).

    Given that exactly one of two documents is clicked, the clicked one is i with probability
    sigmoid(theta* . (x_i - x_j)): the well-specified pairwise logistic model of PairRank's analysis.
    """

    theta_star: tuple
    bias: float = 0.0
    name: str = "logistic"
    cutoff: int = 10
    feedback_kind = "clicks"

    def __call__(self, query, shown, rng) -> Clicks:
        draws = rng.random(self.cutoff)
        logits = query.features[shown] @ np.asarray(self.theta_star) - self.bias
        clicked = draws[: len(shown)] < 1.0 / (1.0 + np.exp(-logits))
        return Clicks(clicked, len(shown) - 1)


CLICK_MODELS = ("perfect", "navigational", "informational", "pbm")
LABEL_USERS = ("top<k>", "full", "choice")      # explicit-feedback users (top1, top2, ...: grades of the top k)


def top_k_of(name: str) -> int | None:
    """k for a user name ``top<k>`` (``top1``, ``top2``, ...), else None."""
    match = re.fullmatch(r"top([0-9]+)", str(name))
    return int(match.group(1)) if match else None


def external_user(name: str):
    """The user class an import reference (``module:Class``, ``file.py:Class``) or an installed plug-in's name
    (entry point group ``olr_core.users``) names, or None for a built-in name. The class is built as
    ``Class(max_grade=..., cutoff=...)`` and called as ``user(query, shown, rng)`` like every user; its
    ``feedback_kind`` (default "clicks") says what it returns, and it should draw the same number of random
    numbers every round (common random numbers)."""
    reference = resolve(name, USER_GROUP)
    if reference is None:
        return None
    cls = load_reference(reference, "user")
    if not isinstance(cls, type) or "__call__" not in dir(cls):
        raise PluginError(f"user {name!r} is not a class whose instances are called as user(query, shown, rng)")
    return cls


def check_user_name(name: str, cutoff: int = 10) -> str:
    """``name`` if :func:`make_user` can build it for lists of ``cutoff`` shown documents, else a one-line error."""
    k = top_k_of(name)
    if k is None and name not in CLICK_MODELS + ("full", "choice") and external_user(name) is None:
        raise ValueError(f"unknown user model {name!r}; valid: {', '.join(CLICK_MODELS + LABEL_USERS)}, or your "
                         "own class as package.module:Class or path/to/file.py:Class")
    if k is not None and not 1 <= k <= cutoff:
        raise ValueError(f"user {name} reveals the top {k} documents; k must be between 1 and the {cutoff} shown "
                         f"(top1 ... top{cutoff})")
    return name


def feedback_of_user(name: str) -> tuple[str, int | None]:
    """(feedback kind, k) of the user model ``name`` without building it: clicks, topk_labels (with k),
    all_labels or choice."""
    k = top_k_of(name)
    if k is not None:
        return "topk_labels", k
    cls = external_user(name) if name not in CLICK_MODELS + ("full", "choice") else None
    if cls is not None:
        return getattr(cls, "feedback_kind", "clicks"), getattr(cls, "k", None)
    return {"full": "all_labels", "choice": "choice"}.get(name, "clicks"), None


def make_user(name: str, max_grade: int, stop_rule: str = "after_click", cutoff: int = 10, **params):
    """The user model ``name`` for a data set whose highest grade is ``max_grade``.

    Cascade presets pick the 3-grade or 5-grade table from ``max_grade``; data with other
    scales (e.g. binary) use the 3-grade table with grades mapped onto 0..2.
    """
    if name in ("perfect", "navigational", "informational"):
        table = CASCADE_PRESETS[4 if max_grade >= 3 else 2][name]
        click, stop = table
        if max_grade < 2:   # binary data: grade 1 behaves like the top grade
            click, stop = (click[0], click[-1]), (stop[0], stop[-1])
        return CascadeClickModel(name, click, stop, stop_rule, cutoff)
    if name == "pbm":
        click = CASCADE_PRESETS[4 if max_grade >= 3 else 2]["informational"][0]
        return PositionBasedClickModel(name, tuple(params.get("click_prob", click)), float(params.get("eta", 1.0)),
                                       cutoff)
    if top_k_of(name) is not None:
        return TopKRelevanceUser(k=top_k_of(check_user_name(name, cutoff)))
    if name == "full":
        return AllLabelsUser()
    if name == "choice":
        return ChoiceUser()
    external = external_user(name)
    if external is not None:
        return external(max_grade=max_grade, cutoff=cutoff, **params)
    raise ValueError(f"unknown user model {name!r}; valid: {', '.join(CLICK_MODELS + LABEL_USERS)}")


def click_through_table(user, data, sessions: int, seed: int = 0, cutoff: int = 10):
    """Simulated click-through rate by (position, grade) for random lists of ``data``'s queries.

    Each session draws a query uniformly, shows a uniformly random ordering of its documents
    (top ``cutoff``) and records the user's clicks. Returns a pandas DataFrame with columns
    position (1-based), grade, impressions, clicks, ctr and the exact click probability.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    n_grades = data.max_grade + 1
    shown_count = np.zeros((cutoff, n_grades))
    click_count = np.zeros((cutoff, n_grades))
    exact_sum = np.zeros((cutoff, n_grades))
    for q in rng.integers(data.n_queries, size=sessions):
        labels = data.labels[data.offsets[q]:data.offsets[q + 1]]
        shown = rng.permutation(len(labels))[:cutoff]
        feedback = user(data.query(q), shown, rng)
        positions = np.arange(len(shown))
        np.add.at(shown_count, (positions, labels[shown]), 1)
        np.add.at(click_count, (positions, labels[shown]), feedback.clicks)
        if hasattr(user, "click_probability_by_position"):
            np.add.at(exact_sum, (positions, labels[shown]), user.click_probability_by_position(labels[shown]))
    pos, grade = np.meshgrid(np.arange(cutoff), np.arange(n_grades), indexing="ij")
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({"position": pos.ravel() + 1, "grade": grade.ravel(),
                             "impressions": shown_count.ravel(), "clicks": click_count.ravel(),
                             "ctr": (click_count / shown_count).ravel(), "exact": (exact_sum / shown_count).ravel()})
