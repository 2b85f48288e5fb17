"""``make pdf``: the whole book as one PDF, linked from the intro.

Jupyter Book's single-page HTML build of the executed book (``_build/singlehtml``; run ``make book`` first: the
pages are not executed again) is printed by the headless Chromium the browser check uses, once MathJax has
typeset every formula, with each verdict's folded details open (a PDF cannot unfold them). The PDF is written
beside the HTML book (``_build/html/ol2r-book.pdf``), and the HTML book is then built again (incrementally: the
pages holding the ``book-pdf`` line, book/_ext/pdflink.py) so that the intro links it; a book built by ``make book``
alone names ``make pdf`` there instead of linking a file it does not have.
"""

from __future__ import annotations

import argparse
import base64
import re
import subprocess
import sys
from pathlib import Path

from .manifest import project_root

PDF_NAME = "ol2r-book.pdf"
# Runs in the page: wait for MathJax's typesetting, then open what a printed page cannot unfold.
READY = r"""
const done = arguments[arguments.length - 1];
const ready = (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise
                                                                             : Promise.resolve();
ready.then(() => {
  document.querySelectorAll('table.olr-verdicts details').forEach(d => d.open = true);
  done(document.querySelectorAll('mjx-container').length);
}).catch(e => done(String(e)));
"""


def single_page_command(root: Path) -> list[str]:
    """Jupyter Book's single-page HTML build of the book at ``root`` (into ``root/_build/singlehtml``)."""
    return [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "--builder", "singlehtml"]


def html_command(root: Path) -> list[str]:
    """Jupyter Book's HTML build of the book at ``root`` (into ``root/_build/html``), warnings fatal."""
    return [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "--warningiserror",
            "--keep-going"]


def redirect_target(page: Path) -> Path:
    """The page ``page`` sends the reader to by a meta refresh (the single-page build's ``index.html`` is one, to
    ``book/intro.html``, which holds the whole book), else ``page``: printing the redirect itself would print
    whatever had loaded when the navigation began."""
    match = re.search(r'http-equiv="Refresh"[^>]*url=([^"]+)"', Path(page).read_text(encoding="utf-8"), re.I)
    return (Path(page).parent / match.group(1)).resolve() if match else Path(page)


def print_pdf(page: Path, target: Path) -> Path:
    """``page`` printed to ``target`` (A4, backgrounds kept) by headless Chromium, after MathJax."""
    from selenium.webdriver.common.print_page_options import PrintOptions

    from .browsercheck import driver

    browser = driver()
    try:
        browser.set_script_timeout(300)
        browser.get(Path(page).resolve().as_uri())
        browser.execute_async_script(READY)
        options = PrintOptions()
        options.background = True
        options.page_width, options.page_height = 21.0, 29.7
        options.margin_top = options.margin_bottom = options.margin_left = options.margin_right = 1.2
        pdf = base64.b64decode(browser.print_page(options))
    finally:
        browser.quit()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(pdf)
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="the whole book as one PDF (after make book)")
    parser.add_argument("--root", default=None, help="the book's folder (default: this checkout)")
    parser.add_argument("--output", default=None, help=f"the PDF (default: _build/html/{PDF_NAME})")
    args = parser.parse_args(argv)
    root = Path(args.root) if args.root else project_root()
    if not any((root / "book" / "generated").glob("*.ipynb")):
        print("make pdf: no executed pages in book/generated; run 'make book' first", file=sys.stderr)
        return 1
    status = subprocess.call(single_page_command(root), cwd=root)
    if status != 0:
        return status
    target = Path(args.output) if args.output else root / "_build" / "html" / PDF_NAME
    print_pdf(redirect_target(root / "_build" / "singlehtml" / "index.html"), target)
    print(f"make pdf: {target} ({target.stat().st_size / 1e6:.1f} MB)")
    if target.resolve() != (root / "_build" / "html" / PDF_NAME).resolve():
        return 0
    return subprocess.call(html_command(root), cwd=root)      # the intro's line now links the PDF


if __name__ == "__main__":
    sys.exit(main())
