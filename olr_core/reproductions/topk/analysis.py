"""The top-k feedback chapter's analysis (Chaudhuri and Tewari, AISTATS 2016).

- Figure 1's running average of NDCG@10 over rounds.
- The regret check: each round's surrogate loss of the played scores (the loop's audit)
  against the best fixed weight vector in hindsight (:func:`best_fixed`, convex optimisation
  over the ball), the measured regret's log-log slope against T^(2/3), and Theorem 4.1's explicit bound.
- Theorem 5.2's worked instance: two distributions of grades that no top-1 learner can tell
  apart but whose NDCG-optimal rankings differ (:func:`indistinguishable_pair`).
- Section 4.2's per-round cost, and the columns the claims read beyond the run frame.
"""

from __future__ import annotations

import functools
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize

from ...data.ranking_data import RankingData
from ...data.registry import load_fold
from ...experiments import ResultStore, RunSpec, spec_key
from ...experiments.runner import map_on_workers
from ...experiments.store import cached_array
from ...loop import query_sequence
from ...threads import blas_threads
from ..rates import increment_slope
from .experiments import checkpoints


def running_average(values: np.ndarray) -> np.ndarray:
    """The paper's 'average NDCG@10 at time t': the cumulative NDCG@10 up to t divided by t."""
    return np.cumsum(values) / np.arange(1, len(values) + 1)


# -- the best fixed ranker in hindsight -------------------------------------------------------------

def _pairs(data: RankingData):
    """Every ordered pair (i, j) of documents of one query with grade_i > grade_j, and its query."""
    first, second, owner = [], [], []
    for q in range(data.n_queries):
        lo, hi = data.offsets[q], data.offsets[q + 1]
        grades = data.labels[lo:hi]
        i, j = np.nonzero(grades[:, None] > grades[None, :])
        first.append(i + lo)
        second.append(j + lo)
        owner.append(np.full(len(i), q))
    return np.concatenate(first), np.concatenate(second), np.concatenate(owner)


class BatchLoss:
    """sum_q n_q phi(X_q w, R_q) over a data set's queries with counts n_q, with its gradient in w."""

    def __init__(self, surrogate: str, data: RankingData):
        self.name, self.data = surrogate, data
        self.grades = data.labels.astype(float)
        self.doc_query = data.query_of_doc()
        if surrogate == "ranksvm":
            self.first, self.second, self.pair_query = _pairs(data)
        elif surrogate not in ("squared", "kl"):
            raise ValueError(f"no batch comparator for the {surrogate} surrogate; valid: squared, kl, ranksvm")

    def __call__(self, w: np.ndarray, counts: np.ndarray) -> tuple[float, np.ndarray]:
        X, R = self.data.features, self.grades
        s = X @ w
        if self.name == "squared":
            c = counts[self.doc_query]
            r = s - R
            return float(c @ r ** 2), X.T @ (2 * c * r)
        if self.name == "kl":
            c = counts[self.doc_query]
            eR, es = np.exp(R), np.exp(np.minimum(s, 50.0))     # (the solver may probe far outside the ball)
            return float(c @ (eR * R - eR * s - eR + es)), X.T @ (c * (es - eR))
        c = counts[self.pair_query]
        margin = 1.0 + s[self.second] - s[self.first]
        active = c * (margin > 0)
        grad_s = np.bincount(self.second, active, len(s)) - np.bincount(self.first, active, len(s))
        return float(c @ np.maximum(margin, 0.0)), X.T @ grad_s


def best_fixed(loss: BatchLoss, counts: np.ndarray, radius: float = 1.0, w0: np.ndarray | None = None):
    """min over ||w|| <= radius of the batch loss (SLSQP with the ball as a constraint; the
    problem is convex, so this is the comparator of the regret). Returns (value, w)."""
    d = loss.data.n_features
    start = np.zeros(d) if w0 is None else w0
    ball = {"type": "ineq", "fun": lambda w: radius ** 2 - w @ w, "jac": lambda w: -2 * w}
    result = optimize.minimize(loss, start, args=(counts,), jac=True, method="SLSQP", constraints=[ball],
                               options={"maxiter": 500, "ftol": 1e-10})
    w = result.x * min(1.0, radius / max(np.linalg.norm(result.x), 1e-300))
    return float(loss(w, counts)[0]), w


def regret_curve(spec: RunSpec, trace, data: RankingData, horizons: np.ndarray) -> pd.DataFrame:
    """Regret(T) = sum_{t <= T} phi(played_t, R_t) - min_{||w|| <= U} sum_{t <= T} phi(X_t w, R_t)."""
    played = np.cumsum(trace.stats["played_loss"])
    best = comparators(spec.algorithm.removeprefix("topk_"), data, spec.rounds, spec.seed, tuple(horizons),
                       spec.params.get("radius", 1.0))
    return pd.DataFrame({"T": horizons.astype(int), "learner": played[horizons - 1], "best_fixed": best,
                         "regret": played[horizons - 1] - best})


