"""Graded assignments: build student notebooks and an autograder from the solutions, grade submissions.

Each assignment is one solution notebook in ``assignments/`` kept as jupytext percent text (``NAME.py``)
in otter-grader's assignment format (``# BEGIN QUESTION`` ... ``# END QUESTION`` raw cells, solutions
between ``# BEGIN SOLUTION`` / ``# END SOLUTION``, exception-based tests marked hidden or public).
:func:`build_assignments` runs Otter Assign on each: ``student/`` gets the notebook with stubs and the
public tests, ``autograder/`` the solution and every test. :func:`grade_submissions` grades a folder of
submitted notebooks into one CSV row per test with its feedback. Each notebook runs in a jail of its own
(:mod:`olr_core.course_jail`: bubblewrap namespaces, an unprivileged uid, no network, read-only packages,
resource limits; :mod:`olr_core.course_sandbox` inside), which answers the tests' calls of its functions with
plain data (:mod:`olr_core.course_wire`); the tests, their expected values and tolerances stay here, in the
grader, which compares and writes every grade. Nothing here is imported by ``olr_core``
itself; otter-grader is needed only to build.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
GRADES_FIELDS = ("submission", "assignment", "test", "points", "possible", "feedback")


@dataclass(frozen=True)
class Limits:
    """What one submission may spend: seconds per test and for all its notebook cells, characters it may print
    per test or cell, seconds for the process to start (imports), and in its jail megabytes of address
    space, megabytes per file and processes."""

    test_seconds: float = 10.0
    notebook_seconds: float = 60.0
    output_bytes: int = 100_000
    startup_seconds: float = 30.0
    memory_mb: int = 2048
    file_mb: int = 64
    processes: int = 256


def assignment_sources(root: Path) -> list[Path]:
    """The solution notebooks: every ``assignments/*.py`` (jupytext percent text)."""
    folder = root / "assignments"
    sources = sorted(folder.glob("*.py"))
    if not sources:
        raise FileNotFoundError(f"no assignments in {folder}: add NAME.py solution notebooks (jupytext percent)")
    return sources


def solution_notebook(source: Path, target: Path) -> Path:
    """``source`` (jupytext percent text) written as the .ipynb Otter Assign reads."""
    import jupytext
    import nbformat

    notebook = jupytext.read(source)
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    notebook.metadata.pop("jupytext", None)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)
    return target


def build_assignments(root: Path, output: Path | None = None, only: str | None = None) -> dict[str, Path]:
    """Otter Assign on every solution notebook (or the one ``only`` names) into ``output/NAME/{student,
    autograder}`` (default ``_build/assignments``); returns each assignment's folder."""
    from otter.assign import main as otter_assign

    output = (output or root / "_build" / "assignments").resolve()
    sources = [s for s in assignment_sources(root) if only in (None, s.stem)]
    if not sources:
        raise ValueError(f"--only {only!r} names no assignment; assignments: "
                         f"{', '.join(s.stem for s in assignment_sources(root))}")
    built = {}
    with tempfile.TemporaryDirectory() as scratch:
        for source in sources:
            master = solution_notebook(source, Path(scratch) / source.stem / f"{source.stem}.ipynb")
            target = output / source.stem
            shutil.rmtree(target, ignore_errors=True)
            otter_assign(str(master), str(target), no_run_tests=True)
            built[source.stem] = target
    return built


def find_submissions(folder: Path) -> list[Path]:
    """Every notebook under ``folder`` (checkpoints left out), in name order; links are not followed (a link
    to a folder or a notebook is not a submission, and a loop of links cannot stop the grading)."""
    if not folder.is_dir():
        raise FileNotFoundError(f"no folder {folder}: pass the folder holding the submitted notebooks")
    found = []
    for here, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if d != ".ipynb_checkpoints"]
        found += [Path(here) / n for n in names if n.endswith(".ipynb") and not (Path(here) / n).is_symlink()
                  and (Path(here) / n).is_file()]
    return sorted(found)


def submission_assignment(path: Path, known: list[str]) -> str | None:
    """The assignment a notebook answers: Otter's ``assignment_name`` in its metadata, else its file name."""
    try:
        metadata = json.loads(path.read_text(errors="replace")).get("metadata", {})
        named = metadata.get("otter", {}).get("assignment_name")
    except (json.JSONDecodeError, AttributeError):
        named = None
    if named in known:
        return named
    return next((name for name in known if path.stem == name or path.stem.startswith(name)), None)


def otter_test_files():
    """otter-grader's test-file module, imported without running ``otter/__init__`` (which loads its whole
    command line, about 2 s); the test files' own ``from otter.test_files import test_case`` then finds it."""
    import importlib
    import importlib.util
    import types

    if "otter" not in sys.modules:
        spec = importlib.util.find_spec("otter")
        if spec is None:
            raise ModuleNotFoundError("grading needs otter-grader: pip install -r requirements.txt")
        package = types.ModuleType("otter")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["otter"] = package
    return importlib.import_module("otter.test_files")


def load_tests(tests_folder: Path) -> list[tuple[str, float, object]]:
    """Every test case of the autograder: (``question.test``, points, the test_case object)."""
    ExceptionTestFile = otter_test_files().ExceptionTestFile

    out = []
    for path in sorted(tests_folder.glob("*.py")):
        test_file = ExceptionTestFile.from_file(str(path))
        out += [(f"{test_file.name}.{case.body.test_func.__name__}", float(case.points or 0), case.body)
                for case in test_file.test_cases]
    return out


def load_hidden_test_names(tests_folder: Path) -> list[str]:
    """The function names of the autograder's hidden tests (``test_...``)."""
    ExceptionTestFile = otter_test_files().ExceptionTestFile

    return [case.body.test_func.__name__ for path in sorted(tests_folder.glob("*.py"))
            for case in ExceptionTestFile.from_file(str(path)).test_cases if case.hidden]


def possible_points(tests_folder: Path) -> list[tuple[str, float]]:
    """Every test of an autograder's ``tests`` folder: its name (``question.test``) and points."""
    return [(name, points) for name, points, _ in load_tests(tests_folder)]


class NotebookError(Exception):
    """The notebook's function raised, ran out of time or returned what cannot be graded (the message says)."""


class Notebook:
    """A submission's notebook executed in its jail (:mod:`olr_core.course_jail`), restarted (its cells run
    again) after its process died or was stopped, at most ``restarts`` times."""

    def __init__(self, cells: dict, names: list[str], work: Path, scratch: Path, limits: Limits, cpu_seconds: int):
        from .course_jail import Jail

        self.cells, self.names, self.limits, self.restarts = cells, names, limits, 2
        self.jail = Jail(work=work, scratch=scratch, memory_bytes=limits.memory_mb * 2 ** 20, cpu_seconds=cpu_seconds,
                         file_bytes=limits.file_mb * 2 ** 20, processes=limits.processes)
        self.sandbox, self.kinds, self.problems, self.deadline, self.failure = None, {}, [], 0.0, None

    def start(self) -> None:
        """Start the process and run the cells: the names the notebook defined and the cells that failed."""
        from .course_jail import Sandbox, SandboxDied

        self.restarts -= 1
        self.sandbox = Sandbox(self.jail, {"output_bytes": self.limits.output_bytes,
                                           "notebook_seconds": self.limits.notebook_seconds})
        seconds = self.limits.startup_seconds + self.limits.notebook_seconds
        try:
            answer = self.sandbox.ask({"notebook": self.cells, "names": self.names}, seconds)
        except SandboxDied as died:
            self.close()
            self.failure = f"the notebook could not run: {died}"
            self.problems = [self.failure]
            return
        kinds, problems = answer.get("names"), answer.get("problems")
        kinds = kinds if isinstance(kinds, dict) else {}
        self.kinds = {str(k): v for k, v in kinds.items() if v in ("function", "data")}
        self.problems = [str(p)[:300] for p in problems][:50] if isinstance(problems, list) else []

    def alive(self) -> bool:
        """Whether a process answers (starting one if the last died and restarts are left)."""
        if self.sandbox is None and self.restarts > 0:
            self.start()
        return self.sandbox is not None

    def ask(self, message: dict) -> dict:
        """One request within the running test's time; the process is stopped if it does not answer."""
        from .course_jail import SandboxDied

        left = self.deadline - time.monotonic()
        if self.sandbox is None or left <= 0:
            raise NotebookError(f"it did not finish within the limit of {self.limits.test_seconds:g} s")
        try:
            answer = self.sandbox.ask({**message, "seconds": left, "limit": self.limits.test_seconds}, left + 2.0)
        except SandboxDied as died:
            self.close()
            timed_out = str(died).startswith("it did not finish")
            raise NotebookError(f"it did not finish within the limit of {self.limits.test_seconds:g} s (an endless "
                                "loop, or far too slow?)" if timed_out else str(died)) from None
        if "error" in answer:
            raise NotebookError(str(answer["error"])[:300])
        return answer

    def value(self, name: str):
        """The notebook's ``name``: a callable standing for its function, or its value as data."""
        from .course_wire import WireError, decode

        if self.kinds.get(name) == "function":
            return NotebookFunction(self, name)
        try:
            return decode(self.ask({"get": name}).get("value"))
        except WireError as error:
            raise NotebookError(f"{name} cannot be graded: {error}") from None

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None


class NotebookFunction:
    """A function of the notebook, called from a test: the inputs go to the jail as data, the result (and the
    inputs' arrays and generators as the function left them) come back as data."""

    def __init__(self, notebook: Notebook, name: str):
        self.notebook, self.name = notebook, name

    def __call__(self, *args, **kwargs):
        from .course_wire import WireError, decode, encode

        answer = self.notebook.ask({"call": self.name, "args": encode(list(args)), "kwargs": encode(kwargs)})
        try:
            value, changed = decode(answer.get("value")), answer.get("args")
            for original, after in zip(args, changed if isinstance(changed, list) else []):
                _update(original, decode(after))
        except (WireError, ValueError, TypeError) as error:
            raise NotebookError(f"{self.name} returned what cannot be graded: {error}") from None
        return value


def _update(original, after) -> None:
    """Give ``original`` (an array or generator the test passed) the state the notebook's function left it in."""
    import numpy as np

    if isinstance(original, np.ndarray) and isinstance(after, np.ndarray) and original.flags.writeable:
        if after.shape == original.shape:
            np.copyto(original, after, casting="unsafe")
    elif isinstance(original, np.random.Generator) and isinstance(after, np.random.Generator):
        if type(original.bit_generator) is type(after.bit_generator):
            original.bit_generator.state = after.bit_generator.state


def run_test(case, notebook: Notebook, seconds: float) -> str | None:
    """Run one test here, in the grader, with the notebook's functions standing in: None if it passed, else
    the feedback (the test's own assertion message, or what the notebook's code did)."""
    from .course_jail import SandboxDied

    names = [name for name in case._get_func_params() if name != "env"]
    if not notebook.alive():
        return notebook.failure or "the notebook's process could not be started again after it ended"
    missing = [name for name in names if name not in notebook.kinds]
    if missing:
        return (f"{', '.join(missing)} is not defined: did the cell defining it raise or not run? (see the "
                "(notebook) row)")
    notebook.deadline = time.monotonic() + seconds
    try:
        case.test_func(*[notebook.value(name) for name in names])
    except NotebookError as error:
        return str(error)
    except SandboxDied as died:
        notebook.close()
        return str(died)
    except AssertionError as failed:
        return str(failed)[:300] or "an assertion failed (no message)"
    except Exception as error:           # noqa: BLE001 - the test could not use what came back
        return f"the test could not use what your code returned ({type(error).__name__})"
    return None


def read_notebook(path: Path, max_bytes: int = 20 * 2 ** 20) -> dict:
    """The submitted notebook's JSON (:class:`ValueError`, one sentence, if it is not a readable notebook)."""
    if path.stat().st_size > max_bytes:
        raise ValueError(f"the notebook is larger than {max_bytes // 2 ** 20} MB")
    try:
        notebook = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as error:
        raise ValueError(f"the file is not a Jupyter notebook (its JSON does not parse: {str(error)[:80]})") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ValueError("the file is not a Jupyter notebook (it has no list of cells)")
    return notebook


def grade_one(notebook: Path, autograder: Path, limits: Limits, with_folder: bool = True) -> list[dict]:
    """One submission graded: its notebook runs in its own jail, in a copy of its folder (``with_folder``, for
    the files it reads) or of the notebook alone, and every test runs here with the notebook's functions
    answering as data: one record per test (points, possible, feedback), plus a ``(notebook)`` record naming
    cells that raised or were stopped. Whatever the notebook does, every test's possible points are kept."""
    from .course_jail import copy_submission, prepare

    tests = load_tests(autograder / "tests")
    names = sorted({n for _, _, case in tests for n in case._get_func_params() if n != "env"})

    def failed(feedback: str) -> list[dict]:
        return [{"test": name, "points": 0.0, "possible": points, "feedback": feedback} for name, points, _ in tests]

    cpu = int(limits.startup_seconds + limits.notebook_seconds + limits.test_seconds * (len(tests) + 1)) * 3
    with tempfile.TemporaryDirectory(prefix="olr-grade-") as scratch:
        work, spare = Path(scratch) / "submission", Path(scratch) / "scratch"
        try:
            cells = read_notebook(notebook)
            copy_submission(notebook.parent if with_folder else notebook, work)
        except (ValueError, OSError) as error:
            return failed(f"the submission could not be graded: {str(error)[:200]}")
        spare.mkdir()
        prepare(Path(scratch))
        session = Notebook(cells, names, work, spare, limits, cpu)
        try:
            session.start()
            records = []
            for name, points, case in tests:
                problem = run_test(case, session, limits.test_seconds)
                records.append({"test": name, "points": 0.0 if problem else points, "possible": points,
                                "feedback": problem or "passed"})
        finally:
            session.close()
    if session.problems:
        records.append({"test": "(notebook)", "points": 0.0, "possible": 0.0,
                        "feedback": "; ".join(session.problems)[:1000]})
    return records


def neutral(value):
    """A CSV cell that a spreadsheet shows as text: control characters dropped, and a text starting with
    ``= + - @`` (a formula) prefixed with an apostrophe."""
    if not isinstance(value, str):
        return value
    text = "".join(c if c.isprintable() else " " for c in value)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def write_grades(rows: list[dict], output: Path) -> None:
    """The CSV, whole or not at all: written to a temporary name, renamed when complete."""
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=GRADES_FIELDS, extrasaction="ignore")
            writer.writeheader()
            writer.writerows({k: neutral(row.get(k, "")) for k in GRADES_FIELDS} for row in rows)
        os.replace(temporary, output)
    finally:
        temporary.unlink(missing_ok=True)


def grade_submissions(folder: Path, autograders: Path, output: Path, limits: Limits = Limits(),
                      jobs: int = 1) -> list[dict]:
    """Grade every notebook under ``folder`` against the autograders built in ``autograders`` (one folder
    per assignment, as :func:`build_assignments` writes) into the CSV ``output``: one row per test.
    ``jobs`` submissions are graded at once, each in its own jail; refuses to start (one line) where the jail
    cannot be built. A submission that cannot be graded scores 0 of its possible points; the CSV is always
    written whole."""
    from concurrent.futures import ThreadPoolExecutor

    from .course_jail import check_available

    known = sorted(p.name for p in autograders.iterdir() if (p / "autograder" / "tests").is_dir()) \
        if autograders.is_dir() else []
    if not known:
        raise FileNotFoundError(f"no autograders in {autograders}: run 'olr course build' first")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"option --jobs={jobs!r} is invalid; use a positive count of processes")
    with tempfile.TemporaryDirectory(prefix="olr-probe-") as probe:
        check_available(Path(probe))

    def graded(notebook: Path) -> list[dict]:
        name, shown = submission_assignment(notebook, known), str(notebook.relative_to(folder))
        if name is None:
            return [{"submission": shown, "assignment": "", "test": "(notebook)", "points": 0.0, "possible": 0.0,
                     "feedback": f"not an assignment's notebook; name it after one of: {', '.join(known)}"}]
        autograder = autograders / name / "autograder"
        try:
            records = grade_one(notebook, autograder, limits, with_folder=notebook.parent != folder)
        except Exception as error:       # noqa: BLE001 - one submission never costs the class its CSV
            records = [{"test": test, "points": 0.0, "possible": points,
                        "feedback": f"the grader could not grade this notebook ({type(error).__name__})"}
                       for test, points in possible_points(autograder / "tests")]
        return [{"submission": shown, "assignment": name, "test": r["test"], "points": float(r["points"]),
                 "possible": float(r["possible"]), "feedback": str(r["feedback"])} for r in records]

    with ThreadPoolExecutor(jobs) as pool:
        rows = [row for records in pool.map(graded, find_submissions(folder)) for row in records]
    write_grades(rows, output)
    return rows


def totals(rows: list[dict]) -> dict[str, tuple[float, float]]:
    """Each submission's points and possible points."""
    out: dict[str, tuple[float, float]] = {}
    for row in rows:
        points, possible = out.get(row["submission"], (0.0, 0.0))
        out[row["submission"]] = (points + float(row["points"]), possible + float(row["possible"]))
    return out


def publish_student_notebooks(built: Path, target: Path) -> dict[str, Path]:
    """Each built assignment's ``student`` folder (stub notebook and public tests) zipped into
    ``target/NAME.zip``, the files the book links for download; returns each zip."""
    import zipfile

    target.mkdir(parents=True, exist_ok=True)
    out = {}
    for folder in sorted(p for p in built.iterdir() if (p / "student").is_dir()):
        path = target / f"{folder.name}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for file in sorted((folder / "student").rglob("*")):
                if file.is_file() and ".ipynb_checkpoints" not in file.parts:
                    archive.write(file, Path(folder.name) / file.relative_to(folder / "student"))
        out[folder.name] = path
    return out


def secrets(root: Path, built: Path) -> dict[str, list[str]]:
    """What students must never see, per assignment: the names of its hidden tests and the lines of its
    solutions (lines of at least 25 characters between ``# BEGIN SOLUTION`` and ``# END SOLUTION``)."""
    out = {}
    for source in assignment_sources(root):
        lines, inside = [], False
        for line in source.read_text().splitlines():
            marker = line.strip()
            if marker == "# BEGIN SOLUTION":
                inside = True
            elif marker == "# END SOLUTION":
                inside = False
            elif inside and len(marker) >= 25 and not marker.startswith("#"):
                lines.append(marker)
        out[source.stem] = load_hidden_test_names(built / source.stem / "autograder" / "tests") + lines
    return out


def leaks(folder: Path, secret_texts: dict[str, list[str]]) -> list[str]:
    """Files under ``folder`` (zip members too) holding a hidden test's name or a solution line: one
    ``file: assignment: text`` line each (empty when the folder is safe to give to students)."""
    import zipfile

    def texts(path: Path):
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as archive:
                for member in archive.namelist():
                    yield f"{path}:{member}", archive.read(member).decode("utf-8", "replace")
        elif path.suffix in (".html", ".ipynb", ".py", ".txt", ".md", ".json"):
            yield str(path), path.read_text(errors="replace")

    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        for name, text in texts(path):
            found += [f"{name}: {assignment}: {secret[:60]}" for assignment, items in secret_texts.items()
                      for secret in items if secret in text]
    return found
