"""The ``olr`` command: data sets, single runs, grids and the book."""

from __future__ import annotations

import argparse
import json
import sys

import yaml


def _parse_sets(pairs: list[str]) -> dict:
    params = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects key=value, got {pair!r}")
        params[key] = yaml.safe_load(value)
    return params


def cmd_list(args) -> int:
    from .data import DATASETS
    from .rankers import ALGORITHMS, algorithm_parameters
    from .users import CLICK_MODELS, STOP_RULES

    print("algorithms:")
    for name in ALGORITHMS:
        params = ", ".join(f"{k}={v}" for k, v in algorithm_parameters(name).items())
        print(f"  {name:<22} {params}")
    print("data sets:")
    for name, spec in DATASETS.items():
        print(f"  {name:<22} {spec.title}")
    print("click models:", ", ".join(CLICK_MODELS), "| stop rules:", ", ".join(STOP_RULES))
    return 0


def cmd_data(args) -> int:
    from .data import DATASETS, describe, get_spec, load_fold, verify_checksums

    if args.data_command == "list":
        for name, spec in DATASETS.items():
            print(f"{name:<16} {spec.n_features:>4} features  grades 0-{spec.max_grade}  {spec.n_folds} fold(s)  "
                  f"{spec.title}")
        return 0
    spec = get_spec(args.name)
    if args.data_command == "get":
        from .data.download import ObtainManually, download

        try:
            print(download(args.name, args.data_dir))
        except ObtainManually as err:
            print(err)
            return 1
        return 0
    fold = load_fold(args.name, args.fold, args.data_dir)
    info = {"name": spec.name, "title": spec.title, "source": spec.source, "fold": args.fold,
            **{split: describe(getattr(fold, split)) for split in ("train", "vali", "test")}}
    if spec.sha256_uncompressed and not spec.synthetic:
        info["checksums_ok"] = verify_checksums(args.name, args.data_dir)
    print(json.dumps(info, indent=2))
    return 0


def cmd_run(args) -> int:
    from .experiments import ResultStore, RunSpec, execute, spec_key

    spec = RunSpec(args.algorithm, args.dataset, args.fold, args.click_model, args.rounds, args.seed,
                   _parse_sets(args.set), args.stop_rule, args.eval_every, reference=args.reference)
    store = ResultStore(args.results)
    key = spec_key(spec, args.data_dir)
    if store.has(key) and not args.no_store:
        _, trace = store.load(key)
    else:
        trace = execute(spec, args.data_dir)
        if not args.no_store:
            store.save(key, spec, trace)
    summary = {**trace.summary(), "key": key, "spec": spec.canonical()}
    if args.json:
        print(json.dumps(summary))
    else:
        for k in ("final_offline_ndcg10", "cumulative_online_ndcg10", "mean_online_ndcg10", "rounds", "seconds"):
            print(f"{k:<26} {summary[k]}")
    return 0


def cmd_grid(args) -> int:
    from .experiments import ResultStore, expand_grid, load_grid, run_grid, summary_frame

    specs = expand_grid(load_grid(args.file))
    store = ResultStore(args.results)
    run_grid(specs, store, jobs=args.jobs, dask=args.dask, data_dir=args.data_dir)
    table = summary_frame(specs, store, args.data_dir)
    cols = ["label", "dataset", "fold", "click_model"]
    print(table.groupby(cols)[["final_offline_ndcg10", "cumulative_online_ndcg10"]].mean().to_string())
    return 0


def cmd_book(args) -> int:
    from .book import build_book

    return build_book(args.profile, only=args.only, skip_build=args.no_build)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="olr", description="Online learning to rank: data, runs, grids, book.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list algorithms, data sets and click models").set_defaults(func=cmd_list)

    data = sub.add_parser("data", help="data sets: list, info, get")
    dsub = data.add_subparsers(dest="data_command", required=True)
    dsub.add_parser("list").set_defaults(func=cmd_data)
    for name in ("info", "get"):
        p = dsub.add_parser(name)
        p.add_argument("name")
        p.add_argument("--data-dir", default=None, help="directory with the real data sets (or OLR_DATA_DIR)")
        p.add_argument("--fold", type=int, default=1)
        p.set_defaults(func=cmd_data)

    run = sub.add_parser("run", help="run one algorithm")
    run.add_argument("--algorithm", "-a", required=True)
    run.add_argument("--dataset", "-d", default="synth-mq")
    run.add_argument("--fold", type=int, default=1)
    run.add_argument("--click-model", "-c", default="navigational")
    run.add_argument("--stop-rule", default="after_click", help="after_click (papers) or every_position (ref. code)")
    run.add_argument("--rounds", "-T", type=int, default=1000)
    run.add_argument("--seed", "-s", type=int, default=0)
    run.add_argument("--eval-every", type=int, default=10)
    run.add_argument("--reference", default=None, help="offline algorithm whose weights give cosine similarity")
    run.add_argument("--set", action="append", metavar="KEY=VALUE", help="algorithm parameter (repeatable)")
    run.add_argument("--data-dir", default=None)
    run.add_argument("--results", default=None, help="results store directory (default: OLR_RESULTS_DIR or ./results)")
    run.add_argument("--no-store", action="store_true", help="neither read nor write the results store")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.set_defaults(func=cmd_run)

    grid = sub.add_parser("grid", help="run a grid file (YAML)")
    grid.add_argument("file")
    grid.add_argument("--jobs", "-j", type=int, default=1, help="local processes (-1: all cores)")
    grid.add_argument("--dask", default=None, help="Dask scheduler address, or 'local' for a LocalCluster")
    grid.add_argument("--data-dir", default=None)
    grid.add_argument("--results", default=None)
    grid.set_defaults(func=cmd_grid)

    book = sub.add_parser("book", help="execute every notebook with papermill and build the book")
    book.add_argument("--profile", default="quick", choices=["quick", "paper"])
    book.add_argument("--only", default=None, help="execute only notebooks whose name contains this")
    book.add_argument("--no-build", action="store_true", help="execute notebooks but skip jupyter-book")
    book.set_defaults(func=cmd_book)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (KeyError, ValueError, TypeError, FileNotFoundError, ConnectionError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"olr: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
