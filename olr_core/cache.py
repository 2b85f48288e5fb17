"""Deterministic arrays computed once per machine and kept on disk, and the results store's folder.

Low in the package (it imports nothing of it), so that the rankers can keep their offline fits here
without importing the experiments package, which imports the rankers.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np


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
