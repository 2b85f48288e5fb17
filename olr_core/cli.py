"""The ``olr`` command: data sets, single runs, grids and the book."""

from __future__ import annotations

import argparse
import json
import sys
import warnings

from .params import parse_assignments


def print_json(value) -> None:
    from .claims import json_safe

    print(json.dumps(json_safe(value), allow_nan=False, default=str))


def cmd_list(args) -> int:
    from .data import DATASETS
    from .rankers import ALGORITHMS, algorithm_parameters
    from .users import CLICK_MODELS, LABEL_USERS, STOP_RULES, describe_families

    print("algorithms:")
    for name in ALGORITHMS:
        params = ", ".join(f"{k}={v}" for k, v in algorithm_parameters(name).items())
        print(f"  {name:<22} {params}")
    from .plugins import RANKER_GROUP, USER_GROUP, registered

    for group, what in ((RANKER_GROUP, "rankers"), (USER_GROUP, "users")):
        for name, reference in registered(group).items():
            print(f"  {name:<22} ({what} plug-in: {reference})")
    print("  (your own: -a package.module:Class or -a path/to/file.py:Class; the same for -c)")
    print("data sets:")
    for name, spec in DATASETS.items():
        print(f"  {name:<22} {spec.title}")
    print("users:", ", ".join(CLICK_MODELS + LABEL_USERS), "| stop rules:", ", ".join(STOP_RULES))
    print("click models (-c family[:preset][,key=value...][+noise=EPS], e.g. -c dbn:informational,gamma=0.7):")
    print("\n".join(describe_families()))
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
    if spec.library:
        from .data import load_library

        info = {"title": spec.title, "source": spec.source, **load_library(args.name, args.data_dir).describe()}
        if spec.sha256_uncompressed:
            info["checksums_ok"] = verify_checksums(args.name, args.data_dir)
        print(json.dumps(info, indent=2, default=str))
        return 0
    fold = load_fold(args.name, args.fold, args.data_dir)
    info = {"name": spec.name, "title": spec.title, "source": spec.source, "fold": args.fold,
            **{split: describe(getattr(fold, split)) for split in ("train", "vali", "test")}}
    if spec.sha256_uncompressed and not spec.synthetic:
        info["checksums_ok"] = verify_checksums(args.name, args.data_dir) or None
        if info["checksums_ok"] is None:
            info["checksums_note"] = ("checksums are known for the S1..S5 files only; this copy has the "
                                      "Fold1..5 layout, which was read as it is")
    print(json.dumps(info, indent=2))
    return 0


def cmd_run(args) -> int:
    from .experiments import ResultStore, RunSpec, execute, spec_key
    from .experiments.runner import data_fingerprint
    from .experiments.task import task_of

    if args.click_log and not args.click_log.endswith(".npz"):
        raise ValueError(f"option --click-log {args.click_log}: the log is a numpy archive; name a .npz file "
                         f"(e.g. {args.click_log.rpartition('.')[0] or args.click_log}.npz)")
    task = task_of(args.dataset)       # (a library stream is played whole by a user who chooses)
    rounds = task.default_rounds(args.data_dir) if args.rounds is None else args.rounds
    spec = RunSpec(args.algorithm, args.dataset, args.fold, args.click_model or task.default_user, rounds, args.seed,
                   parse_assignments(args.set, "--set"), args.stop_rule, args.eval_every, reference=args.reference)
    store = ResultStore(args.results)
    key = spec_key(spec, args.data_dir)
    if not args.no_store and store.verified(key) and not args.click_log:
        _, trace = store.load(key)
    else:
        if not args.no_store:
            store.require_writable(1)
        trace = execute(spec, args.data_dir, click_log=args.click_log)
        if not args.no_store:
            store.save(key, spec, trace, data_fingerprint(spec.dataset, spec.fold, args.data_dir))
    summary = {**trace.summary(), "key": key, "spec": spec.canonical()}
    if args.json:
        print_json(summary)
    else:
        for k in spec.task.summary_keys:
            print(f"{k:<26} {summary[k]}")
    return 0


