"""``olr book``: execute the manifest's pages (side by side, each in its own process), then build the book.

Executed notebooks go to ``book/generated/``, each with a box stating the profile and parameters that
produced it; Jupyter Book then compiles them with the narrative chapters, warnings as errors, and the built
pages are checked (:mod:`olr_book.htmlcheck`).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from .execute import BuildContext, PageFailedError, PageJob, PageProcess
from .manifest import Page, load_pages, planned_parameters, project_root, select_pages
from .pdf import html_command
from .stats import record_build, record_execution, write_execution_page

EDITIONS = ("instructor", "student")
STUDENT_ASSIGNMENTS = Path("_build") / "assignments_public"      # the zips the course page links for download


def default_pages_at_once() -> int:
    """Pages executed side by side: two on a machine with two or more cores (one page's single-threaded
    stretches, such as its kernel start, plots and summaries, then overlap another's runs), else one."""
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def page_dependencies(pages: list[Page]) -> dict[str, set[str]]:
    """Each page -> the pages it waits for: the manifest's ``after`` (pages whose stored runs or tuning choices
    it reads: it must neither compute their runs a second time beside them nor run before their choices are
    made)."""
    return {page.name: set(page.after) for page in pages}


def page_job(context: BuildContext, page: Page, overrides: dict | None = None, target: Path | None = None,
             approved: bool = False) -> PageJob:
    """The page's job at the context's profile, its parameters checked (names, types, ranges) and, where the
    reader's own make it larger than its profile, its runs checked against the CLI's budgets
    (:func:`page_budget`; ``approved``: ``--yes``), here, before any kernel starts."""
    params = planned_parameters(Path(context.root), page, context.profile, overrides)
    page_budget(context, page, params, overrides or {}, approved)
    target = target or Path(context.root) / "book" / "generated" / page.executed_name
    return PageJob(context, page.name, page.notebook, params, dict(overrides or {}), str(target))


def _size(value) -> int:
    """A run size as a count (a list of seeds counts its entries)."""
    if isinstance(value, bool):
        return int(value)
    return len(value) if isinstance(value, (list, tuple)) else value if isinstance(value, int) else 1


def page_budget(context: BuildContext, page: Page, params: dict, overrides: dict, approved: bool) -> None:
    """Stop (one line, :class:`~olr_core.budget.BudgetError`) a page whose own run sizes (``-p seeds=...``,
    ``rounds``...) would take it beyond the budgets of ``olr grid`` (runs, CPU hours, memory), unless
    ``approved``. The page's runs are planned at its profile's sizes, never at the reader's (which could be too
    many even to describe), and scaled: runs by the growth of ``seeds``, rounds by that of ``rounds``; the
    other sizes (sessions, samples) multiply the work as rounds do. A page running no grid is planned as one run."""
    from olr_core.budget import Plan, check_rounds, require_approval

    from .manifest import is_run_size

    grown = {name: _size(value) / max(_size(page.parameters(context.profile)[name]), 1)
             for name, value in overrides.items() if is_run_size(name) and name in page.parameters(context.profile)}
    grown = {name: factor for name, factor in grown.items() if factor > 1}
    if not grown:
        return
    check_rounds(params.get("rounds"))
    from .plan import page_specs

    specs = page_specs(Path(context.root), page, context.profile, context.data_dir) or [None]
    seeds = grown.get("seeds", 1.0)
    work = math.prod(f for name, f in grown.items() if name != "seeds")
    rounds = sum(getattr(spec, "rounds", 1000) for spec in specs)
    longest = max(getattr(spec, "rounds", 1000) for spec in specs)
    plan = Plan(int(len(specs) * seeds), int(rounds * seeds * work), int(longest * grown.get("rounds", 1.0)),
                workers=_page_workers(params.get("jobs"), int(len(specs) * seeds)))
    shown = " ".join(f"-p {k}={v}" for k, v in overrides.items() if k in grown)
    require_approval(plan, approved, f"page {page.name} with {shown}")


def _page_workers(jobs, runs: int) -> int:
    """The worker processes a page's grids start for ``runs`` runs with its parameter ``jobs`` (capped by cores
    and runs, :func:`olr_core.settings.worker_count`); 1 for a value the page itself will refuse."""
    from olr_core.settings import worker_count

    try:
        return worker_count(jobs, max(runs, 1))
    except ValueError:
        return 1


class Build:
    """The pages of one build and their queues: pending, running (at most ``at_once``), finished. A page never
    runs beside one it waits for; a failing page stops the build (no new page starts, the running ones finish)."""

    def __init__(self, context: BuildContext, jobs: list[PageJob], waits: dict[str, set[str]], at_once: int):
        if not isinstance(at_once, int) or isinstance(at_once, bool) or at_once < 1:
            raise ValueError(f"option --pages-at-once={at_once!r} is invalid; use a positive count (default 2)")
        chosen = {job.page for job in jobs}
        self.context, self.at_once = context, at_once
        self.waits = {job.page: waits.get(job.page, set()) & chosen for job in jobs}
        self.pending, self.running, self.finished = list(jobs), {}, {}
        self.failure: tuple[str, str] | None = None

    def run(self) -> dict[str, dict]:
        """Execute every page; returns each page's seconds and run counts."""
        try:
            while self.running or (self.pending and self.failure is None):
                self._start_ready()
                time.sleep(0.1)
                self._collect_ended()
        finally:
            for process in self.running.values():      # interrupted (or failed): no page goes on without us
                process.stop()
        if self.failure:
            raise PageFailedError(f"page {self.failure[0]} failed; the build stopped there. What it printed last: "
                                  f"{self.failure[1]}")
        return self.finished

    def _start_ready(self) -> None:
        while len(self.running) < self.at_once and self.failure is None:
            busy = {job.page for job in self.pending} | set(self.running)
            ready = next((job for job in self.pending if not self.waits[job.page] & busy), None)
            if ready is None:
                return
            self.pending.remove(ready)
            print(f"[olr book] executing {ready.notebook} ({self.context.profile})", flush=True)
            self.running[ready.page] = PageProcess(ready)

    def _collect_ended(self) -> None:
        from olr_core.experiments import ResultStore

        for page, process in list(self.running.items()):
            if process.poll() is None:
                continue
            del self.running[page]
            outcome = process.finish(ResultStore(self.context.results_dir))
            if outcome is None:
                self.failure = self.failure or (page, process.failure())
                continue
            self.finished[page] = outcome
            record_execution(Path(self.context.root), page, self.context.profile, process.job.parameters,
                             outcome["seconds"], outcome)
            print(f"[olr book] {process.job.notebook} took {outcome['seconds']:.0f} s "
                  f"({outcome['computed']} runs computed, {outcome['reused']} reused)", flush=True)


def execute_pages(context: BuildContext, pages: list[Page], overrides: dict | None, at_once: int,
                  approved: bool = False) -> dict[str, dict]:
    """Execute ``pages`` (checked first, all of them) side by side; see :class:`Build`."""
    jobs = [page_job(context, page, overrides, approved=approved) for page in pages]
    return Build(context, jobs, page_dependencies(load_pages(Path(context.root))), at_once).run()


# The compiled rounds the pages share, each readied by a few rounds of a ranker that plays them: the dueling
# family's two comparison methods (about 10 s each to compile), NSGD's rounds and PDGD's blocks (about 20 s).
SHARED_KERNELS = {"team_draft": ("mgd_dsp", {}),
                  "probabilistic": ("mgd_dsp", {"multileave": "probabilistic", "credit_samples": 10}),
                  "nsgd": ("nsgd_dsp", {}),
                  "pdgd": ("pdgd", {})}


def compile_rounds(kernel: str) -> None:
    """Compile (or load from numba's cache) one of :data:`SHARED_KERNELS` by playing 20 rounds of its ranker on
    the small synthetic preset."""
    from olr_core.data import load_fold
    from olr_core.loop import run_online
    from olr_core.rankers import make_ranker
    from olr_core.users import make_user

    if kernel not in SHARED_KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; valid: {', '.join(SHARED_KERNELS)}")
    algorithm, params = SHARED_KERNELS[kernel]
    fold = load_fold("synth-mq")
    run_online(make_ranker(algorithm, **params), fold, make_user("navigational", fold.max_grade), 20, seed=0)


def compile_shared_kernels() -> float:
    """Compile numba's heaviest shared kernels (:data:`SHARED_KERNELS`), each in a process of its own, before any
    page starts; else, on a fresh checkout, each page and worker process that first needs one would compile it
    again (measured: about 100 CPU seconds in a build). With numba's cache already filled this only loads them
    (a second)."""
    started = time.perf_counter()
    code = "from olr_book.build import compile_rounds; compile_rounds({!r})"
    processes = [subprocess.Popen([sys.executable, "-c", code.format(kernel)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for kernel in SHARED_KERNELS]
    for process in processes:
        _, errors = process.communicate()
        if process.returncode != 0:
            last = (errors.strip().splitlines() or ["(no message)"])[-1]
            raise RuntimeError(f"compiling numba's shared kernels failed: {last}")
    seconds = time.perf_counter() - started
    print(f"[olr book] numba's shared kernels ready in {seconds:.0f} s", flush=True)
    return seconds


def student_config(root: Path) -> Path:
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


def mathjax_ready(root: Path) -> bool:
    return (root / "_mathjax" / "mathjax" / "tex-chtml.js").exists()


def prepare_assignments(root: Path) -> dict[str, list[str]]:
    """Build the graded assignments (Otter Assign, :mod:`olr_core.course`) and zip each student folder into
    ``_build/assignments_public`` for the course page's download links; returns what must not leak."""
    from olr_core.course import build_assignments, publish_student_notebooks, secrets

    built = root / "_build" / "assignments"
    build_assignments(root, built)
    publish_student_notebooks(built, root / STUDENT_ASSIGNMENTS)
    return secrets(root, built)


def build_book(profile: str = "quick", only: str | None = None, skip_build: bool = False,
               overrides: dict | None = None, data_dir: str | None = None, edition: str = "instructor",
               pages_at_once: int | None = None, approved: bool = False) -> int:
    """Execute the manifest's pages (or those ``only`` names, with ``overrides``) and build the HTML book.

    Every page's parameters are checked before anything runs. ``edition="student"`` builds into
    ``_build/student`` without the exercises' solutions, executing only the pages that have not been executed
    yet (unless ``only`` names some). ``pages_at_once``: pages side by side (default
    :func:`default_pages_at_once`).
    """
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}; valid: {', '.join(EDITIONS)}")
    root = project_root()
    context = BuildContext.create(root, profile, data_dir)
    everything = load_pages(root)
    pages = select_pages(everything, only)
    if edition == "student" and not only:
        pages = [p for p in pages if not (root / "book" / "generated" / p.executed_name).exists()]
    if overrides and not only:
        raise ValueError("-p applies to the pages named with --only (e.g. --only dsp_table2 -p seeds=3)")
    jobs = [page_job(context, page, overrides, approved=approved) for page in pages]
    build = Build(context, jobs, page_dependencies(everything),
                  default_pages_at_once() if pages_at_once is None else pages_at_once)
    started = time.perf_counter()
    compile_seconds = compile_shared_kernels() if jobs else 0.0
    build.run()
    if len(jobs) == len(everything):        # the whole book: its wall time is the budget's record
        record_build(root, len(jobs), build.at_once, time.perf_counter() - started, compile_seconds)
    write_execution_page(root, [p.name for p in everything])
    return 0 if skip_build else compile_book(root, edition)


def compile_book(root: Path, edition: str) -> int:
    """Jupyter Book over the executed pages, then the checks of the built HTML; 0 when all is well."""
    if not mathjax_ready(root):
        print("[olr book] MathJax is not bundled: run 'make mathjax' (npm) so that math renders offline",
              file=sys.stderr)
        return 1
    from olr_core.course import leaks

    from .htmlcheck import check_book

    secret_texts = prepare_assignments(root)
    command = html_command(root)
    output = root / "_build"
    if edition == "student":
        output = root / "_build" / "student"
        command += ["--config", str(student_config(root)), "--path-output", str(output)]
    print("[olr book] " + " ".join(command), flush=True)
    status = subprocess.call(command, cwd=root)
    if status != 0:
        return status
    html = output / "_build" / "html" if edition == "student" else output / "html"
    problems = check_book(html) + [f"hidden test or solution in the {edition} edition: {leak}"
                                   for leak in leaks(html, secret_texts)]
    for line in problems:
        print(f"[olr book] page check: {line}", file=sys.stderr)
    return 1 if problems else 0


def standalone_notebook(name: str, output, profile: str = "quick", overrides: dict | None = None,
                        data_dir: str | None = None, approved: bool = False) -> Path:
    """Execute one page as a standalone notebook at ``output`` (same checks, same results store, a page process
    of its own as in a build)."""
    root = project_root()
    pages = select_pages(load_pages(root), name)
    if len(pages) != 1:
        raise ValueError(f"{name!r} matches {len(pages)} pages ({', '.join(p.notebook for p in pages)}); "
                         "name exactly one")
    job = page_job(BuildContext.create(root, profile, data_dir), pages[0], overrides, Path(output).resolve(),
                   approved)
    process = PageProcess(job)
    if process.wait() != 0:
        raise PageFailedError(process.failure())
    process.close()
    return Path(job.target)
