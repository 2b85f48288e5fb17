"""Click logs and the click models fitted back from them, with the click-model literature's measures.

A :class:`ClickLog` holds the grades of the shown lists and the clicks (sessions x cutoff, grades
-1 padded). :func:`simulate_log` writes one for any click user on random lists of a data set's
queries; ``olr run --click-log FILE`` writes the log of a learner's own run. :func:`fit` estimates
a model's per-grade (and per-position) parameters from a log by maximum likelihood: L-BFGS on the
exact session likelihood for the chain models (cascade, DBN, SDBN, CCM), EM for the examination
models (PBM, UBM, trust bias); ``FAMILY+noise`` fits a chain model together with its click flip rate
(a forward filter with the true clicks hidden). :func:`evaluate` scores any model on any log: log-likelihood per
session and perplexity per position, 2^(-mean log2 P(c_i | clicks above i)) (1 is perfect, 2 a
coin), as in Chuklin, Markov & de Rijke, *Click Models for Web Search* (2015), ch. 5.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from .cache import write_atomically
from .click_models import (
    CCM_ALPHAS,
    ClickChainModel,
    DynamicBayesianNetwork,
    NoisyClicks,
    PositionBasedClickModel,
    SimplifiedDBN,
    TrustBiasModel,
    UserBrowsingModel,
    chain_log_likelihood,
    graded_relevance,
)

BASE_MODELS = ("cascade", "dbn", "sdbn", "ccm", "pbm", "ubm", "trust_bias")
NOISY_MODELS = ("cascade+noise", "dbn+noise", "sdbn+noise", "ccm+noise")     # a chain model and its flip rate
FITTED_MODELS = BASE_MODELS + NOISY_MODELS
DEFAULT_FITS = BASE_MODELS + ("cascade+noise",)         # what olr fit and the click-model page fit by default
EPS = 1e-6


@dataclass(frozen=True)
class ClickLog:
    """Shown grades (sessions x cutoff, int, -1 where the list ended) and clicks (same shape, bool)."""

    labels: np.ndarray
    clicks: np.ndarray

    def __post_init__(self):
        labels, clicks = np.asarray(self.labels), np.asarray(self.clicks)
        if labels.ndim != 2 or labels.shape != clicks.shape:
            raise ValueError(f"click log: labels and clicks must be two arrays of one shape (sessions x cutoff), "
                             f"got {labels.shape} and {clicks.shape}")
        labels, clicks = _integer_grades(labels), _boolean_clicks(clicks)
        if np.any(clicks & (labels < 0)):
            raise ValueError("click log: a click on a position past the end of its list (grade -1)")
        ended = labels < 0
        if np.any(ended[:, :-1] & ~ended[:, 1:]):
            raise ValueError("click log: a list has a grade after its end (-1 must only pad the end of a row)")
        object.__setattr__(self, "labels", np.ascontiguousarray(labels, dtype=np.int64))
        object.__setattr__(self, "clicks", np.ascontiguousarray(clicks, dtype=np.bool_))

    @property
    def sessions(self) -> int:
        return len(self.labels)

    def require_sessions(self, what: str = "click log") -> ClickLog:
        """This log, or a one-line error when no session shows a document (nothing to fit)."""
        if not self.sessions or not (self.labels >= 0).any():
            raise ValueError(f"{what}: no session shows a document ({self.sessions} session(s), every grade -1); "
                             "a log to fit needs shown lists (olr run --click-log FILE.npz writes one)")
        return self

    @property
    def max_grade(self) -> int:
        return int(self.labels.max())

    def split(self, train_fraction: float = 0.5) -> tuple[ClickLog, ClickLog]:
        """The first ``train_fraction`` of the sessions and the rest (the log is in random order already)."""
        cut = int(round(train_fraction * self.sessions))
        return ClickLog(self.labels[:cut], self.clicks[:cut]), ClickLog(self.labels[cut:], self.clicks[cut:])

    def save(self, path) -> Path:
        """Write the log to ``path`` (``.npz`` appended if missing), whole or not at all."""
        path = Path(path) if Path(path).suffix == ".npz" else Path(path).with_name(Path(path).name + ".npz")
        return write_atomically(path, lambda tmp: np.savez_compressed(tmp, labels=self.labels, clicks=self.clicks),
                                "the click log", "name a writable file with --click-log")

    @classmethod
    def load(cls, path) -> ClickLog:
        """The log stored at ``path``; a one-line error naming the file when it is missing, not a .npz archive,
        truncated, lacks an array, or holds grades or clicks outside the log's contract."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"click log {path} does not exist")
        try:
            with np.load(path, allow_pickle=False) as stored:
                missing = [k for k in ("labels", "clicks") if k not in getattr(stored, "files", ())]
                if not hasattr(stored, "files") or missing:
                    raise KeyError(f"it has no array {', '.join(missing) or 'labels, clicks'}")
                labels, clicks = stored["labels"], stored["clicks"]
        except KeyError as error:
            raise ValueError(f"{path}: not a click log written by olr ({error.args[0]})") from None
        except Exception:                      # (truncated, empty, text, pickled: numpy's own words do not help)
            raise ValueError(f"{path}: not a click log written by olr (a .npz archive with arrays 'labels' and "
                             "'clicks', as olr run --click-log FILE.npz writes); the file is truncated or of another "
                             "kind") from None
        try:
            return cls(labels, clicks)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None


