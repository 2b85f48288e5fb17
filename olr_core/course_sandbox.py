"""The graded notebook's side of grading: ``python -m olr_core.course_sandbox``, run only inside the jail
(:mod:`olr_core.course_jail`: its own namespaces, an unprivileged uid, read-only packages, no network).

It reads requests from stdin and answers on stdout, one JSON line each (:mod:`olr_core.course_wire`): first
the notebook's code cells, which it executes one by one under a time and an output limit; then calls of the
functions the notebook defined with the test's inputs, or the values of names it defined, each answered with
plain data. It never sees a test, an expected value or a tolerance, and it writes no grade: the grader
(:func:`olr_core.course.grade_one`) compares what it answers. Nothing it says is trusted; a forged answer can
only change the values reported for this notebook's own functions.
"""

from __future__ import annotations

import os
import re
import signal
import sys

from . import settings

CONTROL_LINE = re.compile(r"^\s*(import otter\b|grader\s*=\s*otter\.|grader\.\w+\(|[%!])")


class TimeLimit(BaseException):
    """The running cell or call used up its seconds."""


class OutputLimit(BaseException):
    """The running cell or call printed more than its characters."""


class CappedOutput:
    """sys.stdout / sys.stderr that drop what is printed and raise :class:`OutputLimit` past ``limit``
    characters (reset per cell or call)."""

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


def limited(function, seconds: float, output: CappedOutput, limit: float | None = None):
    """``(None, result)`` of ``function()`` within ``seconds`` and the output limit, or ``(problem, None)``
    (one sentence, naming the time ``limit`` it was given) if it failed."""
    output.used = 0
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01), 0.2)
    try:
        return None, function()
    except TimeLimit:
        return f"it did not finish within the limit of {limit or seconds:g} s (an endless loop, or far too slow?)", None
    except OutputLimit:
        return f"it printed more than {output.limit:,} characters, the limit; print less", None
    except BaseException as raised:          # noqa: BLE001 - the submission's own error is feedback
        return f"your code raised {type(raised).__name__}: {raised}"[:300], None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)


def code_cells(notebook: dict) -> list[str]:
    """The notebook's code cells without Otter's own lines (``grader.check``...) and IPython magics."""
    cells = []
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(str(s) for s in source) if isinstance(source, list) else str(source)
        cells.append("\n".join("pass" if CONTROL_LINE.match(line) else line for line in source.splitlines()))
    return cells


def run_notebook(cells: list[str], env: dict, seconds: float, output: CappedOutput) -> list[str]:
    """Execute the cells in ``env``; the problems of cells that failed (the rest still run)."""
    import time

    problems, left = [], seconds
    for number, source in enumerate(cells, start=1):
        if left <= 0:
            problems.append(f"cell {number} not run: the notebook's {seconds:g} s were used up")
            continue
        started = time.perf_counter()
        code = f"<cell {number}>"
        problem, _ = limited(lambda source=source, code=code: exec(compile(source, code, "exec"), env), left, output)
        left -= time.perf_counter() - started
        if problem:
            problems.append(f"cell {number}: {problem}")
    return problems


def answer_call(request: dict, env: dict, output: CappedOutput) -> dict:
    """A call of the notebook's function ``request['call']`` with decoded inputs: its result and the inputs'
    arrays and generators after the call (a function may fill an array or draw from a generator it is given)."""
    from olr_core.course_wire import decode, encode

    function = env.get(request["call"])
    if not callable(function):
        return {"error": f"{request['call']} is not a function of the notebook"}
    args, kwargs = decode(request.get("args", [])), decode(request.get("kwargs", {"__dict__": {}}))
    seconds, limit = float(request.get("seconds", 10)), float(request.get("limit", 10))
    problem, result = limited(lambda: function(*args, **kwargs), seconds, output, limit)
    if problem:
        return {"error": problem}
    changed = [encode(a) if type(a).__name__ in ("ndarray", "Generator") else None for a in args]
    return {"value": encode(result), "args": changed}


def serve(requests, reply, limits: dict) -> None:
    """Run the first request's cells, then answer every later request until stdin closes."""
    from olr_core.course_wire import WireError, dumps, encode, loads

    output = CappedOutput(int(limits["output_bytes"]))
    sys.stdout = sys.stderr = output
    env: dict = {"__name__": "__main__"}
    first = loads(requests.readline())
    problems = run_notebook(code_cells(first.get("notebook")), env, float(limits["notebook_seconds"]), output)
    kinds = {name: ("function" if callable(env[name]) else "data") for name in first.get("names", []) if name in env}
    reply.write(dumps({"problems": problems, "names": kinds}))
    for line in requests:
        request = loads(line)
        try:
            if "get" in request:
                answer = {"value": encode(env.get(request["get"]))}
            else:
                answer = answer_call(request, env, output)
        except WireError as error:
            answer = {"error": f"its value cannot be graded: {error}"}
        reply.write(dumps(answer))


def main() -> int:
    """Keep stdin and stdout for the grader's requests and answers; the notebook's own prints go nowhere."""
    import json

    requests, reply = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb", buffering=0)
    nothing = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(nothing, fd)
    sys.dont_write_bytecode = True
    signal.signal(signal.SIGALRM, _alarm)
    serve(requests, reply, json.loads(settings.grade_limits()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