def cmd_grid(args) -> int:
    from .budget import require_approval
    from .experiments import ResultStore, run_grid, summary_frame
    from .experiments.spec import grid_plan, load_and_expand, load_grid

    require_approval(grid_plan(load_grid(args.file), args.jobs), args.yes, f"grid {args.file}")
    specs = load_and_expand(args.file)                 # the whole grid is checked before any run starts
    store = ResultStore(args.results)
    run_grid(specs, store, jobs=args.jobs, dask=args.dask, data_dir=args.data_dir)
    table = summary_frame(specs, store, args.data_dir)
    cols = ["label", "dataset", "fold", "click_model"]
    print(table.groupby(cols)[["final_offline_ndcg10", "discounted_online_ndcg10", "summed_online_ndcg10"]].mean()
          .to_string())
    print("discounted_online_ndcg10: sum over rounds t of 0.9995^(t-1) NDCG@10 of the shown list (the papers' "
          "'cumulative NDCG'); summed_online_ndcg10: the plain sum")
    return 0


def cmd_claims(args) -> int:
    from .budget import require_approval
    from .experiments import ResultStore
    from .reproductions.verdicts import claim_records, claims_budget

    if args.ledger or args.write_ledger:
        return _ledger_command(args)
    if args.plan:
        from .plan import claims_plan as missing_runs

        print(missing_runs(args.paper, args.profile, args.data_dir, args.cores, args.seeds, ResultStore(args.results)))
        return 0
    plan = claims_budget(args.paper, args.profile, args.data_dir, args.seeds, args.with_rankers or (), args.jobs)
    require_approval(plan, args.yes, f"olr claims {args.paper or '(every paper)'} --profile {args.profile}")

    from .experiments.runner import dask_scheduler

    with dask_scheduler(args.dask, args.jobs):
        if args.budget is None:
            records = claim_records(args.paper, args.profile, args.data_dir, args.jobs, ResultStore(args.results),
                                    seeds=args.seeds, rankers=args.with_rankers or ())
        else:
            records = _budgeted_claims(args)
    if args.json:
        print_json(records)
        return 0
    _print_records(records)
    return 0


def _print_records(records: list[dict]) -> None:
    """The records as text, one block per record (``olr claims`` without ``--json``)."""
    for r in records:
        role = "" if r.get("config_role") == "headline" else ", sensitivity"
        print(f"[{r['verdict']:>21}] {r['paper']}:{r['id']} ({r['config']}{role}) {r['claim']}")
        print(f"{'':24}paper: {r['paper_value']}")
        print(f"{'':24}ours:  {r['ours']}  [{r['setup']}]")
        if r.get("magnitude"):
            print(f"{'':24}size:  {r['magnitude']['summary']} ({r['magnitude']['unit']})")
        print(f"{'':24}rule:  {r['rule']}: {r['reason']}")
        for t in r.get("thresholds", []):
            print(f"{'':24}ours, not the paper's: {t['what']} = {t['value']:g} (at {t['half']['value']:g}: "
                  f"{t['half']['verdict']}; at {t['double']['value']:g}: {t['double']['verdict']})")
        for c in r.get("cells", []):
            low, high = (f"{v:+.3g}" if v is not None else "unbounded" for v in (c["ci_low"], c["ci_high"]))
            margin = f"{c['margin']:+.3g}" if c["margin"] is not None else "n/a"
            print(f"{'':24}  {c['cell']}: margin {margin} [{low}, {high}], {c['runs']} run{'s' * (c['runs'] != 1)}")
        if r.get("scale"):
            print(f"{'':24}scale: {r['scale']} ({r['horizon']} rounds, {r['runs_per_cell']} per cell; the paper: "
                  f"{r['paper_horizon']} rounds, {r['paper_runs']} per cell)")


