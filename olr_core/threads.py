"""The book's thread policy: one BLAS thread per run, parallelism across runs.

An online learner makes many small BLAS calls (a few documents times a few dozen
features). A multi-threaded BLAS spins its threads up and down for each of them; when
another process holds a core (a second grid worker, the book build, a browser) those
threads fight for it and a run slows down ten-fold. So every run
(:func:`olr_core.loop.run_online`, hence ``olr run``, ``olr grid`` workers and the
notebooks) limits BLAS/OpenMP pools to ``OLR_BLAS_THREADS`` threads (default 1) with
threadpoolctl, and grids use their cores by running several runs at once (``--jobs``).
"""

from __future__ import annotations

import contextlib
import sys

from threadpoolctl import ThreadpoolController

from .settings import blas_thread_count

_found: dict = {}


def _load_every_blas() -> None:
    """Load scipy's own OpenBLAS now: threadpoolctl limits only the libraries already loaded, and one first
    loaded inside a run (scipy.linalg imported lazily) would keep one thread per core."""
    import scipy.linalg  # noqa: F401


def thread_pools() -> ThreadpoolController:
    """The process's BLAS/OpenMP pools, found once and again only after a new module was imported (a pool
    arrives with an extension module). Finding them walks every loaded shared library (~3 ms, with numba's
    and scipy's thousands of them), which every run paid before its first round."""
    _load_every_blas()
    if _found.get("modules") != len(sys.modules):
        _found["controller"] = ThreadpoolController()
        _found["modules"] = len(sys.modules)
    return _found["controller"]


@contextlib.contextmanager
def blas_threads(limit: int | None = None):
    """Within the block, BLAS and OpenMP pools use at most ``limit`` threads (default: the policy's)."""
    with thread_pools().limit(limits=limit or blas_thread_count()):
        yield


def limit_process_threads(limit: int | None = None) -> None:
    """Apply the policy to the whole process (grid workers call this once when they start)."""
    thread_pools().limit(limits=limit or blas_thread_count())
