"""Run one spec, or a whole grid on local cores (joblib) or a Dask cluster, resuming from the store."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import time

import numpy as np

from ..data.registry import load_fold, load_library
from ..library_loop import run_library
from ..loop import NonFiniteModelError, RunTrace, run_online
from ..plugin_guard import GuardedRanker, GuardedUser
from ..plugins import PluginError
from ..rankers import make_ranker
from ..settings import DASK, dask_address, worker_count
from ..users import make_user
from .spec import RunSpec
from .store import ResultStore
from .task import LetorTask, LibraryTask, task_of


@functools.lru_cache(maxsize=16)
def data_fingerprint(dataset: str, fold: int, data_dir: str | None) -> str:
    return task_of(dataset).fingerprint(fold, data_dir)


@functools.lru_cache(maxsize=16)
def reference_weights(algorithm: str, dataset: str, fold: int, data_dir: str | None) -> np.ndarray:
    """Weights of an offline learner fitted on the fold's training labels (e.g. LambdaRank's w*)."""
    ranker = make_ranker(algorithm)
    ranker.start(load_fold(dataset, fold, data_dir).train, np.random.default_rng(0))
    return ranker.weights()


def execute(spec: RunSpec, data_dir: str | None = None, progress=None, click_log=None) -> RunTrace:
    """Run one spec from scratch and return its trace, in the loop of its task.

    ``click_log``: a path to write the run's click log to (the grades of the shown lists and the clicks,
    :class:`..click_fitting.ClickLog`); the run then plays round by round, with the same result."""
    return EXECUTORS[type(spec.task)](spec, data_dir, progress, click_log)


def _execute_library(spec: RunSpec, data_dir, progress, click_log):
    """A growing-library stream, played in its own loop (:mod:`olr_core.library_loop`)."""
    return run_library(make_ranker(spec.algorithm, **spec.params), load_library(spec.dataset, data_dir),
                       int(spec.rounds), spec.seed)


def _execute_letor(spec: RunSpec, data_dir, progress, click_log) -> RunTrace:
    """Query folds, played by :func:`olr_core.loop.run_online` against the spec's user."""
    fold = load_fold(spec.dataset, spec.fold, data_dir)
    user = make_user(spec.user, fold.max_grade, spec.stop_rule, spec.cutoff)
    if click_log is not None:
        user = RecordingUser(user, spec.cutoff)
    ranker = make_ranker(spec.algorithm, **spec.params)
    ref = reference_weights(spec.reference, spec.dataset, spec.fold, data_dir) if spec.reference else None
    try:
        trace = run_online(ranker, fold, user, int(spec.rounds), spec.seed, spec.eval_every, spec.cutoff, ref,
                           progress, spec.eval_split, audit=spec.audit)
        if isinstance(ranker, GuardedRanker) or isinstance(user, GuardedUser):
            _require_unchanged(fold, spec, data_dir)
        if click_log is not None:
            user.log().save(click_log)
        return trace
    except NonFiniteModelError as err:
        raise NonFiniteModelError(f"{spec.label()} on {spec.dataset} fold {spec.fold}, seed {spec.seed}: "
                                  f"{err.args[0].partition(': ')[2]}") from None


EXECUTORS = {LetorTask: _execute_letor, LibraryTask: _execute_library}


def _require_unchanged(fold, spec: RunSpec, data_dir) -> None:
    """After a plug-in's run: the data it was lent read-only are as they were (a plug-in could switch a view's
    ``writeable`` flag back on); else the process forgets its copy and the run is refused, naming the plug-in.
    The splits' cached query tables (:meth:`RankingData.padded`, not in the fingerprint) are dropped either way,
    to be built again from the checked data."""
    for split in (fold.train, fold.vali, fold.test):
        split._derived.clear()
    if fold.fingerprint() == data_fingerprint(spec.dataset, spec.fold, data_dir):
        return
    from ..data.registry import _cached_fold

    _cached_fold.cache_clear()
    data_fingerprint.cache_clear()
    raise PluginError(f"{spec.label()} with user {spec.click_model} changed the data of {spec.dataset} fold "
                      f"{spec.fold} it was lent read-only (it switched a view's writeable flag back on?); the run "
                      "is discarded and the data will be read again; copy an array before writing into it")


