"""Dueling bandit gradient descent and its descendants, with optional document-space projection.

- DBGD (Yue & Joachims 2009): compare the current ranker with one perturbed copy
  ``theta + step * u`` (u uniform on the unit sphere) by interleaving; if the copy wins,
  ``theta += lr * u``.
- MGD (Schuth et al. 2016): several candidates at once by multileaving; move towards the
  mean of the winners.
- NSGD (Wang et al. 2018): candidates drawn from the null space of recently losing
  directions, those most able to change the current query's ranking kept; ties between
  winners broken on recent difficult queries.
- DSP (Wang et al. 2019): replace the update direction by ``lambda * A u + (1 - lambda) * u``,
  ``A`` the projector on the document space (:mod:`.projection`).

The scorer (linear or MLP, :mod:`.scorers`) is a parameter: the same code perturbs a
linear weight vector or all weights of a network.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..click_models import compiled_user_arguments
from ..params import FLAG, Param, at_least, between, choice, positive
from .base import BaseRanker, Display
from .dueling_compiled import CompiledDuels, CompiledNullSpace, top_rows
from .interleaving import (
    _team_draft,
    pm_outcomes,
    pm_outcomes_sampled,
    probabilistic_multileave_scored,
    team_draft_credit,
)
from .projection import DocumentSpace, orthonormal_basis
from .scorers import LinearScorer, make_scorer, unit_sphere

MULTILEAVING = ("team_draft", "probabilistic")


class DuelingRanker(BaseRanker):
    """Shared machinery of the dueling family: propose, multileave, judge, update, project."""

    n_candidates = 1
    PARAMS = {"learning_rate": positive(), "step": positive(), "decay": between(0, 1, low_open=True),
              "multileave": choice(*MULTILEAVING), "tau": positive(), "shared_prefix": FLAG,
              "scorer": choice("linear", "mlp", "relu"), "hidden": at_least(1), "dsp": FLAG, "dsp_k": at_least(0),
              "dsp_r": at_least(0), "dsp_oracle": FLAG, "dsp_lambda": between(0, 1), "dsp_renormalize": FLAG,
              "cutoff": at_least(1), "credit_samples": at_least(0)}

    def __init__(self, learning_rate: float = 0.1, step: float = 1.0, decay: float = 0.9999977,
                 multileave: str = "team_draft", tau: float = 3.0, shared_prefix: bool = True,
                 scorer: str = "linear", hidden: int = 10, dsp: bool = False, dsp_k: int = 3, dsp_r: int = 10,
                 dsp_oracle: bool = False, dsp_lambda: float = 1.0, dsp_renormalize: bool = False,
                 cutoff: int = 10, credit_samples: int = 0):
        if multileave not in MULTILEAVING:
            raise ValueError(f"unknown multileave {multileave!r}; valid: {', '.join(MULTILEAVING)}")
        if not 0.0 <= dsp_lambda <= 1.0:
            raise ValueError(f"dsp_lambda must lie in [0, 1], got {dsp_lambda}")
        if credit_samples and multileave != "probabilistic":
            raise ValueError("credit_samples sets how probabilistic multileaving estimates its credit; "
                             "use it with multileave=probabilistic (or set credit_samples=0)")
        self.learning_rate, self.step, self.decay = float(learning_rate), float(step), float(decay)
        self.multileave, self.tau, self.shared_prefix = multileave, float(tau), bool(shared_prefix)
        self.scorer = make_scorer(scorer, hidden)
        if dsp and not self.scorer.linear:
            raise ValueError("document-space projection needs the linear scorer (documents span feature space)")
        self.dsp, self.dsp_k, self.dsp_r, self.dsp_oracle = bool(dsp), int(dsp_k), int(dsp_r), bool(dsp_oracle)
        self.dsp_lambda, self.dsp_renormalize, self.cutoff = float(dsp_lambda), bool(dsp_renormalize), int(cutoff)
        self.credit_samples = int(credit_samples)     # probabilistic credit: 0 exact, N the code's N-sample estimate

    # -- protocol -------------------------------------------------------------------------
    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.theta = self.scorer.init(train.n_features, rng)
        self.direction_rng = rng.spawn(1)[0]      # Gaussians apart from the uniforms (see .dueling_compiled)
        self.lr = self.learning_rate
        self.space = DocumentSpace(train.n_features, self.dsp_k, self.dsp_r, self.dsp_oracle) if self.dsp else None

    def rank(self, query) -> Display:
        directions = self.propose(query)
        thetas = np.concatenate([self.theta[None, :], self.theta + self.step * directions])
        scores = self.scorer.scores_many(query.features, thetas)
        if self.multileave == "team_draft":
            m, n = scores.shape
            tops = self._tops(scores)
            length = min(self.cutoff, n)      # team_draft's draws, on rankings cut to what the draft reads
            shown, team = _team_draft(tops, length, self.rng.random((length, m)), self.shared_prefix, n)
            return Display(shown, info=(directions, team, None))
        shown, posterior = probabilistic_multileave_scored(scores, self.cutoff, self.rng, self.tau)
        return Display(shown, info=(directions, None, posterior))

    def _tops(self, scores: np.ndarray) -> np.ndarray:
        """The first ``cutoff`` columns of :func:`olr_core.metrics.rank_by_scores` (the same draws), all a team
        draft reads: a compiled insertion top-k instead of two full sorts (non-finite scores: the sort)."""
        keys = self.rng.random(scores.shape)
        if not np.isfinite(scores).all():
            return np.lexsort((keys, -scores), axis=-1)
        return top_rows(scores, keys, min(self.cutoff, scores.shape[1]))

    def learn(self, query, display, feedback) -> dict:
        clicks = feedback.clicks
        if not clicks.any():
            return {"won": 0.0}
        directions, team, posterior = display.info
        if team is not None:
            credit = team_draft_credit(team, clicks, len(directions) + 1)
            margins = (credit[1:] - credit[0]).astype(float)
        elif self.credit_samples:
            margins = pm_outcomes_sampled(posterior, clicks, self.credit_samples, self.rng)[1:]
        else:
            margins = pm_outcomes(posterior, clicks)[1:]
        self.observe(query, display, feedback, directions, margins)
        examined = self.space.examined(query.features, display.ranking, feedback) if self.dsp else None
        stats = {"won": float((margins > 0).any())}
        if (margins > 0).any():
            direction = self.combine(directions, margins)
            if self.dsp:
                direction, stats["doc_space_rank"] = self.projected(direction, examined)
            self.theta = self.theta + self.lr * direction
            self.lr *= self.decay
        if self.dsp:
            self.space.remember(examined)
        return stats

    def score(self, docs) -> np.ndarray:
        return self.scorer.scores(docs.features, self.theta)

    def weights(self) -> np.ndarray:
        return self.theta

    def evaluation_vector(self) -> np.ndarray | None:
        """theta, when ``score`` is the linear scorer's ``X @ theta``."""
        linear = type(self.scorer) is LinearScorer and type(self).score is DuelingRanker.score
        return self.theta if linear else None

    def compiled_rounds(self, user, train, cutoff: int):
        """Blocks of rounds in one compiled call (:mod:`.dueling_compiled`), when this ranker is a
        plain DBGD / MGD with a linear scorer, ``user`` a chain or an examination click model, and the
        comparison team-draft interleaving, probabilistic multileaving with exact credit, or probabilistic
        multileaving of three or more rankers with sampled credit (the authors' code's); otherwise None, and
        the loop plays the protocol round by round (two-ranker sampled credit stays there: a multinomial draw
        the compiled rounds do not replay)."""
        plain = all(getattr(type(self), hook) is getattr(DuelingRanker, hook)
                    for hook in ("rank", "learn", "propose", "combine", "observe", "projected"))
        compilable_user = compiled_user_arguments(user) is not None
        multileave = self.multileave == "probabilistic" and (self.credit_samples == 0 or self.n_candidates >= 2)
        if plain and self.scorer.linear and compilable_user and (self.multileave == "team_draft" or multileave):
            return CompiledDuels(self, user, train, cutoff)
        return None

    # -- the parts subclasses change -------------------------------------------------------
    def propose(self, query) -> np.ndarray:
        """Exploration directions (n_candidates x p), uniform on the unit sphere."""
        return unit_sphere(self.direction_rng, self.n_candidates, len(self.theta))

    def combine(self, directions: np.ndarray, margins: np.ndarray) -> np.ndarray:
        """The update direction from the winners (margin > 0): their mean."""
        return directions[margins > 0].mean(axis=0)

    def observe(self, query, display, feedback, directions, margins) -> None:
        """Hook for methods that learn from the comparison beyond the update (NSGD)."""

    def projected(self, direction: np.ndarray, examined: np.ndarray):
        """lambda * A u + (1 - lambda) * u, optionally renormalised (reference code); and rank(A)."""
        out, rank = self.space.project(direction, examined, self.dsp_lambda, self.dsp_renormalize)
        return out, float(rank)


