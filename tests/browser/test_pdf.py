"""``make pdf`` (#47): a page printed by headless Chromium into one PDF, with the verdict table's folded details
open (a printed page cannot unfold them); without executed pages it says to run ``make book`` first."""

import re
from pathlib import Path

import pytest

from olr_book import browsercheck, pdf

needs_chromium = pytest.mark.skipif(
    not (Path(browsercheck.CHROMIUM).exists() and Path(browsercheck.CHROMEDRIVER).exists()),
    reason="needs /usr/bin/chromium and /usr/bin/chromedriver (make browser-test)")


def pages(path: Path) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", path.read_bytes()))


@needs_chromium
def test_the_book_prints_to_one_pdf_with_the_verdicts_details_open(tmp_path):
    long = "".join(f"<p>Cell {i}: a margin and its interval.</p>" for i in range(300))

    def page(table_class):
        path = tmp_path / f"{table_class or 'plain'}.html"
        path.write_text(f"<!doctype html><html><body><h1>Book</h1><table class='{table_class}'><tbody><tr><td>"
                        f"<details><summary>cells</summary>{long}</details></td></tr></tbody></table></body></html>")
        return path

    folded = pdf.print_pdf(page("other"), tmp_path / "folded.pdf")
    opened = pdf.print_pdf(page("olr-verdicts"), tmp_path / "out" / "book.pdf")
    assert opened.read_bytes().startswith(b"%PDF") and pages(folded) == 1 and pages(opened) > 3


def test_without_executed_pages_make_pdf_asks_for_make_book_first(tmp_path, capsys):
    assert pdf.main(["--root", str(tmp_path)]) == 1
    assert "run 'make book' first" in capsys.readouterr().err
    assert pdf.single_page_command(tmp_path)[-3:] == [str(tmp_path), "--builder", "singlehtml"]
