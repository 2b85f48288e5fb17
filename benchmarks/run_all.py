"""Run every benchmark and write benchmarks/results.json (numbers depend on the machine)."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_loop  # noqa: E402
import bench_parse  # noqa: E402

if __name__ == "__main__":
    results = {"machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
               "loop_random_ranker": bench_loop.run(), "parse": bench_parse.run()}
    out = Path(__file__).with_name("results.json")
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
