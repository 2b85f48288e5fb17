"""The answer first (#47): the summary's counts, scale and sentences come from the claim records (a changed
record changes the sentence, the figure and the lead together; a preview is never counted), and the verdict table
a reader reads: one compact row per claim with the paper's number, ours with its interval and a badge, the rest
folded under it, no inf or n/a, anchors where the chapters' links land."""

import copy
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from olr_core.reproductions import verdict_summary as vs  # noqa: E402
from olr_core.reproductions import verdict_table as vt  # noqa: E402
from olr_core.reproductions.ledger import ledger_records, read_ledger  # noqa: E402

TITLES = {"dsp": "Variance reduction in gradient exploration (DSP), Wang et al., SIGIR 2019",
          "klrank": "Regret-based online ranking for a growing digital library (NoRegret KLRank), Delage, KDD 2009",
          "topk": "Online learning to rank with top-k feedback (RTop-kF), Chaudhuri and Tewari, AISTATS 2016"}


def ledger_book(paper):
    """The committed ledger's records as the verdicts page shows them."""
    return [{**{k: v for k, v in r.items() if k != "run_values"}, "verdict_source": "ledger", "smoke": "agrees"}
            for r in ledger_records(read_ledger(paper))]


def quick(verdict, id_, scale="preview", **extra):
    return {"paper": "dsp", "id": id_, "source": "Table 2", "claim": "MGD-DSP beats MGD", "config": "text",
            "config_role": "headline", "paper_value": "+7.0%", "ours": "+1.1%", "rule": "paired_gain",
            "verdict": verdict, "reason": "margin: mean paired difference", "page": "dsp_table2",
            "verdict_source": "this build", "scale": scale, "horizon": 1000, "paper_horizon": 10_000,
            "runs_per_cell": 5, "paper_runs": 15,
            "cells": [{"cell": "mq2008/informational/nsgd", "margin": 0.0123, "ci_low": -0.0031, "ci_high": 0.0279,
                       "runs": 5}], **extra}


@pytest.fixture(scope="module")
def records():
    return [quick("reproduced", "T2-a"), quick("inconclusive", "T2-b")] + ledger_book("klrank") + ledger_book("topk")


def test_summary_counts_are_the_records_headline_verdicts(records):
    summaries = vs.paper_summaries(records, TITLES)
    assert [(s.paper, s.scale) for s in summaries] == [("dsp", "preview"), ("klrank", "paper"), ("topk", "paper")]
    for s in summaries:
        heads = [r for r in records if r["paper"] == s.paper and r["config_role"] == "headline"]
        assert s.counts == {v: sum(r["verdict"] == v for r in heads) for v in s.counts}
    klrank = summaries[1]
    assert klrank.counts["reproduced"] == 7 and klrank.claims == 17          # the committed ledger
    assert klrank.horizons == (16_383, 20_000) and klrank.runs == (10, 10) and klrank.paper_runs == (1, 10)
    assert "at the paper's scale (the ledger of" in vs.sentence(klrank) and "10 runs per cell" in vs.sentence(klrank)
    dsp = vs.sentence(summaries[0])
    assert dsp.startswith("DSP: preview only, not counted: 1 reproduced and 1 inconclusive of 2 claims")
    assert "1,000 rounds, 5 runs per cell; the paper: 10,000 rounds, 15 runs" in dsp


def test_a_changed_record_changes_sentence_figure_and_lead_together(records):
    def answer(rs):
        summaries = vs.paper_summaries(rs, TITLES)
        fig = vs.plot_verdicts_by_paper(summaries)
        matplotlib.pyplot.close(fig)
        return vs.lead_sentence(summaries), [vs.sentence(s) for s in summaries], fig.counts

    before = answer(records)
    changed = copy.deepcopy(records)
    first = next(r for r in changed if r["paper"] == "topk" and r["config_role"] == "headline"
                 and r["verdict"] == "reproduced")
    first["verdict"] = "not reproduced"
    after = answer(changed)
    assert after[2][("topk", "paper")]["reproduced"] == before[2][("topk", "paper")]["reproduced"] - 1
    assert after[2][("topk", "paper")]["not reproduced"] == before[2][("topk", "paper")]["not reproduced"] + 1
    assert after[1][2] != before[1][2] and after[1][:2] == before[1][:2]      # only RTop-kF's sentence
    counts = lambda lead: {v: int(n) for n, v in re.findall(r"(\d+) (reproduced|not reproduced)", lead)}  # noqa
    assert counts(after[0])["not reproduced"] == counts(before[0])["not reproduced"] + 1


