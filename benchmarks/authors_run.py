"""One run of the authors' own code (HCDM/OnlineLearningToRank, or yilingjia/PairRank, a copy of the same
framework), under its own Python, for authors_code.py.

    python authors_run.py CHECKOUT FOLD_DIR DATASET MODULE CLASS PARAMS_JSON CLICK_MODEL IMPRESSIONS SEED

Runs the checkout's own pieces end to end: its argument parser (the run script's defaults), its
data set entry and LETOR reader (``utils/datasetcollections.py``, ``utils/dataset.py``), its click model
(``utils/clicks.py``, the 3-grade ``short`` table), the ranker class and its simulation loop
(``utils/singlesimulation.py``: display NDCG@10 every round, held-out NDCG@10 every ``print_freq`` rounds).
Prints one JSON line: the final cumulative display NDCG (discount 0.9995), the final held-out NDCG, the loop's
wall-clock and CPU seconds.

Run-time shims (no file of the checkout is edited), each with its reason:

- ``numpy_aliases``: ``np.float`` and kin, removed in numpy 1.24 and still used by the checkout, are set to
  the builtins numpy's deprecation note names as equivalent.
- ``maxint``: the NSGD classes import ``sys.maxint`` (Python 2) as the start of a running maximum;
  ``sys.maxint`` is set to ``sys.maxsize``, which plays the same role.
- ``nullspace_rows``: ``models/linearmodel.py`` turns sympy's null-space vectors into an array with
  ``np.array(Matrix(grads).nullspace())`` and needs it (k, n); today's sympy gives (k, n, 1) column
  matrices, which stops NSGD at its first sort. The module's ``Matrix`` is wrapped so that ``nullspace``
  returns each vector as a flat row; the vectors are the same. (Only where the module uses sympy: PairRank's
  copy of the framework does not.)
- ``sharedmem``: the reader copies arrays into shared memory for its multi-process launcher
  (``utils/dataset.py:_make_shared``); the package is unmaintained and not installed, and one run is one
  process here, so ``sharedmem.empty`` is ``numpy.empty``.
- ``seed``: ``DataSimulation.start_run`` seeds ``random`` and ``numpy.random`` from the clock; we seed both
  with the run's seed instead and call the loop ourselves (``SingleSimulation.run``), as start_run does.
- ``data_path``: the collection's MQ2008 entry points at the authors' cluster; its ``data_paths`` is replaced
  by FOLD_DIR (train.txt, vali.txt, test.txt of one LETOR fold), every other argument kept.
- ``no_cache``: ``--skip_read_bin_data --skip_store_bin_data``, so nothing is written beside the data.
"""

import importlib
import json
import random
import sys
import time
import types

import numpy as np

SHIMS = {
    "numpy_aliases": "np.float, np.int, np.complex, np.bool, np.object restored as the builtins (removed in numpy "
                     "1.24, used by the checkout)",
    "maxint": "sys.maxint = sys.maxsize (Python 2 name imported by tdNSGD.py and tdNSGD_dsp.py)",
    "nullspace_rows": "models.linearmodel.Matrix wrapped so nullspace() returns flat rows (np.array of "
                      "today's sympy column vectors is (k, n, 1), which linearmodel.py's sort cannot use)",
    "sharedmem": "sharedmem.empty = numpy.empty (one run per process; the package is not installed)",
    "seed": "random and numpy.random seeded with our seed instead of DataSimulation.start_run's time-based seed",
    "data_path": "the MQ2008 collection entry's data_paths replaced by a local fold folder; its other arguments "
                 "(3-grade 'short' click models, 40 features after dropping constant ones) kept",
    "no_cache": "--skip_read_bin_data --skip_store_bin_data: no binarised cache written beside the data",
}


def install_shims() -> None:
    """The shims of the module docstring that act on imports (numpy aliases, sharedmem)."""
    for alias, builtin in (("complex", complex), ("float", float), ("int", int), ("bool", bool), ("object", object)):
        if alias not in np.__dict__:
            setattr(np, alias, builtin)
    sys.maxint = getattr(sys, "maxint", sys.maxsize)
    sys.modules.setdefault("sharedmem", types.SimpleNamespace(empty=np.empty))


def flatten_nullspace() -> None:
    """The ``nullspace_rows`` shim: null-space vectors as flat rows in ``models.linearmodel``."""
    linearmodel = importlib.import_module("models.linearmodel")
    matrix = getattr(linearmodel, "Matrix", None)
    if matrix is None:                                      # no sympy null space in this copy of the framework
        return

    class RowNullspaceMatrix(matrix):
        def nullspace(self, *args, **kwargs):
            return [list(vector) for vector in matrix.nullspace(self, *args, **kwargs)]

    linearmodel.Matrix = RowNullspaceMatrix


def their_fold(dataset: str, fold_dir: str, sim_args):
    """The collection's entry for ``dataset`` with its data path moved to ``fold_dir``, read by their reader."""
    from utils.datasetcollections import DATASET_COLLECTION

    entry = DATASET_COLLECTION[dataset]
    entry.data_paths = [fold_dir.rstrip("/") + "/"]
    fold = next(entry.get_data_folds(sim_args))
    fold.read_data()
    return entry, fold


def main(root, fold_dir, dataset, module, name, params, click_model, impressions, seed) -> dict:
    sys.path.insert(0, root)
    install_shims()
    flatten_nullspace()
    from utils.argparsers.simulationargparser import SimulationArgumentParser
    from utils.clicks import get_click_models
    from utils.singlesimulation import SingleSimulation

    sys.argv = ["authors_run.py", "--data_sets", dataset, "--click_models", click_model, "--n_impr", str(impressions),
                "--skip_read_bin_data", "--skip_store_bin_data"]
    sim_args, ranker_args = SimulationArgumentParser(description="").parse_all_args(params)
    entry, fold = their_fold(dataset, fold_dir, sim_args)
    users = get_click_models([entry.click_model_type, click_model])[0]
    ranker_class = getattr(importlib.import_module(module), name)
    ranker_args = {**ranker_class.default_parameters(), **ranker_args,        # as DataSimulation builds them
                   "n_results": sim_args.n_results, "n_features": fold.num_features}
    random.seed(seed)
    np.random.seed(seed)
    outputs = []
    queue = types.SimpleNamespace(put=outputs.append)
    started, cpu_started = time.perf_counter(), time.process_time()
    SingleSimulation(sim_args, queue, users, fold).run(ranker_class(**ranker_args), output_key=name)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    results = outputs[0][1]["run_results"]
    final = results[-1]
    return {"online": float(final["cumulative-display"]), "offline": float(final["heldout"]),
            "iteration": int(final["iteration"]), "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu_seconds, 2), "user": users.get_name()}


if __name__ == "__main__":
    root, fold_dir, dataset, module, name, params, click_model, impressions, seed = sys.argv[1:]
    print(json.dumps(main(root, fold_dir, dataset, module, name, json.loads(params), click_model, int(impressions),
                          int(seed))))