MAX_LOG_GRADE = 4          # the grade tables of the user models: 0 .. 4


def _integer_grades(labels: np.ndarray) -> np.ndarray:
    """Grades as integers in -1 (past the list) .. 4, else a one-line error (a float grade is never truncated)."""
    if labels.dtype == bool or not np.issubdtype(labels.dtype, np.number):
        raise ValueError(f"click log: grades must be integers, got dtype {labels.dtype}")
    if not np.issubdtype(labels.dtype, np.integer):
        fractional = labels[~np.isfinite(labels) | (labels != np.round(labels))]
        if len(fractional):
            raise ValueError(f"click log: grade {fractional[0]} is not an integer; grades are 0 .. {MAX_LOG_GRADE}, "
                             "-1 past a list's end")
    outside = labels[(labels < -1) | (labels > MAX_LOG_GRADE)]
    if len(outside):
        raise ValueError(f"click log: grade {outside[0]:g} is outside -1 .. {MAX_LOG_GRADE} (grades 0 .. "
                         f"{MAX_LOG_GRADE} of the user models' tables, -1 past a list's end)")
    return labels.astype(np.int64)


def _boolean_clicks(clicks: np.ndarray) -> np.ndarray:
    """Clicks as booleans (0/1 taken as such), else a one-line error."""
    if clicks.dtype == bool:
        return clicks
    if not np.issubdtype(clicks.dtype, np.number) or not np.isin(clicks, (0, 1)).all():
        raise ValueError("click log: clicks must be True/False (or 0/1)")
    return clicks.astype(bool)


def random_lists(data, sessions: int, rng: np.random.Generator, cutoff: int = 10) -> np.ndarray:
    """Grades of ``sessions`` uniformly random orderings (top ``cutoff``) of uniformly drawn queries of ``data``."""
    queries = rng.integers(data.n_queries, size=sessions)
    sizes = np.diff(data.offsets)[queries]
    labels = np.full((sessions, cutoff), -1, dtype=np.int64)
    width = int(sizes.max())
    keys = rng.random((sessions, width))
    keys[np.arange(width)[None, :] >= sizes[:, None]] = np.inf          # past the query's documents: last
    order = np.argsort(keys, axis=1)[:, :cutoff]
    shown = min(cutoff, width)
    valid = np.arange(shown)[None, :] < sizes[:, None]
    documents = data.offsets[queries][:, None] + order[:, :shown]
    labels[:, :shown] = np.where(valid, data.labels[np.where(valid, documents, 0)], -1)
    return labels


