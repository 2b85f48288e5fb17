"""The quick book as a user builds it: ``olr book --profile quick`` from the command line, every run computed.

Runs the command in a fresh results store (a temporary folder, so no page reuses a stored run of an earlier
build; the parse cache and numba's compiled code are kept, as on a machine that has built once), and
records the wall time of the whole command, of executing the pages and of the Jupyter Book build, and
each page's seconds with the runs it computed and reused (from the build's execution statistics).
Takes about as long as the build itself (10-20 minutes on 2 cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import OLR, data_dir

ROOT = Path(__file__).resolve().parents[1]


def run(profile: str = "quick") -> dict:
    env = dict(os.environ)
    if data_dir():
        env["OLR_DATA_DIR"] = data_dir()
    with tempfile.TemporaryDirectory() as results:
        env["OLR_RESULTS_DIR"] = results
        started = time.perf_counter()
        subprocess.run([*OLR, "book", "--profile", profile], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        total = time.perf_counter() - started
    stats = json.loads((ROOT / "book" / "generated" / "execution_stats.json").read_text())
    pages = {page: {k: s[k] for k in ("seconds", "computed", "reused")} for page, s in stats.items()
             if s["profile"] == profile}
    executing = sum(p["seconds"] for p in pages.values())
    return {"profile": profile, "cores": os.cpu_count(), "data_dir": bool(data_dir()),
            "total_seconds": round(total), "pages_seconds": round(executing),
            "jupyter_book_seconds": round(total - executing), "pages": pages}


if __name__ == "__main__":
    print(json.dumps(run(*sys.argv[1:]), indent=2))
