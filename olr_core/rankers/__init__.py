"""Rankers: one module per family, all following :class:`olr_core.rankers.base.Ranker`.

``ALGORITHMS`` maps the short command-line names to classes; :func:`make_ranker` builds
one from a name and keyword parameters, with errors that list what is valid.
"""

from __future__ import annotations

import functools
import inspect

from ..params import Param, check_all
from ..plugins import (
    RANKER_GROUP,
    PluginError,
    check_ranker_class,
    is_reference,
    load_reference,
    registered,
    resolve,
    source_hash,
)
from .base import BaseRanker, Display, LinearRanker, Ranker, declared_options
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
    """The tunable parameters of an algorithm and their defaults: those its ``__init__`` takes, and a base
    class's too where it passes ``**kwargs`` on (base-class keywords first)."""
    factory = get_algorithm(name)
    params, accepted = {}, set()
    for cls in reversed(getattr(factory, "func", factory).__mro__):     # base-class keywords first
        if "__init__" in vars(cls) and cls is not object:
            own = inspect.signature(cls.__init__).parameters.values()
            taken = {p.name: p.default for p in own if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
            params.update(taken)
            forwards = any(p.kind is p.VAR_KEYWORD for p in own)
            accepted = (accepted if forwards else set()) | set(taken) - {"self"}
    params = {k: v for k, v in params.items() if k in accepted}
    params.update(getattr(factory, "keywords", {}))
    return params


def declared_parameters(name: str) -> dict[str, Param]:
    """Each parameter's declared type and range (class attributes ``PARAMS``, subclasses override)."""
    factory = get_algorithm(name)
    declared = declared_options(getattr(factory, "func", factory))
    return {k: declared[k] for k in algorithm_parameters(name) if k in declared}


def check_parameters(name: str, params: dict) -> dict:
    """``params`` checked against the declarations of algorithm ``name`` (one-line errors naming the option)."""
    return check_all(declared_parameters(name), dict(params), name)


# Rankers registered at run time from Python (e.g. a class defined in a notebook cell): name -> class.
REGISTERED: dict[str, type] = {}


def register(name: str, cls: type) -> str:
    """Make ``cls`` runnable as algorithm ``name`` in this process (``olr_core.experiments``, grids with
    ``jobs=1``); a class in a file or module runs everywhere, in worker processes too, by its reference."""
    if name in ALGORITHMS or is_reference(name):
        raise PluginError(f"cannot register {name!r}: it is a built-in algorithm or an import reference")
    check_ranker_class(cls, name)
    REGISTERED[name] = cls
    return name


def get_algorithm(name: str) -> type:
    """A built-in algorithm, a registered one, an import reference (``module:Class``, ``file.py:Class``) or a
    name an installed package registers in the ``olr_core.rankers`` entry point group."""
    if name in ALGORITHMS:
        return ALGORITHMS[name]
    if name in REGISTERED:
        return REGISTERED[name]
    reference = resolve(name, RANKER_GROUP)
    if reference is None:
        plugins = sorted(registered(RANKER_GROUP))
        raise KeyError(f"unknown algorithm {name!r}; valid: {', '.join(sorted(ALGORITHMS))}"
                       + (f"; installed plug-ins: {', '.join(plugins)}" if plugins else "")
                       + "; or your own class as package.module:Class or path/to/file.py:Class") from None
    cls = load_reference(reference, "ranker")
    check_ranker_class(cls, name)
    return cls


def is_external(name: str) -> bool:
    return name not in ALGORITHMS


def external_source(name: str) -> str:
    """For a ranker that is not built in: its reference (or registered name) and its source hash."""
    cls = get_algorithm(name)
    return f"{resolve(name, RANKER_GROUP) or name}@{source_hash(cls)}"


def make_ranker(name: str, **params) -> Ranker:
    """Instantiate algorithm ``name``; unknown or out-of-range parameters raise a ``ParameterError``. A plug-in
    (not built in) comes behind :class:`olr_core.plugin_guard.GuardedRanker`: read-only data, checked results."""
    from ..plugin_guard import build_plugin, guard_ranker

    factory, checked = get_algorithm(name), check_parameters(name, params)
    if not is_external(name):
        return factory(**checked)
    return guard_ranker(build_plugin(factory, name, "ranker", **checked), name)


__all__ = ["ALGORITHMS", "LIBRARY_ALGORITHMS", "REFERENCE_ALGORITHMS", "BaseRanker", "Display", "LinearRanker",
           "OfflineLambdaRank", "OfflineRankNet", "OracleRanker", "RandomRanker", "Ranker", "algorithm_parameters",
           "check_parameters", "declared_parameters", "external_source", "get_algorithm", "is_external", "make_ranker",
           "register"]
