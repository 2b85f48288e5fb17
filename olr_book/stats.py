"""The "Execution statistics" page: what executing each page cost (seconds, runs computed and reused, where the
runs' CPU time went), kept in ``book/generated/execution_stats.json`` and written out as a table."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from olr_core.names import in_words

STATS_FILE = "execution_stats.json"
BUILD_FILE = "execution_build.json"


def as_code_name(code: str) -> str:
    """A page's "olr_core 0.1.0, code 30de35bca76e" with the package and the fingerprint set as code in Markdown."""
    package, _, rest = code.partition(" ")
    version, _, fingerprint = rest.partition(", code ")
    return f"`{package}` {version}, code fingerprint `{fingerprint}`" if fingerprint else f"`{code}`"


def read_run_log(path: Path, store) -> dict:
    """Counts of the runs computed and reused in a run log (the store appends ``kind key`` per run to the
    file ``$OLR_RUN_LOG`` names), and where the computed runs' time went: their CPU seconds in all
    (``run_seconds``) and per kind of run (``costliest``: the label :meth:`.ResultStore.run_seconds` gives,
    runs, seconds; the five costliest)."""
    lines = [line.split() for line in path.read_text().splitlines()] if path.exists() else []
    kinds = [line[0] for line in lines if line]
    computed = [line[1] for line in lines if len(line) == 2 and line[0] == "computed"]
    by_kind = {}
    for key in computed:
        if store.has(key):
            label, seconds = store.run_seconds(key)
            runs, total = by_kind.get(label, (0, 0.0))
            by_kind[label] = (runs + 1, total + seconds)
    costliest = sorted(by_kind.items(), key=lambda item: -item[1][1])[:5]
    return {"computed": kinds.count("computed"), "reused": kinds.count("reused"),
            "run_seconds": round(sum(total for _, total in by_kind.values()), 1),
            "costliest": [[label, runs, round(total, 1)] for label, (runs, total) in costliest]}


def record_execution(root: Path, page: str, profile: str, params: dict, seconds: float, counts: dict) -> None:
    """Keep what executing a page cost, with what (book/generated/execution_stats.json, one entry per page)."""
    from olr_core import __version__
    from olr_core.experiments.spec import code_fingerprint

    path = root / "book" / "generated" / STATS_FILE
    stats = json.loads(path.read_text()) if path.exists() else {}
    stats[page] = {
        "seconds": round(seconds, 1), "computed": counts["computed"], "reused": counts["reused"],
        "run_seconds": counts.get("run_seconds", 0.0), "costliest": counts.get("costliest", []),
        "profile": profile, "parameters": {k: v for k, v in params.items() if k not in ("data_dir", "jobs")},
        "code": f"olr_core {__version__}, code {code_fingerprint()}", "executed": time.strftime("%Y-%m-%d %H:%M"),
        "machine": machine_description()}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(stats, indent=1, default=str))


def record_build(root: Path, pages: int, at_once: int, seconds: float, compile_seconds: float = 0.0) -> None:
    """Keep the wall time of the last execution of every page (book/generated/execution_build.json; a page
    executed alone with ``--only`` leaves it), with the seconds spent first compiling numba's shared kernels:
    with pages side by side, the page times add up to more."""
    path = root / "book" / "generated" / BUILD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pages": pages, "at_once": at_once, "seconds": round(seconds, 1),
                                "compile_seconds": round(compile_seconds, 1),
                                "executed": time.strftime("%Y-%m-%d %H:%M")}))


def machine_description() -> str:
    import platform
    from importlib.metadata import version

    packages = ", ".join(f"{name} {version(name)}" for name in ("numpy", "scipy", "numba", "pandas"))
    return f"{os.cpu_count()} cores, Python {platform.python_version()}, {packages}"


