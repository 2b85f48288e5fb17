"""The book driver: execute every notebook of the manifest with papermill, then build the book.

The manifest (``notebooks/manifest.yml``) lists each notebook with its parameters per
profile (``quick``: minutes for the whole book; ``paper``: the papers' horizons and seed
counts). Executed notebooks go to ``book/generated/``, each with a cell stating the
profile and parameters that produced it; Jupyter Book then compiles them with the
narrative chapters, warnings as errors.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from . import __version__
from .experiments.spec import code_fingerprint

PROFILES = ("quick", "paper")


def project_root(start: Path | None = None) -> Path:
    """The folder holding ``_config.yml`` and ``notebooks/manifest.yml`` (searching upwards)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").exists() and (folder / "notebooks" / "manifest.yml").exists():
            return folder
    raise FileNotFoundError("no book here: run 'olr book' inside the OL2R Book checkout (where _config.yml is)")


def load_manifest(root: Path) -> list[dict]:
    entries = yaml.safe_load((root / "notebooks" / "manifest.yml").read_text())["notebooks"]
    for entry in entries:
        missing = [p for p in PROFILES if p not in entry.get("profiles", {})]
        if missing:
            raise ValueError(f"manifest entry {entry.get('notebook')} lacks profile(s) {missing}")
    return entries


def parameters_for(entry: dict, profile: str) -> dict:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    return {**entry.get("common", {}), **(entry["profiles"][profile] or {})}


def select_entries(entries: list[dict], only: str | None) -> list[dict]:
    """The pages ``only`` names: an exact notebook name if there is one, else every name containing it."""
    if not only:
        return entries
    stem = only.removesuffix(".ipynb")
    exact = [e for e in entries if Path(e["notebook"]).stem == stem]
    chosen = exact or [e for e in entries if stem in e["notebook"]]
    if not chosen:
        names = ", ".join(Path(e["notebook"]).stem for e in entries)
        raise ValueError(f"--only {only!r} matches no page; pages: {names}")
    return chosen


def notebook_parameters(root: Path, entry: dict) -> dict[str, dict]:
    """The notebook's own ``parameters`` cell: each name with its default value and comment (via papermill)."""
    import papermill

    inspected = papermill.inspect_notebook(str(root / "notebooks" / entry["notebook"]))
    out = {}
    for name, info in inspected.items():
        try:
            default = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            default = info["default"]
        out[name] = {"default": default, "help": info.get("help", "")}
    return out


KIND_NAMES = {int: "an integer", float: "a number", list: "a list", str: "a string", bool: "true or false",
              dict: "a mapping"}


def _fits(value, default) -> bool:
    """Whether ``value`` has the type of the parameter's ``default`` (numbers widen int -> float)."""
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float))
    if isinstance(default, list):
        return isinstance(value, list) and (not default or all(_fits(v, default[0]) for v in value))
    return isinstance(value, type(default))


def describe_parameters(declared: dict) -> str:
    return ", ".join(f"{k} (default {v['default']!r})" for k, v in declared.items())


def check_overrides(root: Path, entry: dict, overrides: dict) -> dict:
    """``overrides`` checked against the notebook's parameters cell: unknown names and wrong types are errors."""
    declared = notebook_parameters(root, entry)
    page = Path(entry["notebook"]).stem
    for name, value in overrides.items():
        if name not in declared:
            raise ValueError(f"{page} has no parameter {name!r}; its parameters: {describe_parameters(declared)}")
        default = declared[name]["default"]
        if not _fits(value, default):
            kind = KIND_NAMES.get(type(default), type(default).__name__)
            raise ValueError(f"{page}: parameter {name}={value!r} has the wrong type (expected {kind}, like its "
                             f"default {default!r}); its parameters: "
                             f"{describe_parameters(declared)}")
    check_ranges(page, overrides, parameter_ranges(root))
    return dict(overrides)


