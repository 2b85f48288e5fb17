"""The package's settings, read from the environment here and nowhere else.

Each function reads its variable when called (the book's driver, a grid's workers and the tests set them
while a process runs), and a bad value fails in one line naming the variable and the fix.

=====================  ===========================================  ==========================
variable               what                                         default
=====================  ===========================================  ==========================
``OLR_DATA_DIR``       the folder of the real data sets             none (``--data-dir``)
``OLR_RESULTS_DIR``    the store of finished runs                   ``./results``
``OLR_CACHE_DIR``      parsed and generated arrays                  ``~/.cache/olr_core``
``OLR_BLAS_THREADS``   BLAS/OpenMP threads a run may use            1
``OLR_RUN_LOG``        a file the book's driver counts runs in      none
``OLR_DASK``           the Dask scheduler every grid sends runs to  none (local processes)
``OLR_LEDGER_DIR``     the paper-scale ledgers                      the repository's ``ledger/``
``OLR_GRADE_LIMITS``   a graded notebook's limits (JSON; set by     ``{}``
                       the grader for its jail, not by a user)
=====================  ===========================================  ==========================
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR, RESULTS_DIR, CACHE_DIR = "OLR_DATA_DIR", "OLR_RESULTS_DIR", "OLR_CACHE_DIR"
BLAS_THREADS, RUN_LOG, DASK = "OLR_BLAS_THREADS", "OLR_RUN_LOG", "OLR_DASK"
LEDGER_DIR, GRADE_LIMITS = "OLR_LEDGER_DIR", "OLR_GRADE_LIMITS"


def data_dir() -> str | None:
    """``$OLR_DATA_DIR``, or None when it is unset or empty."""
    return os.environ.get(DATA_DIR) or None


def results_dir(default: Path | str = "results") -> Path:
    """``$OLR_RESULTS_DIR``, or ``default`` (``./results``) when it is unset or empty."""
    return Path(os.environ.get(RESULTS_DIR) or default)


def cache_dir() -> Path:
    """``$OLR_CACHE_DIR`` or ``~/.cache/olr_core``."""
    return Path(os.environ.get(CACHE_DIR) or Path.home() / ".cache" / "olr_core")


def blas_thread_count() -> int:
    """``$OLR_BLAS_THREADS`` (a positive integer) or 1."""
    value = os.environ.get(BLAS_THREADS, "1")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{BLAS_THREADS}={value!r} is invalid; set it to a positive integer (default 1)")
    return int(value)


def run_log() -> str | None:
    """``$OLR_RUN_LOG``, or None when it is unset or empty."""
    return os.environ.get(RUN_LOG) or None


def dask_address() -> str | None:
    """``$OLR_DASK``, or None when it is unset or empty."""
    return os.environ.get(DASK) or None


def ledger_dir() -> str | None:
    """``$OLR_LEDGER_DIR``, or None when it is unset or empty (the repository's ``ledger/``)."""
    return os.environ.get(LEDGER_DIR) or None


def grade_limits() -> str:
    """``$OLR_GRADE_LIMITS``: the JSON text of a graded notebook's limits, which the grader sets for its jail."""
    return os.environ.get(GRADE_LIMITS) or "{}"


def worker_count(jobs: int, tasks: int | None = None) -> int:
    """``jobs`` as a number of processes: -1 means every core, -2 all but one, and so on; never more than the
    machine's cores (more would only share them, each process holding its own interpreter and data) nor than
    ``tasks``, the runs there are to do (a worker without one would be started for nothing)."""
    if not isinstance(jobs, int) or jobs == 0 or isinstance(jobs, bool):
        raise ValueError(f"option --jobs={jobs!r} is invalid; use a positive count or -1 for every core")
    cores = os.cpu_count() or 1
    wanted = min(jobs, cores) if jobs > 0 else max(1, cores + 1 + jobs)
    return max(1, min(wanted, tasks)) if tasks is not None else wanted
