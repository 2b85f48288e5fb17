"""Run every benchmark and write benchmarks/results.json (numbers depend on the machine).

Usage: python benchmarks/run_all.py [loop|parse|history|busy|cli|topk|topk_runs|topk_round_cost|library|
library_runs|neural|users|reference|book|dsp|evaluation|heldout ...] (default: all but book; suites not named keep
their stored results). ``book`` builds the quick book in a fresh results store and records its time per page (as long
as a build). ``reference`` compares with the authors' code when ``OLR_REFERENCE_DIR`` (and ``OLR_REFERENCE_PYTHON``)
name a checkout of it and a Python that runs it. ``dsp``, ``evaluation``, ``heldout``, ``library_runs`` and
``topk_runs`` compare with ``OLR_BASELINE_DIR``, a checkout of an earlier commit, when set.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_book  # noqa: E402
import bench_busy  # noqa: E402
import bench_cli  # noqa: E402
import bench_dsp  # noqa: E402
import bench_evaluation  # noqa: E402
import bench_heldout  # noqa: E402
import bench_history  # noqa: E402
import bench_library  # noqa: E402
import bench_loop  # noqa: E402
import bench_neural  # noqa: E402
import bench_parse  # noqa: E402
import bench_reference  # noqa: E402
import bench_topk  # noqa: E402
import bench_users  # noqa: E402

SUITES = {"loop": bench_loop.run, "parse": bench_parse.run, "history": bench_history.run, "busy": bench_busy.run,
          "topk": bench_topk.run, "library": bench_library.run,
          "library_runs": bench_library.library_runs, "topk_runs": bench_topk.topk_runs,
          "topk_round_cost": bench_topk.round_cost, "neural": bench_neural.run,
          "users": bench_users.run, "cli": bench_cli.run, "reference": bench_reference.run,
          "book": bench_book.run, "dsp": bench_dsp.run, "evaluation": bench_evaluation.run,
          "heldout": bench_heldout.run}

if __name__ == "__main__":
    chosen = sys.argv[1:] or [name for name in SUITES if name != "book"]
    out = Path(__file__).with_name("results.json")
    results = json.loads(out.read_text()) if out.exists() else {}      # suites not re-run keep their results
    results["machine"] = {"python": platform.python_version(), "cpu": platform.processor() or platform.machine()}
    results.update({name: SUITES[name]() for name in chosen})
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