def parameter_ranges(root: Path) -> dict[str, dict]:
    """The manifest's ``ranges``: each page parameter's allowed ``min`` and ``max`` (of a number, or of every
    number of a list)."""
    return yaml.safe_load((root / "notebooks" / "manifest.yml").read_text()).get("ranges") or {}


def check_ranges(page: str, params: dict, ranges: dict) -> None:
    """Every value of ``params`` within its declared range, else a one-line error naming the page and option."""
    for name, value in params.items():
        bounds = ranges.get(name)
        numbers = value if isinstance(value, list) else [value]
        if not bounds or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            continue
        low, high = bounds.get("min"), bounds.get("max")
        bad = [v for v in numbers if (low is not None and v < low) or (high is not None and v > high)]
        if bad:
            allowed = " and ".join(s for s in (f">= {low}" if low is not None else "",
                                               f"<= {high}" if high is not None else "") if s)
            raise ValueError(f"{page}: parameter {name}={value!r} is out of range: {name} must be {allowed}"
                             + (" (each value)" if isinstance(value, list) else "") + "; nothing was executed")


def regenerate_command(page: str, profile: str, overrides: dict, data_dir: str | None) -> str:
    """The command line that re-executes ``page`` with these settings."""
    parts = ["olr", "book", "--profile", profile, "--only", page]
    for key, value in overrides.items():
        text = json.dumps(value) if not isinstance(value, str) else value
        parts += ["-p", shlex.quote(f"{key}={text}")]
    if data_dir:
        parts += ["--data-dir", shlex.quote(str(data_dir))]
    return " ".join(parts)


def _provenance_cell(page: str, profile: str, params: dict, overrides: dict, seconds: float, command: str):
    import nbformat

    rows = "\n".join(f"| `{k}` | `{v!r}` |{' **your value**' if k in overrides else ''}" for k, v in params.items())
    text = (f"```{{admonition}} How this page was produced\n:class: note\n"
            f"Executed with profile **{profile}**"
            + (f" and {len(overrides)} parameter(s) of your own" if overrides else "")
            + f" by `olr book` (olr_core {__version__}) in {seconds:.0f} s.{imported_runs_note()} Regenerate it "
            f"with\n\n"
            f"    {command}\n\nand change any parameter with `-p name=value` "
            f"(`olr book --list` shows each page's parameters; `olr notebook {page} -p ... -o copy.ipynb` writes a "
            f"standalone notebook).\n\n| parameter | value |\n|---|---|\n{rows}\n```")
    return nbformat.v4.new_markdown_cell(text)


def imported_runs_note() -> str:
    """A sentence naming each bundle (``olr store import``) the page's runs came from: its file, profile and
    SHA-256, counted over the runs the page read (its run log, ``$OLR_RUN_LOG``; without one, over every run
    the bundle brought); "" when the store imported no bundle."""
    from .experiments import ResultStore
    from .experiments.bundle import bundle_sources, imported_bundles

    store = ResultStore()
    imports = imported_bundles(store)
    if not imports:
        return ""
    log = Path(os.environ.get("OLR_RUN_LOG", "")) if os.environ.get("OLR_RUN_LOG") else None
    keys = {line.split()[-1] for line in log.read_text().splitlines() if line.strip()} if log and log.exists() \
        else {k for r in imports for k in r["keys"]}
    sources = bundle_sources(store, keys)
    if not sources:
        return " None of its runs came from the bundles imported into its store."
    return " " + "; ".join(f"{count} of its runs came from the imported bundle `{r['bundle']}` ("
                           + (f"profile **{r['profile']}**" if r["profile"] else "a whole store's runs")
                           + f", SHA-256 `{r['sha256'][:16]}`, exported {r['created']})" for r, count in sources) + "."


