"""The verdicts as a reader sees them: each row's cells (margins and intervals in the claim's unit), the paper's
number beside ours, links that reach the "claims decided here" box of the page holding the runs, and a forest
plot whose panels each have one unit."""

from pathlib import Path

import pandas as pd
import pytest

from olr_book.htmlcheck import check_claim_links
from olr_book.manifest import read_page
from olr_core.reproductions import next_runs
from olr_core.reproductions import verdict_display as vd
from olr_core.reproductions.verdicts import PAPERS, skyline_note

ROOT = Path(__file__).resolve().parents[1]


def record(paper="dsp", id_="T2-mgd-dsp", page="dsp_table2", verdict="inconclusive", role="headline",
           config="text", cells=None, magnitude=None, paper_number=None):
    r = {"paper": paper, "id": id_, "source": "Table 2", "claim": "MGD-DSP beats MGD", "config": config,
         "config_role": role, "paper_value": "+7.0%", "ours": "+1.1%", "setup": "ours: 5 runs", "runs": 5,
         "rule": "paired_gain", "verdict": verdict, "reason": "margin: mean paired difference; more", "page": page,
         "cells": cells if cells is not None else [
             {"cell": "mq2008/perfect", "margin": 0.8637, "ci_low": -1.97, "ci_high": 3.697, "runs": 5}]}
    if magnitude is not None:
        r["magnitude"] = magnitude
    if paper_number is not None:
        r["paper_number"] = paper_number
    return r


SIZED = {"unit": "% of the control's mean", "summary": "smaller in every cell",
         "cells": [{"cell": "mq2008/perfect", "paper": 6.99, "ours": 1.07, "low": -2.4, "high": 4.59,
                    "outcome": "smaller"}]}


def test_row_shows_margins_intervals_paper_number_and_link():
    row = vd.verdict_rows([record(magnitude=SIZED, paper_number={"mq2008/perfect": 6.99})]).iloc[0]
    assert "MQ2008/perfect: +0.9 [-2.0, +3.7], 5 runs" in row["cells"]     # to 2 digits of the interval's width
    assert "online NDCG@10 (discounted sum)" in row["cells"]           # the unit of T2-mgd-dsp's margin, in words
    assert "paper +6.99 vs ours +1.1 [-2.4, +4.6] % of the control&#x27;s mean" in row["cells"]
    assert "paper's number: mq2008/perfect: +6.99" in row["paper"].replace("&#x27;", "'")
    assert 'href="dsp_table2.html#claim-dsp-T2-mgd-dsp"' in row["claim"]
    assert "id='verdict-dsp-T2-mgd-dsp'" in row["claim"]


def test_chapter_rows_link_into_generated_and_pageless_claims_to_the_chapter_section():
    with_page, without = record(), record(id_="T3.1-any-scheme", page="")
    assert vd.evidence_href(with_page, "book") == "generated/dsp_table2.html#claim-dsp-T2-mgd-dsp"
    assert vd.evidence_href(without, "generated") == "../dsp.html#does-it-reproduce"
    assert vd.evidence_href(without, "book") == "dsp.html#does-it-reproduce"


def test_sensitivity_verdicts_under_the_headline_with_their_meaning():
    records = [record(), record(config="written-sign", role="sensitivity", verdict="partly")]
    cell = vd.verdict_rows(records)["verdict"].iloc[0]
    assert cell.startswith("<span style='white-space: nowrap'>inconclusive</span>")
    assert "written-sign: partly" in cell and "as the paper writes it" in cell


def test_numbers_are_signed_without_negative_zero_and_unbounded_ends_named():
    assert vd.number(-0.0) == "0" and vd.number(-0.0004, 1) == "-0.0004" and vd.number(-1e-9, 2) == "-1 × 10⁻⁹"
    assert vd.number(float("inf")) == "infinite" and vd.number(None) == "not estimable"   # in words (#47)
    assert vd.number(0.12345) == "+0.123"


def test_box_lists_the_pages_claims_with_verdicts_and_anchors():
    records = [record(), record(id_="F2-faster", page="dsp_figure2", verdict="partly"),
               record(config="code", role="sensitivity", verdict="reproduced")]
    box = vd.claims_box(records, "dsp_table2")
    assert "id='claim-dsp-T2-mgd-dsp'" in box and "F2-faster" not in box
    assert "inconclusive" in box and "(code: reproduced)" in box
    assert "href='claims.html#verdict-dsp-T2-mgd-dsp'" in box
    assert "+0.9 [-2.0, +3.7]" in box
    assert "No claim" in vd.claims_box(records, "dsp_figure4")


