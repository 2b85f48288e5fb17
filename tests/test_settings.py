"""Settings come from the environment in one module, olr_core.settings, read when asked."""

import ast
from pathlib import Path

import pytest

from olr_core import settings

PACKAGE = Path(settings.__file__).resolve().parent
BOOK_DRIVER = PACKAGE.parent / "olr_book"                  # the book driver reads its settings there too


def test_no_module_but_settings_reads_an_olr_variable_from_the_environment():
    readers = []
    for path in sorted([*PACKAGE.rglob("*.py"), *BOOK_DRIVER.rglob("*.py")]):
        if path.name == "settings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            reads = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("get", "getenv") and ast.unparse(node.func.value) in ("os.environ", "os")
            if reads and node.args and "OLR_" in ast.unparse(node.args[0]):
                readers.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not readers, f"read OLR_ settings through olr_core.settings, not os.environ: {readers}"


@pytest.mark.parametrize("function, variable, value, expected", [
    (settings.results_dir, "OLR_RESULTS_DIR", "/tmp/store", Path("/tmp/store")),
    (settings.cache_dir, "OLR_CACHE_DIR", "/tmp/cache", Path("/tmp/cache")),
    (settings.data_dir, "OLR_DATA_DIR", "", None),
    (settings.blas_thread_count, "OLR_BLAS_THREADS", "3", 3),
    (settings.dask_address, "OLR_DASK", "tcp://h:8786", "tcp://h:8786"),
])
def test_each_setting_is_read_when_asked(monkeypatch, function, variable, value, expected):
    monkeypatch.setenv(variable, value)
    assert function() == expected


def test_a_bad_thread_count_names_the_variable(monkeypatch):
    monkeypatch.setenv("OLR_BLAS_THREADS", "0")
    with pytest.raises(ValueError, match="OLR_BLAS_THREADS='0' is invalid; set it to a positive integer"):
        settings.blas_thread_count()