class RecordingUser:
    """A click user that keeps every session it answers: the grades of the shown list and the clicks."""

    def __init__(self, user, cutoff: int):
        if getattr(user, "feedback_kind", "clicks") != "clicks":
            raise ValueError(f"--click-log needs a click user; {getattr(user, 'name', user)!r} gives "
                             f"{user.feedback_kind}")
        self.user, self.cutoff, self.labels, self.clicks = user, cutoff, [], []

    def __getattr__(self, name):
        return getattr(self.user, name)

    def __call__(self, query, shown, rng):
        feedback = self.user(query, shown, rng)
        labels, clicks = np.full(self.cutoff, -1, dtype=np.int64), np.zeros(self.cutoff, dtype=bool)
        labels[: len(shown)], clicks[: len(shown)] = query.labels[shown], feedback.clicks
        self.labels.append(labels)
        self.clicks.append(clicks)
        return feedback

    def log(self):
        from ..click_fitting import ClickLog

        return ClickLog(np.array(self.labels).reshape(-1, self.cutoff), np.array(self.clicks).reshape(-1, self.cutoff))


def spec_key(spec: RunSpec, data_dir: str | None = None) -> str:
    return spec.key(data_fingerprint(spec.dataset, spec.fold, data_dir))


def _execute_keyed(spec: RunSpec, data_dir: str | None, cwd: str | None = None, path: tuple = ()):
    """(spec, its trace or the NonFiniteModelError it ended with, the data fingerprint, the CPU seconds the
    run took: unlike its wall time, the same whether or not other work shares the core). ``cwd`` and ``path``:
    the working directory and module path of the process that submitted the run; a worker takes them on
    (what exists on its machine), so that a ranker, user or data set named by a relative file path or a
    module reference is found as the submitter finds it, also by a worker started before."""
    if cwd and os.path.isdir(cwd) and os.getcwd() != cwd:
        os.chdir(cwd)
    sys.path.extend(p for p in path if p not in sys.path and os.path.isdir(p))
    started = time.process_time()
    try:
        trace = execute(spec, data_dir)
    except NonFiniteModelError as err:
        trace = err
    return spec, trace, data_fingerprint(spec.dataset, spec.fold, data_dir), time.process_time() - started


def _progress_bar(total: int, desc: str, enabled: bool | None):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, disable=(not sys.stderr.isatty()) if enabled is None else not enabled)


def run_grid(specs: list[RunSpec], store: ResultStore | None = None, jobs: int = 1, dask: str | None = None,
             data_dir: str | None = None, progress: bool | None = None, diverged: list | None = None) -> list[str]:
    """Run every spec not yet in ``store``; each finished run is saved as soon as it ends.

    ``jobs``: local worker processes (-1 for all cores). ``dask``: address of a Dask
    scheduler, or ``"local"`` for a ``LocalCluster`` on this machine (``jobs`` workers,
    every core by default). Returns the keys of all specs, in order. Interrupting loses
    only the runs in flight. A stored run that cannot be read is set aside and rerun.

    A run whose model becomes non-finite raises :class:`NonFiniteModelError` and stops the grid;
    with a ``diverged`` list (hyper-parameter searches, where a too-large step is an expected
    outcome) the grid goes on and ``(spec, message)`` of each such run is appended to it instead.
    Nothing is stored for a diverged run either way.
    """
    store = store or ResultStore()
    dask = dask or dask_address()                        # (olr book/claims --dask: every grid of every page)
    worker_count(jobs)                                   # a bad --jobs fails before anything runs
    keys = [spec_key(s, data_dir) for s in specs]
    todo = [s for s, k in zip(specs, keys) if not store.verified(k)]
    todo = list({spec_key(s, data_dir): s for s in todo}.values())   # identical specs run once
    if todo:
        store.require_writable(len(todo))
    bar = _progress_bar(len(todo), "runs", progress)
    for spec, trace, fingerprint, cpu_seconds in _iterate(todo, jobs, dask, data_dir):
        if isinstance(trace, NonFiniteModelError):
            if diverged is None:
                raise trace
            diverged.append((spec, str(trace)))
        else:
            store.save(spec.key(fingerprint), spec, trace, fingerprint, cpu_seconds)
        bar.update(1)
    bar.close()
    return keys


def probe_scheduler(address: str, seconds: float = 5.0) -> None:
    """Refuse (one line, :class:`ValueError`) an address that is not a Dask scheduler's, within ``seconds``: a
    scheduler's TCP comm sends its handshake as soon as a client connects; an HTTP server (the dashboard, port
    8787) or a closed port does not."""
    import socket

    if "://" in address and not address.startswith("tcp://"):
        return                                   # (tls://, inproc://...: left to Dask)
    host, _, port = address.removeprefix("tcp://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"option --dask={address!r} is invalid; give a scheduler's tcp://HOST:PORT (default port "
                         "8786) or 'local'")
    fix = "give the scheduler's tcp://HOST:8786 (8787 is its dashboard), or 'local'"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=seconds) as connection:
            connection.settimeout(seconds)
            first = connection.recv(8)
    except OSError as err:
        raise ValueError(f"--dask {address}: no Dask scheduler answers there ({err}); {fix}") from None
    if len(first) < 8 or first.startswith(b"HTTP"):
        raise ValueError(f"--dask {address}: the server there is not a Dask scheduler (no handshake within "
                         f"{seconds:g} s); {fix}")


