"""Run the DSP paper's experiment with the authors' own code, and store each run's numbers with provenance.

    python benchmarks/authors_code.py --checkout /path/to/OnlineLearningToRank --python ref/bin/python \\
        --commit FULL_SHA [--algorithms dbgd dbgd_dsp] [--click-models navigational] [--folds 1 2 3 4 5] \\
        [--seeds 3] [--impressions 10000] [--out olr_core/reproductions/dsp/authors_code.json]

(or ``OLR_AUTHORS_CHECKOUT`` and ``OLR_REFERENCE_PYTHON``). The checkout is never copied here and none of
its files is edited: each run is one process of ``authors_run.py`` under the given Python (numpy 1.x, scipy,
sympy), which applies the run-time shims it lists. The protocol is the paper's as the authors' run script
sets it (``scripts/SIGIR2019.py``, ``scripts/slurm/SIGIR2019/0708.slurm``): MQ2008's five LETOR folds built
from the subsets in ``$OLR_DATA_DIR/mq2008`` (written to a temporary folder, train/vali/test), the
3-grade perfect, navigational and informational cascade users of ``utils/clicks.py``, 10,000 impressions,
display NDCG@10 every round and held-out NDCG@10 every 10, the script's ranker parameters. Seeds are ours:
run ``s`` of fold ``f`` is seeded with ``s``. Runs already in the output file are kept and not rerun; the
file is rewritten after every run, so an interrupted session keeps what it finished.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from authors_run import SHIMS
from common import data_dir

from olr_core.data.synthetic import SUBSET_FOLDS
from olr_core.reproductions.authors_code import run_key, validate

REPOSITORY = "HCDM/OnlineLearningToRank"
_DECAY = {"learning_rate_decay": 0.9999977}
_DSP = {"k_initial": 3, "k_increase": False, "prev_qeury_len": 10}
_NSGD = {"GRAD_SIZE": 60, "EXP_SIZE": 25, "TB_QUEUE_SIZE": 10, "TB_WINDOW_SIZE": 50}
# our algorithm -> (their module, class, the parameters scripts/SIGIR2019.py passes it)
RANKERS = {
    "dbgd": ("algorithms.DBGD.pdbgd", "P_DBGD", _DECAY),
    "dbgd_dsp": ("algorithms.DBGD.pdbgd_dsp", "P_DBGD_DSP", {**_DECAY, **_DSP}),
    "mgd": ("algorithms.DBGD.pmgd", "P_MGD", _DECAY),
    "mgd_dsp": ("algorithms.DBGD.pmgd_dsp", "P_MGD_DSP", {**_DECAY, **_DSP}),
    "nsgd": ("algorithms.DBGD.tdNSGD", "TD_NSGD", {**_DECAY, **_NSGD}),
    "nsgd_dsp": ("algorithms.DBGD.tdNSGD_dsp", "TD_NSGD_DSP", {**_DECAY, **_DSP, **_NSGD}),
}
CLICK_MODELS = ["perfect", "navigational", "informational"]


def checkout_dir(given: str | None) -> Path:
    """The checkout named by ``--checkout`` or ``$OLR_AUTHORS_CHECKOUT``, checked to be HCDM's framework."""
    path = given or os.environ.get("OLR_AUTHORS_CHECKOUT")
    if not path:
        raise SystemExit("name a checkout of HCDM/OnlineLearningToRank: --checkout DIR or OLR_AUTHORS_CHECKOUT")
    root = Path(path).expanduser().resolve()
    if not (root / "scripts" / "SIGIR2019.py").is_file():
        raise SystemExit(f"{root}: not a checkout of {REPOSITORY} (no scripts/SIGIR2019.py)")
    return root


def checkout_commit(root: Path, given: str | None) -> str:
    """The checkout's commit: ``--commit`` if given, else ``git rev-parse HEAD`` in it."""
    if given:
        return given
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{root} is not a git work tree: pass --commit")
    return done.stdout.strip()


