"""Content-addressed store of finished runs: one compressed file per run, written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..loop import RunTrace
from .spec import RunSpec


def default_store_dir() -> Path:
    """``$OLR_RESULTS_DIR`` or ``./results``."""
    return Path(os.environ.get("OLR_RESULTS_DIR", "results"))


class ResultStore:
    """Maps a run's key to its trace. A run is either wholly stored or absent."""

    def __init__(self, root=None):
        self.root = Path(root) if root is not None else default_store_dir()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npz"

    def has(self, key: str) -> bool:
        return self.path(key).exists()

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
        with np.load(self.path(key), allow_pickle=False) as z:
            meta = json.loads(str(z["__meta__"]))
            arrays = {k: z[k] for k in z.files if k != "__meta__"}
        return meta, RunTrace.from_arrays(arrays, meta["seconds"])

    def keys(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*/*.npz") if ".tmp" not in p.name)