@contextlib.contextmanager
def dask_scheduler(address: str | None, jobs: int = -1):
    """While open, every :func:`run_grid` of this process and of those it starts (the book's page processes
    and their kernels inherit ``$OLR_DASK``) sends its runs to the Dask scheduler at ``address``; results are
    stored by the process that asked for them, as without Dask. ``"local"`` starts one ``LocalCluster``
    (``jobs`` workers, every core by default) that all of them share, closed at the end. None: no change."""
    if not address:
        yield None
        return
    cluster = None
    if address == "local":
        cluster = _local_cluster(jobs)
        address = cluster.scheduler_address
    else:
        probe_scheduler(address)
    previous = dask_address()
    os.environ[DASK] = address
    try:
        yield address
    finally:
        if previous is None:
            os.environ.pop(DASK, None)
        else:
            os.environ[DASK] = previous
        if cluster is not None:
            cluster.close()


def _iterate(todo, jobs, dask, data_dir):
    if not todo:
        return
    if dask:
        yield from _iterate_dask(todo, dask, data_dir, jobs)
    elif worker_count(jobs, len(todo)) == 1:
        for spec in todo:
            yield _execute_keyed(spec, data_dir)
    else:
        yield from _iterate_processes(todo, worker_count(jobs, len(todo)), data_dir)


def _watch_parent(parent: int, interval: float = 1.0) -> None:
    """Exit this worker as soon as the process that started it is gone (e.g. killed with -9)."""
    while True:
        threading.Event().wait(interval)
        if os.getppid() != parent:
            os._exit(1)


def _start_worker(parent: int) -> None:
    """Initializer of grid workers: the thread policy for the whole process, and the parent watchdog."""
    from ..threads import limit_process_threads

    limit_process_threads()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _worker_pool(workers: int):
    """The process's pool of ``workers`` grid workers (loky's reusable executor: started once, kept between
    calls with the same size)."""
    from joblib.externals.loky import get_reusable_executor

    return get_reusable_executor(max_workers=workers, initializer=_start_worker, initargs=(os.getpid(),))


def _iterate_processes(todo, workers: int, data_dir):
    """Runs on ``workers`` local processes (loky, which needs no ``__main__`` guard in the caller's
    script), yielded as they finish; each worker exits as soon as its parent is gone."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pool = _worker_pool(workers)
    pending = {pool.submit(_execute_keyed, spec, data_dir, os.getcwd(), tuple(sys.path)) for spec in todo}
    try:
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    finally:
        for future in pending:
            future.cancel()


def map_on_workers(function, items: list, jobs: int = 1) -> list:
    """``[function(item) for item in items]``, in order, on ``jobs`` local worker processes: the pool
    :func:`run_grid` uses, so a page's grid and its other heavy work (e.g. regret comparators) share its
    workers. ``function`` must be importable by name (a module-level function)."""
    workers = worker_count(jobs, len(items))
    if workers == 1 or len(items) < 2:
        return [function(item) for item in items]
    return list(_worker_pool(workers).map(function, items))


def _local_cluster(jobs: int):
    """A Dask LocalCluster of one-thread worker processes: ``jobs`` of them (every core for the default 1)."""
    from dask.distributed import LocalCluster

    return LocalCluster(n_workers=worker_count(jobs if jobs != 1 else -1), threads_per_worker=1, processes=True)


def _iterate_dask(todo, address, data_dir, jobs: int = -1, timeout: float = 10.0):
    from dask.distributed import Client, as_completed

    cluster = None
    if address == "local":
        cluster = _local_cluster(jobs)
    try:
        client = Client(cluster if cluster is not None else address, timeout=timeout)
    except (OSError, TimeoutError) as err:
        if cluster is not None:
            cluster.close()
        raise ConnectionError(f"cannot reach the Dask scheduler at {address} within {timeout:.0f} s ({err}); "
                              "start one with 'dask scheduler', or use --dask local or --jobs N") from None
    try:
        futures = client.map(_execute_keyed, todo, data_dir=data_dir, cwd=os.getcwd(), path=tuple(sys.path),
                             pure=False)
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
