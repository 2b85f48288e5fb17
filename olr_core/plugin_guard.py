"""A plug-in (a ranker or user class not from ``olr_core``) runs behind a guard.

The guard hands it read-only views of the data (``writeable=False``: a write raises at the line that
writes, and the data every later run of the process sees stays intact), checks every value it returns
against the protocol of :mod:`olr_core.rankers.base` and :mod:`olr_core.users` (length, dtype, range,
finite, no repeated document), and turns an exception raised inside it into one line naming the
plug-in, the method, the error and the file and line that raised it; an ``os._exit`` inside it raises
(:class:`olr_core.plugins.ProcessExitCalled`) and is reported so, instead of ending olr without a word.
Built-in rankers and users are never wrapped, so their compiled paths cost nothing more. A plug-in's
``compiled_rounds`` is not used: its rounds are played through the checked protocol (the same numbers, by
the protocol's contract).
"""

from __future__ import annotations

import dataclasses
import numbers
import traceback

import numpy as np

from .click_models import Clicks
from .data.ranking_data import Query, RankingData
from .loop import NonFiniteModelError
from .plugins import PluginError, is_own_code, plugin_call

# What a plug-in may raise that the guard reports in one line: any error, and SystemExit (a sys.exit() or an
# argparse left in the researcher's code would otherwise end the whole process without a word about where).
PLUGIN_FAILURES = (Exception, SystemExit)

READ_ONLY_HINT = ("; the data a plug-in receives is read-only: copy it first (e.g. x = query.features.copy()) "
                  "instead of writing into it")


def read_only(array):
    """A ``writeable=False`` view of ``array`` (no copy); anything that is not an array is returned as is."""
    if not isinstance(array, np.ndarray) or not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view


def read_only_data(data):
    """``data`` (a :class:`RankingData`, a :class:`Query`, a fold or anything with ``features``) with every
    array replaced by a read-only view."""
    if isinstance(data, (RankingData, Query)):
        arrays = {f.name: read_only(getattr(data, f.name)) for f in dataclasses.fields(data)
                  if isinstance(getattr(data, f.name), np.ndarray)}
        if all(a is getattr(data, n) for n, a in arrays.items()):
            return data
        if isinstance(data, RankingData):
            return dataclasses.replace(data, _derived=dict(data._derived), **arrays)
        return dataclasses.replace(data, **arrays)
    if all(hasattr(data, s) for s in ("train", "vali", "test")) and dataclasses.is_dataclass(data):
        return dataclasses.replace(data, **{s: read_only_data(getattr(data, s)) for s in ("train", "vali", "test")})
    return data


def raised_at(err: BaseException) -> str:
    """``file:line`` where ``err`` was raised: the deepest frame in the researcher's own code, else the deepest."""
    frames = traceback.extract_tb(err.__traceback__)
    own = [f for f in frames if is_own_code(f.filename)] or frames[-1:]
    return f"{own[-1].filename}:{own[-1].lineno}" if own else "an unknown place"


def failure_message(what: str, name: str, method: str, err: BaseException) -> str:
    """One line: ``your ranker NAME's learn raised KeyError('x') at file.py:12``."""
    shown = repr(err)
    shown = shown if len(shown) <= 300 else shown[:297] + "..."
    hint = READ_ONLY_HINT if "read-only" in str(err) else ""
    return f"your {what} {name}'s {method} raised {shown} at {raised_at(err)}{hint}"


def _integers(values, what: str) -> np.ndarray:
    """``values`` as a 1-D integer array, else a :class:`PluginError` saying what it is."""
    array = np.asarray(values) if values is not None else None
    if array is None or array.ndim != 1 or array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        got = "None" if array is None else f"an array of shape {array.shape} and dtype {array.dtype}"
        raise PluginError(f"{what} returned {got}; it must be a 1-D array of document indices (integers)")
    return array