def test_previews_are_never_counted_in_the_answer(records):
    summaries = vs.paper_summaries(records, TITLES)
    lead = vs.lead_sentence(summaries)
    paper_scale = [r for r in records if r["config_role"] == "headline" and r["paper"] != "dsp"]
    assert lead.startswith(f"At the papers' scale (NoRegret KLRank and RTop-kF), {len(paper_scale)} claims: ")
    assert "DSP has previews only" in lead
    assert "No paper has a verdict at its own scale yet." in vs.lead_sentence(summaries[:1])
    html = vs.summary_html(summaries, "<figure></figure>", "generated/claims.html")
    assert html.count("<li>") == 3 and "href='generated/claims.html'" in html


def test_our_number_is_rounded_to_its_interval_and_never_inf_or_na():
    assert vt.estimate_text(0.06183, 0.04389, 0.07969) == "+0.062 [+0.044, +0.080]"
    assert vt.estimate_text(0.0355772, 0.0355685, 0.0355859) == "+0.035577 [+0.035569, +0.035586]"
    assert vt.estimate_text(-1234.5, -1300.2, -1100.9) == "-1,234 [-1,300, -1,101]"
    assert vt.estimate_text(0.09552538, None, None) == "+0.096 (interval not estimable)"
    assert vt.estimate_text(0.09552538, None, 0.2) == "+0.10, at most +0.20"
    assert vt.estimate_text(float("nan"), None, None) == "not estimable"
    assert vt.estimate_text(-0.0004, -0.001, 0.0002) == "-0.0004 [-0.0010, +0.0002]"
    assert vt.estimate_text(0.5, 0.5, 0.5) == "+0.5 (exact)"
    assert vt.estimate_text(-0.00001, -0.01, 0.01) == "0.000 [-0.010, +0.010]"        # no negative zero


def test_one_compact_row_per_claim_with_badge_interval_and_folded_details(records):
    sensitivity = {**quick("partly", "T2-a"), "config": "code", "config_role": "sensitivity"}
    table = vt.verdict_table(records[:2] + [sensitivity])
    rows = re.findall(r"<tbody class='olr-claim'>(.*?)</tbody>", table, re.S)
    assert len(rows) == 2
    main, folded = rows[0].split("<tr class='olr-detail'>")
    assert "id='verdict-dsp-T2-a'" in main and "href='dsp_table2.html#claim-dsp-T2-a'" in main
    assert "+0.012 [-0.0031" not in main and "+0.012 [-0.003, +0.028]" in main
    assert "olr-badge" in main and ">reproduced</span>" in main
    assert "MQ2008/<wbr>informational/<wbr>NSGD" in main              # a long cell name breaks after its slashes
    assert "<details>" in folded and "code</span>: <span class='olr-badge'" in folded
    assert "paired gain: margin: mean paired difference" in folded          # the rule in words
    assert "id='verdict" not in vt.verdict_table(records[:1], where="book")     # a chapter's copy: no anchors
    whole = vt.verdict_table(records)
    ours = re.findall(r"<td class='olr-col-(?:ours|verdict)'.*?</td>", whole, re.S)
    compact = re.sub(r"<[^>]+>", " ", " ".join(ours))
    assert not re.search(r"\binf\b|n/a|\bNaN\b", compact)        # (the folded reasons: the formatter's, #47)
    assert whole._repr_html_() == str(whole) and "full-width" in whole


def test_a_long_claim_is_cut_in_its_row_and_given_whole_in_its_details():
    long = ("In a well-specified world PairRank_C's per-round number of mis-ordered pairs falls towards 0. "
            + "The threshold was chosen after quick runs of both methods. " * 6)
    assert vt.short_claim(long) == ("In a well-specified world PairRank_C's per-round number of mis-ordered pairs "
                                    "falls towards 0 \u2026")
    assert vt.short_claim("word " * 100).endswith("word \u2026") and len(vt.short_claim("word " * 100)) <= 202
    table = vt.verdict_table([quick("inconclusive", "T8-sublinear", claim=long)])
    row, details = table.split("<details>")
    assert "falls towards 0 \u2026" in row and "quick runs of both" not in row
    assert "The claim in full:</b> In a well-specified world" in details and details.count("quick runs of both") == 6


def test_a_ledgers_record_shows_the_claim_and_the_papers_number_as_the_registry_states_them_today():
    old = next(r for r in ledger_book("klrank") if r["id"] == "T2-deterministic-infinite")
    row = vt.verdict_table([{**old, "paper_value": "inf for all six"}])
    assert "infinite for all six" in row and "inf for all six" not in row
    assert vt.stated({"paper": "mine", "id": "X", "claim": "mine beats PDGD"}, "claim") == "mine beats PDGD"