def provenance_position(cells) -> int:
    """Where the provenance box goes: after the page's opening text (the first markdown cell), unless that
    text runs on past a colon into what a code cell prints; then before the first markdown cell that
    follows a text ending a sentence. 0 for a page that opens with code."""
    if not cells or cells[0].cell_type != "markdown":
        return 0
    last_text = "".join(cells[0].source).rstrip()
    if not last_text.endswith(":"):
        return 1
    for i, cell in enumerate(cells[1:], start=1):
        if cell.cell_type == "markdown":
            if not last_text.endswith(":"):
                return i
            last_text = "".join(cell.source).rstrip()
    return len(cells)


def _for_readers(nb) -> None:
    """Hide code inputs behind a toggle and drop the parameter cells (the provenance box shows what ran); a
    cell tagged ``show-input`` (code that is the page's subject, e.g. a method to read) stays visible."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            tags.append("remove-cell")
        elif not {"hide-input", "remove-input", "show-input"} & set(tags):
            tags.append("hide-input")


def execute_notebook(root: Path, entry: dict, profile: str, overrides: dict | None = None,
                     data_dir: str | None = None, target: Path | None = None) -> Path:
    """Run one notebook with its profile's parameters (and ``overrides``) into ``book/generated`` or ``target``."""
    import nbformat

    overrides = dict(overrides or {})
    source = root / "notebooks" / entry["notebook"]
    page = source.stem
    if data_dir is not None and "data_dir" in notebook_parameters(root, entry):
        overrides.setdefault("data_dir", str(data_dir))
    check_overrides(root, entry, overrides)
    target = target or root / "book" / "generated" / source.name
    params = {**parameters_for(entry, profile), **overrides}
    check_ranges(page, params, parameter_ranges(root))
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    executed = _execute_to_temporary(source, target, params, root / "notebooks")
    nb = nbformat.read(executed, as_version=4)
    _for_readers(nb)
    shown_overrides = {k: v for k, v in overrides.items() if k != "data_dir"}
    command = regenerate_command(page, profile, shown_overrides, data_dir)
    nb.cells.insert(provenance_position(nb.cells), _provenance_cell(page, profile, params, overrides,
                                               time.perf_counter() - started, command))
    nbformat.write(nb, executed)
    os.replace(executed, target)                     # the built page changes only now, whole
    return target


def _execute_to_temporary(source: Path, target: Path, params: dict, cwd: Path) -> Path:
    """Execute ``source`` into a temporary file beside ``target`` and return it. On failure the built page is
    left as it was, the failed notebook is kept in the temporary folder for reading, and a
    :class:`PageFailedError` says in one line which cell raised what and where that notebook is."""
    import papermill

    executed = target.with_name(f".{target.stem}.{os.getpid()}.executing.ipynb")
    try:
        papermill.execute_notebook(str(source), str(executed), parameters=params, cwd=str(cwd),
                                   progress_bar=False, kernel_name="python3")
    except papermill.PapermillExecutionError as err:
        kept = Path(tempfile.mkdtemp(prefix="olr-failed-")) / target.name
        if executed.exists():
            os.replace(executed, kept)
        evalue = " ".join(str(err.evalue).split())
        raise PageFailedError(f"page {source.stem} failed in cell {err.exec_count}: {err.ename}: {evalue}; "
                              f"{target} was left as it was; the failed notebook is {kept}") from None
    except BaseException:
        executed.unlink(missing_ok=True)
        raise
    return executed


