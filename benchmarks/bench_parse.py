"""Parse time of a LETOR data set: cold (no cache) and cached (arrays keyed by SHA-256)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from common import best_of, data_dir

from olr_core.data import read_letor


def run() -> dict:
    root = data_dir()
    if root is None:
        return {"mq2008": "skipped: no OLR_DATA_DIR"}
    files = sorted((Path(root) / "mq2008").glob("S*.txt.gz"))
    with tempfile.TemporaryDirectory() as cache:
        os.environ["OLR_CACHE_DIR"] = cache
        cold = best_of(lambda: [read_letor(f, 46, 2, use_cache=False) for f in files], repeats=1)
        [read_letor(f, 46, 2) for f in files]
        cached = best_of(lambda: [read_letor(f, 46, 2) for f in files])
    return {"mq2008 (S1-S5, 15,211 lines)": {"cold_seconds": round(cold, 3), "cached_seconds": round(cached, 4)}}


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
