"""The one online loop every experiment uses.

Each round: sample a training query uniformly with replacement, let the ranker display a
list, show its top ``cutoff`` documents to a simulated user, hand the feedback back to the
ranker. Recorded: the online NDCG@cutoff of the shown list every round, the offline
NDCG@cutoff of the ranker's deterministic ranking on the test split every ``eval_every``
rounds (and after the last), the pairwise regret of the displayed list every round (pairs
with a shown document ranked above a better document: the Kendall distance to an ideal
ranking, restricted to pairs that involve a shown position), and whatever diagnostics the
ranker reports.

Randomness comes from four independent streams spawned from one seed (queries, users,
ranker, evaluation tie-breaking), so two rankers run with the same seed see the same
queries and meet users drawing the same random numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .data.ranking_data import Fold, RankingData
from .kernels import KEYS_NEEDED, batch_ndcg_means, segment_ndcg, split_ndcg_mean, summation_gamma
from .metrics import _discounts, cosine_similarity, cumulative_online, ideal_dcg_rows, padded_gains
from .threads import blas_threads

# Rounds whose queries and shown lists a run holds at once (about 3 MB at the cutoff of 10): the memory a run
# keeps for its whole horizon is only its per-round records (online NDCG, mis-ordered pairs, diagnostics).
CHUNK_ROUNDS = 65_536
SCORED_ROWS = 8_192           # rounds scored by one matrix product (a run's records depend on this split)
EVAL_COLUMNS = 64             # evaluations of a linear model scored by one matrix product (synth-mslr's test split,
EVAL_SCORES = 1 << 21         # 25,020 x 136: 0.20 ms a column against 2.1 ms a GEMV), at most 16 MB of scores held,
BATCHED_FROM = 0              # on a split of this many feature values or more: every split since #51 (MQ2008's
                              # 2,874 x 46: about 34 CPU us an evaluation batched, 53 by its GEMV, 101 before #51)


class NonFiniteModelError(ValueError):
    """The model's scores or weights stopped being finite numbers during a run (the run is discarded)."""


@dataclass
class RunTrace:
    """Everything one run recorded."""

    online_ndcg: np.ndarray
    eval_rounds: np.ndarray
    offline_ndcg: np.ndarray
    online_misordered: np.ndarray
    stats: dict = field(default_factory=dict)
    eval_stats: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def rounds(self) -> int:
        return len(self.online_ndcg)

    def summary(self, discount: float = 0.9995) -> dict:
        return {
            "rounds": self.rounds,
            "final_offline_ndcg10": float(self.offline_ndcg[-1]),
            "discounted_online_ndcg10": cumulative_online(self.online_ndcg, discount),   # sum_t discount^(t-1) NDCG_t
            "summed_online_ndcg10": float(self.online_ndcg.sum()),
            "mean_online_ndcg10": float(self.online_ndcg.mean()) if self.rounds else float("nan"),
            "cumulative_misordered_pairs": int(self.online_misordered.sum()),
            "seconds": self.seconds,
        }

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"online_ndcg": self.online_ndcg, "eval_rounds": self.eval_rounds, "offline_ndcg": self.offline_ndcg,
               "online_misordered": self.online_misordered}
        out.update({f"stat__{k}": v for k, v in self.stats.items()})
        out.update({f"eval__{k}": v for k, v in self.eval_stats.items()})
        return out

    @classmethod
    def from_arrays(cls, arrays: dict, seconds: float) -> RunTrace:
        return cls(arrays["online_ndcg"], arrays["eval_rounds"], arrays["offline_ndcg"], arrays["online_misordered"],
                   {k[6:]: v for k, v in arrays.items() if k.startswith("stat__")},
                   {k[6:]: v for k, v in arrays.items() if k.startswith("eval__")}, seconds)


def query_sequence(n_queries: int, rounds: int, seed: int) -> np.ndarray:
    """The training queries of every round of a run with this seed (uniform, with replacement)."""
    return random_streams(seed)["queries"].integers(n_queries, size=rounds)


def random_streams(seed: int) -> dict[str, np.random.Generator]:
    """Independent generators for queries, users, the ranker and evaluation, from one seed."""
    names = ("queries", "users", "ranker", "evaluation")
    children = np.random.SeedSequence(int(seed)).spawn(len(names))
    return {n: np.random.default_rng(s) for n, s in zip(names, children)}