def _ledger_command(args) -> int:
    """``olr claims PAPER --write-ledger``: compute the paper's claims at ``--profile`` and write its ledger;
    ``olr claims PAPER --ledger``: print the ledger's records without computing, naming the stale ones."""
    import time

    from .budget import require_approval
    from .experiments import ResultStore
    from .experiments.runner import dask_scheduler
    from .reproductions import ledger
    from .reproductions.verdicts import claim_records, claims_budget

    if args.paper is None or args.with_rankers or args.plan or (args.budget is not None and not args.write_ledger):
        raise ValueError("--ledger and --write-ledger take one paper and none of --with, --plan (--budget: only "
                         "with --write-ledger)")
    if args.write_ledger:
        plan = claims_budget(args.paper, args.profile, args.data_dir, args.seeds, (), args.jobs)
        require_approval(plan, args.yes, f"olr claims {args.paper} --profile {args.profile} --write-ledger")
        started = time.monotonic()
        with dask_scheduler(args.dask, args.jobs):
            if args.budget is None:
                records, spend = claim_records(args.paper, args.profile, args.data_dir, args.jobs,
                                               ResultStore(args.results), seeds=args.seeds, keep_runs=True), None
            else:
                records, spend = _budgeted_claims(args, keep_runs=True)
        command = (f"olr claims {args.paper} --profile {args.profile}"
                   + (f" --seeds {args.seeds}" if args.seeds else "")
                   + (f" --budget {args.budget}" if args.budget is not None else ""))
        book = ledger.build_ledger(args.paper, args.profile, records, ResultStore(args.results),
                                   time.monotonic() - started, command + " --write-ledger")
        book["seeds"] = args.seeds
        if spend is not None:
            book.update(ledger.design_fields(spend))
        path = ledger.write_ledger(book)
        print(f"olr claims: wrote {path} ({len(records)} records, {len(book['runs'])} runs, "
              f"{book['cpu_seconds']:,.0f} CPU s of runs)", file=sys.stderr)
        return 0
    book = ledger.read_ledger(args.paper)
    if book is None:
        raise ValueError(f"no ledger for {args.paper} in {ledger.ledger_dir()}; write it with "
                         f"`{ledger.refresh_command(args.paper)}`")
    keys, datasets = ledger.ledger_runs(book, args.data_dir)
    stale, unchecked = ledger.stale_records(book, keys, datasets), ledger.unchecked_datasets(book, datasets)
    if stale:
        print(ledger.stale_note(args.paper, stale), file=sys.stderr)
    if unchecked:
        print(f"olr claims: the ledger's runs on {', '.join(unchecked)} were not checked for staleness: the data "
              f"is not found here (--data-dir or OLR_DATA_DIR)", file=sys.stderr)
    records = ledger.ledger_records(book, stale)
    if args.json:
        print_json(records)
    else:
        print(f"ledger of {args.paper}: profile {book['profile']}, code {book['code']}, {book['date']}, "
              f"{book['cpu_seconds']:,.0f} CPU s of runs on {book['machine']}")
        _print_records(records)
    return 0


def _budgeted_claims(args, keep_runs: bool = False):
    """``olr claims --budget``: the sequential design's records (olr_core.adaptive); what it spent on stderr
    (with ``keep_runs``, for a ledger: the records with their runs, and the spend)."""
    from .adaptive import budgeted_records
    from .experiments import ResultStore

    if args.seeds is not None:
        raise ValueError("--budget and --seeds are exclusive: the budget chooses each experiment's seeds; drop one")
    records, spend = budgeted_records(args.paper, args.profile, args.budget, args.data_dir, args.jobs,
                                      ResultStore(args.results), args.with_rankers or (), keep_runs=keep_runs)
    print(f"olr claims --budget: {spend.describe()}", file=sys.stderr)
    return (records, spend) if keep_runs else records


def cmd_store(args) -> int:
    from .experiments import ResultStore

    report = ResultStore(args.results).check()
    print(f"{report['store']}: {report['readable']} readable run(s), {len(report['set_aside_now'])} set aside now, "
          f"{len(report['quarantined'])} file(s) in the quarantine")
    for sentence in report["set_aside_now"]:
        print(f"  set aside now: {sentence}")
    for path in report["quarantined"]:
        print(f"  quarantined: {path}")
    for sentence in report["leftovers"]:
        print(f"  {sentence}")
    return 0


