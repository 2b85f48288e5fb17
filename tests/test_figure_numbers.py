"""Every figure numbered in the book's own sequence (#47): the three ways a figure reaches a page (a page's
``show_figure``, a chapter's ``olr-figure`` container, a MyST ``glue:figure``) each get "Figure N." in reading
order, a page numbered twice keeps its numbers, and Sphinx's per-page "Fig. 1" is replaced."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("figurenumbers", ROOT / "book" / "_ext" / "figurenumbers.py")
figurenumbers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(figurenumbers)

PAGE = ('<figure class="olr-figure"><img src="a.png"><figcaption class="olr-caption">Offline NDCG.</figcaption>'
        '</figure><div class="olr-figure docutils container"><img src="b.png">'
        '<div class="olr-caption docutils container">\n<p><em>The paper\'s Figure 3 (a, b), redrawn.</em></p></div>'
        '</div><figure class="align-default" id="fig-ctr"><img src="c.png"><figcaption>\n'
        '<p><span class="caption-number">Fig. 1 </span><span class="caption-text">Clicks.</span></p></figcaption>'
        '</figure><div class="exercise admonition"><p class="admonition-title"><span class="caption-number">'
        'Exercise 1 </span></p></div>')


def test_figures_are_numbered_in_order_across_pages_and_only_figures():
    first, last = figurenumbers.number_captions(PAGE, 10)
    assert last == 13
    assert '<figcaption class="olr-caption"><span class="olr-figure-number">Figure 11.</span> Offline' in first
    assert '<p><em><span class="olr-figure-number">Figure 12.</span> The paper\'s Figure 3' in first
    assert '<span class="caption-number">Figure 13. </span><span class="caption-text">Clicks.' in first
    assert "Exercise 1 </span>" in first and "Fig. 1" not in first


def test_numbering_a_page_again_renumbers_it_instead_of_adding_a_second_number():
    once, _ = figurenumbers.number_captions(PAGE, 0)
    again, last = figurenumbers.number_captions(once, 4)
    assert last == 7 and again.count("Figure 5.") == 1 and "Figure 1." not in again
    assert again.count("olr-figure-number") == 2


def test_reading_order_follows_the_table_of_contents_depth_first():
    includes = {"intro": ["dsp", "pairrank"], "dsp": ["generated/dsp_table2", "generated/dsp_figure2"],
                "pairrank": ["generated/pairrank_figure3"]}
    assert figurenumbers.reading_order(includes, "intro") == [
        "intro", "dsp", "generated/dsp_table2", "generated/dsp_figure2", "pairrank", "generated/pairrank_figure3"]
