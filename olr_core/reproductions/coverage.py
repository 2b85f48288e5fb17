"""Uniform coverage of the confidence sets of PairRank's Lemma 2 and the neural chapter's Lemma 3.3, by replay.

Both lemmas are about a logistic pair model, linear in pair features z (PairRank: x_i - x_j; the neural lemma: the
tangent features at initialisation, (g(x_i; theta_0) - g(x_j; theta_0)) / sqrt(m)) with a true parameter w*. Their
one random step is the self-normalised bound (Abbasi-Yadkori et al. 2011, Theorem 1): with the observed pairs' z_p
(winner minus loser), M_t = lambda I + sum_p z_p z_p^T and S_t = sum_p (1 - sigma(z_p . w*)) z_p,

    ||S_t||_{M_t^-1} <= beta_t = R sqrt(log(det M_t / (delta^2 det(lambda I))))     for every t, w.p. >= 1 - delta.

The rest is deterministic given the lemma's assumptions: the estimate projected onto Theta = {||w|| <= Q} then lies
in the ellipsoid ||w_hat_t - w*||_{M_t} <= alpha_t / k_mu with alpha_t = (2 k_mu / c_mu)(beta_t + sqrt(lambda) Q), and
every pair's preference sigma(z . w_hat_t) lies within alpha_t ||z||_{M_t^-1} of the truth (the lemma as stated).

A replay measures, before each round's ranking, one *ratio* per check: its statistic over its radius, so that the
check holds at that round when the ratio is at most 1 (and a radius scaled by c holds when it is at most c).
:func:`uniform_coverage` turns the ratios of R independent runs into the share of runs covered at every round, with
its Clopper-Pearson interval, and the smallest per-round share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import least_squares
from scipy.special import expit
from scipy.stats import binomtest

from ..formatting import number_text
from ..threads import blas_threads
from .pairing import replay

K_MU = 0.25     # the Lipschitz constant of the sigmoid

NOISE, PARAMETER, PAIRS = "noise", "parameter set", "pairs (lemma's alpha_t)"
IMPLEMENTATION, NETWORK = "pairs (implementation's alpha)", "network pairs (lemma's alpha_t, eps(m) = 0)"
CHECKS = {NOISE: "||S_t||_{M_t^-1} <= beta_t: the self-normalised bound, the lemmas' one random step",
          PARAMETER: "||w_hat_t - w*||_{M_t} <= alpha_t / k_mu: the lemma's parameter set",
          PAIRS: "|sigma(z . w_hat_t) - sigma(z . w*)| <= alpha_t ||z||_{M_t^-1} for every pair of the round's query",
          IMPLEMENTATION: "the implementation's estimate and matrix, every pair of the round's query, its constant "
                          "alpha",
          NETWORK: "the network's sigma(f_ij) against sigma(h_ij) within Lemma 3.3's width, eps(m) left out"}


@dataclass(frozen=True)
class Lemma:
    """The constants of the confidence lemma: ``l2`` (lambda), ``bound`` (Q, or the neural S: Theta is the ball of
    that radius), ``pair_norm`` (u, the largest norm of a pair feature), ``subgaussian`` (R) and ``delta``."""

    l2: float
    bound: float
    pair_norm: float
    subgaussian: float = 0.5
    delta: float = 0.1

    @property
    def c_mu(self) -> float:
        """inf sigma' over Theta and the pairs: sigma'(Q u) (0.0 where it underflows)."""
        edge = self.bound * self.pair_norm
        return float(expit(edge) * expit(-edge))

    def beta(self, logdet_ratio: float) -> float:
        """The self-normalised radius R sqrt(log det M_t - log det(lambda I) + 2 log(1 / delta))."""
        return float(self.subgaussian * np.sqrt(logdet_ratio + 2.0 * np.log(1.0 / self.delta)))

    def alpha(self, logdet_ratio: float) -> float:
        """The lemma's alpha_t = (2 k_mu / c_mu)(beta_t + sqrt(lambda) Q), with 1 / c_mu = 2 + 2 cosh(Q u) (inf
        where that overflows)."""
        with np.errstate(over="ignore"):
            inverse_c_mu = 2.0 + 2.0 * np.cosh(self.bound * self.pair_norm)
        return float(2.0 * K_MU * inverse_c_mu * (self.beta(logdet_ratio) + np.sqrt(self.l2) * self.bound))


def gram(Z: np.ndarray, l2: float) -> np.ndarray:
    """M = lambda I + sum_p z_p z_p^T over the rows of ``Z``."""
    return l2 * np.eye(Z.shape[1]) + Z.T @ Z


def logdet_ratio(M: np.ndarray, l2: float) -> float:
    """log det M - log det(lambda I)."""
    return float(np.linalg.slogdet(M)[1] - len(M) * np.log(l2))


def noise_sum(Z: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """S_t = sum_p (y_p - sigma(z_p . w*)) z_p with every z_p oriented winner minus loser (y_p = 1)."""
    return Z.T @ expit(-(Z @ truth))


def link_sum(Z: np.ndarray, w: np.ndarray, l2: float) -> np.ndarray:
    """g_t(w) = sum_p sigma(z_p . w) z_p + lambda w, the map the estimator inverts."""
    return Z.T @ expit(Z @ w) + l2 * w


def link_jacobian(Z: np.ndarray, w: np.ndarray, l2: float) -> np.ndarray:
    """The Jacobian of :func:`link_sum`: sum_p sigma'(z_p . w) z_p z_p^T + lambda I."""
    p = expit(Z @ w)
    return (Z * (p * (1.0 - p))[:, None]).T @ Z + l2 * np.eye(Z.shape[1])