class GuardedRanker:
    """A plug-in ranker behind the guard (built by :func:`guard_ranker`, named after the plug-in's class)."""

    compiled_rounds = None                      # (the loop plays a plug-in through the checked protocol)
    evaluation_vector = None                    # (and evaluates it through its checked score, never batched)

    def __init__(self, ranker, name: str):
        self._ranker, self._name = ranker, name
        self._read_only_docs: dict[int, tuple] = {}
        self._n_features = None

    def __getattr__(self, attribute):
        return getattr(self._ranker, attribute)

    def _call(self, method: str, *args):
        try:
            with plugin_call():
                return getattr(self._ranker, method)(*args)
        except PluginError:
            raise
        except PLUGIN_FAILURES as err:          # (anything a plug-in raises becomes one line naming it)
            raise PluginError(failure_message("ranker", self._name, method, err)) from None

    def _where(self, method: str) -> str:
        return f"your ranker {self._name}'s {method}"

    def _docs(self, docs):
        """A read-only view of ``docs``, made once per evaluated object."""
        seen = self._read_only_docs.get(id(docs))
        if seen is None or seen[0] is not docs:
            seen = self._read_only_docs[id(docs)] = (docs, read_only_data(docs))
        return seen[1]

    def start(self, train, rng) -> None:
        self._n_features = getattr(train, "n_features", None)
        self._call("start", read_only_data(train), rng)

    def rank(self, query):
        """The plug-in's display, checked: a ranking of distinct documents of ``query``, and a stats dict."""
        display = self._call("rank", read_only_data(query))
        where = self._where("rank")
        if not (hasattr(display, "ranking") and hasattr(display, "stats")):
            raise PluginError(f"{where} returned {type(display).__name__}; it must return "
                              "olr_core.rankers.base.Display(ranking)")
        ranking = _integers(display.ranking, where)
        n = query.n_docs
        if len(ranking) and (ranking.min() < 0 or ranking.max() >= n):
            bad = ranking[(ranking < 0) | (ranking >= n)][0]
            raise PluginError(f"{where} returned document {bad}, outside the query's {n} documents (0 .. {n - 1})")
        if len(np.unique(ranking)) != len(ranking):
            values, counts = np.unique(ranking, return_counts=True)
            raise PluginError(f"{where} shows document {values[counts > 1][0]} {counts.max()} times; a ranking "
                              "lists each document at most once")
        _check_stats(display.stats, where + " (Display.stats)")
        try:
            display.ranking = ranking                   # (as an array, whatever sequence it was given as)
        except AttributeError:                          # (a frozen display of the plug-in's own: kept as it is)
            pass
        return display

    def learn(self, query, display, feedback):
        info = self._call("learn", read_only_data(query), display, feedback)
        _check_stats(info, self._where("learn"))
        return info

    def score(self, docs) -> np.ndarray:
        """The plug-in's scores, checked: one finite number per document of ``docs``."""
        docs = self._docs(docs)
        scores = self._call("score", docs)
        where, n = self._where("score"), len(docs.features)
        array = np.asarray(scores) if scores is not None else np.asarray(None, dtype=object)
        if array.dtype == bool or not np.issubdtype(array.dtype, np.number) or np.iscomplexobj(array):
            raise PluginError(f"{where} returned {type(scores).__name__} of dtype {array.dtype}; it must return "
                              f"one real number per document ({n})")
        if array.shape != (n,):
            got = "a scalar" if array.ndim == 0 else f"shape {array.shape}"
            raise PluginError(f"{where} returned {got} for {n} documents; it must return one score per document "
                              f"(shape ({n},))")
        array = array.astype(np.float64, copy=False)
        if not np.isfinite(array).all():
            raise NonFiniteModelError(f"{self._name}: its score returned non-finite values (NaN or inf) for "
                                      f"{int((~np.isfinite(array)).sum())} of {n} documents; the method diverged or "
                                      "divides by zero (nothing was stored)")
        return array

    def weights(self):
        """The plug-in's weights if it has the optional method ``weights()``, else None (the documented default)."""
        if not callable(getattr(self._ranker, "weights", None)):
            return None
        w = self._call("weights")
        if w is None:
            return None
        array = np.asarray(w)
        if array.ndim != 1 or not np.issubdtype(array.dtype, np.number) or array.dtype == bool:
            raise PluginError(f"{self._where('weights')} returned {type(w).__name__} of shape {array.shape}; it "
                              "must return None or a 1-D array of numbers")
        if not np.isfinite(array).all():
            raise NonFiniteModelError(f"{self._name}: its weights() returned non-finite values (NaN or inf) for "
                                      f"{int((~np.isfinite(array)).sum())} of {len(array)} parameters; the method "
                                      "diverged or divides by zero (nothing was stored)")
        return array.astype(np.float64, copy=False)


