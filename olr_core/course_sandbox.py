"""Grade one submitted notebook in this process: ``python -m olr_core.course_sandbox REQUEST`` (JSON).

Run by :func:`olr_core.course.grade_one` in a fresh process whose working folder is a copy of the
submission's folder. The tests are read first; then an audit hook refuses, for the rest of the process,
reading the autograder's folder (the hidden tests and the solution), writing or deleting outside the
working folder and starting processes. The notebook's code cells run one by one, then each test, each
under a time limit (a repeating alarm, so an ``except BaseException`` does not swallow it) and an output
limit. A best-effort guard for honest mistakes and casual snooping, not a security boundary: code that
calls C directly (ctypes) can get past an audit hook; the parent's overall timeout still holds.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import traceback
from pathlib import Path

CONTROL_LINE = re.compile(r"^\s*(import otter\b|grader\s*=\s*otter\.|grader\.\w+\(|[%!])")
PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.kill",
                  "pty.spawn")
PATH_EVENTS = ("os.remove", "os.rmdir", "os.mkdir", "os.rename", "os.truncate", "os.chmod", "os.chown",
               "os.symlink", "os.link", "shutil.rmtree", "shutil.copyfile", "shutil.move", "os.utime")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class TimeLimit(BaseException):
    """The running cell or test used up its seconds."""


class OutputLimit(BaseException):
    """The running cell or test printed more than its bytes."""


class Guard:
    """The audit hook: what the submission may not do, and the violations it tried."""

    def __init__(self, work: Path, hidden: Path):
        self.work, self.hidden = work.resolve(), hidden.resolve()
        self.allowed_caches = Path(__file__).resolve().parent     # numba caches in olr_core's __pycache__
        numba_folder = os.environ.get("NUMBA_CACHE_DIR")            # (read now: the submission may change it)
        self.numba_folder = Path(numba_folder).resolve() if numba_folder else None
        self.active, self.violations = False, []

    def refuse(self, message: str):
        self.violations.append(message)
        raise PermissionError(message)

    def _inside(self, path, folder: Path) -> bool:
        try:
            resolved = Path(os.fsdecode(path)).resolve()
        except (TypeError, ValueError, OSError):
            return False
        return resolved == folder or folder in resolved.parents

    def _may_write(self, path) -> bool:
        name = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
        if name in ("/dev/null", os.devnull):
            return True
        numba_cache = "__pycache__" in Path(name).parts
        return (self._inside(path, self.work) or (numba_cache and self._inside(path, self.allowed_caches))
                or bool(self.numba_folder and self._inside(path, self.numba_folder)))

    def __call__(self, event: str, args) -> None:
        if not self.active:
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                return
            if self._inside(path, self.hidden):
                self.refuse(f"it tried to read {os.fsdecode(path)}, which belongs to the autograder (hidden tests "
                            "and solutions are not readable)")
            writing = (mode is not None and any(c in mode for c in "wax+")) or bool((flags or 0) & WRITE_FLAGS)
            if writing and not self._may_write(path):
                self.refuse(f"it tried to write {os.fsdecode(path)}, outside its own folder (write only "
                            "inside the folder of your notebook)")
        elif event in ("os.listdir", "os.scandir") and args and self._inside(args[0] or ".", self.hidden):
            self.refuse(f"it tried to read (list) {os.fsdecode(args[0])}, which belongs to the autograder "
                        "(hidden tests and solutions are not readable)")
        elif event in PATH_EVENTS:
            for path in args[:2]:
                if isinstance(path, (str, bytes, os.PathLike)) and not self._may_write(path):
                    self.refuse(f"it tried to change {os.fsdecode(path)} ({event}), outside its own folder")
        elif event.startswith(PROCESS_EVENTS):
            self.refuse(f"it tried to start or signal another process ({event}); graded code runs in one process")


class CappedOutput:
    """sys.stdout / sys.stderr that raise :class:`OutputLimit` past ``limit`` characters (reset per cell/test)."""

    def __init__(self, limit: int):
        self.limit, self.used = limit, 0

    def write(self, text) -> int:
        self.used += len(text)
        if self.used > self.limit:
            self.used = -10 ** 12          # let the traceback machinery print without raising again
            raise OutputLimit()
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _alarm(signum, frame):
    raise TimeLimit()


def limited(function, seconds: float, output: CappedOutput, guard: Guard):
    """Call ``function()`` under the limits: None if it returned, else the reason it failed (one sentence)."""
    output.used, before = 0, len(guard.violations)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.2)
    try:
        function()
        problem = None
    except TimeLimit:
        problem = f"it did not finish within the limit of {seconds:g} s (an endless loop, or far too slow?)"
    except OutputLimit:
        problem = f"it printed more than {output.limit:,} characters, the limit; print less"
    except AssertionError as failed:
        problem = str(failed) or "an assertion failed (no message)"
    except BaseException as raised:          # noqa: BLE001 - the submission's own error is feedback
        problem = f"your code raised {type(raised).__name__}: {raised}"[:500]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)
    if len(guard.violations) > before:
        problem = f"not allowed: {guard.violations[before]}"
    return problem


def code_cells(notebook_path: Path) -> list[str]:
    """The notebook's code cells without Otter's own lines (``grader.check``...) and IPython magics."""
    notebook = json.loads(notebook_path.read_text())
    cells = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        cells.append("\n".join("pass" if CONTROL_LINE.match(line) else line for line in source.splitlines()))
    return cells


def otter_test_files():
    """otter-grader's test-file module, imported without running ``otter/__init__`` (which loads its whole
    command line, about 2 s per graded submission); the test files' own ``from otter.test_files import
    test_case`` then finds it."""
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


def preload_imports(tests_folder: Path) -> None:
    """Import every module the tests import, before any clock runs: a test's time limit is for the
    submission's code, not for loading scipy."""
    import ast
    import importlib

    for path in sorted(tests_folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                try:
                    importlib.import_module(name)
                except ImportError:
                    pass                   # the test itself will report it


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


def undefined_names(case, env: dict) -> str | None:
    """Why a test cannot run: the names it checks that the notebook never defined (None if all exist)."""
    missing = [name for name in case._get_func_params() if name != "env" and name not in env]
    if not missing:
        return None
    return (f"{', '.join(missing)} is not defined: did the cell defining it raise or not run? (see the "
            "(notebook) row)")


def run_notebook(cells: list[str], env: dict, seconds: float, output: CappedOutput, guard: Guard) -> list[str]:
    """Execute the cells in ``env``; the problems of cells that failed (the rest still run)."""
    problems, left = [], seconds
    for number, source in enumerate(cells, start=1):
        def run(source=source, number=number):
            exec(compile(source, f"<cell {number}>", "exec"), env)

        if left <= 0:
            problems.append(f"cell {number} not run: the notebook's {seconds:g} s were used up")
            continue
        started = _now()
        problem = limited(run, left, output, guard)
        left -= _now() - started
        if problem:
            problems.append(f"cell {number}: {problem}")
    return problems


def _now() -> float:
    import time

    return time.perf_counter()


def grade(request: dict) -> list[dict]:
    """The records of :func:`olr_core.course.grade_one` for the request's notebook."""
    limits, work = request["limits"], Path.cwd()
    tests = load_tests(Path(request["tests"]))
    preload_imports(Path(request["tests"]))
    cells = code_cells(Path(request["notebook"]))
    guard, output = Guard(work, Path(request["hidden"])), CappedOutput(limits["output_bytes"])
    sys.addaudithook(guard)
    signal.signal(signal.SIGALRM, _alarm)
    real_stdout, real_stderr = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = output
    env = {"__name__": "__main__"}
    guard.active = True
    try:
        problems = run_notebook(cells, env, limits["notebook_seconds"], output, guard)
        records = []
        for name, points, case in tests:
            problem = undefined_names(case, env) or limited(lambda case=case: case.call_func(env),
                                                            limits["test_seconds"], output, guard)
            records.append({"test": name, "points": 0.0 if problem else points, "possible": points,
                            "feedback": problem or "passed"})
    finally:
        guard.active = False
        sys.stdout, sys.stderr = real_stdout, real_stderr
    if problems:
        records.append({"test": "(notebook)", "points": 0.0, "possible": 0.0, "feedback": "; ".join(problems)[:2000]})
    return records


def main(argv: list[str]) -> int:
    request = json.loads(argv[0])
    sys.dont_write_bytecode = True
    try:
        records = grade(request)
    except BaseException:                    # noqa: BLE001 - report the grader's own failure as feedback
        records = [{"test": "(grader)", "points": 0.0, "possible": 0.0,
                    "feedback": "the grader failed: " + traceback.format_exc(limit=3)[-1500:]}]
    with open(request["result"], "w") as handle:
        json.dump(records, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