def built_book(tmp_path, records, boxes=True):
    """A built book's verdicts page and chapter sections, with (or without) each figure page's box."""
    generated = tmp_path / "book" / "generated"
    generated.mkdir(parents=True)
    (generated / "claims.html").write_text(f"<html><body>{vd.verdict_table(records).to_html()}</body></html>")
    for paper in {r["paper"] for r in records}:
        (tmp_path / "book" / f"{paper}.html").write_text(f"<h2 id='{vd.CHAPTER_ANCHOR}'>Does it reproduce?</h2>")
    for page in {r["page"] for r in records if r["page"]}:
        (generated / f"{page}.html").write_text(vd.claims_box(records, page) if boxes else "<p>figure</p>")
    return tmp_path


def test_every_claim_row_reaches_an_existing_anchor(tmp_path):
    records = [record(), record(id_="F2-faster", page="dsp_figure2"), record(id_="T3.1-any", page="")]
    assert check_claim_links(built_book(tmp_path / "good", records)) == []
    broken = check_claim_links(built_book(tmp_path / "nobox", records, boxes=False))
    assert len(broken) == 2 and all("has no anchor" in p for p in broken)
    old = tmp_path / "old" / "book" / "generated"
    old.mkdir(parents=True)
    (old / "claims.html").write_text('<table><tr><td><b>T2</b> (<a href="dsp_table2.html">Table 2</a>)</td></tr>'
                                     "</table>")
    assert check_claim_links(tmp_path / "old") == ["book/generated/claims.html: claim T2: its row links to no "
                                                   "page anchor"]


def test_every_registered_claim_links_to_a_page_that_shows_its_box():
    """Each claim's evidence page is a notebook of the book whose 'claims decided here' cell pastes that page's
    box (so the anchor the verdict row links to is built); a claim without a page links to its chapter's
    "Does it reproduce?" section, which exists."""
    from olr_core.reproductions.verdicts import evidence_page

    toc = (ROOT / "_toc.yml").read_text()
    for paper, package in PAPERS.items():
        assert "\n## Does it reproduce?\n" in (ROOT / "book" / f"{paper}.md").read_text()
        for claim in package.claims.CLAIMS:
            page = evidence_page(package, claim)
            if not page:
                continue
            assert f"book/generated/{page}\n" in toc, page
            box = f"```{{glue}} claims_box_{page}\n:doc: claims.ipynb\n```"
            cells = read_page(ROOT / "notebooks" / f"{page}.md").cells
            assert [c for c in cells if c.cell_type == "markdown" and box in c.source], page
            assert page in vd.evidence_pages()


def test_forest_plot_has_one_panel_per_unit_labelled_with_it():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    records = [record(), record(id_="T2-dbgd-dsp"), record(paper="pairrank", id_="F3-c-over-r", page="")]
    fig = vd.plot_margins_by_unit(records)
    labels = [ax.get_xlabel() for ax in fig.axes]
    assert len(labels) == 2
    assert labels[0].startswith("margin in online NDCG@10 (discounted sum)")
    assert labels[1].startswith("margin in final offline NDCG@10")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["T2-mgd-dsp (text)", "T2-dbgd-dsp (text)"]
    assert fig.axes[0].get_xlim()[1] == pytest.approx(1.1 * 3.697)     # the panel's own scale, in its unit
    assert vd.plot_margins_by_unit([record(cells=[])]) is None


def spec(algorithm="mgd", dataset="mq2008", click_model="perfect", fold=1, rounds=10_000):
    from olr_core.experiments import RunSpec

    return RunSpec(algorithm=algorithm, dataset=dataset, click_model=click_model, fold=fold, seed=0, rounds=rounds)


def test_runs_per_seed_counts_the_thinnest_cell_of_the_layout():
    layout = [spec(fold=f) for f in range(1, 6)] + [spec("mgd_dsp", fold=f) for f in range(1, 6)] + \
        [spec("mgd", click_model="navigational", fold=f) for f in (1, 2)]
    assert next_runs.runs_per_seed(layout, None, record()) == 2
    frame = pd.DataFrame({"seed": [0, 1, 2, 3, 4]})
    assert next_runs.runs_per_seed([], frame, record()) == 1              # 5 runs over 5 seeds: one per seed
    assert next_runs.runs_per_seed([], None, record()) is None