class DBGD(DuelingRanker):
    """Dueling bandit gradient descent: one candidate, team-draft interleaving."""

    n_candidates = 1


class MGD(DuelingRanker):
    """Multileave gradient descent: ``n_candidates`` candidates (9 with team-draft, 49 probabilistic)."""

    PARAMS = {"n_candidates": Param("int", 1, optional=True)}

    def __init__(self, n_candidates: int | None = None, multileave: str = "team_draft", **kwargs):
        super().__init__(multileave=multileave, **kwargs)
        default = 9 if multileave == "team_draft" else 49
        self.n_candidates = int(n_candidates if n_candidates is not None else default)


class NSGD(DuelingRanker):
    """Null-space gradient descent (Wang et al. 2018).

    Losing directions of the last ``history`` comparisons are kept with their margins; new
    candidates are drawn from the null space of the ``n_null`` worst of them (at most
    ``d - 1``, so the null space is never empty); of ``n_sample`` such draws the
    ``n_candidates`` with the largest ``|v . mean document feature|`` are compared. When
    several candidates share the best margin, the one whose ranking puts the clicked
    documents highest (DCG of clicks) on the ``n_difficult`` most recent queries the
    current ranker lost is chosen (``winners="best"``, the NSGD paper's rule).

    ``winners="mean"`` is what the reference code does in effect: it steps to the mean of all
    winning candidates, like MGD, because its tie-break only runs while its queue of difficult
    queries is not yet full, i.e. during about the first ``n_difficult`` clicked queries
    (that short start is not reproduced).
    """

    PARAMS = {"n_candidates": at_least(1), "history": at_least(1), "n_null": at_least(1), "n_sample": at_least(1),
              "n_difficult": at_least(0), "winners": choice("best", "mean")}

    def __init__(self, n_candidates: int = 9, history: int = 60, n_null: int = 25, n_sample: int = 20,
                 n_difficult: int = 10, winners: str = "best", **kwargs):
        super().__init__(**kwargs)
        if winners not in ("best", "mean"):
            raise ValueError(f"nsgd: unknown winners {winners!r}; valid: best, mean")
        self.winners = winners
        if self.multileave != "team_draft":
            raise ValueError("NSGD is defined with team-draft multileaving")
        if n_sample < n_candidates:
            raise ValueError(f"nsgd: option n_sample={n_sample} must be at least n_candidates={n_candidates}")
        self.n_candidates, self.history, self.n_null = int(n_candidates), int(history), int(n_null)
        self.n_sample, self.n_difficult = int(n_sample), int(n_difficult)

    def start(self, train, rng) -> None:
        super().start(train, rng)
        self.losers = deque(maxlen=self.history)
        self.difficult = deque(maxlen=self.n_difficult)
        self._span = None                   # the losing span, kept until the losers change
        self._stacked = None                # the difficult queries as one array, kept until they change

    def losing_span(self) -> np.ndarray:
        """Orthonormal rows spanning the worst recent losing directions (at most d - 1 of them)."""
        if self._span is None:
            if not self.losers:
                return np.zeros((0, len(self.theta)))
            worst = sorted(self.losers, key=lambda pair: pair[0])[: min(self.n_null, len(self.theta) - 1)]
            self._span = orthonormal_basis(np.array([u for _, u in worst]))
        return self._span

    def propose(self, query) -> np.ndarray:
        """Uniform directions in the null space of the losing span (a Gaussian with that span removed)."""
        span = self.losing_span()
        samples = self.rng.standard_normal((self.n_sample, len(self.theta)))
        samples -= (samples @ span.T) @ span
        samples /= np.linalg.norm(samples, axis=1, keepdims=True)
        if not self.scorer.linear:
            return samples[: self.n_candidates]
        strength = np.abs(samples @ query.features.mean(axis=0))
        return samples[np.argsort(-strength, kind="stable")[: self.n_candidates]]

    def observe(self, query, display, feedback, directions, margins) -> None:
        for u, margin in zip(directions, margins):
            if margin < 0:
                self.losers.append((float(margin), u))
                self._span = None
        if (margins > 0).any():
            shown = display.ranking
            self.difficult.append((query.features[shown], feedback.clicks[: len(shown)].copy()))
            self._stacked = None

    def compiled_rounds(self, user, train, cutoff: int):
        """Blocks of rounds in one compiled call (:class:`.dueling_compiled.CompiledNullSpace`) for NSGD itself
        (no hook overridden) with a linear scorer, ``user`` a chain or an examination click model, and the whole
        list shown (``cutoff`` at least the ranker's: the difficult queries keep a click per shown document);
        otherwise None, and the loop plays the protocol round by round."""
        plain = all(getattr(type(self), hook) is getattr(NSGD, hook)
                    for hook in ("rank", "learn", "propose", "combine", "observe", "projected", "losing_span",
                                 "_clicked_dcg", "start"))
        if plain and self.scorer.linear and compiled_user_arguments(user) is not None and cutoff >= self.cutoff:
            return CompiledNullSpace(self, user, train, cutoff)
        return None

    def combine(self, directions: np.ndarray, margins: np.ndarray) -> np.ndarray:
        if self.winners == "mean":
            return super().combine(directions, margins)
        best = np.flatnonzero(margins == margins.max())
        if len(best) > 1 and self.difficult:
            quality = [self._clicked_dcg(self.theta + self.step * directions[j]) for j in best]
            top = np.flatnonzero(np.isclose(quality, max(quality)))
            best = best[top]
        return directions[best[self.rng.integers(len(best))]]

    def _clicked_dcg(self, theta: np.ndarray) -> float:
        """The DCG of the clicks of the stored difficult queries under ``theta``'s rankings (each query's
        documents by descending score, ties in display order), summed over the queries. A linear score is
        summed row by row, so that equal documents tie exactly, however many queries are stacked."""
        if self._stacked is None:
            sizes = [len(features) for features, _ in self.difficult]
            segment = np.repeat(np.arange(len(sizes)), sizes)
            start = np.repeat(np.cumsum([0, *sizes[:-1]]), sizes)
            self._stacked = (np.concatenate([f for f, _ in self.difficult]),
                             np.concatenate([c for _, c in self.difficult]), segment, start)
        features, clicks, segment, start = self._stacked
        scores = (features * theta).sum(axis=1) if self.scorer.linear else self.scorer.scores(features, theta)
        order = np.lexsort((-scores, segment))                                  # per query, stable
        ranks = np.empty(len(order), dtype=np.int64)
        ranks[order] = np.arange(len(order)) - start[order]
        return float((clicks / np.log2(ranks + 2.0)).sum())
