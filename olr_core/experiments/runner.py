"""Run one spec, or a whole grid on local cores (joblib) or a Dask cluster, resuming from the store."""

from __future__ import annotations

import functools
import sys

import numpy as np

from ..data.registry import load_fold
from ..loop import RunTrace, run_online
from ..rankers import make_ranker
from ..users import make_user
from .spec import RunSpec
from .store import ResultStore


@functools.lru_cache(maxsize=16)
def _fingerprint(dataset: str, fold: int, data_dir: str | None) -> str:
    return load_fold(dataset, fold, data_dir).fingerprint()


@functools.lru_cache(maxsize=16)
def reference_weights(algorithm: str, dataset: str, fold: int, data_dir: str | None) -> np.ndarray:
    """Weights of an offline learner fitted on the fold's training labels (e.g. LambdaRank's w*)."""
    ranker = make_ranker(algorithm)
    ranker.start(load_fold(dataset, fold, data_dir).train, np.random.default_rng(0))
    return ranker.weights()


def execute(spec: RunSpec, data_dir: str | None = None, progress=None) -> RunTrace:
    """Run one spec from scratch and return its trace."""
    fold = load_fold(spec.dataset, spec.fold, data_dir)
    user = make_user(spec.click_model, fold.max_grade, spec.stop_rule, spec.cutoff)
    ranker = make_ranker(spec.algorithm, **spec.params)
    ref = reference_weights(spec.reference, spec.dataset, spec.fold, data_dir) if spec.reference else None
    return run_online(ranker, fold, user, int(spec.rounds), spec.seed, spec.eval_every, spec.cutoff, ref, progress,
                      spec.eval_split)


def spec_key(spec: RunSpec, data_dir: str | None = None) -> str:
    return spec.key(_fingerprint(spec.dataset, spec.fold, data_dir))


def _execute_keyed(spec: RunSpec, data_dir: str | None):
    return spec, execute(spec, data_dir), _fingerprint(spec.dataset, spec.fold, data_dir)


def _progress_bar(total: int, desc: str, enabled: bool | None):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=(not sys.stderr.isatty()) if enabled is None else not enabled)


def run_grid(specs: list[RunSpec], store: ResultStore | None = None, jobs: int = 1, dask: str | None = None,
             data_dir: str | None = None, progress: bool | None = None) -> list[str]:
    """Run every spec not yet in ``store``; each finished run is saved as soon as it ends.

    ``jobs``: local worker processes (-1 for all cores). ``dask``: address of a Dask
    scheduler, or ``"local"`` for a ``LocalCluster`` on this machine. Returns the keys of
    all specs, in order. Interrupting loses only the runs in flight.
    """
    store = store or ResultStore()
    keys = [spec_key(s, data_dir) for s in specs]
    todo = [s for s, k in zip(specs, keys) if not store.has(k)]
    todo = list({spec_key(s, data_dir): s for s in todo}.values())   # identical specs run once
    bar = _progress_bar(len(todo), "runs", progress)
    for spec, trace, fingerprint in _iterate(todo, jobs, dask, data_dir):
        store.save(spec.key(fingerprint), spec, trace, fingerprint)
        bar.update(1)
    bar.close()
    return keys


def _iterate(todo, jobs, dask, data_dir):
    if not todo:
        return
    if dask:
        yield from _iterate_dask(todo, dask, data_dir)
    elif jobs == 1:
        for spec in todo:
            yield _execute_keyed(spec, data_dir)
    else:
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=jobs, return_as="generator_unordered")
        yield from parallel(delayed(_execute_keyed)(s, data_dir) for s in todo)


def _iterate_dask(todo, address, data_dir):
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True) if address == "local" else None
    client = Client(cluster if cluster is not None else address)
    try:
        futures = client.map(_execute_keyed, todo, data_dir=data_dir, pure=False)
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
