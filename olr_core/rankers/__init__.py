"""Rankers: one module per family, all following :class:`olr_core.rankers.base.Ranker`.

``ALGORITHMS`` maps the short command-line names to classes; :func:`make_ranker` builds
one from a name and keyword parameters, with errors that list what is valid.
"""

from __future__ import annotations

import functools
import inspect

from ..params import Param, check_all
from .base import BaseRanker, Display, LinearRanker, Ranker
from .baselines import OracleRanker, RandomRanker
from .dueling import DBGD, MGD, NSGD
from .library import HITS, CategoryRanking, KLRank, McRank, OnlineRankNet, PageRank
from .neural import NeuralLambdaRankGT, NeuralPairRank
from .offline import OfflineLambdaRank, OfflineRankNet
from .pairwise import EpsilonGreedyRankNet, PairRank, SGDRankNet
from .pdgd import PDGD
from .topk import ListNetFull, RTopKF

ALGORITHMS: dict[str, type] = {
    "random": RandomRanker,
    "oracle": OracleRanker,
    "offline_ranknet": OfflineRankNet,
    "offline_lambdarank": OfflineLambdaRank,
    "dbgd": DBGD,
    "mgd": MGD,
    "nsgd": NSGD,
    "dbgd_dsp": functools.partial(DBGD, dsp=True),
    "mgd_dsp": functools.partial(MGD, dsp=True),
    "nsgd_dsp": functools.partial(NSGD, dsp=True),
    "pdgd": PDGD,
    "pairrank_r": functools.partial(PairRank, variant="R"),
    "pairrank_c": functools.partial(PairRank, variant="C"),
    "epsilon_greedy": EpsilonGreedyRankNet,
    "sgd_ranknet": SGDRankNet,
    "topk_squared": functools.partial(RTopKF, surrogate="squared"),
    "topk_kl": functools.partial(RTopKF, surrogate="kl"),
    "topk_ranksvm": functools.partial(RTopKF, surrogate="ranksvm"),
    "topk_smoothdcg": functools.partial(RTopKF, surrogate="smoothdcg"),
    "listnet_full": ListNetFull,
    "olranknet": NeuralPairRank,
    "ollambdarank": functools.partial(NeuralPairRank, weighting="lambda"),
    "ollambdarank_gt": NeuralLambdaRankGT,
    "neural_dbgd": functools.partial(DBGD, scorer="relu", hidden=100),
    "neural_pdgd": functools.partial(PDGD, scorer="relu", hidden=100, learning_rate=0.01),
    "klrank_gper": functools.partial(KLRank, policy="random"),
    "klrank_greedy": functools.partial(KLRank, policy="greedy"),
    "online_ranknet_gper": OnlineRankNet,
    "category_ranking": CategoryRanking,
    "mcrank": McRank,
    "hits": HITS,
    "pagerank": PageRank,
}
# Rankers for growing-library streams (one parameter per item, choice feedback).
LIBRARY_ALGORITHMS = ("klrank_gper", "klrank_greedy", "online_ranknet_gper", "category_ranking", "hits", "pagerank",
                      "mcrank", "random")

# Offline learners whose fitted weights can be a run's reference for the cosine similarity (--reference).
REFERENCE_ALGORITHMS = ("offline_ranknet", "offline_lambdarank")


def algorithm_parameters(name: str) -> dict:
    """The tunable parameters of an algorithm and their defaults."""
    factory = get_algorithm(name)
    params = {}
    for cls in reversed(getattr(factory, "func", factory).__mro__):     # base-class keywords first
        if "__init__" in vars(cls) and cls is not object:
            for key, p in inspect.signature(cls.__init__).parameters.items():
                if key != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
                    params[key] = p.default
    params.update(getattr(factory, "keywords", {}))
    return params


def declared_parameters(name: str) -> dict[str, Param]:
    """Each parameter's declared type and range (class attributes ``PARAMS``, subclasses override)."""
    factory = get_algorithm(name)
    declared: dict[str, Param] = {}
    for cls in reversed(getattr(factory, "func", factory).__mro__):
        declared.update(vars(cls).get("PARAMS", {}))
    return {k: declared[k] for k in algorithm_parameters(name) if k in declared}


def check_parameters(name: str, params: dict) -> dict:
    """``params`` checked against the declarations of algorithm ``name`` (one-line errors naming the option)."""
    return check_all(declared_parameters(name), dict(params), name)


def get_algorithm(name: str) -> type:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise KeyError(f"unknown algorithm {name!r}; valid: {', '.join(sorted(ALGORITHMS))}") from None


def make_ranker(name: str, **params) -> Ranker:
    """Instantiate algorithm ``name``; unknown or out-of-range parameters raise a ``ParameterError``."""
    return get_algorithm(name)(**check_parameters(name, params))


__all__ = ["ALGORITHMS", "LIBRARY_ALGORITHMS", "REFERENCE_ALGORITHMS", "BaseRanker", "Display", "LinearRanker",
           "OfflineLambdaRank", "OfflineRankNet", "OracleRanker", "RandomRanker", "Ranker", "algorithm_parameters",
           "check_parameters", "declared_parameters", "get_algorithm", "make_ranker"]
