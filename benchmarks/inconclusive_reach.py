"""How far more runs could take the quick profile's inconclusive records (issue #35's 15 % bar).

Reads the records of one build (``olr claims --json --profile quick > records.json``) and, for each inconclusive
record, compares the runs per cell its power calculation asks for (``runs_needed``: every undecided cell decided
with about 80 % power, :func:`olr_core.claims.runs_needed`) with the runs its thinnest cell has now. A record
that needs k times its runs needs at least k times the CPU of its experiment, so the table says how many records
a budget k times the quick profile's could expect to decide at best (every extra run spent on them), and what
share of all records would stay inconclusive.

    python benchmarks/inconclusive_reach.py records.json
"""

from __future__ import annotations

import json
import sys

MULTIPLES = (2, 4, 10, 100)


def reach(records: list[dict]) -> dict:
    """{"records", "inconclusive", "no_estimate", per multiple k: records whose need is at most k x their runs,
    and the inconclusive share left if exactly those were decided}."""
    inconclusive = [r for r in records if r["verdict"] == "inconclusive"]
    ratios = [_ratio(r) for r in inconclusive]
    out = {"records": len(records), "inconclusive": len(inconclusive),
           "no_estimate": sum(x is None for x in ratios)}
    for k in MULTIPLES:
        decided = sum(x is not None and x <= k for x in ratios)
        out[f"within_{k}x"] = {"records": decided,
                               "inconclusive_share_left": round((len(inconclusive) - decided) / len(records), 3)}
    return out


def _ratio(record: dict) -> float | None:
    """runs_needed over the runs of the record's thinnest cell (None without an estimate)."""
    runs = [c["runs"] for c in record.get("cells") or [] if c.get("runs")]
    need = record.get("runs_needed")
    return need / min(runs) if need and runs else None


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python benchmarks/inconclusive_reach.py RECORDS.json (from olr claims --json)")
    with open(sys.argv[1]) as f:
        print(json.dumps(reach(json.load(f)), indent=2))