def cmd_store_migrate(args) -> int:
    """``olr store migrate``: stored runs of earlier code re-keyed where today's code recomputes them bit for bit."""
    from .experiments import ResultStore
    from .experiments.migrate import migrate_store

    result = migrate_store(ResultStore(args.results), args.data_dir, args.sample)
    for line in result.left:
        print(f"  left: {line}")
    print(f"{result.carried} run(s) carried over to today's code ({result.recomputed} recomputed to check), "
          f"{result.current} already current, {len(result.left)} kind(s) or run(s) left to be recomputed")
    return 0


def _bundle_profile(profile: str | None) -> str:
    return f"profile {profile}" if profile else "every stored run (no profile selected)"


def cmd_store_export(args) -> int:
    """``olr store export FILE``: the selected runs (every run, or a paper's claims at a profile) as one bundle."""
    from .experiments import ResultStore
    from .experiments.bundle import bundle_digest, export_bundle

    store, keys, profile = ResultStore(args.results), None, args.profile
    if args.paper or args.profile:
        from .plan import claim_run_keys

        profile = profile or "quick"
        keys = claim_run_keys(args.paper, profile, args.data_dir, store)
    manifest = export_bundle(store, args.file, keys, profile)
    print(f"{args.file}: {len(manifest['runs'])} run(s), {_bundle_profile(manifest['profile'])}, "
          f"sha256 {bundle_digest(args.file)}")
    return 0


def cmd_store_import(args) -> int:
    """``olr store import FILE``: every run of a verified bundle that the store lacks."""
    from .experiments import ResultStore
    from .experiments.bundle import import_bundle

    record = import_bundle(ResultStore(args.results), args.file, args.verify, args.data_dir)
    print(f"{args.file}: {record['added']} run(s) added, {record['runs'] - record['added']} already stored "
          f"({_bundle_profile(record['profile'])}, sha256 {record['sha256']}; {record['verified']} run(s) computed "
          "again and identical)")
    return 0


def cmd_book(args) -> int:
    from olr_book.build import build_book
    from olr_book.execute import PageFailedError
    from olr_book.manifest import list_pages, project_root

    if args.list:
        print(list_pages(project_root()))
        return 0
    if args.plan:
        from olr_book.plan import book_plan

        print(book_plan(args.profile, args.only, args.data_dir, args.cores))
        return 0
    from .experiments.runner import dask_scheduler

    try:
        with dask_scheduler(args.dask):
            return build_book(args.profile, only=args.only, skip_build=args.no_build,
                              overrides=parse_assignments(args.param, "-p"), data_dir=args.data_dir,
                              edition=args.edition, pages_at_once=args.pages_at_once, approved=args.yes)
    except PageFailedError as failed:
        print(f"olr: error: {failed}", file=sys.stderr)
        return 1


def cmd_fit(args) -> int:
    """Fit click models to a click log and score them (on a held-out half with --holdout)."""
    from .click_fitting import DEFAULT_FITS, ClickLog, evaluate, fit, parameter_table

    log = ClickLog.load(args.log).require_sessions(args.log)
    train, test = log.split(0.5) if args.holdout else (log, log)
    if args.holdout:
        train.require_sessions(f"{args.log} (its first half)"), test.require_sessions(f"{args.log} (its second half)")
    rows = {}
    for family in args.model or DEFAULT_FITS:
        model = fit(family, train)
        scores = evaluate(model, test)
        rows[family] = {"log_likelihood": round(scores["log_likelihood"], 4),
                        "perplexity": round(scores["perplexity"], 4), "parameters": parameter_table(model)}
    if args.json:
        print_json(rows)
        return 0
    scored = "the held-out half" if args.holdout else "the fitted log"
    print(f"{args.log}: {log.sessions:,} sessions; scored on {scored}")
    for family, row in rows.items():
        print(f"{family:<11} log-likelihood/session {row['log_likelihood']:>9.4f}   perplexity {row['perplexity']:.4f}")
        for name, values in row["parameters"].items():
            print(f"    {name:<38} {values}")
    return 0


def cmd_notebook(args) -> int:
    from olr_book.build import standalone_notebook
    from olr_book.execute import PageFailedError

    try:
        path = standalone_notebook(args.name, args.output, args.profile, parse_assignments(args.param, "-p"),
                                   args.data_dir, approved=args.yes)
    except PageFailedError as failed:
        print(f"olr: error: {failed}", file=sys.stderr)
        return 1
    print(path)
    return 0


