"""olr_core.threads: every run limits BLAS to one thread."""

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