def jacobian_times(Z: np.ndarray, w: np.ndarray, l2: float, v: np.ndarray) -> np.ndarray:
    """The Jacobian of :func:`link_sum` at ``w`` times ``v``, without forming it."""
    p = expit(Z @ w)
    return Z.T @ (p * (1.0 - p) * (Z @ v)) + l2 * v


def regularised_mle(Z: np.ndarray, l2: float, start: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """The lemma's estimate w_tilde: argmin sum_p log(1 + exp(-z_p . w)) + lambda |w|^2 / 2 (its first-order
    condition is g_t(w) = sum_p z_p), by Newton steps from ``start`` (the last round's estimate, a few steps away),
    each halved until the objective does not increase (the objective is strictly convex)."""
    total, w = Z.sum(axis=0), np.asarray(start, float)

    def loss(v):
        return float(np.logaddexp(0.0, -(Z @ v)).sum() + 0.5 * l2 * v @ v)

    current = loss(w)
    for _ in range(100):
        step = np.linalg.solve(link_jacobian(Z, w, l2), link_sum(Z, w, l2) - total)
        size = 1.0
        while loss(w - size * step) > current and size > 1e-8:
            size /= 2
        w = w - size * step
        current = loss(w)
        if np.linalg.norm(size * step) <= tol * (1.0 + np.linalg.norm(w)):
            break
    return w


def projected(w_tilde: np.ndarray, Z: np.ndarray, l2: float, M_inv: np.ndarray, bound: float,
              start: np.ndarray | None = None) -> np.ndarray:
    """The lemma's projection onto Theta = {||w|| <= bound}: argmin ||g_t(w) - g_t(w_tilde)||_{M_t^-1}; ``w_tilde``
    itself when it lies in Theta. Otherwise the minimiser lies on the sphere ||w|| = bound (the objective's gradient
    2 J_g(w) M_t^-1 (g_t(w) - g_t(w_tilde)) vanishes only at w_tilde, J_g being positive definite), found by
    scipy's Levenberg-Marquardt least squares over w = bound u / ||u|| from ``start`` (default: the radial
    projection of ``w_tilde``)."""
    norm = np.linalg.norm(w_tilde)
    if norm <= bound:
        return w_tilde
    target = link_sum(Z, w_tilde, l2)
    root = np.linalg.cholesky(M_inv)              # M_t^-1 = L L^T, so ||v||_{M_t^-1} = ||L^T v||

    def on_sphere(u):
        return bound * u / np.linalg.norm(u)

    def residual(u):
        return root.T @ (link_sum(Z, on_sphere(u), l2) - target)

    def jacobian(u):
        length = np.linalg.norm(u)
        direction = u / length
        tangent = bound / length * (np.eye(len(u)) - np.outer(direction, direction))
        return root.T @ link_jacobian(Z, on_sphere(u), l2) @ tangent

    first = w_tilde if start is None else start
    return on_sphere(least_squares(residual, first, jac=jacobian, method="lm").x)


def mahalanobis(v: np.ndarray, M: np.ndarray) -> float:
    """||v||_M = sqrt(v^T M v)."""
    return float(np.sqrt(max(v @ M @ v, 0.0)))


def pair_ratio(estimate_prob: np.ndarray, true_prob: np.ndarray, width: np.ndarray) -> float:
    """max over pairs of |estimate - truth| / width (a zero gap within a zero width counts 0, a gap outside it inf)."""
    gap = np.abs(estimate_prob - true_prob)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(width > 0, gap / width, np.where(gap > 0, np.inf, 0.0))
    return float(ratio.max()) if ratio.size else 0.0


def query_pairs(rows: np.ndarray) -> np.ndarray:
    """Rows z_ij = rows_i - rows_j for every pair i < j."""
    first, second = np.triu_indices(len(rows), 1)
    return rows[first] - rows[second]


@dataclass
class PairHistory:
    """The observed pairs' model features (rows, winner minus loser) with running sums of sum z z^T and S_t."""

    truth: np.ndarray
    l2: float
    rows: list = field(default_factory=list)

    def __post_init__(self):
        d = len(self.truth)
        self.outer, self.noise, self.count = np.zeros((d, d)), np.zeros(d), 0

    def add(self, Z: np.ndarray) -> None:
        if len(Z):
            self.rows.append(Z)
            self.outer += Z.T @ Z
            self.noise += noise_sum(Z, self.truth)
            self.count += len(Z)

    @property
    def Z(self) -> np.ndarray:
        return np.vstack(self.rows) if self.rows else np.zeros((0, len(self.truth)))

    @property
    def matrix(self) -> np.ndarray:
        """M_t = lambda I + sum_p z_p z_p^T."""
        return self.l2 * np.eye(len(self.truth)) + self.outer


@dataclass
class Estimates:
    """The lemma's estimates of the last round: w_tilde (unprojected) and w_hat (projected), warm starts."""

    w_tilde: np.ndarray
    w_hat: np.ndarray
    outside: int = 0


def lemma_ratios(history: PairHistory, pairs: np.ndarray, lemma: Lemma, estimates: Estimates | None) -> dict:
    """One round's ratios: :data:`NOISE` always; with ``estimates`` (updated in place) also :data:`PARAMETER` and
    :data:`PAIRS` for the round's query ``pairs`` (rows in model features). Also returns alpha_t under "alpha"."""
    M = history.matrix
    M_inv = np.linalg.inv(M)
    logdet = logdet_ratio(M, lemma.l2)
    alpha = lemma.alpha(logdet)
    found = {NOISE: mahalanobis(history.noise, M_inv) / lemma.beta(logdet), "alpha": alpha}
    if estimates is None:
        return found
    Z = history.Z
    estimates.w_tilde = regularised_mle(Z, lemma.l2, estimates.w_tilde)
    outside = np.linalg.norm(estimates.w_tilde) > lemma.bound
    estimates.outside += int(outside)
    start = estimates.w_hat if np.linalg.norm(estimates.w_hat) > 0 else None
    estimates.w_hat = projected(estimates.w_tilde, Z, lemma.l2, M_inv, lemma.bound, start)
    with np.errstate(invalid="ignore"):
        width = alpha * np.sqrt(np.einsum("ij,jk,ik->i", pairs, M_inv, pairs))
    found[PARAMETER] = mahalanobis(estimates.w_hat - history.truth, M) / (alpha / K_MU)
    found[PAIRS] = pair_ratio(expit(pairs @ estimates.w_hat), expit(pairs @ history.truth), width)
    return found


@dataclass
class Model:
    """What a lemma sees of a started ranker: ``embed`` (document features -> model features, rows), the truth w*
    and the lemma's constants, ``new_pairs(ranker, seen)`` (model-feature rows of the pairs after the first
    ``seen``) and ``implementation(ranker, query, alpha_t)`` ({check: ratio} of the implementation's intervals)."""

    embed: Callable
    lemma: Lemma
    truth: np.ndarray
    new_pairs: Callable
    implementation: Callable
    facts: dict = field(default_factory=dict)


@dataclass
class CoverageRuns:
    """The ratios of R replayed runs: ``ratios[check]`` is a (runs, rounds) array; ``details`` one row per run (its
    facts: pairs observed, alpha_T, the share of rounds whose unprojected estimate lay outside Theta, ...)."""

    ratios: dict
    delta: float
    details: pd.DataFrame

    def subset(self, keep) -> CoverageRuns:
        """The runs where ``keep`` (one bool per run) is true."""
        keep = np.asarray(keep, bool)
        return CoverageRuns({name: values[keep] for name, values in self.ratios.items()}, self.delta,
                            self.details[keep].reset_index(drop=True))

    def table(self, scales=None, level: float = 0.95) -> pd.DataFrame:
        """One row per check (and per ``scales`` entry {label: (check, scale)}): :func:`uniform_coverage`."""
        rows = {name: uniform_coverage(values, self.delta, 1.0, level) for name, values in self.ratios.items()}
        rows.update({label: uniform_coverage(self.ratios[check], self.delta, scale, level)
                     for label, (check, scale) in (scales or {}).items()})
        return pd.DataFrame(rows).T.rename_axis("check")


def uniform_coverage(ratios: np.ndarray, delta: float, scale: float = 1.0, level: float = 0.95) -> dict:
    """For (runs, rounds) ratios judged against a radius scaled by ``scale``: the number of runs covered at every
    round, their share with its exact (Clopper-Pearson) interval at ``level``, 1 - delta, the smallest share of runs
    covered at one round, and the largest ratio over runs and rounds (over ``scale``)."""
    covered = np.asarray(ratios) <= scale
    every = covered.all(axis=1)
    row = {"runs": len(every), "covered at every round": int(every.sum()), "1 - delta": 1.0 - delta}
    if not len(every):
        return {**row, "share": np.nan, "low": np.nan, "high": np.nan, "smallest per-round share": np.nan,
                "largest ratio to the radius": np.nan}
    interval = binomtest(int(every.sum()), len(every)).proportion_ci(level, method="exact")
    return {**row, "share": float(every.mean()), "low": float(interval.low), "high": float(interval.high),
            "smallest per-round share": float(covered.mean(axis=0).min()),
            "largest ratio to the radius": float(np.max(ratios) / scale)}


def against_target(row) -> str:
    """How a check's uniform coverage (a :func:`uniform_coverage` row) stands to 1 - delta, as its interval allows:
    "above" (the interval lies above), "below" (it lies below: the check fails in this world), "consistent with", or
    "no run to judge" without runs."""
    if not row["runs"]:
        return "no run to judge"
    if row["high"] < row["1 - delta"]:
        return "below"
    return "above" if row["low"] > row["1 - delta"] else "consistent with"


def first_failures(ratios: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Per run, the first round (1-based) whose ratio exceeds ``scale``; NaN for a run covered at every round."""
    failed = np.asarray(ratios) > scale
    return np.where(failed.any(axis=1), failed.argmax(axis=1) + 1.0, np.nan)


def display_frame(results: dict, scales=None) -> pd.DataFrame:
    """The pages' table: for each setting of ``results`` ({label: CoverageRuns}) and each check (and ``scales``, see
    :meth:`CoverageRuns.table`), the runs covered at every round, the share with its 95 % interval, 1 - delta, the
    smallest per-round share, the largest statistic over radius and how the share stands to 1 - delta."""
    rows = []
    for label, runs in results.items():
        for check, row in runs.table(scales).iterrows():
            rows.append({"setting": label, "check": check,
                         "runs covered at every round": f"{row['covered at every round']:.0f} of {row['runs']:.0f}",
                         "share": row["share"], "95 % interval": f"{row['low']:.2f} to {row['high']:.2f}",
                         "1 - delta": row["1 - delta"], "smallest per-round share": row["smallest per-round share"],
                         "largest statistic / radius": number_text(row["largest ratio to the radius"], digits=3),
                         "against 1 - delta": against_target(row)})
    return pd.DataFrame(rows)


@dataclass
class RunMeter:
    """One replayed run's measurement: before each round, the pairs the ranker stored since the last round join the
    :class:`PairHistory` and the round's ratios are recorded (the lemma's model is read from the ranker once it has
    started, at the first round)."""

    ranker: object
    model_of: Callable
    rounds: int
    estimates: bool
    delta: float

    def __post_init__(self):
        self.ratios, self.model, self.alpha, self.seen = {}, None, np.nan, 0

    def __call__(self, t: int, query) -> None:
        if self.model is None:
            self.model = self.model_of(self.ranker, self.delta)
            self.history = PairHistory(self.model.truth, self.model.lemma.l2)
            start = np.zeros(len(self.model.truth))
            self.fits = Estimates(start, start.copy()) if self.estimates else None
        rows, self.seen = self.model.new_pairs(self.ranker, self.seen)
        self.history.add(rows)
        found = lemma_ratios(self.history, query_pairs(self.model.embed(query.features)), self.model.lemma, self.fits)
        self.alpha = found.pop("alpha")
        if self.estimates:
            found.update(self.model.implementation(self.ranker, query, self.alpha))
        for name, value in found.items():
            self.ratios.setdefault(name, np.zeros(self.rounds))[t] = value

    def details(self) -> dict:
        outside = self.fits.outside / self.rounds if self.estimates else np.nan
        return {"pairs": self.history.count, "alpha_T": self.alpha,
                "share of rounds with w_tilde outside Theta": outside, **self.model.facts}


def measure_runs(make, fold, user, rounds: int, runs: int, model_of: Callable, estimates: bool = True,
                 delta: float = 0.1) -> CoverageRuns:
    """Replay ``runs`` runs (seeds 0, 1, ...) of ``make()`` and measure every round's ratios (:class:`RunMeter`);
    ``model_of(ranker, delta)`` gives the started ranker's :class:`Model`. ``estimates=False``: the noise check
    only (no refit)."""
    meters = []
    for run in range(runs):
        meter = RunMeter(make(), model_of, rounds, estimates, delta)
        with blas_threads():
            replay(meter.ranker, fold, user, rounds, np.random.default_rng(run).spawn(2), meter)
        meters.append(meter)
    ratios = {name: np.stack([m.ratios[name] for m in meters]) for name in meters[0].ratios}
    return CoverageRuns(ratios, delta, pd.DataFrame([{"run": run, **m.details()} for run, m in enumerate(meters)]))


# -- PairRank's Lemma 2 ------------------------------------------------------------------------------------------

def largest_pair_norm(rows: np.ndarray, docs: int) -> float:
    """u: the largest ||r_i - r_j|| over the pairs of every query of ``docs`` consecutive ``rows``."""
    X = rows.reshape(len(rows) // docs, docs, -1)
    return float(np.linalg.norm(X[:, :, None, :] - X[:, None, :, :], axis=-1).max())


def implementation_pairs(prob: np.ndarray, true_prob: np.ndarray, width: np.ndarray) -> float:
    """:func:`pair_ratio` over the pairs i < j of full (n x n) matrices of preferences and widths."""
    upper = np.triu(np.ones_like(prob, bool), 1)
    return pair_ratio(prob[upper], true_prob[upper], width[upper])


def pairrank_model(theta_star, data):
    """Lemma 2's :class:`Model` of a started PairRank in a world whose user clicks by ``theta_star``: Q = ||theta*||,
    u the world's largest pair norm; the implementation's check uses the ranker's own estimate and M_t^-1 with its
    width (alpha, or alpha_t with ``alpha_rule="theory"``)."""
    from ..rankers.pairwise import pairwise_uncertainty

    truth = np.asarray(theta_star, float)

    def new_pairs(ranker, seen):
        if ranker.model.count > ranker.model.window:
            raise ValueError("the PairRank of a coverage check needs a window holding every pair")
        return ranker.model.pairs[seen: ranker.model.count], ranker.model.count

    def implementation(ranker, query, alpha_t):
        prob, norms, _ = pairwise_uncertainty(query.features, ranker.model.theta, ranker.Minv)
        scores = query.features @ truth
        return {IMPLEMENTATION: implementation_pairs(prob, expit(np.subtract.outer(scores, scores)),
                                                     ranker.width() * norms)}

    def model_of(ranker, delta):
        lemma = Lemma(ranker.l2, float(np.linalg.norm(truth)), largest_pair_norm(data.features,
                                                                                 int(data.docs_per_query[0])),
                      delta=delta)
        return Model(lambda X: X, lemma, truth, new_pairs, implementation, {"c_mu": lemma.c_mu})

    return model_of


def pairrank_coverage(fold, user, theta_star, rounds: int, runs: int, delta: float = 0.1, estimates: bool = True,
                      **ranker_params) -> CoverageRuns:
    """Lemma 2's checks over ``runs`` replays of PairRank (``ranker_params``; its l2 is the lemma's lambda, its window
    holds every pair) in a world of equal-sized queries whose logistic pair ``user`` clicks by ``theta_star``."""
    from ..rankers.pairwise import PairRank

    params = {"window": int(rounds * fold.train.docs_per_query.max()), **ranker_params}
    return measure_runs(lambda: PairRank(**params), fold, user, rounds, runs,
                        pairrank_model(theta_star, fold.train), estimates, delta)


# -- the neural Lemma 3.3, on the NTK linearisation -------------------------------------------------------------

@dataclass(frozen=True)
class Linearisation:
    """The NTK-linearised truth on a set of queries: ``basis`` (p x r, orthonormal) spans the tangent pair features
    of the queries; ``truth`` (r) is the least-norm w* with <phi_ij, w*> = h_i - h_j over their pairs (exact when
    ``residual``, the largest miss over the pairs, is ~0: the consequence of N1 the lemma draws); ``smallest``: the
    smallest singular value of the queries' independent pair features (0: N1 fails)."""

    basis: np.ndarray
    truth: np.ndarray
    residual: float
    smallest: float
    directions: int

    @property
    def norm(self) -> float:
        """S = ||w*|| = sqrt(h^T H^-1 h) over the independent pairs."""
        return float(np.linalg.norm(self.truth))


