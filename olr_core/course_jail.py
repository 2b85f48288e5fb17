"""The jail a graded notebook runs in: bubblewrap (Debian's ``bubblewrap``) namespaces, an unprivileged uid,
resource limits, and the grader's end of the conversation with it.

The notebook's process sees a fresh root holding, read-only, the system's ``/usr``, this Python installation and
its packages and ``olr_core``; writable, only its own copy of the submission and a scratch folder; its own
``/proc`` (a new pid namespace: no other process is visible), no network (a new network namespace), no other
submission, no autograder, solution or hidden test (they are simply not in its file system). As root it is
switched to uid/gid 65534 (nobody) by ``setpriv`` with no capabilities and ``no_new_privs``; an ordinary user
runs it in a user namespace as themself. ``prlimit`` caps its address space, CPU seconds, file size, open
files and processes; bubblewrap's ``--size`` (0.5 or later) caps its ``/tmp``. When grading ends, the whole
process group is killed, and with the namespace's first process every process in it. Where bubblewrap cannot
create the namespaces, grading refuses to start (:class:`SandboxUnavailable`); it never runs a notebook
unconfined.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .course_wire import MAX_MESSAGE_BYTES, WireError, dumps, loads

NOBODY = 65534
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime")


class SandboxUnavailable(OSError):
    """bubblewrap is missing or cannot create its namespaces here: grading refuses to run unconfined."""


class SandboxDied(RuntimeError):
    """The notebook's process ended, timed out or sent something that is not an answer."""


@dataclass(frozen=True)
class Jail:
    """The folders the notebook may write (``work``: its submission copy, its working folder; ``scratch``) and
    its limits: bytes of address space, CPU seconds, bytes per file, processes, open files, and the size of its
    ``/tmp`` (a tmpfs, held in the machine's memory: without a size, files there could fill half of it)."""

    work: Path
    scratch: Path
    memory_bytes: int = 2 * 2 ** 30
    cpu_seconds: int = 300
    file_bytes: int = 64 * 2 ** 20
    processes: int = 256
    open_files: int = 256
    tmp_bytes: int = 64 * 2 ** 20


def _read_only_paths() -> list[Path]:
    """What the notebook's Python needs to read: the installation, the environment, its packages, olr_core."""
    import olr_core

    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent,
             Path(olr_core.__file__).resolve().parent}
    paths |= {Path(p).resolve() for p in sys.path
              if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()}
    return sorted(p.resolve() for p in paths if p.exists() and not str(p.resolve()).startswith("/usr"))


def _directories(paths: list[Path]) -> list[str]:
    """bwrap arguments creating every ancestor of ``paths`` as a traversable (0755) folder."""
    seen, out = set(), []
    for path in paths:
        for parent in reversed(path.parents):
            if str(parent) != "/" and parent not in seen:
                seen.add(parent)
                out += ["--perms", "0755", "--dir", str(parent)]
    return out


def _root_links() -> list[str]:
    """/bin, /lib, /lib64, /sbin as on this system: links into /usr (merged /usr) or read-only binds."""
    out = []
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(name):
            out += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            out += ["--ro-bind", name, name]
    return out


