"""The checks ``olr book`` runs over the built pages, on small hand-made pages."""

from olr_book.htmlcheck import SCRIPT_BUDGET_BYTES, check_book, check_page

GOOD = """<html><head><script src="../../_static/doctools.js"></script>
<script src="../../_static/../mathjax/tex-chtml.js"></script></head><body>
<div class="cell tag_hide-input docutils container"><div class="cell_input">x = 1</div></div>
<div class="cell docutils container"><div class="cell_output">42</div></div></body></html>"""


def page(tmp_path, html, name="book/generated/p.html"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html)
    return path


def test_a_clean_page_passes(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "doctools.js").write_text("var a;")
    (tmp_path / "mathjax").mkdir()
    (tmp_path / "mathjax" / "tex-chtml.js").write_text("x" * 100)
    report = check_page(page(tmp_path, GOOD), tmp_path)
    assert report.problems() == [] and report.script_bytes == 106
    assert check_book(tmp_path) == []


def test_each_violation_is_reported(tmp_path):
    bad = GOOD.replace('<script src="../../_static/doctools.js"></script>',
                       '<script src="https://cdn.example/mathjax/es5/tex-mml.js"></script>')
    bad = bad.replace("tag_hide-input ", "").replace("</body>", '<div class="cell tag_parameters"></div>'
                      "<p>| verdict | when |\n|\u2014|\u2014|\n| reproduced | above 0 |</p>"
                      "<p>| a lone pipe in a sentence |</p></body>")
    problems = check_page(page(tmp_path, bad), tmp_path).problems()
    assert "2 MathJax scripts (expected at most 1)" in problems
    math_page = page(tmp_path, GOOD.replace('<script src="../../_static/../mathjax/tex-chtml.js"></script>', "")
                     .replace("</body>", '<span class="math">x</span></body>'), "book/math.html")
    assert "0 MathJax scripts (expected exactly 1 on a page with math)" in check_page(math_page, tmp_path).problems()
    assert any("scripts from the network: https://cdn.example" in p for p in problems)
    assert "1 code cell(s) shown without a toggle" in problems and "1 parameter cell(s) rendered" in problems
    assert "1 Markdown table(s) shown as text" in problems
    (tmp_path / "huge.js").write_bytes(b"x" * (SCRIPT_BUDGET_BYTES + 1))
    heavy_html = GOOD.replace("../../_static/doctools.js", "../huge.js").replace("../../_static/../", "../")
    heavy = page(tmp_path, heavy_html, "book/heavy.html")
    assert any("MB of scripts" in p for p in check_page(heavy, tmp_path).problems())
    assert len(check_book(tmp_path)) == len(problems) + 2


def test_a_link_reaches_an_anchor_whose_id_is_in_single_quotes(tmp_path):
    """HTML quotes attributes either way: the claims boxes write id='claim-...' (the built book's 261 false broken
    links came from reading double-quoted ids only)."""
    from olr_book.browsercheck import broken_links

    page = tmp_path / "page.html"
    page.write_text("<li id='claim-topk-F1'>x</li><h2 id=\"top\">y</h2>")
    uri = page.as_uri()
    assert broken_links([f"{uri}#claim-topk-F1", f"{uri}#top"]) == []
    assert broken_links([f"{uri}#claim-missing"]) == [f"{uri}#claim-missing"]


def test_a_mean_printed_past_its_noise_is_reported_in_a_page_and_in_an_executed_notebook(tmp_path):
    import json

    from olr_book.htmlcheck import notebook_noise_problems

    table = "<table><tr><td>PDGD</td><td>{}</td></tr></table>"
    past = GOOD.replace("</body>", table.format("0.41237 ± 0.013") + "</body>")
    assert any("printed past their noise: '0.41237 ± 0.013'" in p
               for p in check_page(page(tmp_path, past), tmp_path).problems())
    fitting = GOOD.replace("</body>", table.format("0.412 ± 0.013") + "</body>")
    assert not any("noise" in p for p in check_page(page(tmp_path, fitting), tmp_path).problems())
    notebook = {"cells": [{"cell_type": "code", "source": "", "outputs": [
        {"output_type": "execute_result", "data": {"text/html": [table.format("876.31 ± 40")]}}]}]}
    (tmp_path / "run.ipynb").write_text(json.dumps(notebook))
    assert notebook_noise_problems(tmp_path / "run.ipynb") == ["876.31 ± 40"]


def test_the_search_index_has_a_budget_of_its_own_apart_from_the_code(tmp_path):
    """The search index is the book's text and grows with it: a page whose code stays within its budget passes
    with a search index that would take the two together past it, and fails only when the index passes its own."""
    from olr_book.htmlcheck import SEARCH_INDEX, SEARCH_INDEX_BUDGET_BYTES

    (tmp_path / "code.js").write_bytes(b"x" * (SCRIPT_BUDGET_BYTES - 1000))
    index = tmp_path / SEARCH_INDEX
    index.write_bytes(b"x" * 2000)
    html = '<html><body><script src="../code.js"></script><script src="../searchindex.js"></script></body></html>'
    path = page(tmp_path, html, "book/p.html")
    report = check_page(path, tmp_path)
    report.has_math = False
    assert report.problems() == [] and report.search_index_bytes == 2000
    index.write_bytes(b"x" * (SEARCH_INDEX_BUDGET_BYTES + 1))
    assert any("MB of search index" in p for p in check_page(path, tmp_path).problems())