COMPARATOR_VERSION = 2          # bump when BatchLoss or best_fixed change (2: one BLAS thread)

SLOWEST_FIRST = {"ranksvm": 0, "kl": 1, "squared": 2}      # the comparators' cost, measured (9 s, 6 s, 3 s)


def precompute_comparators(specs: list[RunSpec], data: RankingData, horizons, jobs: int = 1) -> None:
    """Every comparator the regret curves of ``specs`` need (one per surrogate, horizon, seed and radius; the
    learners of one seed share it), computed on ``jobs`` worker processes, slowest first, and kept beside the
    runs, where :func:`regret_curve` finds them."""
    needed = sorted({(s.algorithm.removeprefix("topk_"), s.rounds, s.seed, s.params.get("radius", 1.0))
                     for s in specs}, key=lambda need: (SLOWEST_FIRST.get(need[0], 0), need[1:]))
    horizons = tuple(int(h) for h in horizons)
    map_on_workers(_comparator, [(surrogate, data, rounds, seed, horizons, radius)
                                 for surrogate, rounds, seed, radius in needed], jobs)


def _comparator(job: tuple):
    surrogate, data, rounds, seed, horizons, radius = job
    return comparators(surrogate, data, rounds, seed, horizons, radius)


def comparators(surrogate: str, data: RankingData, rounds: int, seed: int, horizons: tuple, radius: float):
    """The best fixed loss at each horizon for one seed's query sequence (shared by every learner
    run with that seed: their queries are the same), computed once and kept beside the runs, under the
    book's BLAS thread policy (so that a worker and a notebook's kernel compute the same bits)."""

    def compute():
        with blas_threads():
            loss = BatchLoss(surrogate, data)
            queries = query_sequence(data.n_queries, rounds, seed)
            values, w = [], None
            for T in horizons:
                counts = np.bincount(queries[:T], minlength=data.n_queries).astype(float)
                value, w = best_fixed(loss, counts, radius, w)
                values.append(value)
            return values

    key = [COMPARATOR_VERSION, surrogate, data.fingerprint(), rounds, seed, [int(h) for h in horizons], radius]
    return cached_array("comparators", key, compute)


def explicit_bound(data: RankingData, horizons, eta0: float, gamma0: float, radius: float = 1.0,
                   eta_power: float = 2 / 3, gamma_power: float = 1 / 3) -> np.ndarray:
    """Theorem 4.1's bound with its constants, for the squared loss with top-1 feedback and the schedules
    eta_t = eta0 / t^eta_power, gamma_t = gamma0 / t^gamma_power (the chapter's proof, steps 1-4):

        Regret_T <= (2U)^2 / (2 eta_T) + (C / 2) sum_t eta_t / gamma_t + B sum_t gamma_t,

    with C = 8 m^2 R_D^2 (R_D^2 U^2 + R_max^2) (step 2) and B = m (max(1, U R_D) + R_max)^2, the largest
    squared loss of a playable score vector (the model's, |s_j| <= U R_D, or uniform on [0, 1]^m), for
    m the longest list, R_D the largest feature norm and R_max the largest grade of ``data``."""
    m = int(np.diff(data.offsets).max())
    r_d = float(np.sqrt((data.features ** 2).sum(axis=1)).max())
    r_max = float(data.labels.max())
    c = 8 * m ** 2 * r_d ** 2 * (r_d ** 2 * radius ** 2 + r_max ** 2)
    b = largest_round_loss(data, radius)
    t = np.arange(1, int(np.max(horizons)) + 1, dtype=float)
    eta, gamma = eta0 / t ** eta_power, np.minimum(gamma0 / t ** gamma_power, 1.0)
    explore = np.cumsum(eta / gamma) * c / 2 + np.cumsum(gamma) * b
    T = np.asarray(horizons, int)
    return 2 * radius ** 2 / eta[T - 1] + explore[T - 1]


def largest_round_loss(data: RankingData, radius: float = 1.0) -> float:
    """B = m (max(1, U R_D) + R_max)^2: the largest squared loss of a playable score vector in one round, so that
    B T is the trivial bound on T rounds' regret (see :func:`explicit_bound`)."""
    m = int(np.diff(data.offsets).max())
    r_d = float(np.sqrt((data.features ** 2).sum(axis=1)).max())
    return m * (max(1.0, radius * r_d) + float(data.labels.max())) ** 2


