"""olr_core.threads: every run limits BLAS to one thread."""

import json
import subprocess
import sys

import numpy as np

from olr_core.data import load_fold
from olr_core.loop import run_online
from olr_core.users import make_user


def test_runs_use_one_blas_thread():
    from threadpoolctl import threadpool_info

    seen = []

    class Probe:
        feedback_kind = "clicks"

        def start(self, train, rng):
            seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

        def rank(self, query):
            from olr_core.rankers import Display
            return Display(np.arange(query.n_docs))

        def learn(self, query, display, feedback):
            return None

        def score(self, docs):
            return np.zeros(len(docs.features))

        def weights(self):
            return None

    fold = load_fold("synth-mq")
    run_online(Probe(), fold, make_user("perfect", fold.max_grade), 5, 0)
    assert seen and set(seen) == {1}


def _blas_thread_counts():
    from threadpoolctl import threadpool_info

    return {p["filepath"]: p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def test_the_block_limits_blas_to_the_policy_and_restores_it_after(monkeypatch):
    import scipy.linalg  # noqa: F401  (every BLAS the runs use, loaded before counting)

    from olr_core.threads import blas_threads

    monkeypatch.setenv("OLR_BLAS_THREADS", "1")
    before = _blas_thread_counts()
    with blas_threads():
        assert set(_blas_thread_counts().values()) == {1}
    assert _blas_thread_counts() == before


def test_a_blas_first_loaded_inside_a_run_is_limited_too():
    """threadpoolctl limits only the libraries already loaded: scipy's own OpenBLAS, first imported inside a run,
    kept its default threads (one per core) until blas_threads loaded it first. Checked in a fresh process;
    on a one-core machine the default is already 1 and this cannot fail."""
    code = ("import numpy, json\nfrom threadpoolctl import threadpool_info\nfrom olr_core.threads import blas_threads\n"
            "with blas_threads(1):\n    import scipy.linalg\n"
            "    print(json.dumps([p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas']))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    counts = json.loads(out)
    assert len(counts) >= 2 and set(counts) == {1}, counts


def test_the_pools_are_found_once_and_again_after_a_new_import(monkeypatch):
    """A run reuses the process's pool listing (walking every loaded library cost each run ~3 ms) unless a
    module was imported since, which may have brought a new BLAS."""
    import types

    from olr_core import threads

    first = threads.thread_pools()
    assert threads.thread_pools() is first
    monkeypatch.setitem(sys.modules, "olr_test_new_module", types.ModuleType("olr_test_new_module"))
    assert threads.thread_pools() is not first
