"""The quick book as a user builds it: ``olr book --profile quick`` from the command line, every run computed.

Runs the command in a fresh results store (a temporary folder, so no page reuses a stored run of an earlier
build; the parse cache and numba's compiled code are kept, as on a machine that has built once), and
records the wall time of the whole command, of executing the pages (two at a time by default) and of the
Jupyter Book build, and each page's seconds with the runs it computed and reused, the seconds its computed
runs took and the costliest kinds of run (from the build's execution statistics).
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
    return summarise(ROOT, profile, total)


def summarise(root: Path, profile: str, total: float) -> dict:
    """The record of a build of ``root`` that took ``total`` seconds (``olr book`` with the Jupyter Book build),
    from the execution statistics it wrote; also for a build made elsewhere, e.g. by CI's ``.ci/run``."""
    generated = root / "book" / "generated"
    stats = json.loads((generated / "execution_stats.json").read_text())
    build = json.loads((generated / "execution_build.json").read_text())
    pages = {page: {k: s.get(k) for k in ("seconds", "computed", "reused", "run_seconds", "costliest")}
             for page, s in stats.items() if s["profile"] == profile}
    return {"profile": profile, "cores": os.cpu_count(), "data_dir": bool(data_dir()),
            "pages_at_once": build["at_once"], "total_seconds": round(total),
            "pages_wall_seconds": round(build["seconds"]), "compile_seconds": build.get("compile_seconds"),
            "pages_seconds_added_up": round(sum(p["seconds"] for p in pages.values())),
            "run_seconds": round(sum(p["run_seconds"] or 0 for p in pages.values())),
            "jupyter_book_seconds": round(total - build["seconds"]), "pages": pages}


if __name__ == "__main__":
    print(json.dumps(run(*sys.argv[1:]), indent=2))