def linearised_truth(tangent: np.ndarray, scores: np.ndarray, docs: int) -> Linearisation:
    """:class:`Linearisation` of ``scores`` (h of every document) on the tangent features (rows, g(x; theta_0) /
    sqrt(m)) of queries of ``docs`` consecutive documents, from the independent pairs (each document against its
    query's first)."""
    phi = tangent.reshape(-1, docs, tangent.shape[1])
    h = scores.reshape(-1, docs)
    D = (phi[:, 1:] - phi[:, :1]).reshape(-1, tangent.shape[1])
    target = (h[:, 1:] - h[:, :1]).ravel()
    U, singular, Vt = np.linalg.svd(D, full_matrices=False)
    rank = int((singular > singular[0] * 1e-10).sum())
    coefficients = U[:, :rank].T @ target / singular[:rank]
    residual = float(np.abs(D @ (Vt[:rank].T @ coefficients) - target).max())
    smallest = float(singular[-1]) if len(D) <= D.shape[1] else 0.0
    return Linearisation(Vt[:rank].T, coefficients, residual, smallest, len(D))


LINEARISATION_TOLERANCE = 1e-8     # the largest miss of a linearised truth that counts as exact


def linearisable(runs: CoverageRuns) -> np.ndarray:
    """Per run of :func:`neural_coverage`: whether its initialisation admits the linearised truth (N1's consequence:
    the least-norm w* reproduces every pair to ``LINEARISATION_TOLERANCE``). Where two documents of a query switch
    every unit off, their tangent features coincide and no w* can tell them apart."""
    return runs.details["linearisation residual"].to_numpy() <= LINEARISATION_TOLERANCE


