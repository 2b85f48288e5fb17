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

from .click_models import (  # noqa: F401  (the cascade, its presets, Clicks, chain_clicks, PBM: re-exported)
    CASCADE_PRESETS,
    FAMILIES,
    MAX_TABLE_GRADE,
    NOISE_SUFFIX,
    STOP_RULES,
    CascadeClickModel,
    Clicks,
    PositionBasedClickModel,
    UserName,
    build_click_model,
    chain_clicks,
    click_model_of,
    describe_families,
    is_click_model_name,
    parse_user_name,
)
from .plugins import USER_GROUP, PluginError, load_reference, resolve, source_hash

FEEDBACK_KINDS = ("clicks", "topk_labels", "all_labels", "choice")


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


CLICK_MODELS = ("perfect", "navigational", "informational", "pbm", "dbn", "sdbn", "ccm", "ubm", "trust_bias")
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
    return None if reference is None else _user_class(reference, name)


def _user_class(reference: str, name: str):
    cls = load_reference(reference, "user")
    if not isinstance(cls, type) or "__call__" not in dir(cls):
        raise PluginError(f"user {name!r} is not a class whose instances are called as user(query, shown, rng)")
    return cls


@dataclass(frozen=True)
class UserSpec:
    """A user model as ``-c`` or a grid names it, parsed once (:func:`parse_user`): its family (a click model
    family of :data:`.click_models.FAMILIES`, ``top``, ``full``, ``choice`` or ``plugin``), a click model's
    preset, parameters and noise, the feedback it gives (and k, for the grades of the top k), and a
    plug-in's import reference and source hash. ``name`` is the text given, as runs are keyed by it."""

    name: str
    family: str
    feedback_kind: str = "clicks"
    k: int | None = None
    preset: str | None = None
    params: tuple = ()                  # (key, value) pairs of a click model's parameters
    noise: float | None = None
    plugin: str | None = None
    source_hash: str | None = None

    @property
    def click_model(self) -> UserName | None:
        """The parsed click model name, or None for a user that is no click model."""
        return UserName(self.family, self.preset, dict(self.params), self.noise) if self.family in FAMILIES else None


LABEL_FEEDBACK = {"full": "all_labels", "choice": "choice"}
UNKNOWN_USER = (f"valid: {', '.join(CLICK_MODELS + LABEL_USERS)} (click models with :preset, :key=value, "
                "+noise=EPS; see olr list), or your own class as package.module:Class or path/to/file.py:Class")


def parse_user(name: str, cutoff: int = 10) -> UserSpec:
    """The :class:`UserSpec` of ``name`` for lists of ``cutoff`` shown documents, or a one-line ValueError
    naming what is wrong (a bad k, preset, parameter or value, an unknown name)."""
    k = top_k_of(name)
    if k is not None:
        if not 1 <= k <= cutoff:
            raise ValueError(f"user {name} reveals the top {k} documents; k must be between 1 and the {cutoff} "
                             f"shown (top1 ... top{cutoff})")
        return UserSpec(name, "top", "topk_labels", k)
    if name in ("full", "choice"):
        return UserSpec(name, name, LABEL_FEEDBACK[name])
    if is_click_model_name(name):
        parsed = parse_user_name(name)
        click_model_of(parsed, NOISE_SUFFIX.sub("", name), 4, cutoff=cutoff)     # a value it cannot take raises
        return UserSpec(name, parsed.family, preset=parsed.preset, params=tuple(sorted(parsed.params.items())),
                        noise=parsed.noise)
    reference = resolve(name, USER_GROUP)
    if reference is None:
        raise ValueError(f"unknown user model {name!r}; {UNKNOWN_USER}")
    cls = _user_class(reference, name)
    return UserSpec(name, "plugin", getattr(cls, "feedback_kind", "clicks"), getattr(cls, "k", None),
                    plugin=reference, source_hash=source_hash(cls))


def make_user(user: UserSpec | str, max_grade: int, stop_rule: str = "after_click", cutoff: int = 10, **params):
    """The user model ``user`` (a :class:`UserSpec`, or a name parsed here) for a data set whose highest
    grade is ``max_grade``.

    Click models are named ``family[:preset][,key=value...][+noise=EPS]`` (:mod:`.click_models`); the
    cascade presets perfect, navigational and informational pick the 3-grade or 5-grade table from
    ``max_grade``, and binary data use the extremes of the 3-grade table. ``stop_rule`` applies to
    the cascade. ``pbm`` also takes ``click_prob`` and ``eta`` as keyword parameters.
    """
    spec = user if isinstance(user, UserSpec) else parse_user(user, cutoff)
    click_model = spec.click_model
    if click_model is not None and max_grade > MAX_TABLE_GRADE:
        raise ValueError(f"the data set's grades reach {max_grade}, beyond the click models' grade tables "
                         f"(0 .. {MAX_TABLE_GRADE}); use a user of your own that defines its clicks (-c "
                         "module:Class), as the logistic users of olr_core.reproductions.worlds do")
    if spec.name == "pbm" and params:
        click = CASCADE_PRESETS[4 if max_grade >= 3 else 2]["informational"][0]
        return PositionBasedClickModel(spec.name, tuple(params.get("click_prob", click)),
                                       float(params.get("eta", 1.0)), cutoff)
    if click_model is not None:
        return click_model_of(click_model, NOISE_SUFFIX.sub("", spec.name), max_grade, stop_rule, cutoff)
    if spec.family == "plugin":
        from .plugin_guard import GuardedUser, build_plugin

        cls = _user_class(spec.plugin, spec.name)
        return GuardedUser(build_plugin(cls, spec.name, "user", max_grade=max_grade, cutoff=cutoff, **params),
                           spec.name, max_grade)
    return {"top": lambda: TopKRelevanceUser(k=spec.k), "full": AllLabelsUser, "choice": ChoiceUser}[spec.family]()


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
