"""What a build still has to compute, and what it would cost (``olr book --plan``, ``olr claims --plan``),
from the run specs alone and the store's record of the CPU seconds of the runs it holds."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import warnings
from pathlib import Path

from . import experiments
from .experiments import ResultStore
from .experiments.costs import cost_kind, estimate_seconds, stored_costs
from .experiments.runner import spec_key
from .reproductions.verdicts import claim_grids


def claim_run_keys(paper: str | None, profile: str, data_dir=None, store: ResultStore | None = None) -> list[str]:
    """The keys of the claims' runs of ``paper`` at ``profile`` that ``store`` holds (in grid order, once each)."""
    store = store or ResultStore()
    keys = (spec_key(s, data_dir) for specs in claim_grids(paper, profile, data_dir).values() for s in specs)
    return [k for k in dict.fromkeys(keys) if store.has(k)]


GRID_CALLS = ("run_grid", "claim_records")


def _grid_statements(tree, names) -> list[int]:
    """Indices of a cell's top-level statements that name one of ``names`` (functions that run grids)."""
    def calls(node) -> bool:
        return getattr(node, "id", None) in names or getattr(node, "attr", None) in names

    return [i for i, stmt in enumerate(tree.body) if any(calls(n) for n in ast.walk(stmt))]


def _grid_functions(trees) -> set[str]:
    """:data:`GRID_CALLS` and every function a page defines that calls one of them (directly or not)."""
    names, defs = set(GRID_CALLS), [n for tree in trees for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    while True:
        more = {d.name for d in defs if d.name not in names and _grid_statements(ast.Module(d.body, []), names)}
        if not more:
            return names
        names |= more


@contextlib.contextmanager
def _recording(collected: list, data_dir):
    """:func:`run_grid` and :func:`claim_records` replaced by recorders: each adds the specs it would run to
    ``collected`` and runs nothing (the grid's keys, no records)."""
    from .experiments import runner
    from .reproductions import verdicts

    def record_grid(specs, *_, **__):
        collected.extend(specs)
        return []

    def record_claims(paper=None, profile="quick", data_dir=None, jobs=1, store=None, compute=True, seeds=None,
                      rankers=()):
        collected.extend(s for specs in claim_grids(paper, profile, data_dir, seeds, rankers).values() for s in specs)
        return []

    saved = (experiments.run_grid, runner.run_grid, verdicts.claim_records)
    experiments.run_grid = runner.run_grid = record_grid
    verdicts.claim_records = record_claims
    try:
        yield
    finally:
        experiments.run_grid, runner.run_grid, verdicts.claim_records = saved


def page_specs(notebook: Path, values: dict) -> list:
    """The run specs a book page would compute with the parameters ``values``: its code cells are executed in
    this process (in the notebook's folder) up to its last statement that runs a grid (or judges claims), with
    ``values`` set after its parameters cell and those calls recording their specs instead of running them; a
    statement that fails (e.g. reading a run not yet stored) is skipped. [] for a page that stores no runs."""
    import jupytext

    cells = [c for c in jupytext.read(notebook).cells if c.cell_type == "code"]
    trees = [ast.parse("\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!"))))
             for c in cells]
    names = _grid_functions(trees)
    last = max((i for i, tree in enumerate(trees) if _grid_statements(tree, names)), default=-1)
    collected, namespace = [], {"__name__": "__olr_plan__"}
    previous = os.getcwd()
    with _recording(collected, None), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        os.chdir(notebook.parent)
        try:
            for cell, tree in zip(cells[:last + 1], trees[:last + 1]):
                marks = _grid_statements(tree, names)
                for stmt in tree.body[: marks[-1] + 1] if marks else tree.body:
                    try:
                        exec(compile(ast.Module([stmt], []), f"<{notebook.name}>", "exec"), namespace)
                    except Exception:           # noqa: BLE001  (a later statement may still name runs)
                        pass
                if "parameters" in cell.metadata.get("tags", []):
                    namespace.update({k: v for k, v in values.items() if k in namespace})
        finally:
            os.chdir(previous)
    return collected


