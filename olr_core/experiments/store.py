"""Content-addressed store of finished runs: one compressed file per run, written atomically.

A file that cannot be read back whole (truncated by a full disk, edited, half-copied)
is never used: it is moved to ``<store>/quarantine/`` (not deleted), reported by path,
and the run counts as absent, so the next grid recomputes it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
import zipfile
from pathlib import Path

import numpy as np

from ..cache import WriteError, cached_array, default_store_dir, why, write_atomically  # noqa: F401  (re-exported)
from ..library_loop import LibraryTrace
from ..loop import RunTrace
from ..quarantine import quarantine_file
from ..settings import run_log
from .spec import RunSpec

QUARANTINE = "quarantine"
# The parameters that change what a round computes (not its step sizes): a run's cost is told by them.
COST_PARAMETERS = ("multileave", "credit_samples", "n_candidates", "width", "hidden", "uncertainty", "training")


STORE_FIX = "free space, or name a writable store with --results (or OLR_RESULTS_DIR); the runs stored so far are kept"


def _alive(pid: int) -> bool:
    """A process ``pid`` runs on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def unreadable_reason(err: Exception) -> str:
    """Why a stored file could not be read, in words (numpy's advice to unpickle a file is never passed on)."""
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    if "allow_pickle" in str(err) or isinstance(err, (zipfile.BadZipFile, EOFError)):
        return "not a numpy archive: truncated, or a file of another kind"
    return f"{type(err).__name__}: {err}"


def inflated_bytes(source, limit: int) -> int:
    """The bytes a numpy archive (a path or its bytes) would take once decompressed, read from its directory
    without decompressing anything; :class:`ValueError` past ``limit`` (a zip bomb)."""
    with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as archive:
        total = sum(info.file_size for info in archive.infolist())
    if total > limit:
        raise ValueError(f"it would take {total:,} bytes once decompressed (at most {limit:,} for a run)")
    return total


def read_run(source, limit: int = 2 ** 30) -> tuple[dict, RunTrace]:
    """(metadata, trace) of a stored run's file (a path or its bytes), its numbers checked against its spec
    (:func:`~olr_core.experiments.validate.check_trace`) and its size before anything is decompressed."""
    from .validate import check_trace

    inflated_bytes(source, limit)
    with np.load(io.BytesIO(source) if isinstance(source, bytes) else source, allow_pickle=False) as z:
        meta = json.loads(str(z["__meta__"]))
        arrays = {k: z[k] for k in z.files if k != "__meta__"}
    if not isinstance(meta, dict) or not isinstance(meta.get("spec"), dict):
        raise ValueError("its metadata holds no spec")
    kind = LibraryTrace if "library__chosen_rank" in arrays else RunTrace
    trace = kind.from_arrays(arrays, float(meta["seconds"]))
    check_trace(meta["spec"], trace)
    return meta, trace


class CorruptResultError(ValueError):
    """A stored result that cannot be read; it has been moved to the store's quarantine folder."""


def log_run_event(kind: str, key: str) -> None:
    """Append a line ``kind key`` (kind "computed" or "reused") to the file ``$OLR_RUN_LOG`` names, if any:
    the book's driver counts, page by page, the runs each page computed and those it found in the store,
    and adds up the seconds of those it computed."""
    path = run_log()
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{kind} {key}\n")


