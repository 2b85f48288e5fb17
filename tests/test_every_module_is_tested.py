"""Every module of olr_core and olr_book is imported by at least one test file, so that a new module cannot
arrive untested; the few reached only through another module are listed with the module that reaches them
and why, and the list is checked to stay true."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
PACKAGES = ("olr_core", "olr_book")

# module -> (the tested module that reaches it, why no test imports it directly)
REACHED_THROUGH = {
    "olr_core.course_sandbox": ("olr_core.course_jail", "runs only as `python -m olr_core.course_sandbox` inside the "
                                                   "grading jail; test_course_hostile grades through course"),
    "olr_core.experiments.results": ("olr_core.experiments", "loaded lazily by the package's __getattr__; tests "
                                                            "import summary_frame and mean_ci from the package"),
    "olr_core.rankers.baselines": ("olr_core.rankers", "random and oracle, built by name through make_ranker"),
    "olr_book.sizes": ("olr_book.manifest", "a PROFILES table named by the manifest's 'book' entry and read "
                                            "by page_sizes (test_book)"),
}


def module_names() -> dict[str, Path]:
    names = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = path.relative_to(REPO).with_suffix("").parts
            names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def absolute_imports(tree: ast.AST) -> set[str]:
    """Every dotted name an ``import`` or ``from ... import`` of the file could bring in (at any depth)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def imported_by_tests() -> set[str]:
    found = set()
    for path in TESTS.rglob("*.py"):
        found |= absolute_imports(ast.parse(path.read_text(encoding="utf-8")))
    return found


def reaches(through: Path, module: str) -> bool:
    """Whether ``through`` imports ``module`` (relatively or not) or names it in a string (``python -m``)."""
    tree = ast.parse(through.read_text(encoding="utf-8"))
    last = module.rpartition(".")[2]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and \
                last in {(node.module or "").rpartition(".")[2], *(alias.name for alias in node.names)}:
            return True
        if isinstance(node, ast.Constant) and node.value == module:
            return True
    return module in absolute_imports(tree)


def test_every_module_is_imported_by_a_test_file():
    untested = sorted(set(module_names()) - imported_by_tests() - set(REACHED_THROUGH))
    assert not untested, (f"no test file imports {', '.join(untested)}: add tests/test_<module>.py, or list the "
                          "module in REACHED_THROUGH with the tested module that reaches it and why")


def test_the_listed_exceptions_are_still_true():
    modules, imported = module_names(), imported_by_tests()
    for module, (through, reason) in REACHED_THROUGH.items():
        assert module in modules, f"{module} no longer exists: drop it from REACHED_THROUGH"
        assert module not in imported, f"a test now imports {module}: drop it from REACHED_THROUGH"
        assert through in imported, f"{module} is reached through {through}, which no test imports"
        assert reaches(modules[through], module), f"{through} no longer reaches {module} ({reason})"


def test_the_walk_sees_from_imports_of_modules_and_of_names():
    tree = ast.parse("from olr_core import plotting\nfrom olr_core.data.letor import read_letor\n"
                     "import olr_book.htmlcheck\nfrom .conftest import tiny_data\n")
    assert {"olr_core.plotting", "olr_core.data.letor", "olr_book.htmlcheck"} <= absolute_imports(tree)
    assert not any("conftest" in name for name in absolute_imports(tree))