def _check_stats(stats, where: str) -> None:
    """Diagnostics are None or a dict of names to real numbers."""
    if stats is None:
        return
    if not isinstance(stats, dict):
        raise PluginError(f"{where} returned {type(stats).__name__}; diagnostics are None or a dict of "
                          "name: number")
    for key, value in stats.items():
        if not isinstance(value, numbers.Real):
            raise PluginError(f"{where} returned diagnostic {key!r} = {value!r}; diagnostics are numbers")


def guard_ranker(ranker, name: str):
    """``ranker`` (a plug-in instance) behind a :class:`GuardedRanker` whose class bears its class's name."""
    guarded = type(type(ranker).__name__, (GuardedRanker,), {"__module__": type(ranker).__module__})
    return guarded(ranker, name)


class GuardedUser:
    """A plug-in user behind the guard: it reads a read-only query, and its feedback is checked."""

    def __init__(self, user, name: str, max_grade: int | None = None):
        self._user, self._name, self._max_grade = user, name, max_grade

    def __getattr__(self, attribute):
        return getattr(self._user, attribute)

    def __call__(self, query, shown, rng):
        try:
            with plugin_call():
                feedback = self._user(read_only_data(query), read_only(shown), rng)
        except PluginError:
            raise
        except PLUGIN_FAILURES as err:
            raise PluginError(failure_message("user", self._name, "__call__", err)) from None
        kind = getattr(self._user, "feedback_kind", "clicks")
        if kind == "clicks":
            return _checked_clicks(feedback, len(shown), self._name)
        top = self._max_grade if self._max_grade is not None else int(np.max(query.labels, initial=0))
        return _checked_labels(feedback, kind, query, shown, self._name, getattr(self._user, "k", None), top)


def _checked_clicks(feedback, n_shown: int, name: str):
    """Clicks on the ``n_shown`` shown documents: booleans (0/1 are taken as such), one per shown document, and
    the last examined position: an integer from -1 (none) to ``n_shown - 1``, at or below no click."""
    where = f"your user {name}'s __call__"
    clicks = getattr(feedback, "clicks", None)
    if clicks is None:
        raise PluginError(f"{where} returned {type(feedback).__name__}; a click user returns "
                          "olr_core.users.Clicks(clicks, last_examined)")
    array = np.asarray(clicks)
    if array.shape != (n_shown,):
        raise PluginError(f"{where} returned clicks of shape {array.shape} for {n_shown} shown documents; give "
                          f"one click (True/False) per shown document")
    if array.dtype != bool:
        if not np.issubdtype(array.dtype, np.number) or not np.isin(array, (0, 1)).all():
            bad = array[~np.isin(array, (0, 1))][0].item() if np.issubdtype(array.dtype, np.number) else array.dtype
            raise PluginError(f"{where} returned a click of {bad!r}; clicks are True/False (or 0/1)")
        array = array.astype(bool)
    last = _last_examined(getattr(feedback, "last_examined", n_shown - 1), array, where)
    return feedback if isinstance(clicks, np.ndarray) and clicks.dtype == bool else Clicks(array, last)


def _last_examined(last, clicks: np.ndarray, where: str) -> int:
    """``last`` as the last examined position of a session with these ``clicks``, else a PluginError."""
    n = len(clicks)
    if isinstance(last, (bool, np.bool_)) or not isinstance(last, numbers.Integral) or not -1 <= last < n:
        raise PluginError(f"{where} returned last_examined={last!r} for {n} shown documents; it is the last position "
                          f"the user examined, an integer from 0 to {n - 1} (-1: none)")
    if clicks[last + 1:].any():
        raise PluginError(f"{where} returned a click at position {int(np.flatnonzero(clicks)[-1])} below "
                          f"last_examined={last}; a clicked document was examined: last_examined >= every click")
    return int(last)