def command(jail: Jail, argv: list[str]) -> list[str]:
    """The full command line running ``argv`` in the jail."""
    bwrap, setpriv, prlimit = (shutil.which(n) for n in ("bwrap", "setpriv", "prlimit"))
    if not bwrap or not prlimit:
        raise SandboxUnavailable("grading needs bubblewrap and prlimit (util-linux) to confine each notebook: "
                                 "apt-get install bubblewrap util-linux; refusing to grade without them")
    readable = _read_only_paths()
    out = [bwrap, "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr", *_root_links()]
    out += [arg for name in SYSTEM_FILES if os.path.exists(name) for arg in ("--ro-bind", name, name)]
    out += _directories(readable)
    for path in readable:
        out += ["--ro-bind", str(path), str(path)]
    out += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(jail.tmp_bytes), "--tmpfs", "/tmp",
            "--bind", str(jail.work), "/submission",
            "--bind", str(jail.scratch), "/scratch", "--chdir", "/submission", "--"]
    out += [prlimit, f"--as={jail.memory_bytes}", f"--cpu={jail.cpu_seconds}", f"--fsize={jail.file_bytes}",
            f"--nofile={jail.open_files}", f"--nproc={jail.processes}", "--"]
    if os.geteuid() == 0:
        if not setpriv:
            raise SandboxUnavailable("grading as root needs setpriv (util-linux) to drop to an unprivileged uid")
        out += [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
    else:
        out[1:1] = ["--unshare-user", "--disable-userns"]
    return out + argv


def environment(limits: dict) -> dict:
    """The notebook's whole environment: nothing of the grader's (no tokens, no paths of its own)."""
    import json

    import olr_core

    return {"PATH": "/usr/bin:/bin", "HOME": "/submission", "TMPDIR": "/scratch", "MPLCONFIGDIR": "/scratch",
            "NUMBA_CACHE_DIR": "/scratch", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
            "PYTHONPATH": str(Path(olr_core.__file__).resolve().parent.parent), "LANG": "C.UTF-8",
            "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "OLR_GRADE_LIMITS": json.dumps(limits)}


def prepare(folder: Path) -> None:
    """``folder`` owned by the notebook's uid (as root) so that it can write there, and nowhere else."""
    if os.geteuid() != 0:
        return
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            os.chown(path, NOBODY, NOBODY)


def check_available(scratch: Path) -> None:
    """Refuse (one line) unless a process can be started in the jail here."""
    work = scratch / "probe"
    work.mkdir()
    prepare(scratch)
    jail = Jail(work=work, scratch=work)
    try:
        done = subprocess.run(command(jail, ["/bin/sh", "-c", "echo ok $(id -u)"]),
                              capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SandboxUnavailable(f"the grading sandbox could not start ({error}); refusing to grade unconfined") \
            from None
    want = f"ok {NOBODY}" if os.geteuid() == 0 else f"ok {os.geteuid()}"
    if done.returncode != 0 or done.stdout.strip() != want:
        reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SandboxUnavailable(f"bubblewrap could not create the grading sandbox here ({reason}); allow "
                                 "namespaces (run as root, or enable unprivileged user namespaces) — refusing to "
                                 "grade unconfined")


class Sandbox:
    """One notebook's jailed process and the conversation with it (requests and answers as JSON lines)."""

    def __init__(self, jail: Jail, limits: dict):
        self.process = subprocess.Popen(command(jail, [sys.executable, "-m", "olr_core.course_sandbox"]),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=environment(limits), cwd=jail.work, start_new_session=True)
        self.buffer = b""

    def ask(self, message: dict, seconds: float) -> dict:
        """Send ``message`` and wait at most ``seconds`` for the one-line answer (:class:`SandboxDied` if the
        process ended, fell silent or answered with something that is not a message)."""
        try:
            self.process.stdin.write(dumps(message))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise SandboxDied("the notebook's process ended (sys.exit, os._exit, a crash or a limit)") from None
        line = self._line(seconds)
        try:
            return loads(line)
        except WireError as error:
            raise SandboxDied(f"the notebook's process answered with {error}") from None

    def _line(self, seconds: float) -> bytes:
        deadline = time.monotonic() + seconds
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise SandboxDied(f"it did not finish within the limit of {seconds:g} s (an endless loop, or "
                                      "far too slow?)")
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise SandboxDied("the notebook's process ended (sys.exit, os._exit, a crash or a limit)")
                self.buffer += chunk
                if len(self.buffer) > MAX_MESSAGE_BYTES:
                    raise SandboxDied("the notebook's process sent an answer over the size limit")
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def close(self) -> None:
        """Kill the process group (and with the namespace's first process, everything in the namespace)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass


def copy_submission(source: Path, target: Path, max_files: int = 2000, max_bytes: int = 200 * 2 ** 20) -> list[str]:
    """Copy the regular files under ``source`` (a folder) or ``source`` itself (a file) into ``target``, never
    following a link (links, devices and pipes are left out); the names left out."""
    target.mkdir(parents=True, exist_ok=True)
    if not source.is_dir() or source.is_symlink():
        _copy_file(source, target / source.name)
        return []
    skipped, files, size = [], 0, 0
    for folder, dirs, names in os.walk(source, followlinks=False):
        here = Path(folder)
        dirs[:] = [d for d in dirs if d != ".ipynb_checkpoints" and not (here / d).is_symlink()]
        (target / here.relative_to(source)).mkdir(parents=True, exist_ok=True)
        for name in names:
            path = here / name
            if path.is_symlink() or not path.is_file():
                skipped.append(str(path.relative_to(source)))
                continue
            files, size = files + 1, size + path.lstat().st_size
            if files > max_files or size > max_bytes:
                raise ValueError(f"the submission's folder holds more than {max_files} files or {max_bytes:,} bytes")
            _copy_file(path, target / path.relative_to(source))
    return skipped


def _copy_file(source: Path, target: Path) -> None:
    """One regular file, opened without following a link."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as reader, open(target, "wb") as writer:
        shutil.copyfileobj(reader, writer)