def cmd_course(args) -> int:
    """Build the assignments (student notebooks and autograders) or grade a folder of submissions."""
    from pathlib import Path

    from olr_book.manifest import project_root

    from .course import Limits, build_assignments, grade_submissions, totals

    root = project_root()
    built = Path(args.assignments) if args.assignments else root / "_build" / "assignments"
    if args.course_command == "build":
        for name, folder in build_assignments(root, built, args.only).items():
            print(f"{name}: {folder / 'student'} (for students), {folder / 'autograder'} (keep private)")
        return 0
    limits = Limits(test_seconds=args.test_seconds, notebook_seconds=args.notebook_seconds,
                    output_bytes=args.output_chars)
    output = Path(args.output or Path(args.folder) / "grades.csv")
    rows = grade_submissions(Path(args.folder), built, output, limits, args.jobs)
    for submission, (points, possible) in totals(rows).items():
        print(f"{submission}: {points:g} / {possible:g}")
    print(f"per-test scores and feedback: {output}")
    return 0


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
    run.add_argument("--algorithm", "-a", required=True,
                     help="a name from olr list, an installed plug-in, or package.module:Class / file.py:Class")
    run.add_argument("--dataset", "-d", default="synth-mq")
    run.add_argument("--fold", type=int, default=1)
    run.add_argument("--click-model", "-c", default=None,
                     help="a user from olr list, or your own class as package.module:Class / file.py:Class "
                          "(default navigational; a growing-library stream: choice)")
    run.add_argument("--stop-rule", default="after_click", help="after_click (papers) or every_position (ref. code)")
    run.add_argument("--rounds", "-T", type=int, default=None,
                     help="rounds to play (default 1,000; a growing-library stream: the whole stream)")
    run.add_argument("--seed", "-s", type=int, default=0)
    run.add_argument("--eval-every", type=int, default=10)
    run.add_argument("--reference", default=None, help="offline algorithm whose weights give cosine similarity")
    run.add_argument("--set", action="append", metavar="KEY=VALUE", help="algorithm parameter (repeatable)")
    run.add_argument("--data-dir", default=None)
    run.add_argument("--results", default=None, help="results store directory (default: OLR_RESULTS_DIR or ./results)")
    run.add_argument("--no-store", action="store_true", help="neither read nor write the results store")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--click-log", default=None, metavar="FILE.npz",
                     help="write the run's click log (shown grades and clicks) for olr_core.click_fitting")
    run.set_defaults(func=cmd_run)

    grid = sub.add_parser("grid", help="run a grid file (YAML)")
    grid.add_argument("file")
    grid.add_argument("--jobs", "-j", type=int, default=1, help="local processes (-1: all cores)")
    grid.add_argument("--dask", default=None, help="Dask scheduler address, or 'local' for a LocalCluster")
    grid.add_argument("--data-dir", default=None)
    grid.add_argument("--results", default=None)
    grid.add_argument("--yes", action="store_true", help="start a grid beyond the budget (olr_core.budget.LIMITS)")
    grid.set_defaults(func=cmd_grid)

    claims = sub.add_parser("claims", help="does it reproduce? every claim of a paper with its verdict")
    claims.add_argument("paper", nargs="?", default=None, help="dsp, pairrank, neural, klrank or topk (default: all)")
    claims.add_argument("--profile", default="quick", choices=["tiny", "quick", "paper"],
                        help="run sizes: the book's quick profile, the papers' (paper), or a smoke test (tiny)")
    claims.add_argument("--data-dir", default=None)
    claims.add_argument("--results", default=None)
    claims.add_argument("--jobs", "-j", type=int, default=1, help="local processes for missing runs (-1: all cores)")
    claims.add_argument("--seeds", type=int, default=None,
                        help="seeds per grid cell instead of the profile's (an inconclusive verdict names how many)")
    claims.add_argument("--with", dest="with_rankers", action="append", metavar="RANKER",
                        help="your own ranker (package.module:Class or file.py:Class, default parameters) joins the "
                             "paper's experiments and every claim is judged with it (repeatable)")
    claims.add_argument("--json", action="store_true", help="print a JSON list of records")
    claims.add_argument("--yes", action="store_true",
                        help="start a request beyond the budget (runs, CPU hours, memory: olr_core.budget.LIMITS)")
    claims.add_argument("--budget", default=None, metavar="SECONDS",
                        help="CPU seconds to spend adding seeds to undecided claims, cheapest first, judged with a "
                             "group-sequential design (olr_core.adaptive); 'auto': the profile's own cost")
    claims.add_argument("--dask", default=None, metavar="ADDRESS",
                        help="send every run to this Dask scheduler (or 'local': a LocalCluster of --jobs workers)")
    claims.add_argument("--plan", action="store_true", help="print the runs still missing per claim group and "
                        "their estimated CPU seconds; run nothing")
    claims.add_argument("--cores", type=int, default=None, help="cores the --plan's wall time assumes (default: this "
                        "machine's)")
    claims.add_argument("--write-ledger", action="store_true",
                        help="compute the paper's claims at --profile (use paper) and write its ledger, "
                             "ledger/PAPER.json: every record with the per-run values and run keys it rests on")
    claims.add_argument("--ledger", action="store_true",
                        help="print the ledger's records without computing (stale claims named on stderr)")
    claims.set_defaults(func=cmd_claims)

    store = sub.add_parser("store", help="the results store: check, export, import")
    ssub = store.add_subparsers(dest="store_command", required=True)
    check = ssub.add_parser("check", help="read every stored run; set aside (quarantine) those that cannot be read")
    check.add_argument("--results", default=None, help="results store (default: OLR_RESULTS_DIR or ./results)")
    check.set_defaults(func=cmd_store)
    migrate = ssub.add_parser("migrate", help="carry runs of earlier code over to today's where it recomputes them "
                              "bit for bit (a sample per kind of run)")
    migrate.add_argument("--sample", type=int, default=1, help="runs recomputed per kind of run (default 1)")
    migrate.add_argument("--data-dir", default=None)
    migrate.add_argument("--results", default=None, help="results store (default: OLR_RESULTS_DIR or ./results)")
    migrate.set_defaults(func=cmd_store_migrate)
    export = ssub.add_parser("export", help="write stored runs to one checked bundle (a zip with a manifest)")
    export.add_argument("file", help="the bundle to write, e.g. dsp-paper.olrbundle")
    export.add_argument("--paper", default=None, help="only the runs of this paper's claims (default: every paper)")
    export.add_argument("--profile", default=None, choices=["tiny", "quick", "paper"],
                        help="only the claims' runs at this profile (default: every stored run; with --paper: quick)")
    export.add_argument("--data-dir", default=None)
    export.add_argument("--results", default=None, help="results store (default: OLR_RESULTS_DIR or ./results)")
    export.set_defaults(func=cmd_store_export)
    imported = ssub.add_parser("import", help="add the runs of a bundle, after checking every byte of it")
    imported.add_argument("file")
    imported.add_argument("--verify", type=int, default=0, metavar="N",
                          help="compute N random runs of the bundle again and import only if each is bit-identical")
    imported.add_argument("--data-dir", default=None)
    imported.add_argument("--results", default=None, help="results store (default: OLR_RESULTS_DIR or ./results)")
    imported.set_defaults(func=cmd_store_import)

    book = sub.add_parser("book", help="execute every notebook with papermill and build the book")
    book.add_argument("--profile", default="quick", choices=["quick", "paper"])
    book.add_argument("--yes", action="store_true",
                      help="execute a page whose -p sizes take it beyond the budget (olr_core.budget.LIMITS)")
    book.add_argument("--only", default=None, help="execute only this page (or the pages whose name contains it)")
    book.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                      help="a parameter of the --only page(s) on top of the profile's (YAML value; repeatable)")
    book.add_argument("--data-dir", default=None, help="directory with the real data sets (or OLR_DATA_DIR)")
    book.add_argument("--list", action="store_true", help="list every page with its parameters and profile values")
    book.add_argument("--dask", default=None, metavar="ADDRESS",
                      help="send every run of every page to this Dask scheduler (or 'local': one LocalCluster on "
                           "this machine for all pages); results are stored here as without it")
    book.add_argument("--plan", action="store_true", help="print the runs each page still has to compute and their "
                      "estimated CPU seconds (from the stored runs of the same kinds); execute nothing")
    book.add_argument("--cores", type=int, default=None, help="cores the --plan's wall time assumes (default: this "
                      "machine's)")
    book.add_argument("--edition", default="instructor", choices=["instructor", "student"],
                      help="student: no exercise solutions, built into _build/student")
    book.add_argument("--no-build", action="store_true", help="execute notebooks but skip jupyter-book")
    book.add_argument("--pages-at-once", type=int, default=None, metavar="N",
                      help="pages executed side by side, each in its own process (default: 2 on two or more "
                           "cores, else 1); a page never runs beside a page whose runs it reads")
    book.set_defaults(func=cmd_book)

    fitter = sub.add_parser("fit", help="fit click models to a click log (olr run --click-log) and score them")
    fitter.add_argument("log", help="a click log .npz written by olr run --click-log or click_fitting")
    fitter.add_argument("--model", "-m", action="append",
                        help="family to fit, e.g. dbn or dbn+noise (repeatable; default: the seven base families "
                             "and cascade+noise)")
    fitter.add_argument("--holdout", action="store_true", help="fit on the first half, score on the second")
    fitter.add_argument("--json", action="store_true")
    fitter.set_defaults(func=cmd_fit)
    notebook = sub.add_parser("notebook", help="execute one page as a standalone notebook")
    notebook.add_argument("name", help="the page (notebook) name, e.g. dsp_table2")
    notebook.add_argument("-o", "--output", required=True, help="where to write the executed .ipynb")
    notebook.add_argument("--yes", action="store_true",
                          help="execute a page whose -p sizes take it beyond the budget (olr_core.budget.LIMITS)")
    notebook.add_argument("-p", "--param", action="append", metavar="NAME=VALUE", help="a parameter (repeatable)")
    notebook.add_argument("--profile", default="quick", choices=["quick", "paper"])
    notebook.add_argument("--data-dir", default=None)
    notebook.set_defaults(func=cmd_notebook)

    course = sub.add_parser("course", help="graded assignments: build them, grade submissions (offline)")
    csub = course.add_subparsers(dest="course_command", required=True)
    cbuild = csub.add_parser("build", help="student notebooks and autograders from assignments/*.py (Otter Assign)")
    cbuild.add_argument("--only", default=None, help="build only this assignment")
    cgrade = csub.add_parser("grade", help="grade every notebook under FOLDER into a CSV with per-test feedback")
    cgrade.add_argument("folder", help="the submissions: notebooks named after their assignment, any subfolders")
    cgrade.add_argument("--output", "-o", default=None, help="the CSV (default FOLDER/grades.csv)")
    cgrade.add_argument("--test-seconds", type=float, default=10.0, help="time limit of each test (default 10)")
    cgrade.add_argument("--notebook-seconds", type=float, default=60.0,
                        help="time limit of all of a notebook's cells together (default 60)")
    cgrade.add_argument("--output-chars", type=int, default=100_000,
                        help="characters a cell or test may print (default 100,000)")
    cgrade.add_argument("--jobs", "-j", type=int, default=1, help="submissions graded at once (default 1)")
    for command in (cbuild, cgrade):
        command.add_argument("--assignments", default=None,
                             help="folder of the built assignments (default _build/assignments)")
        command.set_defaults(func=cmd_course)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> str:
    return f"olr: warning: {message}\n"


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.formatwarning = _one_line_warning
    try:
        return args.func(args)
    except (KeyError, ValueError, TypeError, OSError, MemoryError) as err:        # (OSError: files, disks, network)
        message = err.args[0] if isinstance(err, KeyError) and err.args else \
            "out of memory (MemoryError); ask for fewer rounds, seeds or jobs" if isinstance(err, MemoryError) else err
        print(f"olr: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