def test_decide_command_is_at_the_papers_horizon_with_a_consistent_seed_count_and_its_cpu_time(monkeypatch):
    layout = {("text", "table2"): [spec(fold=f) for f in range(1, 6)] + [spec("mgd_dsp", fold=f) for f in range(1, 6)]}
    frame = pd.DataFrame({"seed": [0] * 5, "rounds_run": [2000] * 5})
    costs = {("mgd", "mq2008"): [(10_000, 30.0)], ("mgd_dsp", "mq2008"): [(10_000, 60.0)]}

    def decide(needed, profile, costs):
        price = lambda seeds: next_runs.grid_cost(layout, costs)          # noqa: E731  (one seed's layout)
        return next_runs.decide_command({**record(), "runs_needed": needed}, frame, profile, "table2", layout, price)

    text = decide(13, "quick", costs)
    assert "`olr claims dsp --profile paper --seeds 3` gives every cell at least 15 runs (3 seeds x 5 per seed)" \
        in text
    assert "at the paper's horizon of 10,000 queries" in text and "measured at 2,000 queries" in text
    assert "about 1,350 CPU-seconds" in text                       # 3 seeds x 5 folds x (30 + 60) s
    twelve = decide(12, "quick", costs)
    assert "--seeds 3` gives every cell at least 15 runs" in twelve  # the same mapping for 12 as for 13
    unknown = decide(13, "paper", {})
    assert "0 CPU-seconds" in unknown and "30 runs of unknown cost not counted" in unknown
    assert "measured at" not in unknown                             # at the paper's profile nothing is extrapolated


def convergence_frames(reference_value):
    rows = [("synth-mslr", "perfect", a, v, f) for f in range(5) for a, v in
            (("pairrank_c", 0.45 + 0.01 * f), ("offline_ranknet", reference_value + 0.001 * f))]
    convergence = pd.DataFrame(rows, columns=["dataset", "click_model", "algorithm", "final_offline_ndcg10", "fold"])
    main = pd.DataFrame([("synth-mslr", u, a, v) for u in ("perfect", "informational")
                         for a, v in (("pairrank_c", 0.45), ("pdgd", 0.41), ("dbgd", 0.40))],
                        columns=["dataset", "click_model", "algorithm", "final_offline_ndcg10"])
    return convergence, {"main": main, "convergence": convergence}


def test_a_skyline_below_every_learner_is_named_as_the_problem():
    claim = vd.registry()[("pairrank", "F3-perfect-converges")]
    frame, experiments = convergence_frames(0.385)
    note = skyline_note(claim, frame, experiments)
    assert "the reference is the problem" in note
    assert "on synth-mslr offline RankNet (trained on every grade) reaches 0.387" in note
    assert "(the lowest, dbgd, 0.400)" in note
    frame, experiments = convergence_frames(0.405)                  # above DBGD: an ordinary skyline
    assert skyline_note(claim, frame, experiments) == ""
    assert skyline_note(vd.registry()[("pairrank", "F3-c-over-r")], frame, experiments) == ""


def test_a_table_cell_shows_ours_against_the_papers_mean_in_paper_sd():
    table = {"unit": "our mean - the paper's, in paper s.d.", "summary": "1 of 1 cells consistent",
             "cells": [{"cell": "mq2008/perfect/mgd", "ours_minus_paper_sd": 0.42, "low": -0.8, "high": 1.6,
                        "outcome": "as reported"}]}
    line = vd.cells_text(record(magnitude=table, cells=[{"cell": "mq2008/perfect/mgd", "margin": 0.58,
                                                          "ci_low": -0.6, "ci_high": 0.9, "runs": 15}]))[0]
    assert line == ("MQ2008/perfect/MGD: +0.6 [-0.6, +0.9], 15 runs; ours - paper +0.4 [-0.8, +1.6] paper s.d. "
                    "(as reported)")


# Text that agrees with its tables (#47): each sentence comes from the record the table beside it shows.

def test_the_thresholds_table_shows_each_threshold_as_the_record_holds_it():
    from olr_core.reproductions.verdicts import threshold_table

    rate = {"what": "tolerance added to the rate's log-log slope", "value": 2 / 3 + 0.1, "base": 2 / 3,
            "half": {"value": 2 / 3 + 0.05, "verdict": "inconclusive"},
            "double": {"value": 2 / 3 + 0.2, "verdict": "reproduced"}}
    tiny = {"what": "largest gap that counts as equal", "value": 1e-12,         # no base stored: from its half
            "half": {"value": 5e-13, "verdict": "not reproduced"}, "double": {"value": 2e-12, "verdict": "reproduced"}}
    table = threshold_table([record(verdict="inconclusive") | {"thresholds": [rate, tiny]}])
    assert table["value"].tolist() == ["0.767 (0.667 + 0.1)", "1 × 10⁻¹²"]       # the tolerance visible, never 0
    assert table["at half"].tolist() == ["0.717: inconclusive", "5 × 10⁻¹³: not reproduced"]
    assert table["at double"].tolist()[1] == "2 × 10⁻¹²: reproduced"
    changed = threshold_table([record(verdict="reproduced") | {"thresholds": [rate | {"value": 0.9}]}])
    assert changed["value"].tolist() == ["0.9 (0.667 + 0.233)"] and changed["verdict"].tolist() == ["reproduced"]