def write_fold(subsets: Path, fold: int, into: Path) -> Path:
    """LETOR 4.0 fold ``fold`` as train.txt, vali.txt and test.txt (from S1..S5, gzipped or not) in ``into``."""
    train, vali, test = SUBSET_FOLDS[fold]
    folder = into / f"Fold{fold}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, parts in (("train", train), ("vali", (vali,)), ("test", (test,))):
        with open(folder / f"{name}.txt", "wb") as out:
            for part in parts:
                plain = subsets / f"S{part}.txt"
                out.write(plain.read_bytes() if plain.exists() else gzip.open(f"{plain}.gz").read())
    return folder


def one_run(python: str, root: Path, folder: Path, algorithm: str, click_model: str, impressions: int,
            seed: int) -> dict:
    """One run in its own process; its JSON line, or RuntimeError with the child's last line."""
    module, name, params = RANKERS[algorithm]
    command = ["nice", "-n", "10", python, str(Path(__file__).with_name("authors_run.py")), str(root), str(folder),
               "MQ2008", module, name, json.dumps(params), click_model, str(impressions), str(seed)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["no output"])[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def provenance(root: Path, commit: str, python: str, impressions: int) -> dict:
    """Where the numbers come from: repository, commit, command, shims, date, machine."""
    version = subprocess.run([python, "-c", "import numpy, sympy, sys; print(sys.version.split()[0], "
                              "numpy.__version__, sympy.__version__)"], capture_output=True, text=True).stdout.split()
    return {"repository": REPOSITORY, "commit": commit, "command": shlex.join(["python", *sys.argv]),
            "protocol": f"MQ2008 LETOR folds, 3-grade cascade users of utils/clicks.py, {impressions} impressions, "
                        "scripts/SIGIR2019.py's ranker parameters, utils/singlesimulation.py's loop "
                        "(display NDCG@10 every round, held-out every 10)",
            "shims": SHIMS, "date": datetime.date.today().isoformat(),
            "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} cores, Python "
                       f"{' / numpy '.join(version[:2])} / sympy {version[2] if len(version) > 2 else '?'}",
            "runs": []}


def run(args) -> dict:
    root = checkout_dir(args.checkout)
    python = args.python or os.environ.get("OLR_REFERENCE_PYTHON") or sys.executable
    out = Path(args.out)
    record = validate(json.loads(out.read_text())) if out.exists() else provenance(
        root, checkout_commit(root, args.commit), python, args.impressions)
    record["note"] = args.note or record.get("note", "")
    done = {run_key(r) for r in record["runs"]}
    with tempfile.TemporaryDirectory() as tmp:
        folders = {f: write_fold(Path(data_dir()) / "mq2008", f, Path(tmp)) for f in args.folds}
        for seed in range(args.seeds):
            for fold in args.folds:
                for click_model in args.click_models:
                    for algorithm in args.algorithms:
                        row = {"algorithm": algorithm, "click_model": click_model, "fold": fold, "seed": seed}
                        if run_key(row) in done:
                            continue
                        result = one_run(python, root, folders[fold], algorithm, click_model, args.impressions, seed)
                        record["runs"].append({**row, "impressions": args.impressions, **result})
                        out.write_text(json.dumps(validate(record), indent=1) + "\n")
                        print(json.dumps(record["runs"][-1]), flush=True)
    return record


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", help=f"a checkout of {REPOSITORY} (or OLR_AUTHORS_CHECKOUT)")
    parser.add_argument("--python", help="a Python that runs it: numpy<2, scipy, sympy (or OLR_REFERENCE_PYTHON)")
    parser.add_argument("--commit", help="the checkout's commit, when it is not a git work tree")
    parser.add_argument("--algorithms", nargs="+", default=list(RANKERS), choices=list(RANKERS))
    parser.add_argument("--click-models", nargs="+", default=CLICK_MODELS, choices=CLICK_MODELS)
    parser.add_argument("--folds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    parser.add_argument("--seeds", type=int, default=3, help="runs per fold (seeds 0 .. N-1)")
    parser.add_argument("--impressions", type=int, default=10_000)
    parser.add_argument("--note", help="what was run and why (kept in the file, shown on the pages)")
    parser.add_argument("--out", default="olr_core/reproductions/dsp/authors_code.json")
    run(parser.parse_args())
