"""Run a paper's experiment with the authors' own code, and store each run's numbers with provenance.

    python benchmarks/authors_code.py [--paper dsp] --checkout /path/to/OnlineLearningToRank --python ref/bin/python \\
        --commit FULL_SHA [--algorithms dbgd dbgd_dsp] [--click-models navigational] [--folds 1 2 3 4 5] \\
        [--seeds 3] [--impressions 10000] [--out olr_core/reproductions/dsp/authors_code.json]
    python benchmarks/authors_code.py --paper pairrank --checkout /path/to/PairRank --python ref/bin/python \\
        [--algorithms pairrank_c] [--seeds 20]

(or ``OLR_AUTHORS_CHECKOUT`` and ``OLR_REFERENCE_PYTHON``). The checkout is never copied here and none of
its files is edited: each run is one process of ``authors_run.py`` under the given Python (numpy 1.x, scipy,
sympy for DSP's NSGD, networkx for PairRank), which applies the run-time shims it lists. Seeds are ours: run
``s`` of fold ``f`` is seeded with ``s``. Runs already in the output file are kept and not rerun; the file is
rewritten after every run, so an interrupted session keeps what it finished. Each paper's protocol
(:data:`EXPERIMENTS`):

- ``dsp``: as the authors' run script sets it (``scripts/SIGIR2019.py``, ``scripts/slurm/SIGIR2019/0708.slurm``
  of HCDM/OnlineLearningToRank): MQ2008's five LETOR folds built from the subsets in ``$OLR_DATA_DIR/mq2008``
  (written to a temporary folder, train/vali/test), the 3-grade perfect, navigational and informational cascade
  users of ``utils/clicks.py``, 10,000 impressions, display NDCG@10 every round and held-out NDCG@10 every 10,
  the script's ranker parameters.
- ``pairrank``: the book's main comparison on MQ2008 (fold 1, the paper's 5,000 rounds, its three users of
  Table 1, which are the same 3-grade cascade users of the framework's ``utils/clicks.py``) with
  yilingjia/PairRank's ``run_script.py`` and its README's example options (``--lambda 0.1 --alpha 0.1 --update
  gd --ind --refine``; ``--rank certain`` for PairRank_C, ``random`` for PairRank_R); PDGD with the rate of the
  framework's ``scripts/CIKM2018.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
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

_DECAY = {"learning_rate_decay": 0.9999977}
_DSP = {"k_initial": 3, "k_increase": False, "prev_qeury_len": 10}
_NSGD = {"GRAD_SIZE": 60, "EXP_SIZE": 25, "TB_QUEUE_SIZE": 10, "TB_WINDOW_SIZE": 50}
# yilingjia/PairRank: run_script.py's ranker parameters with the README's example options (README.md:18-19);
# the learning rate and its decay are the argument parser's defaults and unused by the `gd` update
_PAIRRANK = {"learning_rate": 0.1, **_DECAY, "update": "gd", "_lambda": 0.1, "alpha": 0.1, "refine": True,
             "ind": True}
CLICK_MODELS = ["perfect", "navigational", "informational"]


@dataclasses.dataclass(frozen=True)
class Experiment:
    """One paper's experiment run with the authors' code: the repository, a file every checkout of it has, our
    algorithm -> (their module, class, parameters), and the protocol's folds, horizon and text."""
    repository: str
    marker: str
    rankers: dict
    folds: tuple
    impressions: int
    out: str
    protocol: str
    click_models: tuple = tuple(CLICK_MODELS)