LABEL_FEEDBACK = {"topk_labels": ("labels", "TopKLabels(labels)"), "all_labels": ("labels", "AllLabels(labels)"),
                  "choice": ("document", "Choice(document, position)")}


def _checked_labels(feedback, kind: str, query, shown, name: str, k: int | None = None, max_grade: int = 4):
    """Grades fed back by a label user, checked: ``topk_labels``, the grades (0 .. ``max_grade``) of the top
    min(k, shown) documents; ``all_labels``, one grade per document of the query; ``choice``, a document of
    the query (-1: none) and its position among the shown ones (-1: not shown)."""
    where = f"your user {name}'s __call__"
    wanted, made = LABEL_FEEDBACK.get(kind, (None, None))
    if wanted and not hasattr(feedback, wanted):
        raise PluginError(f"{where} returned {type(feedback).__name__} without .{wanted}; a {kind} user returns "
                          f"olr_core.users.{made}")
    if kind == "choice":
        _check_choice(feedback, query.n_docs, shown, where)
    elif wanted:
        expected = query.n_docs if kind == "all_labels" else min(k or len(shown), len(shown))
        _check_grades(feedback.labels, expected, max_grade, where, f"the query's {expected} documents"
                      if kind == "all_labels" else f"the top {expected} shown document(s)")
    return feedback


def _check_grades(labels, expected: int, max_grade: int, where: str, of: str) -> None:
    """``labels``: ``expected`` whole grades in 0 .. ``max_grade``."""
    array = np.asarray(labels)
    if array.shape != (expected,):
        raise PluginError(f"{where} returned labels of shape {array.shape} for {of}; give one grade each")
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number):
        raise PluginError(f"{where} returned labels of dtype {array.dtype}; grades are integers 0 .. {max_grade}")
    bad = array[~np.isfinite(array) | (array != np.round(array)) | (array < 0) | (array > max_grade)]
    if len(bad):
        raise PluginError(f"{where} returned a grade of {bad[0].item()!r}; grades are integers 0 .. {max_grade}")


def _check_choice(feedback, n_docs: int, shown, where: str) -> None:
    """A choice: a document of the query (-1: none) and its position among ``shown`` (-1: not shown)."""
    document, position = feedback.document, getattr(feedback, "position", -1)
    for field_name, value, top in (("document", document, n_docs), ("position", position, len(shown))):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or not -1 <= value < top:
            raise PluginError(f"{where} returned {field_name}={value!r}; it is an integer from 0 to {top - 1} "
                              "(-1: none)")
    if position >= 0 and shown[position] != document:
        raise PluginError(f"{where} returned document {document} at position {position}, where document "
                          f"{shown[position]} was shown")


def build_plugin(cls, name: str, what: str, **arguments):
    """``cls(**arguments)``, with a one-line error naming the plug-in if it cannot be built so."""
    try:
        with plugin_call():
            return cls(**arguments)
    except PluginError:
        raise
    except TypeError as err:
        if not _raised_inside(err):
            signature = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
            raise PluginError(f"your {what} {name} cannot be built as {cls.__name__}({signature}) ({err}); "
                              + ("a user class takes __init__(self, max_grade, cutoff=10, ...)" if what == "user"
                                 else "its __init__ takes the parameters it declares in PARAMS")) from None
        raise PluginError(failure_message(what, name, "__init__", err)) from None
    except PLUGIN_FAILURES as err:
        raise PluginError(failure_message(what, name, "__init__", err)) from None


def _raised_inside(err: BaseException) -> bool:
    """The error came from inside the class's own code (not from calling it with the wrong arguments)."""
    frames = traceback.extract_tb(err.__traceback__)
    return len(frames) > 1
