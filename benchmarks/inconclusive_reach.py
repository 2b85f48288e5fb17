"""How far more runs could take a build's inconclusive claims (issue #35's and #46's 15 % bar).

Reads the records of one build (``olr claims --json --profile quick > records.json``), keeps one record per claim
(its headline configuration; sensitivity analyses are not claims) and drops the untestable ones, and for each
inconclusive claim compares the runs per cell its reach calculation asks for (``runs_needed``: the runs at which
"inconclusive" ends, one decided cell, with 80 % assurance; :func:`olr_core.claims.reach`) with the runs its
thinnest cell has now. A claim that needs k times its runs needs at least k times the CPU of its experiment, so the
table says how many claims a budget k times the build's could expect to decide (each with 80 % assurance, every
extra run spent on them), and what share of the testable claims would stay inconclusive; claims whose reach is not
estimable are counted apart.

    python benchmarks/inconclusive_reach.py records.json
"""

from __future__ import annotations

import json
import sys

MULTIPLES = (2, 4, 10, 100)


def claims(records: list[dict]) -> list[dict]:
    """One record per testable claim: its headline configuration's (the first record of a claim where none is
    marked)."""
    out: dict = {}
    for r in records:
        key = (r.get("paper"), r.get("id"))
        if r.get("verdict") == "not testable here" or (key in out and r.get("config_role") != "headline"):
            continue
        out[key] = r
    return list(out.values())


def reach(records: list[dict]) -> dict:
    """{"claims", "inconclusive", "not_estimable", per multiple k: claims whose need is at most k x their runs,
    and the inconclusive share of the testable claims left if exactly those were decided}."""
    testable = claims(records)
    inconclusive = [r for r in testable if r["verdict"] == "inconclusive"]
    ratios = [_ratio(r) for r in inconclusive]
    out = {"claims": len(testable), "inconclusive": len(inconclusive),
           "not_estimable": sum(x is None for x in ratios)}
    for k in MULTIPLES:
        decided = sum(x is not None and x <= k for x in ratios)
        out[f"within_{k}x"] = {"claims": decided,
                               "inconclusive_share_left": round((len(inconclusive) - decided) / max(len(testable), 1),
                                                                3)}
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
