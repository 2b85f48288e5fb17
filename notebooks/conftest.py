"""nbval for the book's pages, which are kept as MyST Markdown text (jupytext's ``md:myst``).

``make test`` runs ``pytest ... notebooks --nbval-lax``: every page is collected here and executed cell by cell
in a kernel of its own, at the ``tiny`` run sizes of its parameters cell, exactly as nbval executes an
``.ipynb``. nbval reads a notebook with ``nbformat.read``; :class:`TextPage` hands it the notebook that
jupytext reads from the page's text instead, so nothing else of nbval changes (kernel, working folder, items).
"""

from __future__ import annotations

from types import SimpleNamespace

import jupytext
from nbval import plugin


class TextPage(plugin.IPyNbFile):
    """nbval's collector for one page of ``notebooks/*.md``: its code cells as test items."""

    def collect(self):
        reads_text = SimpleNamespace(read=lambda path, as_version: jupytext.read(path, as_version=as_version))
        nbval_nbformat, plugin.nbformat = plugin.nbformat, reads_text     # nbval's own name, for this read only
        try:
            items = list(super().collect())
        finally:
            plugin.nbformat = nbval_nbformat
        yield from items


def pytest_collect_file(file_path, parent):
    """Every page's text (a ``.md`` with a jupytext header) under the nbval options of ``make test``."""
    options = parent.config.option
    if (options.nbval or options.nbval_lax) and file_path.suffix == ".md" and _is_page(file_path):
        return TextPage.from_parent(parent, path=file_path)
    return None


def _is_page(path) -> bool:
    with open(path, encoding="utf-8") as text:
        return text.readline().strip() == "---" and "jupytext:" in text.readline()