def read_run_log(path: Path, store=None) -> dict:
    """Counts of the runs computed and reused in a run log (the store appends ``kind key`` per run to the
    file ``$OLR_RUN_LOG`` names), and where the computed runs' time went: their CPU seconds in all
    (``run_seconds``) and per kind of run (``costliest``: the label :meth:`.ResultStore.run_seconds` gives,
    runs, seconds; the five costliest)."""
    from .experiments import ResultStore

    lines = [line.split() for line in path.read_text().splitlines()] if path.exists() else []
    kinds = [line[0] for line in lines if line]
    computed = [line[1] for line in lines if len(line) == 2 and line[0] == "computed"]
    store, by_kind = store or ResultStore(), {}
    for key in computed:
        if store.has(key):
            label, seconds = store.run_seconds(key)
            runs, total = by_kind.get(label, (0, 0.0))
            by_kind[label] = (runs + 1, total + seconds)
    costliest = sorted(by_kind.items(), key=lambda item: -item[1][1])[:5]
    return {"computed": kinds.count("computed"), "reused": kinds.count("reused"),
            "run_seconds": round(sum(total for _, total in by_kind.values()), 1),
            "costliest": [[label, runs, round(total, 1)] for label, (runs, total) in costliest]}


STATS_FILE = "execution_stats.json"
BUILD_FILE = "execution_build.json"


def record_execution(root: Path, entry: dict, profile: str, params: dict, seconds: float, counts: dict) -> None:
    """Keep what executing a page cost, with what (book/generated/execution_stats.json, one entry per page)."""
    path = root / "book" / "generated" / STATS_FILE
    stats = json.loads(path.read_text()) if path.exists() else {}
    stats[Path(entry["notebook"]).stem] = {
        "seconds": round(seconds, 1), "computed": counts["computed"], "reused": counts["reused"],
        "run_seconds": counts.get("run_seconds", 0.0), "costliest": counts.get("costliest", []),
        "profile": profile, "parameters": {k: v for k, v in params.items() if k not in ("data_dir", "jobs")},
        "code": f"olr_core {__version__}, code {code_fingerprint()}", "executed": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine_description()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stats, indent=1, default=str))


def record_build(root: Path, pages: int, at_once: int, seconds: float, compile_seconds: float = 0.0) -> None:
    """Keep the wall time of the last execution of every page (book/generated/execution_build.json; a page
    executed alone with ``--only`` leaves it), with the seconds spent first compiling numba's shared kernels:
    with pages side by side, the page times add up to more."""
    path = root / "book" / "generated" / BUILD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pages": pages, "at_once": at_once, "seconds": round(seconds, 1),
                                "compile_seconds": round(compile_seconds, 1),
                                "executed": time.strftime("%Y-%m-%d %H:%M")}))


def machine_description() -> str:
    import platform
    from importlib.metadata import version

    packages = ", ".join(f"{name} {version(name)}" for name in ("numpy", "scipy", "numba", "pandas"))
    return f"{os.cpu_count()} cores, Python {platform.python_version()}, {packages}"


def write_execution_page(root: Path) -> Path:
    """book/generated/execution_stats.md: the table the "Execution statistics" page includes, from the
    recorded executions in the manifest's order, with totals."""
    path = root / "book" / "generated" / STATS_FILE
    stats = json.loads(path.read_text()) if path.exists() else {}
    order = [Path(e["notebook"]).stem for e in load_manifest(root)]
    pages = [p for p in order if p in stats]
    lines = ["| page | seconds | runs computed | runs reused | CPU seconds in computed runs | profile | parameters "
             "| executed |", "|---|---:|---:|---:|---:|---|---|---|"]
    for page in pages:
        s = stats[page]
        params = ", ".join(f"{k}={v}" for k, v in s["parameters"].items())
        link = f"{{doc}}`{page} </book/generated/{page}>`"
        lines.append(f"| {link} | {s['seconds']:.0f} | {s['computed']} | {s['reused']} | {s.get('run_seconds', 0):.0f} "
                     f"| {s['profile']} | {params} | {s['executed']} |")
    total = sum(stats[p]["seconds"] for p in pages)
    lines.append(f"| **all {len(pages)} pages** | **{total:.0f}** | **{sum(stats[p]['computed'] for p in pages)}** "
                 f"| **{sum(stats[p]['reused'] for p in pages)}** "
                 f"| **{sum(stats[p].get('run_seconds', 0) for p in pages):.0f}** | | | |")
    machines = sorted({stats[p]["machine"] for p in pages})
    codes = sorted({stats[p]["code"] for p in pages})
    build_path = root / "book" / "generated" / BUILD_FILE
    build = json.loads(build_path.read_text()) if build_path.exists() else None
    compiled = (f" (its first {build['compile_seconds']:.0f} s readying numba's shared kernels: compiled on a fresh "
                "checkout, else loaded)"
                if build and build.get("compile_seconds") else "")
    wall = (f" The last execution ran {build['pages']} page(s), {build['at_once']} at a time, in "
            f"{build['seconds'] / 60:.1f} minutes of wall time{compiled}; side by side, pages share the machine, "
            "so their times add up to more than that." if build else "")
    text = (f"Pages executed: {len(pages)} of {len(order)}; their times add up to {total / 60:.1f} minutes.{wall} "
            f"Machine: {'; '.join(machines) or 'none recorded'}. Code: {'; '.join(codes) or 'none recorded'}.\n"
            + costliest_runs_table(stats, pages) + "\nEvery page:\n\n" + "\n".join(lines) + "\n")
    out = root / "book" / "generated" / "execution_stats.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return out