EXPERIMENTS = {
    "dsp": Experiment(
        "HCDM/OnlineLearningToRank", "scripts/SIGIR2019.py",
        {"dbgd": ("algorithms.DBGD.pdbgd", "P_DBGD", _DECAY),
         "dbgd_dsp": ("algorithms.DBGD.pdbgd_dsp", "P_DBGD_DSP", {**_DECAY, **_DSP}),
         "mgd": ("algorithms.DBGD.pmgd", "P_MGD", _DECAY),
         "mgd_dsp": ("algorithms.DBGD.pmgd_dsp", "P_MGD_DSP", {**_DECAY, **_DSP}),
         "nsgd": ("algorithms.DBGD.tdNSGD", "TD_NSGD", {**_DECAY, **_NSGD}),
         "nsgd_dsp": ("algorithms.DBGD.tdNSGD_dsp", "TD_NSGD_DSP", {**_DECAY, **_DSP, **_NSGD})},
        (1, 2, 3, 4, 5), 10_000, "olr_core/reproductions/dsp/authors_code.json",
        "MQ2008 LETOR folds, 3-grade cascade users of utils/clicks.py, {impressions} impressions, "
        "scripts/SIGIR2019.py's ranker parameters, utils/singlesimulation.py's loop "
        "(display NDCG@10 every round, held-out every 10)"),
    "pairrank": Experiment(
        "yilingjia/PairRank", "run_script.py",
        {"pairrank_c": ("algorithms.Pairwise.PairRank", "PairRank", {**_PAIRRANK, "rank": "certain"}),
         "pairrank_r": ("algorithms.Pairwise.PairRank", "PairRank", {**_PAIRRANK, "rank": "random"}),
         "pdgd": ("algorithms.PDGD.pdgd", "PDGD", {"learning_rate": 0.1, **_DECAY})},
        (1,), 5_000, "olr_core/reproductions/pairrank/authors_code.json",
        "MQ2008 LETOR fold 1 (the book's main comparison), the 3-grade cascade users of utils/clicks.py (the paper's "
        "Table 1), {impressions} rounds, run_script.py's PairRank with README.md's options (--lambda 0.1 --alpha "
        "0.1 --update gd --ind --refine; --rank certain for PairRank_C, random for PairRank_R), PDGD at "
        "scripts/CIKM2018.py's rate 0.1, utils/singlesimulation.py's loop (display NDCG@10 every round, held-out "
        "every 10)"),
}


def checkout_dir(given: str | None, experiment: Experiment = EXPERIMENTS["dsp"]) -> Path:
    """The checkout named by ``--checkout`` or ``$OLR_AUTHORS_CHECKOUT``, checked to be the experiment's repository."""
    path = given or os.environ.get("OLR_AUTHORS_CHECKOUT")
    if not path:
        raise SystemExit(f"name a checkout of {experiment.repository}: --checkout DIR or OLR_AUTHORS_CHECKOUT")
    root = Path(path).expanduser().resolve()
    if not (root / experiment.marker).is_file():
        raise SystemExit(f"{root}: not a checkout of {experiment.repository} (no {experiment.marker})")
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


def ranker_params(experiment: Experiment, algorithm: str, overrides: dict | None = None) -> dict:
    """The parameters passed to the algorithm's class: the experiment's, with ``overrides`` (``--set``) for
    those it has."""
    params = experiment.rankers[algorithm][2]
    return {**params, **{k: v for k, v in (overrides or {}).items() if k in params}}


def run_command(python: str, root: Path, folder: Path, experiment: Experiment, algorithm: str, click_model: str,
                impressions: int, seed: int, nice: int = 19, overrides: dict | None = None) -> list[str]:
    """The command line of one run: ``authors_run.py`` under ``python`` at niceness ``nice``."""
    module, name, _ = experiment.rankers[algorithm]
    params = ranker_params(experiment, algorithm, overrides)
    return ["nice", "-n", str(nice), python, str(Path(__file__).with_name("authors_run.py")), str(root), str(folder),
            "MQ2008", module, name, json.dumps(params), click_model, str(impressions), str(seed)]


