"""Rankers: one module per family, all following :class:`olr_core.rankers.base.Ranker`.

``ALGORITHMS`` maps the short command-line names to classes; :func:`make_ranker` builds
one from a name and keyword parameters, with errors that list what is valid.
"""

from __future__ import annotations

import functools
import inspect

from .base import BaseRanker, Display, LinearRanker, Ranker
from .baselines import OracleRanker, RandomRanker
from .dueling import DBGD, MGD, NSGD
from .offline import OfflineLambdaRank, OfflineRankNet
from .pairwise import EpsilonGreedyRankNet, PairRank, SGDRankNet
from .pdgd import PDGD

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
}


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


def get_algorithm(name: str) -> type:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise KeyError(f"unknown algorithm {name!r}; valid: {', '.join(sorted(ALGORITHMS))}") from None


def make_ranker(name: str, **params) -> Ranker:
    """Instantiate algorithm ``name``; unknown parameters raise an error naming the valid ones."""
    valid = algorithm_parameters(name)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        listed = ", ".join(f"{k}={v!r}" for k, v in valid.items()) or "none"
        raise TypeError(f"{name} has no parameter {', '.join(unknown)}; its parameters: {listed}")
    return get_algorithm(name)(**params)


__all__ = ["ALGORITHMS", "BaseRanker", "Display", "LinearRanker", "OfflineLambdaRank", "OfflineRankNet",
           "OracleRanker", "RandomRanker", "Ranker", "algorithm_parameters", "get_algorithm", "make_ranker"]
