"""The browser check fails on what a reader would see broken: planted in a copy of a tiny site, a
missing image, an unrendered formula, a console error and a request to the network are each reported,
and a clean page passes. Needs Debian's chromium and chromium-driver (``make browser-test`` installs them)."""

from pathlib import Path

import pytest

from olr_book import browsercheck

pytestmark = pytest.mark.skipif(not (Path(browsercheck.CHROMIUM).exists() and Path(browsercheck.CHROMEDRIVER).exists()),
                                reason="needs /usr/bin/chromium and /usr/bin/chromedriver (make browser-test)")

ROOT = Path(__file__).resolve().parents[2]
MATHJAX = ROOT / "_mathjax" / "mathjax" / "tex-chtml.js"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def page(body: str, mathjax: bool = True) -> str:
    script = f'<script defer src="{MATHJAX.as_uri()}"></script>' if mathjax else ""
    return (f"<!doctype html><html lang='en'><head><title>t</title>{script}</head>"
            f"<body><main>{body}</main></body></html>")


@pytest.fixture
def site(tmp_path):
    if not MATHJAX.exists():
        pytest.skip("MathJax is bundled by make mathjax")
    (tmp_path / "dot.png").write_bytes(PNG)
    return tmp_path


def problems(site, name, html):
    (site / name).write_text(html)
    return browsercheck.check_book(site, pages=[site / name])


def test_a_clean_page_passes(site):
    html = page('<h1>A</h1><h2>B</h2><p>An inline <span class="math notranslate nohighlight">\\(x^2\\)</span>.</p>'
                '<img src="dot.png" alt="a dot">')
    assert problems(site, "clean.html", html) == []


def test_a_broken_image_and_missing_alt_text_are_reported(site):
    found = problems(site, "image.html", page('<h1>A</h1><img src="missing.png" alt="gone"><img src="dot.png">'))
    assert any("image did not load: missing.png" in p for p in found)
    assert any("image without alt text: dot.png" in p for p in found)


def test_an_unrendered_formula_is_reported(site):
    found = problems(site, "math.html", page('<h1>A</h1><p><span class="math">\\(x^2\\)</span> and $$y$$</p>',
                                             mathjax=False))
    assert any("1 of 1 formulas not typeset" in p for p in found)
    assert any("raw TeX in the text" in p for p in found)


def test_console_errors_network_requests_and_skipped_headings_are_reported(site):
    found = problems(site, "js.html", page('<h1>A</h1><h3>C</h3><script>const a = 1; const a = 2;</script>'
                                           '<img src="https://example.org/x.png" alt="remote">'))
    assert any("console error" in p for p in found)
    assert any("request leaves the machine: https://example.org/x.png" in p for p in found)
    assert any("heading levels skip: h1 -> h3" in p for p in found)