def initial_linearisation(data, truth_of, width: int, seed: int = 0) -> Linearisation:
    """:class:`Linearisation` of ``truth_of`` (h) on the tangent features of the network olRankNet starts from at
    ``width`` (its symmetric initialisation drawn with ``seed``), over the queries of ``data`` (equal-sized)."""
    from ..rankers.scorers import ReLUScorer

    scorer = ReLUScorer(width, option="width")
    theta0 = scorer.init(data.n_features, np.random.default_rng(seed))
    tangent = scorer.document_gradients(data.features, theta0) / np.sqrt(width)
    return linearised_truth(tangent, truth_of(data.features), int(data.docs_per_query[0]))


def dark_pairs(ranker, features: np.ndarray, docs: int) -> int:
    """The queries (of ``docs`` consecutive rows) holding two documents that switch every unit of the ranker's
    initial network off: their tangent features are both 0, so no linearised truth can tell them apart."""
    pre, _ = ranker.scorer.hidden_layer(features, ranker.theta0)
    dark = (pre <= 0).all(axis=1).reshape(-1, docs)
    return int((dark.sum(axis=1) >= 2).sum())


def neural_model(data, truth_of):
    """Lemma 3.3's :class:`Model` of a started olRankNet (full A) on ``data``, whose user clicks by ``truth_of``
    (h of the documents): model features psi(x) = g(x; theta_0) / sqrt(m) in the basis of the queries' tangent pair
    features, w* their linearised truth, S = ||w*||, u the largest pair norm; beside the lemma's checks the network's
    own intervals: sigma(f_ij) of the current theta against sigma(h_ij) with the ranker's width ||g_ij / sqrt(m)||
    _{A_t^-1} (gradients at the theta of each pair's round), times alpha_t (:data:`NETWORK`) and times its alpha."""
    docs = int(data.docs_per_query[0])
    h_all = truth_of(data.features)

    def model_of(ranker, delta):
        tangent = lambda X: ranker.scorer.document_gradients(X, ranker.theta0) / np.sqrt(ranker.width)  # noqa: E731
        found = linearised_truth(tangent(data.features), h_all, docs)
        embed = lambda X: tangent(X) @ found.basis  # noqa: E731
        lemma = Lemma(ranker.l2, found.norm, largest_pair_norm(embed(data.features), docs), delta=delta)

        def new_pairs(ranker_, seen):
            pairs = ranker_.pairs
            if pairs.capacity is not None and pairs.added > pairs.capacity:
                raise ValueError("the olRankNet of a coverage check needs a replay holding every pair")
            if seen == pairs.added:
                return np.zeros((0, len(found.truth))), seen
            return embed(pairs.win[seen: pairs.added]) - embed(pairs.lose[seen: pairs.added]), pairs.added

        def implementation(ranker_, query, alpha_t):
            scores, h = ranker_.scorer.scores(query.features, ranker_.theta), truth_of(query.features)
            prob, truth = expit(np.subtract.outer(scores, scores)), expit(np.subtract.outer(h, h))
            width = ranker_.pair_widths(query.features)
            return {NETWORK: implementation_pairs(prob, truth, alpha_t * width),
                    IMPLEMENTATION: implementation_pairs(prob, truth, ranker_.alpha * width)}

        facts = {"S": found.norm, "u": lemma.pair_norm, "c_mu": lemma.c_mu, "linearisation residual": found.residual,
                 "smallest singular value": found.smallest,
                 "queries with two dark documents": dark_pairs(ranker, data.features, docs)}
        return Model(embed, lemma, found.truth, new_pairs, implementation, facts)

    return model_of


def neural_coverage(fold, user, truth_of, rounds: int, runs: int, width: int = 8, delta: float = 0.1,
                    estimates: bool = True, **ranker_params) -> CoverageRuns:
    """Lemma 3.3's checks over ``runs`` replays of olRankNet at ``width`` with the full A (``ranker_params``: its
    alpha, l2 = the lemma's lambda, learning rate, pairing) on ``fold`` (its queries few enough for the tangent
    features to reproduce ``truth_of`` exactly: see :class:`Linearisation`)."""
    from ..rankers.neural import NeuralPairRank

    params = {"width": width, "uncertainty": "full", **ranker_params}
    return measure_runs(lambda: NeuralPairRank(**params), fold, user, rounds, runs,
                        neural_model(fold.train, truth_of), estimates, delta)
