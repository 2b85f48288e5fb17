"""Growing-library streams (Delage, KDD 2009): a library that gains items while queries arrive.

At step t the library L_t holds the items entered so far; a query names a topic q_t; its
candidate set I_t is every item of L_t on that topic; the user chooses one item I_t. The
features are one-hot, Phi_t(q, I_i) = e_i, so their dimension grows with the library (the
paper's practical example and experiments). A :class:`LibraryStream` stores this compactly:
each topic's items in entry order, and per query its topic, how many of the topic's items
were in the library, and the chosen item. Candidate sets are prefixes of the topic lists.

Two sources: Cora (:func:`cora_stream`, the paper's Section 5, from McCallum's citation data)
and a synthetic library with a known Plackett-Luce user (:func:`synthetic_stream`).
"""

from __future__ import annotations

import gzip
import hashlib
import heapq
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class LibraryDataError(ValueError):
    """A library data file that cannot be turned into a stream (the message names the file)."""


@dataclass(frozen=True)
class LibraryQuery:
    """One query: the candidate items (global item ids), its topic and the library's size then."""

    candidates: np.ndarray
    topic: int
    library_size: int

    @property
    def n_docs(self) -> int:
        return len(self.candidates)


@dataclass(frozen=True)
class LibraryStream:
    """Queries on a growing library, in time order.

    ``topic_items[k]``: the items of topic k in entry order; query t has topic ``topic[t]``,
    candidates ``topic_items[topic[t]][:n_candidates[t]]``, the chosen item's index among
    them ``chosen[t]``, and ``library_size[t]`` items in the library. ``citations``
    (citing, cited) pairs sorted by the citing item's entry (for HITS / PageRank: the citations
    known at query t are those whose citing item entered before ``library_size[t]``).
    Items are numbered in entry order: item i entered i-th.
    """

    name: str
    n_items: int
    topic_items: tuple
    topic: np.ndarray
    n_candidates: np.ndarray
    chosen: np.ndarray
    library_size: np.ndarray
    citations: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    adversarial: bool = False
    notes: dict = field(default_factory=dict)
    fitness: np.ndarray | None = None          # the synthetic user's true item fitness (None for real data)

    @property
    def n_queries(self) -> int:
        return len(self.topic)

    def query(self, t: int) -> LibraryQuery:
        items = self.topic_items[self.topic[t]][: self.n_candidates[t]]
        return LibraryQuery(items, int(self.topic[t]), int(self.library_size[t]))

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for a in (self.topic, self.n_candidates, self.chosen, self.library_size, self.citations):
            h.update(np.ascontiguousarray(a).tobytes())
        for items in self.topic_items:
            h.update(np.ascontiguousarray(items).tobytes())
        h.update(str(self.adversarial).encode())
        return h.hexdigest()[:16]

    def describe(self) -> dict:
        return {"name": self.name, "items": self.n_items, "queries": self.n_queries, "topics": len(self.topic_items),
                "mean_candidates": float(self.n_candidates.mean()) if self.n_queries else 0.0,
                "max_candidates": int(self.n_candidates.max()) if self.n_queries else 0, **self.notes}


# -- Cora ----------------------------------------------------------------------------------------------

CORA_FILES = ("classification_papers.json.gz", "paper_references.json.gz")


def _read_json_gz(path: Path):
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise LibraryDataError(f"{path}: not a readable gzip-compressed JSON file ({type(err).__name__}: {err}); "
                               "replace it with an intact copy") from None


def leaf_topics(classification: dict, path: Path) -> dict[int, str]:
    """Each paper's deepest classification (e.g. .../Machine_Learning/Neural_Networks)."""
    if not isinstance(classification, dict):
        raise LibraryDataError(f"{path}: expected a mapping of classification -> [paper ids]")
    leaf: dict[int, str] = {}
    for name in sorted(classification, key=lambda n: (n.count("/"), n)):      # deeper paths last: they win
        for paper in classification[name]:
            leaf[int(paper)] = name
    return leaf


