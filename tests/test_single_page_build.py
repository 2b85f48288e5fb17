"""``make pdf``'s single-page build and the intro's PDF link (#47), on a tiny Sphinx project with the book's own
extensions (from ``_config.yml``): a sphinx-proof definition renders in the single-page build (it stopped with
NotImplementedError on ``definition_node`` there), and the ``book-pdf`` line links the PDF only while the HTML
output holds it."""

from pathlib import Path

import pytest
import yaml
from sphinx.application import Sphinx

from olr_book.pdf import PDF_NAME

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = ROOT / "book" / "_ext"
PAGE = """# Tiny book

```{book-pdf}
```

```{prf:definition} Regret
:label: def-regret

What a learner gives away.
```

```{exercise} Count it
:label: ex-count

Count the pairs.
```
"""


def book_extensions() -> list[str]:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    return ["myst_parser", *config["extra_extensions"], *config["local_extensions"]]


@pytest.fixture
def project(tmp_path):
    source = tmp_path / "source"
    (source / "part").mkdir(parents=True)
    (source / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(EXTENSIONS)!r})\n"
                                    f"extensions = {book_extensions()!r}\n"
                                    "myst_enable_extensions = ['colon_fence']\nbibtex_bibfiles = []\n"
                                    "root_doc = 'index'\n")
    (source / "index.md").write_text(PAGE + "\n```{toctree}\npart/page\n```\n")
    (source / "part" / "page.md").write_text("# A page\n\n```{book-pdf}\n```\n")
    return tmp_path


def build(project: Path, builder: str) -> Path:
    out = project / builder
    Sphinx(str(project / "source"), str(project / "source"), str(out), str(project / "doctrees"), builder,
           status=None, warning=None, freshenv=False).build()
    return out


def test_the_single_page_build_renders_a_sphinx_proof_definition(project):
    text = (build(project, "singlehtml") / "index.html").read_text()
    assert "Definition 1" in text and "What a learner gives away." in text and "Exercise 1" in text
    assert PDF_NAME not in text                               # no PDF beside the single page: no link


def test_the_pdf_link_appears_with_the_pdf_and_goes_with_it(project):
    out = build(project, "html")
    assert f'href="{PDF_NAME}"' not in (out / "index.html").read_text()
    assert "prints the whole book into one PDF" in (out / "index.html").read_text()
    (out / PDF_NAME).write_bytes(b"%PDF-1.4")
    build(project, "html")
    assert f'href="{PDF_NAME}"' in (out / "index.html").read_text()
    assert f'href="../{PDF_NAME}"' in (out / "part" / "page.html").read_text()
    (out / PDF_NAME).unlink()
    build(project, "html")
    assert PDF_NAME not in (out / "index.html").read_text()


def test_the_intro_links_the_pdf_through_the_directive_only():
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "```{book-pdf}" in intro and PDF_NAME not in intro


def test_the_pdf_is_printed_from_the_page_the_single_page_index_redirects_to(tmp_path):
    """The single-page build's index.html is a meta-refresh redirect to book/intro.html (the whole book): printing
    the redirect printed only what had loaded when the navigation began (20 pages on the real book)."""
    from olr_book.pdf import redirect_target

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.html").write_text("<html>the book</html>")
    index = tmp_path / "index.html"
    index.write_text('<meta http-equiv="Refresh" content="0; url=book/intro.html" />')
    assert redirect_target(index) == (tmp_path / "book" / "intro.html").resolve()
    plain = tmp_path / "book" / "intro.html"
    assert redirect_target(plain) == plain
