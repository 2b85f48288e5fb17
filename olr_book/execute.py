"""Executing one page with papermill in a process of its own, and the box that says how the page was produced.

The parent resolves and checks a page's parameters once and sends the page process one JSON
:class:`PageJob` (``python -m olr_book.execute JOB``), which it executes without checking again. The data
directory reaches the page's kernel through one channel: the page process's environment
(:meth:`BuildContext.environment`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from olr_core import settings

RUN_SIZES_TAG = "run-sizes"           # the notebook cell that resolves the run sizes left at None (page_sizes)


class PageFailedError(RuntimeError):
    """A page's notebook raised while it executed."""


@dataclass(frozen=True)
class BuildContext:
    """What every page of one ``olr book`` (or ``olr notebook``) shares: the book, its profile, its stores."""

    root: str
    profile: str
    results_dir: str
    data_dir: str | None = None           # --data-dir as given (made absolute); None: $OLR_DATA_DIR as it is

    @classmethod
    def create(cls, root: Path, profile: str, data_dir: str | None = None) -> BuildContext:
        """Paths made absolute: the kernels run in other directories, where a relative ``--data-dir`` or
        ``OLR_DATA_DIR`` (e.g. ``../shared/data``) would silently find nothing."""
        results = settings.results_dir(default=root / "results")
        absolute = None if data_dir is None else str(Path(data_dir).expanduser().resolve())
        return cls(str(root), profile, str(Path(results).expanduser().resolve()), absolute)

    def environment(self, run_log: Path | None = None) -> dict[str, str]:
        """The environment of a page process (its kernel inherits it)."""
        env = {**os.environ, "OLR_RESULTS_DIR": self.results_dir}
        if self.data_dir is not None:
            env["OLR_DATA_DIR"] = self.data_dir
        for name in ("OLR_DATA_DIR", "OLR_CACHE_DIR"):
            if env.get(name):
                env[name] = str(Path(env[name]).expanduser().resolve())
        if run_log is not None:
            env["OLR_RUN_LOG"] = str(run_log)
        return env


@dataclass(frozen=True)
class PageJob:
    """One page to execute: its checked parameters, the reader's own among them, and where it goes."""

    context: BuildContext
    page: str
    notebook: str
    parameters: dict
    overrides: dict
    target: str

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> PageJob:
        fields = json.loads(text)
        return cls(**{**fields, "context": BuildContext(**fields["context"])})


def regenerate_command(job: PageJob) -> str:
    """The command line that re-executes the page with these settings."""
    parts = ["olr", "book", "--profile", job.context.profile, "--only", job.page]
    for key, value in job.overrides.items():
        text = json.dumps(value) if not isinstance(value, str) else value
        parts += ["-p", shlex.quote(f"{key}={text}")]
    if job.context.data_dir:
        parts += ["--data-dir", shlex.quote(job.context.data_dir)]
    return " ".join(parts)


def provenance_cell(job: PageJob, seconds: float):
    import nbformat

    from olr_core import __version__

    rows = "\n".join(f"| `{k}` | `{v!r}` |{' **your value**' if k in job.overrides else ''}"
                     for k, v in job.parameters.items())
    own = (f" and {len(job.overrides)} parameter{'s' * (len(job.overrides) != 1)} of your own"
           if job.overrides else "")
    text = (f"```{{admonition}} How this page was produced\n:class: note\n"
            f"Executed with profile **{job.context.profile}**{own} by `olr book` (`olr_core` {__version__}) in "
            f"{seconds:.0f} s.{imported_runs_note()} Regenerate it with\n\n    {regenerate_command(job)}\n\n"
            f"and change any parameter with `-p name=value` (`olr book --list` shows each page's parameters; "
            f"`olr notebook {job.page} -p ... -o copy.ipynb` writes a standalone notebook).\n\n"
            f"| parameter | value |\n|---|---|\n{rows}\n```")
    return nbformat.v4.new_markdown_cell(text)


def imported_runs_note() -> str:
    """A sentence naming each bundle (``olr store import``) the page's runs came from: its file, profile and
    SHA-256, counted over the runs the page read (its run log, ``$OLR_RUN_LOG``; without one, over every run
    the bundle brought); "" when the store imported no bundle."""
    from olr_core.experiments import ResultStore
    from olr_core.experiments.bundle import bundle_sources, imported_bundles

    store = ResultStore()
    imports = imported_bundles(store)
    if not imports:
        return ""
    log = Path(settings.run_log()) if settings.run_log() else None
    keys = {line.split()[-1] for line in log.read_text().splitlines() if line.strip()} if log and log.exists() \
        else {k for r in imports for k in r["keys"]}
    sources = bundle_sources(store, keys)
    if not sources:
        return " None of its runs came from the bundles imported into its store."
    return " " + "; ".join(_bundle_note(r, count) for r, count in sources) + "."


