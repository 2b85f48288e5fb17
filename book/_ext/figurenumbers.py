"""Every figure of the book numbered in one sequence, in reading order ("Figure 1." ... "Figure 83.").

Figures come three ways: a page's ``<figure class="olr-figure">`` with its ``<figcaption class="olr-caption">``
(:func:`olr_core.plotting.show_figure`), a chapter's ``olr-figure`` container with its ``olr-caption``, and a
MyST ``glue:figure`` (Sphinx numbers those per page, "Fig. 1"). Pages are executed one by one, so none knows the
figures before it: once the HTML is written, each page in the table of contents' order gets its figures'
numbers, written at the start of each caption (Sphinx's own "Fig. N" replaced). A single-page build (the PDF's)
numbers its one page top to bottom, which is the same order.
"""

from __future__ import annotations

import re
from pathlib import Path

CAPTION = re.compile(
    r'(?P<page><figcaption class="olr-caption">)'
    r'|(?P<chapter><div class="olr-caption docutils container">\s*<p>(?:<em>)?)'
    r'|(?P<sphinx><figcaption>\s*<p><span class="caption-number">)(?:Fig\. \d+ |Figure \d+\. )(?=</span>)')
NUMBER = re.compile(r'<span class="olr-figure-number">Figure \d+\.</span> ')


def number_captions(text: str, start: int = 0) -> tuple[str, int]:
    """``text`` with the book's numbers written into its figures' captions, from ``start`` + 1 on (numbers an
    earlier pass wrote are replaced, so a page Sphinx did not rewrite is numbered again, not twice); and the last
    number given."""
    count = start
    text = NUMBER.sub("", text)

    def numbered(match: re.Match) -> str:
        nonlocal count
        count += 1
        if match.group("sphinx"):
            return f"{match.group('sphinx')}Figure {count}. "
        return f"{match.group(0)}<span class=\"olr-figure-number\">Figure {count}.</span> "

    return CAPTION.sub(numbered, text), count


def reading_order(includes: dict, root: str) -> list[str]:
    """The documents in reading order: ``root``, then what its table of contents includes, depth first."""
    order, stack = [], [root]
    while stack:
        doc = stack.pop()
        if doc not in order:
            order.append(doc)
            stack.extend(reversed(includes.get(doc, [])))
    return order


def _number_book(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    if app.builder.name == "singlehtml":
        files = [out / "index.html"]
    else:
        files = [out / app.builder.get_target_uri(doc)
                 for doc in reading_order(app.env.toctree_includes, app.config.root_doc)]
    count = 0
    for path in files:
        if path.exists():
            text, count = number_captions(path.read_text(encoding="utf-8"), count)
            path.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _number_book)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