def plan_groups(groups: dict[str, list], store: ResultStore, data_dir=None) -> list[dict]:
    """Per group (a page or a claim group): its runs, those the store lacks (a run two groups share counts in
    the first), their estimated CPU seconds, how each estimate was made, and the kinds whose cost is unknown."""
    from .reproductions.ledger import run_costs

    costs, seen, out, described = {**run_costs(), **stored_costs(store)}, set(), [], {}
    for name, specs in groups.items():
        row = {"group": name, "runs": 0, "missing": 0, "cpu_seconds": 0.0, "longest": 0.0, "basis": {}, "unknown": {}}
        for spec in specs:                    # (pages share many runs: each spec is described and keyed once)
            if repr(spec) not in described:
                described[repr(spec)] = (spec_key(spec, data_dir), spec.canonical())
        for key, canonical in dict(described[repr(s)] for s in specs).items():
            row["runs"] += 1
            if key in seen or store.has(key):
                continue
            seen.add(key)
            row["missing"] += 1
            seconds, basis = estimate_seconds(canonical, costs)
            row["basis"][basis] = row["basis"].get(basis, 0) + 1
            if seconds is None:
                label = f"{' on '.join(cost_kind(canonical))}, {canonical['rounds']:,} rounds"
                row["unknown"][label] = row["unknown"].get(label, 0) + 1
            else:
                row["cpu_seconds"] += seconds
                row["longest"] = max(row["longest"], seconds)
        out.append(row)
    return out


def _hours(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 3600 else f"{seconds:,.0f} s ({seconds / 3600:,.1f} h)"


def format_plan(rows: list[dict], what: str, cores: int) -> str:
    """The plan as text: one line per group, the kinds of unknown cost, and the total with its wall time on
    ``cores`` cores (the CPU seconds spread evenly, but never less than the longest run)."""
    if not isinstance(cores, int) or cores < 1:
        raise ValueError(f"option --cores={cores!r} is invalid; use a positive count of cores")
    width = max([len(r["group"]) for r in rows] + [10])
    lines = [f"{what}: runs still missing from the store and their estimated CPU seconds",
             f"{'':{width}}  {'runs':>6}  {'missing':>7}  {'CPU seconds':>12}  how estimated"]
    for r in rows:
        basis = ", ".join(f"{n} {b}" for b, n in r["basis"].items()) or "-"
        lines.append(f"{r['group']:<{width}}  {r['runs']:>6,}  {r['missing']:>7,}  {r['cpu_seconds']:>12,.0f}  {basis}")
        for label, n in r["unknown"].items():
            lines.append(f"{'':{width}}    unknown cost (no stored run of this algorithm): {n} x {label}")
    total = sum(r["cpu_seconds"] for r in rows)
    missing, unknown = sum(r["missing"] for r in rows), sum(sum(r["unknown"].values()) for r in rows)
    wall = max(total / cores, max((r["longest"] for r in rows), default=0.0))
    lines.append(f"total: {missing:,} runs missing, ~{_hours(total)} CPU; "
                 f"~{_hours(wall)} wall on {cores} core(s)"
                 + (f"; {unknown:,} run(s) of unknown cost not counted" if unknown else ""))
    return "\n".join(lines)


def claims_plan(paper: str | None, profile: str, data_dir=None, cores: int | None = None, seeds: int | None = None,
                store: ResultStore | None = None) -> str:
    """``olr claims --plan``: per claim group (paper, configuration, experiment), the runs it would compute."""
    groups = {"/".join(name): specs for name, specs in claim_grids(paper, profile, data_dir, seeds).items()}
    rows = plan_groups(groups, store or ResultStore(), data_dir)
    return format_plan(rows, f"olr claims {paper or '(all papers)'} --profile {profile}", cores or os.cpu_count() or 1)