def rate_slope(T: np.ndarray, regret: np.ndarray, later: float = 1 / 8) -> float:
    """The regret's growth exponent over the later part of the horizon (T >= ``later`` times the last horizon, with
    the horizon before it as the first increment's start): :func:`..rates.increment_slope`, which a burn-in
    cannot lower (the T4.1-rate record reads it as ``regret_slope``)."""
    T, regret = np.asarray(T, float), np.asarray(regret, float)
    first = max(int(np.argmax(T >= later * T.max())) - 1, 0) if len(T) else 0
    return increment_slope(T[first:], regret[first:])


def loglog_slope(T: np.ndarray, regret: np.ndarray, later: float = 1 / 8) -> float:
    """Least-squares slope of log regret on log T over the later part of the horizon (T >= ``later`` times
    the last horizon: the rate, not the burn-in), NaN if a regret there is not positive."""
    T, regret = np.asarray(T, float), np.asarray(regret, float)
    keep = T >= later * T.max() if len(T) else np.zeros(0, bool)
    T, regret = T[keep], regret[keep]
    if (regret <= 0).any() or len(T) < 2:
        return float("nan")
    return float(np.polyfit(np.log(T), np.log(regret), 1)[0])


# -- Theorem 5.2: two worlds that top-1 feedback cannot tell apart -----------------------------------

def indistinguishable_pair() -> tuple[list, list]:
    """Two distributions over binary grade vectors of three documents, as (probability, grades) lists.

    Every document is relevant with probability 1/2 in both, so the top-1 feedback (the grade
    of whichever document is shown first) has the same distribution under every ranking; but
    which documents are relevant *together* differs, and with it E[G(R) / Z(R)].
    """
    first = [(0.5, np.array([1, 1, 0])), (0.5, np.array([0, 0, 1]))]
    second = [(0.5, np.array([1, 0, 1])), (0.5, np.array([0, 1, 0]))]
    return first, second


def ideal_dcg(grades: np.ndarray) -> float:
    """Z_m(R): the DCG of the best ordering of all m documents (G(r) = 2^r - 1, D(i) = 1 / log2(i + 1))."""
    ordered = np.sort(grades)[::-1]
    return float(np.sum((2.0 ** ordered - 1) / np.log2(np.arange(2, len(grades) + 2))))


def calibrated_target(world) -> np.ndarray:
    """E[G(R) / Z_m(R)]: the vector whose order every NDCG-calibrated surrogate's minimiser follows (Thm 5.1)."""
    return sum(p * (2.0 ** r - 1) / ideal_dcg(r) for p, r in world)


def expected_ndcg(world, ranking) -> float:
    """E[NDCG_m] of a fixed ranking (a permutation of the documents) under a distribution of grades."""
    discounts = 1 / np.log2(np.arange(2, len(ranking) + 2))
    return float(sum(p * np.sum((2.0 ** r[list(ranking)] - 1) * discounts) / ideal_dcg(r) for p, r in world))


def top1_feedback(world, ranking) -> dict:
    """The distribution of the top-1 feedback (the grade of the first document) under a ranking."""
    out: dict = {}
    for p, r in world:
        out[int(r[ranking[0]])] = out.get(int(r[ranking[0]]), 0.0) + p
    return out


def impossibility_table() -> pd.DataFrame:
    """For each ranking: its top-1 feedback distribution and expected NDCG in both worlds."""
    first, second = indistinguishable_pair()
    rows = []
    for ranking in itertools.permutations(range(3)):
        rows.append({"ranking": " > ".join(f"d{i + 1}" for i in ranking),
                     "P(feedback = 1), world A": top1_feedback(first, ranking).get(1, 0.0),
                     "P(feedback = 1), world B": top1_feedback(second, ranking).get(1, 0.0),
                     "E[NDCG], world A": expected_ndcg(first, ranking),
                     "E[NDCG], world B": expected_ndcg(second, ranking)})
    return pd.DataFrame(rows)


def calibrated_regret_floor() -> float:
    """Per-round lower bound on regret_A + regret_B for the NDCG-calibrated squared loss
    ||s - G(R)/Z(R)||^2: the expected loss under a world is ||s - mean||^2 plus a constant, so
    the two regrets add up to at least ||mean_A - mean_B||^2 / 2 whatever s the learner plays."""
    first, second = indistinguishable_pair()
    gap = calibrated_target(first) - calibrated_target(second)
    return float(gap @ gap / 2)


# -- the per-round cost (Section 4.2: O(m log m) per round) ------------------------------------------------------

COST_LEVELS = ((1024, 2048, 4096, 8192), (16384, 32768, 65536, 131072))


