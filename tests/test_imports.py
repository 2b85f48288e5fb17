"""olr_core's imports form no cycle: a test walks every import of every module, at the top of a file or
deferred inside a function (a deferred import hides a cycle from Python, not from a reader)."""

import ast
from pathlib import Path

import olr_core

PACKAGE = Path(olr_core.__file__).resolve().parent
KNOWN_CYCLES: list = []          # (none left: the book driver's numba warm-up lives in olr_book.build)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imported_modules(name: str, path: Path) -> set[str]:
    """The olr_core modules ``name`` imports anywhere in its file, at the top or inside a function."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parents + ([base] if base else []))
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in MODULES and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle_through_a_deferred_import():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_walk_sees_imports_inside_functions():
    graph = imported_modules("olr_core.experiments.spec", MODULES["olr_core.experiments.spec"])
    assert {"olr_core.loop", "olr_core.budget", "olr_core.settings"} <= graph


def test_olr_core_imports_form_no_cycle():
    graph = {name: imported_modules(name, path) for name, path in MODULES.items()}
    found = [c for c in cycles(graph) if c not in KNOWN_CYCLES]
    assert not found, f"import cycle(s) in olr_core: {found}; move what both sides need to a module of its own"