def write_execution_page(root: Path, order: list[str]) -> Path:
    """book/generated/execution_stats.md: the table the "Execution statistics" page includes, from the
    recorded executions in the manifest's ``order`` (page names), with totals."""
    path = root / "book" / "generated" / STATS_FILE
    stats = json.loads(path.read_text()) if path.exists() else {}
    pages = [p for p in order if p in stats]
    lines = ["| page | seconds | runs computed | runs reused | CPU seconds in computed runs | profile | parameters "
             "| executed |", "|---|---:|---:|---:|---:|---|---|---|"]
    for page in pages:
        s = stats[page]
        params = ", ".join(f"`{k}={v}`" for k, v in s["parameters"].items())      # as a reader passes them: code
        link = page_link(page)
        lines.append(f"| {link} | {s['seconds']:.0f} | {s['computed']} | {s['reused']} | {s.get('run_seconds', 0):.0f} "
                     f"| {s['profile']} | {params} | {s['executed']} |")
    total = sum(stats[p]["seconds"] for p in pages)
    lines.append(f"| **all {len(pages)} pages** | **{total:.0f}** | **{sum(stats[p]['computed'] for p in pages)}** "
                 f"| **{sum(stats[p]['reused'] for p in pages)}** "
                 f"| **{sum(stats[p].get('run_seconds', 0) for p in pages):.0f}** | | | |")
    machines = sorted({stats[p]["machine"] for p in pages})
    codes = sorted({as_code_name(stats[p]["code"]) for p in pages})
    build_path = root / "book" / "generated" / BUILD_FILE
    build = json.loads(build_path.read_text()) if build_path.exists() else None
    compiled = (f" (its first {build['compile_seconds']:.0f} s readying numba's shared kernels: compiled on a fresh "
                "checkout, else loaded)"
                if build and build.get("compile_seconds") else "")
    ran = f"{build['pages']} page{'s' * (build['pages'] != 1)}" if build else ""
    wall = (f" The last execution ran {ran}, {build['at_once']} at a time, in "
            f"{build['seconds'] / 60:.1f} minutes of wall time{compiled}; side by side, pages share the machine, "
            "so their times add up to more than that." if build else "")
    text = (f"Pages executed: {len(pages)} of {len(order)}; their times add up to {total / 60:.1f} minutes.{wall} "
            f"Machine: {'; '.join(machines) or 'none recorded'}. Code: {'; '.join(codes) or 'none recorded'}.\n"
            + costliest_runs_table(stats, pages) + "\nEvery page:\n\n" + "\n".join(lines) + "\n")
    out = root / "book" / "generated" / "execution_stats.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return out


def costliest_runs_table(stats: dict, pages: list[str], heaviest: int = 8) -> str:
    """Where the time of the ``heaviest`` pages (by seconds in computed runs) went: per page, the kinds of run
    that cost most (algorithm on data set and horizon: runs, seconds), from each run's own recorded time."""
    ranked = sorted((p for p in pages if stats[p].get("costliest")), key=lambda p: -stats[p]["run_seconds"])
    if not ranked:
        return ""
    rows = ["", "Where the runs' time went on the pages that computed most (each run records the CPU seconds it "
            "took, which other work on the machine does not change; a page's workers share two cores with the "
            "page beside it):", "",
            "| page | CPU seconds in computed runs | costliest runs (count, CPU seconds) |", "|---|---:|---|"]
    for page in ranked[:heaviest]:
        kinds = "; ".join(f"{kind_words(label)} ({runs}, {seconds:.0f} s)"
                          for label, runs, seconds in stats[page]["costliest"])
        rows.append(f"| {page_link(page)} | {stats[page]['run_seconds']:.0f} | {kinds} |")
    return "\n".join(rows) + "\n"


# a data set built by code, named by where it lives ("olr_core.reproductions.worlds:linear")
CODE_REFERENCE = re.compile(r"(?<![\w`])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+:[A-Za-z_]\w*")


def kind_words(label: str) -> str:
    """A kind of run in the names a reader knows (Markdown): "ε-greedy RankNet on MQ2008, 1000 rounds"; a data set
    built by code keeps its reference, as code."""
    return in_words(CODE_REFERENCE.sub(lambda m: f"`{m.group(0)}`", label))


def page_link(page: str) -> str:
    """A link to a generated page, named by its title (its notebook name is an identifier of the code)."""
    return f"{{doc}}`/book/generated/{page}`"
