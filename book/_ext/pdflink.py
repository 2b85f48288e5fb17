"""The intro's link to the whole book as one PDF, shown only where the PDF is.

``make book`` writes no PDF; ``make pdf`` prints one into the HTML book's root (:data:`olr_book.pdf.PDF_NAME`) and
builds the HTML again. The ``book-pdf`` directive leaves a placeholder that is settled when a page is written: a
link where the builder's output folder holds the PDF, else a sentence naming ``make pdf``. A page holding the
directive is read again whenever the PDF has appeared or gone since that folder's last build, so its link follows.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from olr_book.pdf import PDF_NAME

WITHOUT = "make pdf prints the whole book into one PDF, and this line then links it."


class book_pdf(nodes.General, nodes.Element):
    """Where the PDF's line goes; replaced when the page is written."""


class BookPdf(SphinxDirective):
    """``{book-pdf}``: the line that links the PDF (no content, no options)."""

    def run(self):
        self.env.olr_pdf_docs = getattr(self.env, "olr_pdf_docs", set()) | {self.env.docname}
        return [book_pdf()]


def pdf_line(docname: str, present: bool) -> nodes.paragraph:
    """The paragraph of page ``docname``: a link to the PDF at the output's root when ``present``."""
    if not present:
        return nodes.paragraph("", "", nodes.literal("", "make pdf"), nodes.Text(WITHOUT.removeprefix("make pdf")))
    href = "../" * docname.count("/") + PDF_NAME
    return nodes.paragraph("", "The whole book is also one PDF: ",
                           nodes.reference("", PDF_NAME, refuri=href), nodes.Text("."))


def pdf_present(app) -> bool:
    """Whether the PDF lies in the output of the (multi-page) HTML builder, the one ``make pdf`` writes it into."""
    return app.builder.name == "html" and (Path(app.outdir) / PDF_NAME).exists()


def _settle(app, doctree, docname) -> None:
    for node in doctree.findall(book_pdf):
        node.replace_self(pdf_line(docname, pdf_present(app)))


def _outdated(app, env, added, changed, removed) -> list[str]:
    """The pages with the directive, when the PDF appeared or went since this output folder's last build."""
    seen = getattr(env, "olr_pdf_seen", {})
    present, key = pdf_present(app), str(app.outdir)
    env.olr_pdf_seen = {**seen, key: present}
    return sorted(getattr(env, "olr_pdf_docs", set())) if seen.get(key) != present else []


def _purge(app, env, docname) -> None:
    env.olr_pdf_docs = getattr(env, "olr_pdf_docs", set()) - {docname}


def _merge(app, env, docnames, other) -> None:
    env.olr_pdf_docs = getattr(env, "olr_pdf_docs", set()) | (getattr(other, "olr_pdf_docs", set()) & set(docnames))


def setup(app):
    app.add_node(book_pdf)
    app.add_directive("book-pdf", BookPdf)
    app.connect("doctree-resolved", _settle)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
