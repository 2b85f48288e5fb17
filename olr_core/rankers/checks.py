"""A conformance suite for rankers, after scikit-learn's ``check_estimator``.

:func:`check_ranker` runs one ranker, built in or a plug-in, through the protocol of
:mod:`olr_core.rankers.base`: its declared options refuse bad values when it is built, it plays a few
rounds of its own loop behind :mod:`olr_core.plugin_guard` (which checks every display, score,
diagnostic and weight vector it returns), two copies with the same seed play the same run (common
random numbers), and scoring is deterministic and changes nothing. The first failed check raises a
:class:`RankerCheckError` naming the ranker and the check.
"""

from __future__ import annotations

import numpy as np

from ..params import Param, ParameterError
from . import LIBRARY_ALGORITHMS, declared_parameters, get_algorithm, make_ranker

FEEDBACK_KINDS = ("clicks", "topk_labels", "all_labels", "choice", "any")
REQUIRED_METHODS = ("start", "rank", "learn", "score")


class RankerCheckError(AssertionError):
    """A ranker that breaks the protocol (one line: the ranker, the check, what it did)."""


def check_ranker(name: str, params: dict | None = None, rounds: int = 12, seed: int = 0) -> None:
    """Run every check on algorithm ``name`` (a built-in name, a registered one or an import reference)
    built with ``params``; None if it conforms, else a :class:`RankerCheckError`."""
    params = dict(params or {})
    for check in (check_methods, check_options_refused, check_plays_its_loop, check_same_seed_same_run,
                  check_scoring_is_pure):
        check(name, params, rounds, seed)


def _fail(name: str, check: str, what: str):
    raise RankerCheckError(f"ranker {name} fails {check}: {what}")


def check_methods(name, params, rounds, seed) -> None:
    """The protocol's methods are there and ``feedback_kind`` is one the loop knows."""
    ranker = make_ranker(name, **params)
    missing = [m for m in REQUIRED_METHODS if not callable(getattr(ranker, m, None))]
    if missing:
        _fail(name, "check_methods", f"it has no method {', '.join(missing)}")
    kind = getattr(ranker, "feedback_kind", "clicks")
    if kind not in FEEDBACK_KINDS:
        _fail(name, "check_methods", f"feedback_kind={kind!r}; valid: {', '.join(FEEDBACK_KINDS)}")


def invalid_value(param: Param):
    """A value ``param`` refuses: past an end of its range, off its choices, or of the wrong kind."""
    if param.kind == "str":
        return "not-one-of-the-choices"
    if param.kind == "bool":
        return "yes"
    if param.low is not None:
        return param.low if param.low_open else param.low - 1
    if param.high is not None:
        return param.high if param.high_open else param.high + 1
    return float("nan")


def check_options_refused(name, params, rounds, seed) -> None:
    """Built directly from its class, the ranker refuses a bad value of each declared option in one line."""
    cls = get_algorithm(name)
    for option, param in declared_parameters(name).items():
        bad = invalid_value(param)
        try:
            cls(**{**params, option: bad})
        except ParameterError as err:
            if "\n" in str(err) or option not in str(err):
                _fail(name, "check_options_refused", f"the error for {option}={bad!r} is not one line naming "
                                                     f"the option: {err}")
            continue
        _fail(name, "check_options_refused", f"it was built with {option}={bad!r}, outside its declaration "
                                             f"({param.describe()})")


def _play(name: str, params: dict, rounds: int, seed: int) -> dict[str, np.ndarray]:
    """The arrays of a short run of the ranker behind the protocol guard, in the loop of its feedback kind."""
    from ..data import load_fold, load_library
    from ..library_loop import run_library
    from ..loop import run_online
    from ..plugin_guard import guard_ranker
    from ..users import make_user

    ranker = guard_ranker(make_ranker(name, **params), name)
    if name in LIBRARY_ALGORITHMS and name != "random" or getattr(ranker, "feedback_kind", "") == "choice":
        return run_library(ranker, load_library("synth-library"), rounds, seed).arrays()
    fold = load_fold("synth-mq")
    kind = getattr(ranker, "feedback_kind", "clicks")
    user = {"topk_labels": f"top{getattr(ranker, 'feedback_depth', None) or 1}",
            "all_labels": "full"}.get(kind, "navigational")
    return run_online(ranker, fold, make_user(user, fold.max_grade), rounds, seed, eval_every=rounds).arrays()


def check_plays_its_loop(name, params, rounds, seed) -> None:
    """A few rounds in its loop, every display, score, diagnostic and weight vector checked by the guard."""
    try:
        _play(name, params, rounds, seed)
    except Exception as err:         # noqa: BLE001  (whatever it raised is the finding)
        _fail(name, "check_plays_its_loop", f"{type(err).__name__}: {err}")


def check_same_seed_same_run(name, params, rounds, seed) -> None:
    """Two rankers built alike and run with the same seed record the same numbers."""
    first, second = _play(name, params, rounds, seed), _play(name, params, rounds, seed)
    differ = [k for k in first if k not in second or not np.array_equal(first[k], second[k], equal_nan=True)]
    if differ:
        _fail(name, "check_same_seed_same_run", f"two runs with seed {seed} differ in {', '.join(differ)}")


def check_scoring_is_pure(name, params, rounds, seed) -> None:
    """``score`` gives the same scores twice and leaves the ranker's random stream where it was (unless the
    ranker says its scores are random draws, ``random_scores = True``, as the uniform baseline does)."""
    from ..data import load_fold

    ranker = make_ranker(name, **params)
    if getattr(ranker, "random_scores", False) or name in LIBRARY_ALGORITHMS:
        return                       # (a library ranker scores the items of its stream, not documents)
    fold = load_fold("synth-mq")
    ranker.start(fold.train, np.random.default_rng(seed))
    query = fold.test.query(0)
    state = ranker.rng.bit_generator.state if hasattr(ranker, "rng") else None
    first, second = np.asarray(ranker.score(query)), np.asarray(ranker.score(query))
    if not np.array_equal(first, second):
        _fail(name, "check_scoring_is_pure", "scoring the same documents twice gave different scores")
    if state is not None and ranker.rng.bit_generator.state != state:
        _fail(name, "check_scoring_is_pure", "score drew from the ranker's random stream")