def round_seconds(surrogate: str, m: int, rounds: int, n_features: int = 46, seed: int = 0) -> float:
    """Median wall seconds of one RTop-kF round (rank, then learn from the top-k grades) on a query of ``m``
    random documents."""
    import time

    from ...data.ranking_data import Query
    from ...rankers import make_ranker
    from ...users import TopKLabels

    rng = np.random.default_rng(seed)
    ranker = make_ranker(f"topk_{surrogate}")
    features = rng.random((m, n_features))
    labels = rng.integers(0, 5, m)
    train = RankingData(features, labels, np.array([0, m]), np.array(["cost"]), 4, "cost")
    ranker.start(train, np.random.default_rng(seed))
    query = Query(features, labels, "cost")
    ranker.learn(query, ranker.rank(query), TopKLabels(labels[:2].astype(float)))    # compiles the update once
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        display = ranker.rank(query)
        ranker.learn(query, display, TopKLabels(labels[display.ranking[:2]].astype(float)))
        times.append(time.perf_counter() - started)
    return float(np.median(times))


@functools.cache          # one sweep per surrogate and seed in a process, whatever the configurations judged
def cost_exponent(surrogate: str = "squared", levels=COST_LEVELS, rounds: int = 9, seed: int = 0) -> float:
    """The larger of the least-squares slopes of log(seconds per round) on log(m) within each range of
    ``levels``: at most about 1 + 1/ln(m) for a cost of O(m log m) (a fixed overhead lowers it), 2 for a
    quadratic cost."""
    slopes = []
    for sizes in levels:
        seconds = [round_seconds(surrogate, m, rounds, seed=seed) for m in sizes]
        slopes.append(float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0]))
    return max(slopes)


BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks" / "results.json"
ROUND_COST_SUITE = "topk_round_cost"


def benchmarked_cost_exponent(seed: int, path: Path = BENCHMARKS) -> float:
    """:func:`cost_exponent` of the squared loss for ``seed`` as the controlled benchmark measured it
    (``python benchmarks/run_all.py topk_round_cost``: one process, one BLAS thread, stored in
    ``benchmarks/results.json``), not a timing taken while verdicts are computed (which moves with the machine's
    load between two readings of one store); NaN where the benchmark has no measurement for the seed."""
    try:
        exponents = json.loads(Path(path).read_text())[ROUND_COST_SUITE]["exponents"]
    except (OSError, KeyError, ValueError):
        return float("nan")
    return float(exponents.get(str(int(seed)), float("nan")))


# -- the columns the claims read ------------------------------------------------------------------

def decorate(name: str, specs, frame: pd.DataFrame, store: ResultStore | None = None, data_dir=None,
             jobs: int = 1, **_) -> pd.DataFrame:
    """The regret experiment's runs get ``regret_slope`` (:func:`rate_slope`), ``final_regret`` and, for the
    squared loss (the one surrogate whose constants the chapter makes explicit), ``bound_slack``: the smallest
    share of Theorem 4.1's explicit bound left unused by the measured regret over the horizons; and
    ``cost_exponent``: the growth exponent of the measured seconds per round in the number of documents m, the
    controlled benchmark's sweep for the run's seed (:func:`benchmarked_cost_exponent`); every run gets
    ``calibrated_floor``, Theorem 5.2's per-round regret floor on the two-world instance (a computed constant)."""
    if name != "regret":
        return frame
    store = store or ResultStore()
    for (dataset, fold, rounds), group in itertools.groupby(sorted(specs, key=_world), key=_world):
        precompute_comparators(list(group), load_fold(dataset, fold, data_dir).train, checkpoints(rounds),
                                    jobs)
    slopes, finals, slack, over = [], [], [], []
    for spec in specs:
        _, trace = store.load(spec_key(spec, data_dir))
        data = load_fold(spec.dataset, spec.fold, data_dir).train
        curve = regret_curve(spec, trace, data, checkpoints(spec.rounds))
        slopes.append(rate_slope(curve["T"], curve["regret"]))
        finals.append(float(curve["regret"].iloc[-1]))
        if spec.algorithm == "topk_squared":
            p = spec.params
            bound = explicit_bound(data, curve["T"].to_numpy(), p.get("eta0", 0.01), p.get("gamma0", 0.1),
                                        p.get("radius", 1.0))
            slack.append(float(np.min((bound - curve["regret"].to_numpy()) / bound)))
            over.append(float(bound[-1] / (largest_round_loss(data, p.get("radius", 1.0)) * curve["T"].iloc[-1])))
        else:
            slack.append(float("nan"))
            over.append(float("nan"))
    return frame.assign(regret_slope=np.array(slopes), final_regret=np.array(finals), bound_slack=np.array(slack),
                        bound_over_trivial=np.array(over),
                        cost_exponent=[benchmarked_cost_exponent(s.seed) if s.algorithm == "topk_squared"
                                       else np.nan for s in specs],
                        calibrated_floor=calibrated_regret_floor())


def _world(spec) -> tuple:
    return spec.dataset, spec.fold, spec.rounds
