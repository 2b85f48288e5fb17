"""Content-addressed store of finished runs: one compressed file per run, written atomically.

A file that cannot be read back whole (truncated by a full disk, edited, half-copied)
is never used: it is moved to ``<store>/quarantine/`` (not deleted), reported by path,
and the run counts as absent, so the next grid recomputes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from ..library_loop import LibraryTrace
from ..loop import RunTrace
from ..quarantine import quarantine_file
from .spec import RunSpec

QUARANTINE = "quarantine"


class CorruptResultError(ValueError):
    """A stored result that cannot be read; it has been moved to the store's quarantine folder."""


def default_store_dir() -> Path:
    """``$OLR_RESULTS_DIR`` or ``./results``."""
    return Path(os.environ.get("OLR_RESULTS_DIR", "results"))


def cached_array(kind: str, key_parts: list, compute, extra: bytes = b"", root: Path | None = None) -> np.ndarray:
    """``compute()`` (a deterministic array, e.g. a regret comparator or an offline fit), kept as
    ``<root>/<kind>/<hash>.npy`` (root: the results store) keyed by ``key_parts`` (JSON) and ``extra``
    bytes; an absent, empty or truncated file is computed again, and a file is only ever written whole."""
    key = hashlib.sha256(json.dumps(key_parts).encode() + extra).hexdigest()[:20]
    path = (root or default_store_dir()) / kind / f"{key}.npy"
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        pass
    values = np.asarray(compute())
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp.npy")
    np.save(partial, values)
    os.replace(partial, path)
    return values


class ResultStore:
    """Maps a run's key to its trace. A run is either wholly stored or absent."""

    def __init__(self, root=None):
        self.root = Path(root) if root is not None else default_store_dir()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def has(self, key: str) -> bool:
        """A file exists for ``key`` (not checked; see :meth:`verified`)."""
        return self.path(key).exists()

    def verified(self, key: str) -> bool:
        """A readable run is stored under ``key``; an unreadable file is quarantined and False returned."""
        if not self.has(key):
            return False
        try:
            self.load(key)
        except CorruptResultError:
            return False
        return True

    def save(self, key: str, spec: RunSpec, trace: RunTrace, data_fingerprint: str = "") -> Path:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = json.dumps({"spec": spec.canonical(), "data": data_fingerprint, "seconds": trace.seconds},
                          default=str)
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp.npz")
        np.savez_compressed(tmp, __meta__=np.array(meta), **trace.arrays())
        os.replace(tmp, path)
        return path

    def load(self, key: str) -> tuple[dict, RunTrace]:
        """The stored run; a :class:`CorruptResultError` (file quarantined) when it cannot be read."""
        path = self.path(key)
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["__meta__"]))
                arrays = {k: z[k] for k in z.files if k != "__meta__"}
            kind = LibraryTrace if "library__chosen_rank" in arrays else RunTrace
            trace = kind.from_arrays(arrays, meta["seconds"])
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as err:
            target = quarantine_file(path, self.root / QUARANTINE, f"{type(err).__name__}: {err}")
            raise CorruptResultError(f"stored result {path} could not be read; moved to {target}. "
                                     "Run the grid or command again to recompute it") from None
        return meta, trace

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*/*.npz") if ".tmp" not in p.name and p.parent.name != QUARANTINE)

    def check(self) -> dict:
        """Read every stored run; returns counts and the paths set aside (now and earlier)."""
        ok = sum(self.verified(key) for key in self.keys())
        quarantined = sorted(str(p) for p in (self.root / QUARANTINE).glob("*")) if (self.root / QUARANTINE).is_dir() \
            else []
        return {"store": str(self.root), "readable": ok, "quarantined": quarantined}
