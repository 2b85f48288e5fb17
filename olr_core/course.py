"""Graded assignments: build student notebooks and an autograder from the solutions, grade submissions.

Each assignment is one solution notebook in ``assignments/`` kept as jupytext percent text (``NAME.py``)
in otter-grader's assignment format (``# BEGIN QUESTION`` ... ``# END QUESTION`` raw cells, solutions
between ``# BEGIN SOLUTION`` / ``# END SOLUTION``, exception-based tests marked hidden or public).
:func:`build_assignments` runs Otter Assign on each: ``student/`` gets the notebook with stubs and the
public tests, ``autograder/`` the solution and every test. :func:`grade_submissions` grades a folder of
submitted notebooks, each in a process of its own (:mod:`olr_core.course_sandbox`) with time and output
limits per test, into one CSV row per test with its feedback. Nothing here is imported by ``olr_core``
itself; otter-grader is needed only to build.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
GRADES_FIELDS = ("submission", "assignment", "test", "points", "possible", "feedback")


@dataclass(frozen=True)
class Limits:
    """What one submission may spend: seconds per test and for all its notebook cells, bytes it may print
    per test or cell, and seconds for the process to start (imports)."""

    test_seconds: float = 10.0
    notebook_seconds: float = 60.0
    output_bytes: int = 100_000
    startup_seconds: float = 30.0


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
    """Every notebook under ``folder`` (checkpoints left out), in name order."""
    if not folder.is_dir():
        raise FileNotFoundError(f"no folder {folder}: pass the folder holding the submitted notebooks")
    return sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


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


def possible_points(tests_folder: Path) -> list[tuple[str, float]]:
    """Every test of an autograder's ``tests`` folder: its name (``question.test``) and points."""
    from .course_sandbox import load_tests

    return [(name, points) for name, points, _ in load_tests(tests_folder)]


def grade_one(notebook: Path, autograder: Path, limits: Limits, with_folder: bool = True) -> list[dict]:
    """One submission graded in its own process, in a copy of its folder (``with_folder``, for the files it
    reads) or of the notebook alone: one record per test (points, possible, feedback), plus a
    ``(notebook)`` record naming cells that raised or were stopped."""
    tests = possible_points(autograder / "tests")
    budget = limits.startup_seconds + limits.notebook_seconds + limits.test_seconds * (len(tests) + 1)
    with tempfile.TemporaryDirectory(prefix="olr-grade-") as scratch:
        work, result = Path(scratch) / "submission", Path(scratch) / "result.json"
        if with_folder:
            shutil.copytree(notebook.parent, work, ignore=shutil.ignore_patterns("*.ipynb_checkpoints"))
        else:
            work.mkdir()
            shutil.copy(notebook, work)
        request = {"notebook": str(work / notebook.name), "tests": str((autograder / "tests").resolve()),
                   "hidden": str(autograder.resolve()), "result": str(result), "limits": limits.__dict__}
        env = {**os.environ, "HOME": str(work), "TMPDIR": str(work), "MPLCONFIGDIR": str(work),
               "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            subprocess.run([sys.executable, "-m", "olr_core.course_sandbox", json.dumps(request)], cwd=work, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=budget, start_new_session=True)
        except subprocess.TimeoutExpired:
            return [{"test": name, "points": 0.0, "possible": possible,
                     "feedback": f"the grader stopped this notebook after {budget:.0f} s in all (its code did not "
                                 "return to Python within the limits: a long computation inside numpy?)"}
                    for name, possible in tests]
        if not result.exists():
            return [{"test": name, "points": 0.0, "possible": possible,
                     "feedback": "the notebook ended the grader's process (sys.exit, os._exit or a crash); "
                                 "no test could run"} for name, possible in tests]
        return json.loads(result.read_text())


def grade_submissions(folder: Path, autograders: Path, output: Path, limits: Limits = Limits(),
                      jobs: int = 1) -> list[dict]:
    """Grade every notebook under ``folder`` against the autograders built in ``autograders`` (one folder
    per assignment, as :func:`build_assignments` writes) into the CSV ``output``: one row per test.
    ``jobs`` submissions are graded at once, each in its own process."""
    from concurrent.futures import ThreadPoolExecutor

    known = sorted(p.name for p in autograders.iterdir() if (p / "autograder" / "tests").is_dir()) \
        if autograders.is_dir() else []
    if not known:
        raise FileNotFoundError(f"no autograders in {autograders}: run 'olr course build' first")
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"option --jobs={jobs!r} is invalid; use a positive count of processes")

    def graded(notebook: Path) -> list[dict]:
        name, shown = submission_assignment(notebook, known), str(notebook.relative_to(folder))
        if name is None:
            return [{"submission": shown, "assignment": "", "test": "(notebook)", "points": 0.0, "possible": 0.0,
                     "feedback": f"not an assignment's notebook; name it after one of: {', '.join(known)}"}]
        return [{"submission": shown, "assignment": name, **record}
                for record in grade_one(notebook, autograders / name / "autograder", limits,
                                        with_folder=notebook.parent != folder)]      # never another's notebooks

    with ThreadPoolExecutor(jobs) as pool:
        rows = [row for records in pool.map(graded, find_submissions(folder)) for row in records]
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=GRADES_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
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
    from .course_sandbox import load_hidden_test_names

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