def entry_order(papers: np.ndarray, citing: np.ndarray, cited: np.ndarray) -> np.ndarray:
    """A deterministic order of ``papers`` in which every cited paper precedes the papers citing it.

    Citation cycles (the data have a few) are strongly connected components of the graph; each
    is entered as a block, its papers by id, and the blocks in a topological order of the
    condensed graph with ties broken by the smallest paper id. Returns the papers in order.
    """
    index = {p: i for i, p in enumerate(papers.tolist())}
    n = len(papers)
    src = np.array([index[p] for p in cited.tolist()], dtype=np.int64)       # edge cited -> citing
    dst = np.array([index[p] for p in citing.tolist()], dtype=np.int64)
    # scipy.sparse here, not at the top: `olr run` on LETOR data never needs it
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    graph = csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    n_blocks, block = connected_components(graph, directed=True, connection="strong")
    block_src, block_dst = block[src], block[dst]
    keep = block_src != block_dst
    edges = set(zip(block_src[keep].tolist(), block_dst[keep].tolist()))
    indegree = np.zeros(n_blocks, dtype=np.int64)
    children: dict[int, list[int]] = {}
    for a, b in edges:
        indegree[b] += 1
        children.setdefault(a, []).append(b)
    members: dict[int, list[int]] = {}
    for i in np.argsort(papers, kind="stable").tolist():
        members.setdefault(int(block[i]), []).append(i)
    heap = [(papers[members[b][0]], b) for b in range(n_blocks) if indegree[b] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, b = heapq.heappop(heap)
        order.extend(members[b])
        for c in children.get(b, []):
            indegree[c] -= 1
            if indegree[c] == 0:
                heapq.heappush(heap, (papers[members[c][0]], c))
    return papers[np.array(order, dtype=np.int64)]


def cora_stream(directory: Path) -> LibraryStream:
    """The paper's Section 5 stream from McCallum's Cora: papers enter in citation order, each
    citation of an entering paper to an earlier one is a query (topic = the cited paper's leaf
    topic, candidates = the library's papers on that topic, chosen = the cited paper).

    The library holds the papers that appear in the citation file and have a topic. Skipped,
    and counted in ``notes``: citations to papers without a topic or absent from the
    library, citations that a cycle makes point forward, and queries whose topic has a single
    paper in the library (nothing to rank).
    """
    directory = Path(directory)
    for name in CORA_FILES:
        if not (directory / name).is_file():
            raise FileNotFoundError(f"Cora file {directory / name} is missing; Cora needs {', '.join(CORA_FILES)}")
    class_path, ref_path = directory / CORA_FILES[0], directory / CORA_FILES[1]
    leaf = leaf_topics(_read_json_gz(class_path), class_path)
    references = _read_json_gz(ref_path)
    try:
        pairs = np.array(references, dtype=np.int64).reshape(-1, 2)
    except (TypeError, ValueError):
        raise LibraryDataError(f"{ref_path}: expected a list of [citing_paper_id, cited_paper_id] pairs") from None
    in_library = np.array([c in leaf and d in leaf for c, d in pairs.tolist()])
    papers = np.unique(pairs[in_library])
    known = set(papers.tolist())
    notes = {"citations": len(pairs), "skipped_unknown_paper": int((~in_library).sum())}
    pairs = pairs[in_library]
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    order = entry_order(papers, pairs[:, 0], pairs[:, 1])
    position = {p: i for i, p in enumerate(order.tolist())}
    topics = sorted({leaf[p] for p in known})
    topic_of = np.array([topics.index(leaf[p]) for p in order.tolist()], dtype=np.int64)
    return _citation_stream("cora", order, position, topic_of, topics, pairs, notes)


def _citation_stream(name, order, position, topic_of, topics, pairs, notes) -> LibraryStream:
    """Queries from citations, in the citing paper's entry order (then the cited paper's)."""
    n = len(order)
    citing = np.array([position[p] for p in pairs[:, 0].tolist()], dtype=np.int64)
    cited = np.array([position[p] for p in pairs[:, 1].tolist()], dtype=np.int64)
    by_time = np.lexsort((cited, citing))
    citing, cited = citing[by_time], cited[by_time]
    forward = cited > citing
    notes["skipped_cycle_forward"] = int(forward.sum())
    topic_items = tuple(np.flatnonzero(topic_of == k) for k in range(len(topics)))
    rank_in_topic = np.empty(n, dtype=np.int64)
    for items in topic_items:
        rank_in_topic[items] = np.arange(len(items))
    q_topic, q_n, q_chosen, q_size = [], [], [], []
    for a, b in zip(citing[~forward].tolist(), cited[~forward].tolist()):
        k = topic_of[b]
        count = int(np.searchsorted(topic_items[k], a))          # the topic's items entered before paper a
        q_topic.append(k)
        q_n.append(count)
        q_chosen.append(int(rank_in_topic[b]))
        q_size.append(a)
    q_n = np.array(q_n, dtype=np.int64)
    single = q_n < 2
    notes["skipped_single_candidate"] = int(single.sum())
    keep = ~single
    edges = np.stack([citing[~forward], cited[~forward]], axis=1)
    sizes = np.array(q_size, dtype=np.int64)[keep]
    notes["queries"] = int(keep.sum())
    notes["topic_names"] = list(topics)
    return LibraryStream(name, n, topic_items, np.array(q_topic, dtype=np.int64)[keep], q_n[keep],
                         np.array(q_chosen, dtype=np.int64)[keep], sizes, edges, notes=notes)


# -- a synthetic growing library -------------------------------------------------------------------

@dataclass(frozen=True)
class LibraryPreset:
    name: str
    description: str
    queries: int = 20_000
    topics: int = 10
    initial_items: int = 20
    growth: float = 0.2              # new items per query (on average)
    fitness_sd: float = 1.5          # item fitness f ~ N(0, sd^2); users choose by softmax(f) over candidates
    adversarial: bool = False        # the user picks the item the ranker scores lowest (Remark 3.1)
    citations_per_item: float = 3.0  # each arriving item cites Poisson(this) earlier items of its topic
    seed: int = 20090628


LIBRARY_PRESETS = {
    p.name: p for p in [
        LibraryPreset("synth-library", "10 topics, 0.2 new items per query, Plackett-Luce users"),
        LibraryPreset("synth-library-slow", "slow growth (0.02 new items per query)", growth=0.02),
        LibraryPreset("synth-library-fast", "fast growth (1 new item per query)", growth=1.0),
        LibraryPreset("synth-library-adversarial", "users pick the item the ranker scores lowest (Remark 3.1)",
                      adversarial=True),
    ]
}


def synthetic_stream(preset: LibraryPreset) -> LibraryStream:
    """Items arrive as a Poisson process (``growth`` per query) with a uniform topic and a fitness;
    each query picks a topic with at least two items, and the user chooses item i among the
    candidates with probability exp(f_i) / sum exp(f_I): the KLRank policy with theta = f is the
    truth (a well-specified world). With ``adversarial`` the choice is left to the loop."""
    rng = np.random.default_rng(preset.seed)
    arrivals = rng.poisson(preset.growth, preset.queries)
    n_items = preset.initial_items + int(arrivals.sum())
    item_topic = np.concatenate([np.arange(preset.initial_items) % preset.topics,
                                 rng.integers(preset.topics, size=n_items - preset.initial_items)])
    fitness = rng.normal(0.0, preset.fitness_sd, n_items)
    topic_items = tuple(np.flatnonzero(item_topic == k) for k in range(preset.topics))
    sizes = preset.initial_items + np.cumsum(arrivals) - arrivals          # library size when query t arrives
    counts = np.stack([np.searchsorted(items, sizes) for items in topic_items], axis=1)
    draws = rng.random((preset.queries, 2))
    topic = np.empty(preset.queries, dtype=np.int64)
    chosen = np.empty(preset.queries, dtype=np.int64)
    for t in range(preset.queries):
        eligible = np.flatnonzero(counts[t] >= 2)
        k = eligible[min(int(draws[t, 0] * len(eligible)), len(eligible) - 1)]
        f = fitness[topic_items[k][: counts[t, k]]]
        p = np.exp(f - f.max())
        chosen[t] = min(int(np.searchsorted(np.cumsum(p) / p.sum(), draws[t, 1], side="right")), len(f) - 1)
        topic[t] = k
    n_candidates = counts[np.arange(preset.queries), topic]
    citations = citation_graph(preset, item_topic, fitness)
    return LibraryStream(preset.name, n_items, topic_items, topic, n_candidates, chosen, sizes.astype(np.int64),
                         citations=citations, adversarial=preset.adversarial, fitness=fitness,
                         notes={"queries": preset.queries, "growth_per_query": preset.growth,
                                "citations": len(citations)})


def citation_graph(preset: LibraryPreset, item_topic: np.ndarray, fitness: np.ndarray) -> np.ndarray:
    """(citing, cited) pairs, sorted by the citing item's entry: each arriving item cites Poisson(
    ``citations_per_item``) distinct earlier items of its own topic, item j with probability
    proportional to exp(f_j), the users' own taste (good items are cited more, as in a real library, so
    HITS and PageRank have a graph that carries information). Drawn from a generator of its own, so the
    queries and choices are those of the stream without a graph."""
    rng = np.random.default_rng([preset.seed, 1])
    wanted = rng.poisson(preset.citations_per_item, len(item_topic))
    pairs = []
    for i in range(preset.initial_items, len(item_topic)):
        earlier = np.flatnonzero(item_topic[:i] == item_topic[i])
        k = min(int(wanted[i]), len(earlier))
        if k == 0:
            continue
        weight = np.exp(fitness[earlier] - fitness[earlier].max())
        cited = rng.choice(earlier, size=k, replace=False, p=weight / weight.sum())
        pairs.extend((i, int(c)) for c in np.sort(cited))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)