def key_of(meta: dict) -> str:
    """The key of the run a stored file's metadata describes (as :meth:`RunSpec.key` computes it)."""
    blob = json.dumps({**meta["spec"], "data": meta.get("data", "")}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


class ResultStore:
    """Maps a run's key to its trace. A run is either wholly stored or absent."""

    def __init__(self, root=None):
        self.root = Path(root) if root is not None else default_store_dir()
        if self.root.exists() and not self.root.is_dir():
            raise ValueError(f"the results store {self.root} is a file, not a folder; name a folder with --results "
                             "(or OLR_RESULTS_DIR); it is created if it does not exist")

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def has(self, key: str) -> bool:
        """A file exists for ``key`` (not checked; see :meth:`verified`)."""
        return self.path(key).exists()

    def verified(self, key: str, quiet: bool = False) -> bool:
        """A readable run of ``key``'s spec is stored under ``key``; any other file is quarantined and False
        returned (``quiet``: without the warning, for a caller that reports the quarantine itself)."""
        if not self.has(key):
            return False
        try:
            self.load(key, quiet)
        except CorruptResultError:
            return False
        log_run_event("reused", key)
        return True

    def save(self, key: str, spec: RunSpec, trace: RunTrace, data_fingerprint: str = "",
             cpu_seconds: float | None = None) -> Path:
        """Store ``trace`` under ``key``, which must be ``spec``'s key on the data ``data_fingerprint`` names
        (the file records both, so that a load can check them), with the CPU seconds the run took if known."""
        if spec.key(data_fingerprint) != key:
            raise ValueError(f"refusing to store a run of {spec.label()} under key {key}: its spec and data give "
                             f"{spec.key(data_fingerprint)}")
        meta = json.dumps({"spec": spec.canonical(), "data": data_fingerprint, "seconds": trace.seconds,
                           **({"cpu_seconds": cpu_seconds} if cpu_seconds is not None else {})}, default=str)
        path = write_atomically(self.path(key), lambda tmp: np.savez_compressed(tmp, __meta__=np.array(meta),
                                                                                **trace.arrays()),
                                f"the run {spec.label()} ({key})", STORE_FIX)
        log_run_event("computed", key)
        return path

    def require_writable(self, missing: int) -> None:
        """Before ``missing`` runs are computed: the store can take them, else one line saying so (a read-only
        store still serves the runs it holds)."""
        probe = self.root / f".write-probe.{os.getpid()}"
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as err:
            raise WriteError(err.errno, f"the results store {self.root} cannot be written ({why(err)}): the "
                             f"{missing} run(s) missing from it would be computed and lost; {STORE_FIX}") from None

    def leftovers(self, older_than: float = 3600.0) -> list[Path]:
        """Temporary files of writes that never finished (runs, cached arrays, the store's own records): their
        process is gone, or they are older than ``older_than`` seconds (a write in progress is left alone)."""
        now, found = time.time(), []
        for path in [*self.root.glob("*.tmp.*"), *self.root.glob("*/*.tmp.*")]:
            if path.parent.name == QUARANTINE:
                continue
            pid = path.name.split(".")[-3]
            try:
                gone = not pid.isdigit() or not _alive(int(pid)) or now - path.stat().st_mtime > older_than
            except FileNotFoundError:
                continue                                  # (finished meanwhile)
            if gone:
                found.append(path)
        return found

    def load(self, key: str, quiet: bool = False) -> tuple[dict, RunTrace]:
        """The stored run; a :class:`CorruptResultError` (file quarantined) when it cannot be read, holds
        the run of another spec than ``key`` names (its recorded spec and data are hashed again), or holds
        numbers its spec rules out (:func:`~olr_core.experiments.validate.check_trace`)."""
        path = self.path(key)
        try:
            meta, trace = read_run(path)
            recorded = key_of(meta)
            if recorded != key:
                raise KeyError(f"it holds the run {recorded} ({meta['spec'].get('algorithm')}), not {key}")
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as err:
            reason = unreadable_reason(err)
            where = quarantine_file(path, self.root / QUARANTINE, reason, quiet=quiet)
            raise CorruptResultError(f"stored result {path} could not be used ({reason}); {where}. "
                                     "Run the grid or command again to recompute it") from None
        return meta, trace

    def run_seconds(self, key: str) -> tuple[str, float]:
        """(what ran: algorithm with its parameters, on data set, rounds; the CPU seconds it took, or its wall
        seconds if no CPU time was recorded) of a stored run, from its metadata alone."""
        with np.load(self.path(key), allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
        spec = meta["spec"]
        shown = ",".join(f"{k}={v}" for k, v in sorted(spec.get("params", {}).items()) if k in COST_PARAMETERS)
        name = f"{spec['algorithm']}({shown})" if shown else spec["algorithm"]
        return f"{name} on {spec['dataset']}, {spec['rounds']} rounds", float(meta.get("cpu_seconds", meta["seconds"]))

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*/*.npz") if ".tmp" not in p.name and p.parent.name != QUARANTINE)

    def check(self) -> dict:
        """Read every stored run; returns the count of usable runs, what was set aside now (one sentence each,
        with the reason) and every path in the quarantine (now and earlier)."""
        ok, now = 0, []
        for key in self.keys():
            try:
                self.load(key, quiet=True)
                ok += 1
            except CorruptResultError as err:
                now.append(str(err))
        quarantined = sorted(str(p) for p in (self.root / QUARANTINE).glob("*")) if (self.root / QUARANTINE).is_dir() \
            else []
        removed = []
        for path in self.leftovers():
            try:
                path.unlink()
                removed.append(f"removed {path} (an unfinished write)")
            except OSError as err:
                removed.append(f"{path} is an unfinished write; it could not be removed ({why(err)})")
        return {"store": str(self.root), "readable": ok, "set_aside_now": now, "quarantined": quarantined,
                "leftovers": removed}
