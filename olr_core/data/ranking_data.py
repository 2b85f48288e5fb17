"""Ragged storage of ranked queries: one feature matrix plus query offsets."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Query:
    """The documents of one query: what a ranker sees (features) and what users know (labels)."""

    features: np.ndarray
    labels: np.ndarray
    qid: str = ""

    @property
    def n_docs(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class RankingData:
    """Queries stored as ragged arrays.

    ``features[offsets[q]:offsets[q+1]]`` are the documents of query ``q``; labels are
    integer relevance grades in ``0 .. max_grade``.
    """

    features: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    qids: np.ndarray
    max_grade: int
    name: str = ""
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if self.features.ndim != 2 or len(self.features) != len(self.labels):
            raise ValueError("features must be (n_docs, n_features) and match labels")
        if self.offsets[0] != 0 or self.offsets[-1] != len(self.labels) or np.any(np.diff(self.offsets) < 0):
            raise ValueError("offsets must start at 0, end at n_docs and be non-decreasing")
        if len(self.qids) != len(self.offsets) - 1:
            raise ValueError("one qid per query is required")
        if np.any(np.diff(self.offsets) == 0):
            raise ValueError("every query needs at least one document")

    @property
    def n_queries(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_docs(self) -> int:
        return len(self.labels)

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    @property
    def docs_per_query(self) -> np.ndarray:
        return np.diff(self.offsets)

    def query(self, q: int) -> Query:
        lo, hi = self.offsets[q], self.offsets[q + 1]
        return Query(self.features[lo:hi], self.labels[lo:hi], str(self.qids[q]))

    def query_of_doc(self) -> np.ndarray:
        """Index of the query each document belongs to."""
        return np.repeat(np.arange(self.n_queries), self.docs_per_query)

    def has_relevant(self) -> np.ndarray:
        """Boolean per query: does it contain at least one document with label > 0."""
        if self.n_queries == 0:
            return np.zeros(0, dtype=bool)
        return np.maximum.reduceat(self.labels, self.offsets[:-1]) > 0

    def derived(self, name: str, compute):
        """A table computed from this data set once (``compute(self)``: an array or a tuple of arrays) and then
        shared, read-only, by every run on it: the loop's ideal DCGs, grade counts and feature ranges, which
        cost a run on synth-mslr ~15 ms to rebuild, and :meth:`padded`'s index. Outside the data's fingerprint:
        the plug-in guard lends a plug-in a copy of them and the runner drops them after its run."""
        cached = self._derived.get(name)
        if cached is None:
            cached = compute(self)
            for array in cached if isinstance(cached, tuple) else (cached,):
                array.flags.writeable = False
            self._derived[name] = cached
        return cached

    def subset(self, queries) -> RankingData:
        """A new data set made of the given queries, in the given order."""
        queries = np.asarray(queries, dtype=np.int64)
        sizes = self.docs_per_query[queries]
        starts = self.offsets[queries]
        doc_index = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes) + np.arange(sizes.sum())
        return RankingData(
            self.features[doc_index], self.labels[doc_index],
            np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            self.qids[queries], self.max_grade, self.name,
        )

    def padded(self, fill: float = 0.0):
        """(n_queries, max_docs) index matrix into documents and its validity mask (cached, read-only)."""
        return self.derived("index", _padded_index)

    def query_minmax_normalized(self) -> RankingData:
        """Per-query min-max normalisation of every feature (LETOR 'QueryLevelNorm').

        A feature constant within a query becomes 0 for that query.
        """
        if self.n_docs == 0:
            return self
        starts, sizes = self.offsets[:-1], self.docs_per_query
        lo = np.minimum.reduceat(self.features, starts, axis=0)
        hi = np.maximum.reduceat(self.features, starts, axis=0)
        lo, span = np.repeat(lo, sizes, axis=0), np.repeat(hi - lo, sizes, axis=0)
        normed = np.divide(self.features - lo, span, out=np.zeros_like(self.features), where=span > 0)
        return RankingData(normed, self.labels, self.offsets, self.qids, self.max_grade, self.name)

    @staticmethod
    def concatenate(parts: list[RankingData], name: str = "") -> RankingData:
        """Join data sets query-wise (feature counts are padded to the widest part)."""
        width = max(p.n_features for p in parts)
        feats = [np.pad(p.features, ((0, 0), (0, width - p.n_features))) for p in parts]
        sizes = np.concatenate([p.docs_per_query for p in parts])
        return RankingData(
            np.concatenate(feats), np.concatenate([p.labels for p in parts]),
            np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
            np.concatenate([p.qids for p in parts]), max(p.max_grade for p in parts), name,
        )

    def fingerprint(self) -> str:
        """A content hash of features, labels and query structure."""
        import hashlib

        h = hashlib.sha256()
        for arr in (self.features, self.labels, self.offsets):
            h.update(np.ascontiguousarray(arr).tobytes())
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class Fold:
    """Train / validation / test splits of one fold of a data set."""

    name: str
    fold: int
    train: RankingData
    vali: RankingData
    test: RankingData

    @property
    def n_features(self) -> int:
        return self.train.n_features

    @property
    def max_grade(self) -> int:
        return max(self.train.max_grade, self.vali.max_grade, self.test.max_grade)

    def fingerprint(self) -> str:
        return "-".join(s.fingerprint()[:8] for s in (self.train, self.vali, self.test))


def _padded_index(data: RankingData):
    sizes = data.docs_per_query
    width = int(sizes.max()) if len(sizes) else 0
    cols = np.arange(width)
    mask = cols[None, :] < sizes[:, None]
    return np.where(mask, data.offsets[:-1, None] + cols[None, :], 0), mask