def simulate_log(user, data, sessions: int, seed: int = 0, cutoff: int = 10) -> ClickLog:
    """The log of ``user`` on ``sessions`` random lists of ``data`` (:func:`random_lists`)."""
    rng = np.random.default_rng(seed)
    labels = random_lists(data, sessions, rng, cutoff)
    return ClickLog(labels, user.simulate(labels, rng))


def conditional_probabilities(model, log: ClickLog) -> np.ndarray:
    """P(click at i | clicks above i) for every session and position (0 past a list's end)."""
    if not hasattr(model, "conditional_click_probabilities"):
        raise ValueError(f"{getattr(model, 'name', model)}: no likelihood for logs (a noisy wrapper or an own user); "
                         f"fit one of {', '.join(FITTED_MODELS)} instead")
    return model.conditional_click_probabilities(log.labels, log.clicks)


def _log2_likelihoods(model, log: ClickLog) -> np.ndarray:
    p = np.clip(conditional_probabilities(model, log), EPS, 1 - EPS)
    return np.where(log.labels >= 0, np.where(log.clicks, np.log2(p), np.log2(1 - p)), 0.0)


def evaluate(model, log: ClickLog) -> dict:
    """Log-likelihood (natural log, per session) and perplexity per position and overall of ``model`` on ``log``."""
    terms = _log2_likelihoods(model, log)
    shown = (log.labels >= 0).sum(axis=0)
    per_position = 2.0 ** (-terms.sum(axis=0) / np.maximum(shown, 1))
    return {"log_likelihood": float(terms.sum() * np.log(2) / log.sessions),
            "perplexity_by_position": per_position[shown > 0],
            "perplexity": float(per_position[shown > 0].mean())}


# ----------------------------------------------------------------------------------------------- chain fitters
def _chain_model(family: str, v: np.ndarray, grades: int, cutoff: int):
    """The chain model of ``family`` from its free parameters ``v`` (all probabilities)."""
    from .users import CascadeClickModel

    a, rest = tuple(v[:grades]), v[grades:]
    if family == "cascade":
        return CascadeClickModel("cascade (fitted)", a, tuple(rest[:grades]), cutoff=cutoff)
    if family == "sdbn":
        return SimplifiedDBN("sdbn (fitted)", a, tuple(rest[:grades]), cutoff)
    if family == "dbn":
        return DynamicBayesianNetwork("dbn (fitted)", a, tuple(rest[:grades]), float(rest[grades]), cutoff)
    return ClickChainModel("ccm (fitted)", a, *map(float, rest[:3]), cutoff=cutoff)


def _chain_start(family: str, log: ClickLog, grades: int) -> np.ndarray:
    """Start at the click-through rate per grade, moderate stops and gamma 0.9."""
    shown = np.bincount(log.labels[log.labels >= 0], minlength=grades)
    ctr = np.bincount(log.labels[log.clicks], minlength=grades) / np.maximum(shown, 1)
    a = np.clip(ctr * 1.5, 0.05, 0.95)
    extra = {"cascade": np.full(grades, 0.3), "sdbn": np.full(grades, 0.3),
             "dbn": np.r_[np.full(grades, 0.3), 0.9], "ccm": np.array(CCM_ALPHAS["navigational"])}[family]
    return np.r_[a, extra]


def _fit_chain(family: str, log: ClickLog, grades: int, cutoff: int):
    """Maximum likelihood by L-BFGS-B on the probabilities, each boxed in [EPS, 1 - EPS]; a ``+noise``
    family adds the flip rate (in [EPS, 0.5]) and the likelihood of the noisy forward filter."""
    base, noisy = family.removesuffix("+noise"), family.endswith("+noise")

    def build(v):
        model = _chain_model(base, v[:-1] if noisy else v, grades, cutoff)
        return NoisyClicks(model, float(v[-1])) if noisy else model

    def negative_log_likelihood(v):
        if noisy:
            return -_log2_likelihoods(build(v), log).sum() * np.log(2) / log.sessions
        return -chain_log_likelihood(log.labels, log.clicks, *build(v).kernel_arguments(), EPS) / log.sessions

    start = _chain_start(base, log, grades)
    bounds = [(EPS, 1 - EPS)] * len(start)
    if noisy:
        start, bounds = np.r_[start, 0.05], bounds + [(EPS, 0.5)]
    result = minimize(negative_log_likelihood, start, method="L-BFGS-B", bounds=bounds, options={"maxiter": 500})
    return build(result.x)