def test_a_share_of_the_mean_is_plotted_on_an_axis_named_as_a_share():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    robust = record(id_="F4b-r-robust", page="dsp_figure4")
    assert vd.margin_unit(robust) == "share of the mean online NDCG@10 (discounted sum)"
    fig = vd.plot_margins_by_unit([robust])
    assert fig.axes[0].get_xlabel().startswith("margin in share of the mean online NDCG@10")
    assert "share of the mean" in vd.verdict_rows([robust]).iloc[0]["cells"]      # the table says the same


def test_the_leader_of_a_cost_is_its_lowest_and_a_parameters_value_is_named():
    from olr_core.claims import leader_words

    assert leader_words("neg_kl_cost", "algorithm", "klrank_gper", 1.0, 8) == \
        "NoRegret KLRank has the lowest K-L cost of 8 methods"
    assert leader_words("discounted_online_ndcg10", "param:dsp_r", 50, 1.0, 5) == \
        "DSP r = 50 has the highest online NDCG@10 (discounted sum) of 5 values"
    assert leader_words("final_offline_ndcg10", "algorithm", "random", -1.0, 3).endswith("lowest final offline "
                                                                                          "NDCG@10 of 3 methods")


def test_a_cost_claims_record_says_lowest_where_its_table_shows_the_lowest_cost():
    from olr_core.claims import judge

    rows = [{"dataset": "cora", "click_model": "choice", "fold": 1, "seed": s, "algorithm": a, "rounds_run": 100,
             "neg_kl_cost": -cost - 0.01 * s} for s in range(5) for a, cost in (("klrank_gper", 4.6), ("random", 4.9))]
    claim = vd.registry()[("klrank", "T2-gper-lowest-kl")]
    ours = judge(claim, pd.DataFrame(rows).assign(config="text"), "text")["ours"]
    assert "NoRegret KLRank has the lowest K-L cost of 2 methods" in ours and "highest" not in ours


def test_the_run_count_beside_the_cells_is_the_cells_own():
    cells = [{"cell": "navigational", "margin": 0.1, "ci_low": -0.1, "ci_high": 0.3, "runs": 15},
             {"cell": "pooled over 9 cells (fixed effect)", "margin": 0.1, "ci_low": 0.0, "ci_high": 0.2, "runs": 135}]
    shown = record(cells=cells) | {"scale": "preview", "horizon": 2000, "paper_horizon": 10_000, "runs_per_cell": 15,
                                   "paper_runs": 15}
    assert vd.scale_text(shown) == ("preview, not counted: 2,000 rounds, 15 to 135 runs per cell (the paper: "
                                    "10,000 rounds, 15 runs)")
    lines = vd.cells_text(shown)
    assert lines[0].endswith("15 runs") and lines[1].endswith("135 runs")
    one = record(cells=cells[:1]) | {k: shown[k] for k in ("scale", "horizon", "paper_horizon", "paper_runs")}
    assert "15 runs per cell" in vd.scale_text(one | {"runs_per_cell": 15})


def test_an_open_interval_is_said_in_words_never_inf_or_n_a():
    from olr_core.claims import Cell, largest_allowed

    open_ = record(cells=[{"cell": "cora", "margin": 0.0955, "ci_low": None, "ci_high": None, "runs": 10},
                          {"cell": "x", "margin": -0.0189, "ci_low": float("-inf"), "ci_high": 0.02, "runs": 5}])
    text = " ".join(vd.cells_text(open_))
    assert "interval not estimable" in text and "at most +0.020" in text
    assert not any(word in text for word in ("inf", "n/a", "nan"))
    claim = vd.registry()[("klrank", "T2-gper-lowest-kl")]
    unbounded = Cell("cora", 0.0955, None, 10, float("-inf"), float("inf"))
    assert "n/a" not in largest_allowed([unbounded], claim) and "no upper limit" in largest_allowed([unbounded], claim)