def costliest_runs_table(stats: dict, pages: list[str], heaviest: int = 8) -> str:
    """Where the time of the ``heaviest`` pages (by seconds in computed runs) went: per page, the kinds of run
    that cost most (algorithm on data set and horizon: runs, seconds), from each run's own recorded time."""
    ranked = sorted((p for p in pages if stats[p].get("costliest")), key=lambda p: -stats[p]["run_seconds"])
    if not ranked:
        return ""
    rows = ["", "Where the runs' time went on the pages that computed most (each run records the CPU seconds it "
            "took, which other work on the machine does not change; a page's workers share two cores with the "
            "page beside it):", "",
            "| page | CPU seconds in computed runs | costliest runs (count, CPU seconds) |", "|---|---:|---|"]
    for page in ranked[:heaviest]:
        kinds = "; ".join(f"{label} ({runs}, {seconds:.0f} s)" for label, runs, seconds in stats[page]["costliest"])
        rows.append(f"| {page} | {stats[page]['run_seconds']:.0f} | {kinds} |")
    return "\n".join(rows) + "\n"


def mathjax_ready(root: Path) -> bool:
    return (root / "_mathjax" / "mathjax" / "tex-chtml.js").exists()


def list_pages(root: Path | None = None) -> str:
    """Every page with its parameters: default (the notebook's), quick and paper values."""
    root = root or project_root()
    lines = []
    for entry in load_manifest(root):
        page = Path(entry["notebook"]).stem
        lines.append(f"{page}")
        quick, paper = parameters_for(entry, "quick"), parameters_for(entry, "paper")
        for name, info in notebook_parameters(root, entry).items():
            lines.append(f"  {name:<16} default {info['default']!r:<22} quick {quick.get(name, info['default'])!r:<24}"
                         f" paper {paper.get(name, info['default'])!r}")
    return "\n".join(lines)


EDITIONS = ("instructor", "student")


def _book_environment(data_dir) -> Path:
    """The book's root; its kernels share the book's results store and see ``data_dir``.

    Paths are made absolute first: the kernels run in other directories, where a relative
    ``--data-dir`` or ``OLR_DATA_DIR`` (e.g. ``../shared/data``) would silently find nothing.
    """
    root = project_root()
    os.environ.setdefault("OLR_RESULTS_DIR", str(root / "results"))
    if data_dir is not None:
        os.environ["OLR_DATA_DIR"] = str(data_dir)
    for name in ("OLR_DATA_DIR", "OLR_RESULTS_DIR", "OLR_CACHE_DIR"):
        if os.environ.get(name):
            os.environ[name] = str(Path(os.environ[name]).expanduser().resolve())
    return root