# ----------------------------------------------------------------------------------------------- examination fitters
def _cells(log: ClickLog):
    """Per shown position: rank i, distance d - 1 to the previous click, grade and click, flattened."""
    sessions, cutoff = log.labels.shape
    previous = np.full(sessions, -1)
    distance = np.zeros(log.labels.shape, dtype=np.int64)
    for i in range(cutoff):
        distance[:, i] = i - previous - 1
        previous = np.where(log.clicks[:, i], i, previous)
    rank = np.broadcast_to(np.arange(cutoff), log.labels.shape)
    valid = log.labels >= 0
    return rank[valid], distance[valid], log.labels[valid], log.clicks[valid]


def _fit_product(exam_cell: np.ndarray, click_cell: np.ndarray, clicks: np.ndarray, n_exam: int, n_click: int,
                 iterations: int = 300, tol: float = 1e-7):
    """EM for P(click) = e[exam_cell] * c[click_cell] (a hidden examination and a hidden attraction).

    E-step, for a skip: P(examined | skip) = e (1 - c) / (1 - e c), P(attracted | skip) = c (1 - e) / (1 - e c);
    a click means both. M-step: each parameter is the mean of its posterior over its cells.
    """
    e, c = np.full(n_exam, 0.5), np.full(n_click, 0.5)
    exam_count = np.maximum(np.bincount(exam_cell, minlength=n_exam), 1)
    click_count = np.maximum(np.bincount(click_cell, minlength=n_click), 1)
    for _ in range(iterations):
        pe, pc = e[exam_cell], c[click_cell]
        skip = np.maximum(1 - pe * pc, 1e-12)
        post_e = np.where(clicks, 1.0, pe * (1 - pc) / skip)
        post_c = np.where(clicks, 1.0, pc * (1 - pe) / skip)
        new_e = np.bincount(exam_cell, post_e, n_exam) / exam_count
        new_c = np.bincount(click_cell, post_c, n_click) / click_count
        change = max(np.abs(new_e - e).max(), np.abs(new_c - c).max())
        e, c = new_e, new_c
        if change < tol:
            break
    return e, c


def _fit_examination(family: str, log: ClickLog, grades: int, cutoff: int):
    rank, distance, grade, clicks = _cells(log)
    if family == "trust_bias":
        return _fit_trust_bias(rank, grade, clicks, grades, cutoff)
    exam_cell = rank * cutoff + distance if family == "ubm" else rank
    e, c = _fit_product(exam_cell, grade, clicks, cutoff * cutoff if family == "ubm" else cutoff, grades)
    scale = e[0]                                  # the top position unclicked-above is examined: e[0] = 1
    e, c = np.clip(e / scale, 0, 1), np.clip(c * scale, 0, 1)
    if family == "pbm":
        model = PositionBasedClickModel("pbm (fitted)", tuple(c), 0.0, cutoff)
        object.__setattr__(model, "_exam", np.ascontiguousarray(np.repeat(e[:, None], cutoff, axis=1)))
        return model
    return UserBrowsingModel("ubm (fitted)", tuple(c), examination=tuple(map(tuple, e.reshape(cutoff, cutoff))),
                             cutoff=cutoff)