def one_run(command: list[str]) -> dict:
    """One run in its own process; its JSON line, or RuntimeError with the child's last line."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError((done.stderr.strip().splitlines() or ["no output"])[-1])
    return json.loads(done.stdout.strip().splitlines()[-1])


def versions(python: str) -> str:
    """The reference Python's version and those of the libraries the authors' code imports (``-`` if absent)."""
    code = ("import sys, importlib.util as u; names = ['numpy', 'scipy', 'sympy', 'networkx']; "
            "print(sys.version.split()[0], *[__import__(n).__version__ if u.find_spec(n) else '-' for n in names])")
    found = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.split()
    pairs = [f"{n} {v}" for n, v in zip(["numpy", "scipy", "sympy", "networkx"], found[1:]) if v != "-"]
    return " / ".join([f"Python {found[0]}", *pairs]) if found else "Python ?"


def provenance(root: Path, commit: str, python: str, impressions: int, experiment: Experiment = EXPERIMENTS["dsp"],
               shims: dict = SHIMS, overrides: dict | None = None) -> dict:
    """Where the numbers come from: repository, commit, command, protocol (with ``--set``'s overrides), shims,
    date, machine."""
    changed = "; ".join(f"{k}={json.dumps(v)}" for k, v in (overrides or {}).items())
    protocol = experiment.protocol.format(impressions=impressions) + (
        f"; set for these runs: {changed} (each run keeps its parameters)" if changed else "")
    return {"repository": experiment.repository, "commit": commit, "command": shlex.join(["python", *sys.argv]),
            "protocol": protocol, "shims": shims,
            "date": datetime.date.today().isoformat(),
            "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} cores, {versions(python)}",
            "runs": []}


def run(args) -> dict:
    experiment = EXPERIMENTS[args.paper]
    root = checkout_dir(args.checkout, experiment)
    python = args.python or os.environ.get("OLR_REFERENCE_PYTHON") or sys.executable
    out = Path(args.out)
    record = validate(json.loads(out.read_text())) if out.exists() else provenance(
        root, checkout_commit(root, args.commit), python, args.impressions, experiment, shims_of(experiment), args.set)
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
                        result = one_run(run_command(python, root, folders[fold], experiment, algorithm,
                                                     click_model, args.impressions, seed, args.nice, args.set))
                        record["runs"].append({**row, "impressions": args.impressions, **result,
                                               "params": ranker_params(experiment, algorithm, args.set)})
                        out.write_text(json.dumps(validate(record), indent=1) + "\n")
                        print(json.dumps(record["runs"][-1]), flush=True)
    return record


def shims_of(experiment: Experiment) -> dict:
    """The shims that act on this experiment's code: the NSGD ones (``maxint``, ``nullspace_rows``) only on DSP's."""
    has_nsgd = any("NSGD" in name for _, name, _ in experiment.rankers.values())
    return {name: why for name, why in SHIMS.items() if has_nsgd or name not in ("maxint", "nullspace_rows")}


def parsed(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, with the chosen paper's algorithms, users, folds, horizon and output as defaults."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paper", choices=list(EXPERIMENTS), default="dsp", help="whose experiment (default dsp)")
    parser.add_argument("--checkout", help="a checkout of the paper's repository (or OLR_AUTHORS_CHECKOUT)")
    parser.add_argument("--python", help="a Python that runs it: numpy<2, scipy, sympy, networkx "
                                         "(or OLR_REFERENCE_PYTHON)")
    parser.add_argument("--commit", help="the checkout's commit, when it is not a git work tree")
    parser.add_argument("--algorithms", nargs="+", help="default: every algorithm of the paper's experiment")
    parser.add_argument("--click-models", nargs="+", choices=CLICK_MODELS)
    parser.add_argument("--folds", nargs="+", type=int)
    parser.add_argument("--seeds", type=int, default=3, help="runs per fold (seeds 0 .. N-1)")
    parser.add_argument("--impressions", type=int)
    parser.add_argument("--set", nargs="+", default=[], metavar="NAME=JSON",
                        help="override a ranker parameter of the experiment, e.g. alpha=0.01 (kept with each run)")
    parser.add_argument("--nice", type=int, default=19, help="niceness of each run's process (default 19)")
    parser.add_argument("--note", help="what was run and why (kept in the file, shown on the pages)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    experiment = EXPERIMENTS[args.paper]
    unknown = sorted(set(args.algorithms or ()) - set(experiment.rankers))
    if unknown:
        parser.error(f"--algorithms: {', '.join(unknown)} not in the {args.paper} experiment "
                     f"({', '.join(experiment.rankers)})")
    defaults = {"algorithms": list(experiment.rankers), "click_models": list(experiment.click_models),
                "folds": list(experiment.folds), "impressions": experiment.impressions, "out": experiment.out}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.set = overrides(parser, args.set)
    return args


def overrides(parser: argparse.ArgumentParser, pairs: list[str]) -> dict:
    """``--set NAME=JSON ...`` as a dict (a value that is not JSON is kept as text)."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            parser.error(f"--set {pair}: expected NAME=VALUE")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out


if __name__ == "__main__":
    run(parsed())
