"""The ranker protocol every algorithm of the book follows.

A round of the online loop (:func:`olr_core.loop.run_online`) is::

    display  = ranker.rank(query)                 # what the user sees (maybe interleaved)
    feedback = user(query, display.shown(cutoff), user_rng)
    info     = ranker.learn(query, display, feedback)   # optional diagnostics

and offline evaluation ranks test documents by ``ranker.score(docs)``. Honest rankers
read only ``docs.features``; the oracle, an upper bound, also reads ``docs.labels``.
``feedback_kind`` says which user feedback a ranker learns from: ``"clicks"``,
``"topk_labels"``, ``"all_labels"`` or ``"choice"`` (see :mod:`olr_core.users`), or
``"any"`` for a ranker that ignores feedback. A ranker that reads the grades of the top k
shown documents says so with ``feedback_depth = k``; the loop refuses a user who reveals fewer.

``start``, ``rank``, ``learn`` and ``score`` are required; ``weights()`` is optional (default: no
weights), and so are ``feedback_kind`` (default ``"clicks"``) and ``feedback_depth``. A ranker that
is not built in (a plug-in) runs behind :mod:`olr_core.plugin_guard`: read-only data, every value it
returns checked against this protocol, its errors reported in one line.

Optionally, a ranker may offer ``compiled_rounds(user, train, cutoff)``: an object whose
``play(queries, user_rng, shown_out)`` plays a block of rounds in compiled code and
returns its per-round diagnostics, or None when it has no compiled path for this user.
It must be the protocol above, round for round and random number for random number:
the loop uses it when offered and the tests compare the two
(:mod:`olr_core.rankers.dueling_compiled` is the example).

A built-in linear ranker also declares ``evaluation_vector()``: the v with ``score(docs)`` exactly
``docs.features @ v``, so that the loop can score several evaluation rounds by one matrix product
(:class:`olr_core.loop.BatchedEvaluation`); the loop never asks a plug-in for it.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..data.ranking_data import Query, RankingData
from ..metrics import rank_by_scores
from ..params import Param, check_all


@dataclass
class Display:
    """A ranking of a query's documents in display order, plus what the ranker needs back."""

    ranking: np.ndarray
    info: Any = None
    stats: dict = field(default_factory=dict)

    def shown(self, cutoff: int = 10) -> np.ndarray:
        return self.ranking[:cutoff]


@runtime_checkable
class Ranker(Protocol):
    feedback_kind: str

    def start(self, train: RankingData, rng: np.random.Generator) -> None:
        """Reset state for a new run; ``train`` gives dimensions (offline learners also its labels)."""

    def rank(self, query: Query) -> Display:
        """The list shown for ``query`` this round."""

    def learn(self, query: Query, display: Display, feedback) -> dict | None:
        """Update from the user's feedback on ``display``; may return diagnostics."""

    def score(self, docs) -> np.ndarray:
        """Deterministic scores of ``docs`` (anything with ``.features``) for offline evaluation."""

    def weights(self) -> np.ndarray | None:
        """The current parameter vector, if the model has one (for cosine similarity); optional, default None."""


@functools.cache
def _init_signature(cls: type) -> inspect.Signature:
    return inspect.signature(cls.__init__)


@functools.cache
def declared_options(cls: type) -> dict[str, Param]:
    """The ``PARAMS`` declarations of ``cls`` merged along its class hierarchy (a subclass overrides)."""
    declared: dict[str, Param] = {}
    for base in reversed(cls.__mro__):
        declared.update(vars(base).get("PARAMS", {}))
    return declared


def check_options(cls: type, args: tuple, kwargs: dict) -> None:
    """The options ``cls(*args, **kwargs)`` is given, checked against the ``PARAMS`` its classes declare
    (a one-line ParameterError naming the class and option); arguments that do not fit ``__init__`` at all
    are left to ``__init__`` to refuse as Python does."""
    signature = _init_signature(cls)
    try:
        bound = list(signature.bind(None, *args, **kwargs).arguments.items())[1:]      # (not self)
    except TypeError:
        return
    named = {}
    for name, value in bound:
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            named[name] = value
    declared = declared_options(cls)
    check_all(declared, {k: v for k, v in named.items() if k in declared}, cls.__name__)


class BaseRanker:
    """Defaults: rank by ``score`` with random tie-breaking, learn nothing, no weights. A ranker is refused
    when built with an option outside the ``PARAMS`` its classes declare (scikit-learn's habit)."""

    feedback_kind = "clicks"

    def __new__(cls, *args, **kwargs):
        check_options(cls, args, kwargs)      # e.g. DBGD(learning_rate=-1) is refused here, in one line
        return super().__new__(cls)

    def start(self, train: RankingData, rng: np.random.Generator) -> None:
        self.rng = rng
        self.n_features = getattr(train, "n_features", 0)      # (a growing-library stream has no features)

    def rank(self, query: Query) -> Display:
        return Display(rank_by_scores(self.score(query), self.rng))

    def learn(self, query: Query, display: Display, feedback) -> dict | None:
        return None

    def score(self, docs) -> np.ndarray:
        raise NotImplementedError

    def weights(self) -> np.ndarray | None:
        return None

    def evaluation_vector(self) -> np.ndarray | None:
        """The v with ``score(docs)`` exactly ``docs.features @ v`` (the same GEMV, so the same bits), which lets
        the loop score several evaluation rounds by one matrix product (:class:`olr_core.loop.BatchedEvaluation`);
        None (the default) where there is none. Declared only by built-in classes whose ``score`` it was checked
        against, and only while that ``score`` is not overridden."""
        return None


class LinearRanker(BaseRanker):
    """A linear scorer s(x) = w . x; subclasses learn ``self.w``."""

    def start(self, train: RankingData, rng: np.random.Generator) -> None:
        super().start(train, rng)
        self.w = np.zeros(train.n_features)

    def score(self, docs) -> np.ndarray:
        return docs.features @ self.w

    def weights(self) -> np.ndarray | None:
        return self.w

    def evaluation_vector(self) -> np.ndarray | None:
        return self.w if type(self).score is LinearRanker.score else None