def _fit_trust_bias(rank, grade, clicks, grades: int, cutoff: int, iterations: int = 500, tol: float = 1e-8):
    """EM for P(click at rank k | grade g) = alpha_k rho_g + beta_k (1 - rho_g), rho the known relevance:
    alpha_k = theta_k eps+_k and beta_k = theta_k eps-_k, the products clicks can tell apart."""
    rho = graded_relevance(grades - 1)[grade]
    alpha, beta = np.full(cutoff, 0.5), np.full(cutoff, 0.1)
    for _ in range(iterations):
        a, b = alpha[rank], beta[rank]
        relevant_and = np.where(clicks, a * rho, (1 - a) * rho)
        other_and = np.where(clicks, b * (1 - rho), (1 - b) * (1 - rho))
        post = relevant_and / np.maximum(relevant_and + other_and, 1e-300)          # P(relevant | click or skip)
        new_alpha = np.bincount(rank, post * clicks, cutoff) / np.maximum(np.bincount(rank, post, cutoff), 1e-12)
        new_beta = (np.bincount(rank, (1 - post) * clicks, cutoff)
                    / np.maximum(np.bincount(rank, 1 - post, cutoff), 1e-12))
        change = max(np.abs(new_alpha - alpha).max(), np.abs(new_beta - beta).max())
        alpha, beta = new_alpha, new_beta
        if change < tol:
            break
    return TrustBiasModel("trust_bias (fitted)", tuple(graded_relevance(grades - 1)), tuple(alpha), tuple(beta),
                          examination=tuple(np.ones(cutoff)), cutoff=cutoff)


def fit(family: str, log: ClickLog, max_grade: int | None = None):
    """The ``family`` click model (one of :data:`FITTED_MODELS`) fitted to ``log`` by maximum likelihood.

    Parameters are per grade (and per rank, or rank and distance, for the examination models); the
    examination models are scaled so that the top position is examined with probability 1, and
    trust bias is fitted as its identifiable products (examination 1, click rates theta eps+ and theta eps-).
    """
    if family not in FITTED_MODELS:
        raise ValueError(f"no fitter for {family!r}; valid: {', '.join(FITTED_MODELS)}")
    grades = (log.max_grade if max_grade is None else max_grade) + 1
    cutoff = log.labels.shape[1]
    if family.removesuffix("+noise") in ("cascade", "dbn", "sdbn", "ccm"):
        return _fit_chain(family, log, grades, cutoff)
    return _fit_examination(family, log, grades, cutoff)


def parameter_table(model) -> dict:
    """A fitted model's parameters as short lists (probabilities rounded to 3 digits) for printing."""
    r = lambda values: np.round(np.asarray(values, dtype=float), 3).tolist()     # noqa: E731
    if isinstance(model, NoisyClicks):
        return {**parameter_table(model.user), "flip rate epsilon": round(float(model.epsilon), 4)}
    if hasattr(model, "_stop"):
        return {"click per grade": r(model._pc), "stop after skip": r(model._stop[:, 0]),
                "stop after click": r(model._stop[:, 1])}
    out = {"click (rank 1) per grade": r(model._click[0]),
           "examination by rank, no click above": r(np.diagonal(model._exam))}
    if isinstance(model, UserBrowsingModel):
        out["examination by rank, click just above"] = r(model._exam[:, 0])
    if isinstance(model, TrustBiasModel):
        out = {"theta eps+ by rank": r(model._click[:, -1]), "theta eps- by rank": r(model._click[:, 0])}
    return out


def cross_fit(users: dict, data, sessions: int, seed: int = 0, families=DEFAULT_FITS):
    """Held-out perplexity of every fitted family on every user's clicks: each user's log of ``sessions``
    random lists is split in half, each family is fitted on the first half and scored on the second.

    Returns (perplexity table: rows the users, columns the fitted families; log-likelihood table; the
    per-position perplexities as a long table: user, family, position, perplexity)."""
    import pandas as pd

    perplexity, likelihood, positions = {}, {}, []
    for number, (name, user) in enumerate(users.items()):
        train, test = simulate_log(user, data, sessions, seed + number).split(0.5)
        for family in families:
            scores = evaluate(fit(family, train, data.max_grade), test)
            perplexity[(name, family)] = scores["perplexity"]
            likelihood[(name, family)] = scores["log_likelihood"]
            positions += [{"user": name, "family": family, "position": i + 1, "perplexity": p}
                          for i, p in enumerate(scores["perplexity_by_position"])]
    table = pd.Series(perplexity).unstack()[list(families)].reindex(list(users))
    return table, pd.Series(likelihood).unstack()[list(families)].reindex(list(users)), pd.DataFrame(positions)
