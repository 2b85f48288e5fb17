"""The reference code's training loop, run under the reference's own Python by bench_reference.py.

    python reference_loop.py CHECKOUT DATA.npz MODULE CLASS PARAMS_JSON ROUNDS SEED

Needs only numpy and what the reference imports; prints the loop's seconds (imports excluded). The loop is
the reference's ``utils/singlesimulation.py`` without held-out evaluation: a uniformly drawn training query,
the ranker's top 10, the navigational cascade's clicks, the shown list's NDCG@10, the update.
"""

import importlib
import json
import sys
import time

import numpy as np

CUTOFF = 10
PCLICK, PSTOP = np.array([0.05, 0.5, 0.95]), np.array([0.2, 0.5, 0.9])


def restore_numpy_aliases() -> None:
    """The aliases numpy 1.24 removed (``np.complex`` and kin), which the reference still uses; numpy's
    deprecation note says the builtins behave the same."""
    for alias, builtin in (("complex", complex), ("float", float), ("int", int), ("bool", bool), ("object", object)):
        if alias not in np.__dict__:
            setattr(np, alias, builtin)


def main(root, data, module, name, params, rounds, seed) -> float:
    sys.path.insert(0, root)
    restore_numpy_aliases()
    cls = getattr(importlib.import_module(module), name)
    from utils.clicks import ClickModel
    from utils.evaluate import evaluate_ranking, get_idcg_list

    arrays = np.load(data)
    features, labels, offsets = arrays["features"], arrays["labels"].astype(np.int64), arrays["offsets"]
    offsets = offsets.astype(np.int64)
    n_queries = len(offsets) - 1
    np.random.seed(seed)
    started = time.perf_counter()
    ranker = cls(n_results=CUTOFF, n_features=features.shape[1], **params)
    ranker.setup(train_features=features, train_query_ranges=offsets, train_groups=None,
                 test_features=features, test_query_ranges=offsets, test_groups=None)
    users = ClickModel("navigational", "short", PCLICK, PSTOP)
    idcg = get_idcg_list(labels, offsets, CUTOFF)
    for _ in range(rounds):
        query = np.random.choice(n_queries)
        ranking = ranker.get_train_query_ranking(query)
        query_labels = labels[offsets[query]:offsets[query + 1]]
        clicks = users.generate_clicks(ranking, query_labels)
        evaluate_ranking(ranking, query_labels, idcg[query], CUTOFF)
        ranker.process_clicks(clicks)
    return time.perf_counter() - started


if __name__ == "__main__":
    root, data, module, name, params, rounds, seed = sys.argv[1:]
    print(main(root, data, module, name, json.loads(params), int(rounds), int(seed)))