def _student_config(root: Path) -> Path:
    """The book's configuration with every exercise solution left out (sphinx-exercise's hide_solutions), and
    no page sources: no download button and no copied ``_sources`` (a page's source holds its solutions)."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config.update({"hide_solutions": True, "html_copy_source": False, "html_show_sourcelink": False})
    config.setdefault("html", {})["use_download_button"] = False
    path = root / "_config.student.yml"         # beside _config.yml: its relative paths resolve the same
    path.write_text("# Written by 'olr book --edition student' from _config.yml; do not edit.\n"
                    + yaml.safe_dump(config, sort_keys=False))
    return path


def page_name(entry: dict) -> str:
    return Path(entry["notebook"]).stem


def page_dependencies(entries: list[dict]) -> dict[str, set[str]]:
    """Each page -> the pages it waits for: the manifest's ``after`` (pages whose stored runs or tuning choices
    it reads: it must neither compute their runs a second time beside them nor run before their choices are
    made), ``all`` for every page listed before it."""
    names = [page_name(e) for e in entries]
    out = {}
    for i, entry in enumerate(entries):
        after = entry.get("after", [])
        if after == "all":
            out[names[i]] = set(names[:i])
            continue
        unknown = [a for a in after if a not in names[:i]]
        if unknown:
            raise ValueError(f"notebooks/manifest.yml: {entry['notebook']} waits for {unknown}, which is no page "
                             f"listed before it; name pages above it, or 'all'")
        out[names[i]] = set(after)
    return out


def default_pages_at_once() -> int:
    """Pages executed side by side: two on a machine with two or more cores (one page's single-threaded
    stretches, such as its kernel start, plots and summaries, then overlap another's runs), else one."""
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def compile_shared_kernels() -> float:
    """Compile numba's two heaviest kernels (the dueling family's compiled rounds, about 10 s each) in two
    processes at once before any page starts; else, on a fresh checkout, each page and worker process that
    first needs one would compile it again (measured: about 100 CPU seconds in a build). With numba's cache
    already filled this only loads it (a second)."""
    from .rankers.dueling_compiled import COMPILED_COMPARISONS

    started = time.perf_counter()
    code = "from olr_core.rankers.dueling_compiled import compile_rounds; compile_rounds({!r})"
    processes = [subprocess.Popen([sys.executable, "-c", code.format(comparison)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for comparison in COMPILED_COMPARISONS]
    for process in processes:
        _, errors = process.communicate()
        if process.returncode != 0:
            last = (errors.strip().splitlines() or ["(no message)"])[-1]
            raise RuntimeError(f"compiling numba's shared kernels failed: {last}")
    seconds = time.perf_counter() - started
    print(f"[olr book] numba's shared kernels ready in {seconds:.0f} s", flush=True)
    return seconds


def execute_pages(root: Path, entries: list[dict], profile: str, overrides: dict | None, data_dir: str | None,
                  at_once: int) -> dict[str, dict]:
    """Execute ``entries`` (each in its own process, at most ``at_once`` at a time, a page never beside one it
    waits for); returns each page's seconds and run counts. A failing page stops the build: no new page
    starts, the running ones finish, and the error names the page and ends with what its kernel printed."""
    if not isinstance(at_once, int) or isinstance(at_once, bool) or at_once < 1:
        raise ValueError(f"option --pages-at-once={at_once!r} is invalid; use a positive count (default 2)")
    chosen = {page_name(e) for e in entries}
    waits = {page: deps & chosen for page, deps in page_dependencies(load_manifest(root)).items()
             if page in chosen}
    pending, running, finished = list(entries), {}, {}
    try:
        _schedule(root, profile, overrides, data_dir, at_once, waits, pending, running, finished)
    finally:
        for process in running.values():            # interrupted (or failed): no page goes on without us
            process.stop()
    return finished


def _schedule(root, profile, overrides, data_dir, at_once, waits, pending, running, finished) -> None:
    """The loop of :func:`execute_pages`: start every ready page while a slot is free, collect the ended ones."""
    failure = None
    while running or (pending and failure is None):
        while len(running) < at_once and failure is None:
            busy = {page_name(e) for e in pending} | set(running)
            ready = next((e for e in pending if not waits[page_name(e)] & busy), None)
            if ready is None:
                break
            pending.remove(ready)
            print(f"[olr book] executing {ready['notebook']} ({profile})", flush=True)
            running[page_name(ready)] = _PageProcess(root, ready, profile, overrides, data_dir)
        time.sleep(0.1)
        for page, process in list(running.items()):
            if process.poll() is None:
                continue
            del running[page]
            outcome = process.finish()
            if outcome is None:
                failure = failure or (page, process.output_tail())
                continue
            finished[page] = outcome
            record_execution(root, process.entry, profile, {**parameters_for(process.entry, profile),
                                                            **(overrides or {})}, outcome["seconds"], outcome)
            print(f"[olr book] {process.entry['notebook']} took {outcome['seconds']:.0f} s "
                  f"({outcome['computed']} runs computed, {outcome['reused']} reused)", flush=True)
    if failure:
        raise PageFailedError(f"page {failure[0]} failed; the build stopped there. What it printed last:\n"
                              f"{failure[1]}")


class PageFailedError(RuntimeError):
    """A page's notebook raised while it executed."""


class _PageProcess:
    """One page executed by ``python -m olr_core.book`` in a process of its own, which counts its runs in a
    log of its own (``$OLR_RUN_LOG``) and keeps what it prints in a file."""

    def __init__(self, root: Path, entry: dict, profile: str, overrides: dict | None, data_dir: str | None):
        self.entry, self.folder = entry, tempfile.TemporaryDirectory()
        self.log, self.output = Path(self.folder.name) / "runs.log", Path(self.folder.name) / "output.txt"
        request = json.dumps({"root": str(root), "entry": entry, "profile": profile, "overrides": overrides or {},
                              "data_dir": data_dir})
        env = {**os.environ, "OLR_RUN_LOG": str(self.log)}
        with open(self.output, "w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "olr_core.book", request], env=env,
                                            stdout=out, stderr=subprocess.STDOUT)
        self.started = time.perf_counter()

    def poll(self):
        return self.process.poll()

    def stop(self) -> None:
        """End the page's process (and so its kernel and workers, which watch it) if it still runs."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()

    def finish(self) -> dict | None:
        """Seconds and run counts of a page that ended well, else None (see :meth:`output_tail`)."""
        seconds = time.perf_counter() - self.started
        if self.process.returncode != 0:
            return None
        counts = read_run_log(self.log)
        self.folder.cleanup()
        return {"seconds": seconds, **counts}

    def output_tail(self, lines: int = 30) -> str:
        text = self.output.read_text(errors="replace").splitlines()
        self.folder.cleanup()
        return "\n".join(line for line in text[-lines:] if "Kernel is running over TCP" not in line)


def build_book(profile: str = "quick", only: str | None = None, skip_build: bool = False,
               overrides: dict | None = None, data_dir: str | None = None, edition: str = "instructor",
               pages_at_once: int | None = None) -> int:
    """Execute the manifest's notebooks (or those ``only`` names, with ``overrides``) and build the HTML book.

    Every override is checked against each chosen page's parameters before anything runs.
    ``edition="student"`` builds into ``_build/student`` without the exercises' solutions,
    executing only the pages that have not been executed yet (unless ``only`` names some).
    ``pages_at_once``: pages executed side by side (default :func:`default_pages_at_once`).
    """
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; valid: {', '.join(EDITIONS)}")
    root = _book_environment(data_dir)
    data_dir = None if data_dir is None else os.environ["OLR_DATA_DIR"]        # (made absolute)
    entries = select_entries(load_manifest(root), only)
    if edition == "student" and not only:
        entries = [e for e in entries if not (root / "book" / "generated" / e["notebook"]).exists()]
    if overrides and not only:
        raise ValueError("-p applies to the pages named with --only (e.g. --only dsp_table2 -p seeds=3)")
    for entry in entries:
        check_overrides(root, entry, overrides or {})
    at_once = default_pages_at_once() if pages_at_once is None else pages_at_once
    started = time.perf_counter()
    compile_seconds = compile_shared_kernels() if entries else 0.0
    execute_pages(root, entries, profile, overrides, data_dir, at_once)
    if len(entries) == len(load_manifest(root)):        # the whole book: its wall time is the budget's record
        record_build(root, len(entries), at_once, time.perf_counter() - started, compile_seconds)
    write_execution_page(root)
    if skip_build:
        return 0
    if not mathjax_ready(root):
        print("[olr book] MathJax is not bundled: run 'make mathjax' (npm) so that math renders offline",
              file=sys.stderr)
        return 1
    secret_texts = prepare_assignments(root)
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "--warningiserror",
               "--keep-going"]
    output = root / "_build"
    if edition == "student":
        output = root / "_build" / "student"
        command += ["--config", str(_student_config(root)), "--path-output", str(output)]
    print("[olr book] " + " ".join(command), flush=True)
    status = subprocess.call(command, cwd=root)
    if status != 0:
        return status
    from .htmlcheck import check_book

    html = output / "_build" / "html" if edition == "student" else output / "html"
    problems = check_book(html) + [f"hidden test or solution in the {edition} edition: {leak}"
                                   for leak in assignment_leaks(html, secret_texts)]
    for line in problems:
        print(f"[olr book] page check: {line}", file=sys.stderr)
    return 1 if problems else 0


STUDENT_ASSIGNMENTS = Path("_build") / "assignments_public"      # the zips the course page links for download


def prepare_assignments(root: Path) -> dict[str, list[str]]:
    """Build the graded assignments (Otter Assign, :mod:`.course`) and zip each student folder into
    ``_build/assignments_public`` for the course page's download links; returns what must not leak."""
    from .course import build_assignments, publish_student_notebooks, secrets

    built = root / "_build" / "assignments"
    build_assignments(root, built)
    publish_student_notebooks(built, root / STUDENT_ASSIGNMENTS)
    return secrets(root, built)


def assignment_leaks(html: Path, secret_texts: dict[str, list[str]]) -> list[str]:
    """Files of a built edition (downloads and zips included) that hold a hidden test or a solution line."""
    from .course import leaks

    return leaks(html, secret_texts)


def standalone_notebook(name: str, output, profile: str = "quick", overrides: dict | None = None,
                        data_dir: str | None = None) -> Path:
    """Execute one page as a standalone notebook at ``output`` (same checks, same results store)."""
    root = _book_environment(data_dir)
    data_dir = None if data_dir is None else os.environ["OLR_DATA_DIR"]        # (made absolute)
    entries = select_entries(load_manifest(root), name)
    if len(entries) != 1:
        raise ValueError(f"{name!r} matches {len(entries)} pages ({', '.join(e['notebook'] for e in entries)}); "
                         "name exactly one")
    return execute_notebook(root, entries[0], profile, overrides, data_dir, Path(output).resolve())


def _execute_requested_page(request: str) -> None:
    """``python -m olr_core.book REQUEST``: execute the one page the JSON ``request`` names (the driver's
    :class:`_PageProcess`)."""
    asked = json.loads(request)
    try:
        execute_notebook(Path(asked["root"]), asked["entry"], asked["profile"], asked["overrides"],
                         asked["data_dir"])
    except (PageFailedError, ValueError) as failed:
        print(failed, flush=True)                     # (the driver shows it; one line, no traceback)
        sys.exit(1)


if __name__ == "__main__":
    _execute_requested_page(sys.argv[1])
