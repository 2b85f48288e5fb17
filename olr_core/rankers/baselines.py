"""Reference points: a uniformly random ranker and an oracle that ranks by the true grades."""

from __future__ import annotations

import numpy as np

from ..data.ranking_data import Query
from .base import BaseRanker, Display


class RandomRanker(BaseRanker):
    """Shows a uniformly random permutation every round; learns nothing (the lower bound).

    It ignores feedback, so it runs against any user model (``feedback_kind = "any"``).
    """

    feedback_kind = "any"
    random_scores = True            # (its scores are draws: rankers.checks does not ask them to repeat)

    def rank(self, query: Query) -> Display:
        n = query.n_docs
        return Display(self.rng.permutation(n), {"log_first": np.full(n, -np.log(n))})   # a uniform policy

    def score(self, docs) -> np.ndarray:
        return self.rng.random(docs.n_docs if hasattr(docs, "candidates") else len(docs.features))


class OracleRanker(BaseRanker):
    """Ranks by the true grades, ties at random (the upper bound: NDCG 1 on every query)."""

    def score(self, docs) -> np.ndarray:
        return np.asarray(docs.labels, dtype=np.float64)