class OfflineEvaluator:
    """Mean NDCG@k of a ranker's scores on a split, over queries with a relevant document.

    Ties are broken by one uniform random key per document per evaluation (a compiled
    top-k selection per query, :func:`olr_core.kernels.segment_ndcg`).
    """

    def __init__(self, data: RankingData, k: int = 10):
        self.k, self.n_docs = k, data.n_docs
        self.offsets = data.offsets
        self.gains = data.derived("gains", lambda d: 2.0 ** d.labels - 1.0)
        self.ideal = data.derived(f"ideal_dcg@{k}", lambda d: _ideal_dcgs(d, k))
        self.keep = data.derived("has_relevant", RankingData.has_relevant)
        self.out = np.empty(data.n_queries)
        self.compact = np.empty(data.n_queries)

    def per_query(self, scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """NDCG@k of each query (NaN for queries without a relevant document)."""
        return self.with_keys(scores, rng.random(self.n_docs))

    def with_keys(self, scores: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """:meth:`per_query` with the tie-breaking keys given."""
        return segment_ndcg(np.asarray(scores, dtype=np.float64), keys, self.gains, self.offsets, self.ideal,
                            self.k, self.out)

    def settled(self, scores: np.ndarray, slack: np.ndarray) -> np.ndarray:
        """Per row of ``scores`` (one evaluation each, within ``slack[row, q] / 2`` of the ranker's scores), the mean
        NDCG@k of the ranker's scores with any keys, or ``KEYS_NEEDED`` where the row cannot settle it
        (:func:`olr_core.kernels.settled_ndcg_mean`)."""
        out = np.empty(len(scores))
        batch_ndcg_means(scores, slack, self.gains, self.offsets, self.ideal, self.keep, self.k, self.compact, out)
        return out

    def mean(self, per_query: np.ndarray) -> float:
        return float(per_query[self.keep].mean())

    def load_kernel(self) -> None:
        """Dispatch the compiled evaluations once on throwaway scores and keys: the first compiled call of a
        process loads numba's machine code and sets up its runtime (a fixed cost of the process, not of a run)."""
        self.per_query(np.zeros(self.n_docs), np.random.default_rng(0))
        self.of_stream(np.zeros(self.n_docs), np.random.default_rng(0))
        if self.keep.any():
            batch_ndcg_means(np.zeros((1, self.n_docs)), np.zeros((1, len(self.keep))), self.gains, self.offsets,
                             self.ideal, self.keep, self.k, self.compact, np.empty(1))

    def of_stream(self, scores: np.ndarray, rng: np.random.Generator) -> float | None:
        """``self(scores, rng)`` bit for bit, the generator left in the same state, for a stream that draws only
        doubles (the loop's evaluation stream: its keys), in one compiled pass (:func:`olr_core.kernels.
        split_ndcg_mean`). The keys are drawn only where a tie needs them; otherwise the stream is advanced past
        them (:func:`skip_doubles`). None, with the stream untouched, if a score is not finite."""
        scores = np.asarray(scores, dtype=np.float64)
        if not self.keep.any():
            return float("nan") if np.isfinite(scores).all() else None
        value = split_ndcg_mean(scores, self.gains, self.offsets, self.ideal, self.keep, self.k, self.compact)
        if value != KEYS_NEEDED:
            skip_doubles(rng, self.n_docs)
            return float(value)
        return self(scores, rng) if np.isfinite(scores).all() else None

    def __call__(self, scores: np.ndarray, rng: np.random.Generator) -> float:
        """Mean NDCG@k of ranking each query's documents by ``scores`` (one per document)."""
        if not self.keep.any():
            return float("nan")
        return self.mean(self.per_query(scores, rng))


def skip_doubles(rng: np.random.Generator, n: int) -> None:
    """The state ``rng.random(n)`` leaves, without the doubles: a PCG64 draws a double from one step, so it is
    advanced n steps (``advance`` drops a buffered 32-bit half, which a stream of doubles never holds)."""
    if type(rng.bit_generator) is np.random.PCG64:
        rng.bit_generator.advance(n)
    else:
        rng.random(n)


def _check(rounds, eval_every, cutoff, ranker, user):
    if not isinstance(rounds, (int, np.integer)) or rounds < 0:
        raise ValueError(f"rounds must be a non-negative integer, got {rounds!r}")
    if eval_every < 1:
        raise ValueError(f"eval_every must be at least 1, got {eval_every!r}")
    if cutoff < 1:
        raise ValueError(f"cutoff must be at least 1, got {cutoff!r}")
    if getattr(user, "cutoff", cutoff) < cutoff:
        raise ValueError(f"the user model examines at most {user.cutoff} positions but the loop shows {cutoff}; "
                         f"build the user with cutoff={cutoff} (make_user(..., cutoff={cutoff}))")
    problem = feedback_mismatch(ranker, getattr(user, "feedback_kind", "clicks"), getattr(user, "name", "the user"),
                                getattr(user, "k", None), cutoff)
    if problem:
        raise ValueError(problem)


def _require_relevant(fold: Fold, eval_split: str) -> None:
    """Refuse a run whose evaluation split holds no query with a relevant document (grade above 0).

    The offline NDCG@k is the mean over queries with a relevant document (a query without one has no ideal
    DCG to divide by, :class:`OfflineEvaluator`); with none such it is undefined (NaN), so the run is refused
    here, before it starts, rather than stored with a NaN that the store's validation would set aside
    (``olr_core.experiments.validate``). Online NDCG counts such queries as 0 and stays defined."""
    if _has_relevant_query(getattr(fold, eval_split)):
        return
    if not any(_has_relevant_query(getattr(fold, s)) for s in ("train", "vali", "test")):
        raise ValueError(f"data set {fold.name}: every relevance grade in fold {fold.fold} is 0 (no document is "
                         "relevant), so NDCG is undefined for every query; give the relevant documents a grade "
                         "of 1 or more in its files")
    raise ValueError(f"data set {fold.name}: its {eval_split} split (fold {fold.fold}) has no query with a relevant "
                     "document (every grade 0), so its offline NDCG is undefined; give some of its documents a grade "
                     "of 1 or more, or evaluate on the other split (eval_split)")


def _has_relevant_query(data: RankingData) -> bool:
    """True when at least one query of ``data`` has a document graded above 0."""
    return bool(data.derived("has_relevant", RankingData.has_relevant).any())


def feedback_mismatch(ranker, kind: str, user_name: str, k: int | None, cutoff: int) -> str | None:
    """Why ``ranker`` cannot learn from a user giving ``kind`` feedback (``k``: the grades of how many top
    documents), or None if it can."""
    wanted = getattr(ranker, "feedback_kind", "clicks")
    name = type(ranker).__name__
    if wanted not in ("any", kind):
        return (f"{name} learns from {wanted!r} feedback but the user model {user_name} gives {kind!r}; pick a "
                f"matching user model" + (" (top1, top2, ...: grades of the top k)" if wanted == "topk_labels" else ""))
    depth = getattr(ranker, "feedback_depth", None)
    if depth is not None and k is not None and depth > k:
        return (f"{name} reads the grades of the top {depth} documents but the user model {user_name} reveals "
                f"{k}; use click model top{depth}")
    if depth is not None and depth > cutoff:
        return f"{name}: k={depth} is larger than the {cutoff} documents shown; use k <= {cutoff}"
    return None


def _record(table: dict, key: str, t, value, length: int):
    if key not in table:
        table[key] = np.full(length, np.nan)
    table[key][t] = value


def run_online(ranker, fold: Fold, user, rounds: int, seed: int, eval_every: int = 10, cutoff: int = 10,
               reference_weights: np.ndarray | None = None, progress=None, eval_split: str = "test",
               compiled: bool = True, audit: bool = False) -> RunTrace:
    """Run ``ranker`` for ``rounds`` rounds on ``fold.train`` against ``user``; evaluate on ``fold.test``
    (or ``fold.vali`` with ``eval_split="vali"``, for tuning).

    The rounds between two evaluations form a block. A ranker that offers
    ``compiled_rounds(user, train, cutoff)`` plays each block in one compiled call, drawing
    the same random numbers as the round-by-round protocol (``compiled=False`` forces the
    latter; the two give identical traces). ``reference_weights`` (e.g. the offline
    LambdaRank w*) adds the cosine similarity of the ranker's weights to it at every
    evaluation. ``progress`` is an optional callable receiving the number of finished rounds
    after each block. ``audit=True`` records, every round, what ``display.info.audit(grades)``
    returns for the query's full grades (e.g. the surrogate loss of the played scores, for
    regret measurements); it is the experimenter's instrument, never shown to the ranker.

    The evaluations of a built-in linear ranker on a large split are scored several at a time
    (:class:`BatchedEvaluation`), with the same NDCGs to the last bit.

    Runs under the book's BLAS thread policy (:mod:`olr_core.threads`). A model whose scores
    become non-finite stops the run with a :class:`NonFiniteModelError`.
    """
    with blas_threads():
        return _run_online(ranker, fold, user, rounds, seed, eval_every, cutoff, reference_weights, progress,
                           eval_split, compiled and not audit, audit)


def _run_online(ranker, fold: Fold, user, rounds: int, seed: int, eval_every: int = 10, cutoff: int = 10,
                reference_weights: np.ndarray | None = None, progress=None, eval_split: str = "test",
                compiled: bool = True, audit: bool = False) -> RunTrace:
    """The body of :func:`run_online` (called with the thread policy in force)."""
    _check(rounds, eval_every, cutoff, ranker, user)
    if eval_split not in ("test", "vali"):
        raise ValueError(f"eval_split must be 'test' or 'vali', got {eval_split!r}")
    streams = random_streams(seed)
    train = fold.train
    evaluation_data = getattr(fold, eval_split)
    _require_relevant(fold, eval_split)
    evaluator = OfflineEvaluator(evaluation_data, cutoff)
    evaluator.load_kernel()                          # before the clock: a run's seconds are the same in any process
    online, misordered = np.zeros(rounds), np.zeros(rounds, dtype=np.int64)
    scorer = OnlineScorer(train, cutoff)
    stats, eval_stats, eval_rounds, offline = {}, {}, [], []
    n_evals = rounds // eval_every + 1 + (rounds % eval_every != 0)
    started = time.perf_counter()
    ranker.start(train, streams["ranker"])
    offer = getattr(ranker, "compiled_rounds", None) if compiled else None
    player = (offer(user, train, cutoff) if offer is not None else None) or ProtocolRounds(ranker, user, train, audit)

    batch = BatchedEvaluation.of(ranker, evaluator, evaluation_data, streams["evaluation"], offline)

    def evaluate(t):
        e = len(eval_rounds)
        eval_rounds.append(t)
        offline.append(float("nan"))                   # (a batched evaluation is filled in when its batch is)
        if batch is None or not batch.take(e, t, evaluation_vector(ranker)):
            if batch is not None:
                batch.flush()                          # (earlier evaluations first: their keys come first)
            scores = ranker.score(evaluation_data)
            offline[e] = evaluator.of_stream(scores, streams["evaluation"])
            if offline[e] is None or not _finite_weights(ranker):
                raise _non_finite(ranker, t)
        w = ranker.weights() if reference_weights is not None and hasattr(ranker, "weights") else None
        if w is not None:
            _record(eval_stats, "cosine_to_reference", e, _cosine_to_reference(ranker, w, reference_weights), n_evals)

    pending = Pending(scorer, online, misordered)
    for first, last in chunks(rounds, eval_every):
        queries = streams["queries"].integers(train.n_queries, size=last - first)   # = query_sequence's slice
        shown = np.full((last - first, cutoff), -1, dtype=np.int32)
        for begin in range(first, last, eval_every):
            evaluate(begin)
            end = min(begin + eval_every, rounds)
            block = slice(begin - first, end - first)
            for key, values in player.play(queries[block], streams["users"], shown[block]).items():
                if key in stats or not np.isnan(values).all():          # a statistic appears with its first value
                    _record(stats, key, slice(begin, end), values, rounds)
            if progress is not None:
                progress(end)
        pending.score(queries, shown, final=last == rounds)
        if batch is not None:
            batch.flush()                              # (a batch holds no more than a chunk's evaluations)
    evaluate(rounds)
    if batch is not None:
        batch.flush()
    return RunTrace(online, np.asarray(eval_rounds), np.asarray(offline), misordered, stats,
                    {k: v[: len(eval_rounds)] for k, v in eval_stats.items()}, time.perf_counter() - started)


class Pending:
    """Scores played rounds into the run's per-round records in pieces of ``scorer.chunk`` rounds aligned
    on the run's start (the pieces a whole-run computation uses, so chunking changes no bit of a matrix
    product), holding back the rounds of an unfinished piece until the next chunk."""

    def __init__(self, scorer: OnlineScorer, online: np.ndarray, misordered: np.ndarray):
        self.scorer, self.online, self.misordered = scorer, online, misordered
        self.done = 0
        self.queries, self.shown = np.empty(0, dtype=np.int64), None

    def score(self, queries: np.ndarray, shown: np.ndarray, final: bool) -> None:
        queries = np.concatenate([self.queries, queries])
        shown = shown if self.shown is None else np.concatenate([self.shown, shown])
        ready = len(queries) if final else len(queries) // self.scorer.chunk * self.scorer.chunk
        span = slice(self.done, self.done + ready)
        self.online[span], self.misordered[span] = self.scorer(queries[:ready], shown[:ready])
        self.done += ready
        self.queries, self.shown = queries[ready:], shown[ready:]


def chunks(rounds: int, eval_every: int, size: int | None = None):
    """(first, last) rounds of consecutive chunks of about ``size`` rounds, each a whole number of blocks of
    ``eval_every`` rounds: a run holds one chunk's queries and shown lists at a time, whatever its horizon."""
    step = max(1, (size or CHUNK_ROUNDS) // eval_every) * eval_every
    return [(first, min(first + step, rounds)) for first in range(0, rounds, step)]


def _cosine_to_reference(ranker, weights: np.ndarray, reference: np.ndarray) -> float:
    """Cosine similarity of the ranker's weights to the reference's, which must be as many (one per feature)."""
    if np.shape(weights) != np.shape(reference):
        raise ValueError(f"{type(ranker).__name__}: its weights() give {np.size(weights)} numbers, the reference "
                         f"weights {len(reference)} (one per feature): --reference compares a linear ranker's weights, "
                         "so run this ranker without --reference")
    return cosine_similarity(weights, reference)


def _finite_weights(ranker) -> bool:
    """The ranker's weights (if it has any) are all finite numbers."""
    weights = ranker.weights() if hasattr(ranker, "weights") else None      # (weights() is optional)
    return weights is None or bool(np.isfinite(np.add.reduce(weights))) or bool(np.isfinite(weights).all())


def _non_finite(ranker, t: int) -> NonFiniteModelError:
    return NonFiniteModelError(f"{type(ranker).__name__}: the model's scores became non-finite (NaN or inf) by round "
                               f"{t}; the learning rate or step size is too large for this data. Lower it and rerun "
                               "(nothing was stored)")


BUILT_IN = "olr_core.rankers."
SAFE_REACH = 1e300            # max_i sum_k |x_ik v_k| below this: no score of the product can overflow
GIVE_UP_AFTER = 8             # evaluations the GEMV recomputed (and more than half of them) before a run stops batching


def evaluation_vector(ranker) -> np.ndarray | None:
    """The v with ``ranker.score(docs)`` exactly ``docs.features @ v``, from a built-in ranker class that declares
    it (``evaluation_vector()``, checked class by class); None for every other ranker, plug-ins above all (the
    guard's class declares nothing and is not built in)."""
    if getattr(type(ranker), "evaluation_vector", None) is None or not type(ranker).__module__.startswith(BUILT_IN):
        return None
    return ranker.evaluation_vector()


class BatchedEvaluation:
    """The offline evaluations of a linear model (``score = X @ v``), held and scored several at a time by one
    matrix product ``[v_1 .. v_B]^T X^T``, in the order of the rounds and with their keys drawn in that order.

    The product's bits differ from the GEMV ``X @ v`` the unbatched path computes, so each evaluation is
    certified: both are sums of the same d products in some order, each within gamma_d sum_k |x_k v_k| of the
    exact score (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 3.5: any order, FMA included,
    gamma_d = d u / (1 - d u)), bounded per query by ``query_max @ |v|`` (the largest |x_k| of the query's
    documents, feature by feature). Where a comparison a query's top k rests on differs by more than twice the
    two bounds, the GEMV orders those documents as the product does; where it does not (near ties, exact ties),
    the documents it could reorder must share one gain, so that the DCG is the same whatever the GEMV's order
    and the keys (:func:`olr_core.kernels.gains_settled`): the NDCG is then the GEMV's, bit for bit. Otherwise
    (ties of different gains, such as v = 0's) the evaluation is recomputed by the GEMV."""

    def __init__(self, ranker, evaluator: OfflineEvaluator, data: RankingData, rng: np.random.Generator,
                 offline: list, width: int):
        self.ranker, self.evaluator, self.features, self.rng = ranker, evaluator, data.features, rng
        self.offline, self.width = offline, width
        self.query_max = data.derived("query_max_abs", _query_max_abs)
        self.max_x_abs = self.query_max.max(axis=0)
        d = data.features.shape[1]
        gamma = summation_gamma(d)
        self.relative = 4.0 * gamma * (1.0 + 1e-6)      # (1e-6: the rounding of the bound's own arithmetic)
        self.absolute = 4.0 * d * 2.0 ** -1074          # (products that underflow: an absolute error each)
        self.pending: list = []
        self.given_up, self.tried, self.recomputed = False, 0, 0

    @classmethod
    def of(cls, ranker, evaluator: OfflineEvaluator, data: RankingData, rng, offline: list):
        """The batched evaluation of ``ranker`` on ``data``, or None where it does not apply (not a declared
        linear model, a split too small to gain, no query with a relevant document, batches of one)."""
        width = min(EVAL_COLUMNS, EVAL_SCORES // max(data.n_docs, 1))
        small = data.features.size < BATCHED_FROM
        if width < 2 or small or not evaluator.keep.any() or evaluation_vector(ranker) is None:
            return None
        return cls(ranker, evaluator, data, rng, offline, width)

    def take(self, e: int, t: int, v: np.ndarray | None) -> bool:
        """Hold a copy of ``v`` for evaluation ``e`` (round ``t``); False if it is to be evaluated now, by the
        unbatched path: no vector, a non-finite one, one whose scores might overflow (both seen in the largest
        reach of any document, ``max_x_abs @ |v|``, which a NaN or an infinity makes NaN or infinite), or a run
        whose evaluations the GEMV had to recompute for the most part (ties of different gains everywhere: the
        product is lost work)."""
        if v is None or self.given_up:
            return False
        v = np.array(v, dtype=np.float64)
        if not self.max_x_abs @ np.abs(v) < SAFE_REACH:
            return False
        self.pending.append((e, t, v))
        if len(self.pending) == self.width:
            self.flush()
        return True

    def flush(self) -> None:
        """Score the held evaluations by one matrix product, settle their NDCGs in one compiled call
        (:meth:`OfflineEvaluator.settled`) and record them; an evaluation the product cannot settle is the GEMV's
        (:meth:`_exact`). The evaluation stream moves past each evaluation's keys in order, drawing them only
        for the GEMV's evaluations that need them."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        vectors = np.stack([v for _, _, v in pending])
        scores = vectors @ self.features.T
        slack = self.relative * (np.abs(vectors) @ self.query_max.T) + self.absolute     # (reach: any order)
        skipped, n = 0, len(self.features)
        for value, (e, t, v) in zip(self.evaluator.settled(scores, slack), pending):
            if value != KEYS_NEEDED:
                self.offline[e], skipped = float(value), skipped + 1
                continue
            skip_doubles(self.rng, skipped * n)
            self.offline[e], skipped = self._exact(v, t), 0
            self.recomputed += 1
        skip_doubles(self.rng, skipped * n)
        self.tried += len(pending)
        self.given_up = self.recomputed >= GIVE_UP_AFTER and 2 * self.recomputed > self.tried

    def _exact(self, v: np.ndarray, t: int) -> float:
        """The unbatched evaluation: the ranker's GEMV ``X @ v``, its keys drawn from the stream if needed."""
        scores = self.features @ v
        if not np.isfinite(scores).all():
            raise _non_finite(self.ranker, t)
        return self.evaluator.of_stream(scores, self.rng)


class ProtocolRounds:
    """Plays rounds one by one through the protocol: ``rank``, the user's feedback on the top
    of the list, ``learn`` (the player of every ranker without a compiled one)."""

    def __init__(self, ranker, user, train: RankingData, audit: bool = False):
        self.ranker, self.user, self.audit = ranker, user, audit
        self.queries = [train.query(q) for q in range(train.n_queries)]   # views, built once

    def play(self, queries: np.ndarray, user_rng: np.random.Generator, shown_out: np.ndarray) -> dict:
        """One round per query; fills ``shown_out`` and returns each diagnostic per round (NaN: not reported)."""
        stats: dict = {}
        cutoff = shown_out.shape[1]
        for i, q in enumerate(queries.tolist()):
            query = self.queries[q]
            display = self.ranker.rank(query)
            shown = display.ranking[:cutoff]
            shown_out[i, : len(shown)] = shown
            info = self.ranker.learn(query, display, self.user(query, shown, user_rng))
            audited = self._audit(query, display) if self.audit else None
            for source in (display.stats, info, audited):
                for key, value in (source or {}).items():
                    _record(stats, key, i, value, len(queries))
        return stats

    def _audit(self, query, display) -> dict:
        if not hasattr(display.info, "audit"):
            raise ValueError(f"{type(self.ranker).__name__} reports no played scores to audit; audit=True needs a "
                             "ranker whose display carries them (the top-k learners, online ListNet)")
        return display.info.audit(query.labels)


class OnlineScorer:
    """Per round: NDCG@cutoff of the shown list, and its mis-ordered pairs (see the module docstring),
    with the query tables (ideal DCGs, documents better than each grade) built once per run."""

    def __init__(self, data: RankingData, cutoff: int, chunk: int | None = None):
        self.data, self.chunk = data, chunk or SCORED_ROWS
        self.ideal = data.derived(f"ideal_dcg@{cutoff}", lambda d: _ideal_dcgs(d, cutoff))
        self.better_than = data.derived("better_counts", _better_counts)
        self.disc = _discounts(cutoff)
        self.below, self.above = np.tril_indices(cutoff, -1)        # (position, a position above it)

    def __call__(self, queries: np.ndarray, shown: np.ndarray):
        """``shown`` (rounds x cutoff) holds each round's shown documents (positions within the query),
        padded with -1; computed for ``chunk`` rounds at a time."""
        online = np.zeros(len(queries))
        misordered = np.zeros(len(queries), dtype=np.int64)
        for lo in range(0, len(queries), self.chunk):
            part = slice(lo, lo + self.chunk)
            online[part], misordered[part] = self._score(queries[part], shown[part])
        return online, misordered

    def _score(self, q: np.ndarray, s: np.ndarray):
        data, ideal = self.data, self.ideal
        valid = s >= 0
        grade = np.where(valid, data.labels[data.offsets[q][:, None] + np.where(valid, s, 0)], 0)
        dcg = np.where(valid, 2.0 ** grade - 1.0, 0.0) @ self.disc
        has_relevant = ideal[q] > 0
        online = np.zeros(len(q))
        online[has_relevant] = dcg[has_relevant] / ideal[q][has_relevant]
        worse_below = (grade[:, self.above] > grade[:, self.below]) & valid[:, self.below]
        better = np.where(valid, self.better_than[q[:, None], grade], 0).sum(axis=1)
        return online, better - worse_below.sum(axis=1)


def _query_max_abs(data: RankingData) -> np.ndarray:
    """(n_queries, n_features): the largest |x_f| among each query's documents."""
    return np.maximum.reduceat(np.abs(data.features), data.offsets[:-1], axis=0)


def _ideal_dcgs(data: RankingData, k: int) -> np.ndarray:
    index, mask = data.padded()
    return ideal_dcg_rows(padded_gains(data.labels[index], mask), k)


def _better_counts(data: RankingData) -> np.ndarray:
    """(n_queries, max_grade + 1): number of documents of the query with a grade above g."""
    per_grade = np.zeros((data.n_queries, data.max_grade + 2), dtype=np.int64)
    np.add.at(per_grade, (data.query_of_doc(), data.labels), 1)
    above = per_grade[:, ::-1].cumsum(axis=1)[:, ::-1]
    return above[:, 1:]