def plain(value, limit: int = 60) -> str:
    """A field of an imported bundle's manifest as inert text for the page: only letters, digits, spaces and
    ``. _ : + -`` are kept (no Markdown, HTML or MyST role or directive can survive), at most ``limit`` long."""
    text = "".join(c if c.isascii() and (c.isalnum() or c in " ._:+-") else "?" for c in str(value))
    return text[:limit] or "?"


def _bundle_note(record: dict, count: int) -> str:
    """One bundle's part of the note: its file, profile, SHA-256, export date and how many runs were verified."""
    profile = f"profile {plain(record['profile'], 20)}" if record.get("profile") else "a whole store's runs"
    verified = record.get("verified") if isinstance(record.get("verified"), int) else 0
    checked = f", {verified} of its runs computed again on import and found identical" if verified else \
        ", none of its runs computed again on import"
    return (f"{count} of its runs came from the imported bundle {plain(record.get('bundle'))} ({profile}, SHA-256 "
            f"{plain(record.get('sha256'), 16)}, exported {plain(record.get('created'), 24)}{checked})")


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


def for_readers(nb) -> None:
    """Hide code inputs behind a toggle and drop the parameter and run-size cells (the provenance box shows
    what ran); a cell tagged ``show-input`` (code that is the page's subject, e.g. a method to read) stays
    visible."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if {"parameters", "injected-parameters", RUN_SIZES_TAG} & set(tags):
            tags.append("remove-cell")
        elif not {"hide-input", "remove-input", "show-input"} & set(tags):
            tags.append("hide-input")


def execute_page(job: PageJob) -> Path:
    """Run the job's notebook with its parameters into its target, the provenance box inserted."""
    import nbformat

    root, target = Path(job.context.root), Path(job.target)
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    executed = _execute_to_temporary(root / "notebooks" / job.notebook, target, job.parameters, root / "notebooks")
    nb = nbformat.read(executed, as_version=4)
    for_readers(nb)
    nb.cells.insert(provenance_position(nb.cells), provenance_cell(job, time.perf_counter() - started))
    nbformat.write(nb, executed)
    os.replace(executed, target)                     # the built page changes only now, whole
    return target


def _execute_to_temporary(source: Path, target: Path, params: dict, cwd: Path) -> Path:
    """Execute ``source`` (a page's text, read with jupytext) into a temporary file beside ``target`` and return
    it. On failure the built page is left as it was, the failed notebook is kept in the temporary folder for
    reading, and a :class:`PageFailedError` says in one line which cell raised what and where that notebook is."""
    import papermill

    from .manifest import read_page

    executed = target.with_name(f".{target.stem}.{os.getpid()}.executing.ipynb")
    try:
        papermill.execute_notebook(read_page(source), str(executed), parameters=params, cwd=str(cwd),
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


class PageProcess:
    """One page executed by ``python -m olr_book.execute JOB`` in a process of its own, which counts its runs
    in a log of its own (``$OLR_RUN_LOG``) and keeps what it prints in a file."""

    def __init__(self, job: PageJob):
        self.job, self.folder = job, tempfile.TemporaryDirectory()
        self.log, self.output = Path(self.folder.name) / "runs.log", Path(self.folder.name) / "output.txt"
        with open(self.output, "w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "olr_book.execute", job.to_json()],
                                            env=job.context.environment(self.log), stdout=out,
                                            stderr=subprocess.STDOUT)
        self.started = time.perf_counter()

    def poll(self):
        return self.process.poll()

    def wait(self) -> int:
        return self.process.wait()

    def close(self) -> None:
        """Remove the page's log and output (read them first)."""
        self.folder.cleanup()

    def stop(self) -> None:
        """End the page's process (and so its kernel and workers, which watch it) if it still runs."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()

    def finish(self, store) -> dict | None:
        """Seconds and run counts (in ``store``) of a page that ended well, else None (see :meth:`failure`)."""
        from .stats import read_run_log

        seconds = time.perf_counter() - self.started
        if self.process.returncode != 0:
            return None
        counts = read_run_log(self.log, store)
        self.close()
        return {"seconds": seconds, **counts}

    def output_tail(self, lines: int = 30) -> str:
        text = self.output.read_text(errors="replace").splitlines()
        self.close()
        return "\n".join(line for line in text[-lines:] if "Kernel is running over TCP" not in line)

    def failure(self) -> str:
        """The one line the page process printed last on failing (its :class:`PageFailedError`)."""
        tail = self.output_tail().splitlines()
        return next((line for line in reversed(tail) if line.startswith("page ")), tail[-1] if tail else "")


def _execute_job(text: str) -> None:
    """``python -m olr_book.execute JOB``: execute the one page the JSON job names (a :class:`PageProcess`)."""
    try:
        execute_page(PageJob.from_json(text))
    except PageFailedError as failed:
        print(failed, flush=True)                     # (the driver shows it; one line, no traceback)
        sys.exit(1)


if __name__ == "__main__":
    _execute_job(sys.argv[1])
