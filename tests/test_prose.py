"""Prose generated from the claims' records (olr_core.reproductions.prose): a page's sentence follows the verdict
when one stored run changes, and every number and verdict word in a rendered sentence is the record's."""

import re

import numpy as np
import pytest

from olr_core.experiments import ResultStore
from olr_core.experiments.runner import data_fingerprint
from olr_core.loop import RunTrace
from olr_core.reproductions import dsp, prose


def offline_level(spec) -> float:
    """A constructed run's offline NDCG@10: each projected variant 0.05 above its base, seed-to-seed noise."""
    base = {"dbgd": 0.40, "mgd": 0.45, "nsgd": 0.50}[spec.algorithm.removesuffix("_dsp")]
    noise = np.random.default_rng(spec.seed * 1000 + len(spec.algorithm)).normal(0, 0.01)
    return base + 0.05 * spec.algorithm.endswith("_dsp") + noise


def trace(level: float, spec) -> RunTrace:
    """A constructed run of ``spec``: online NDCG 0.5 every round and offline NDCG ``level`` at every evaluation the
    loop schedules (every ``eval_every`` rounds and at the end), as a stored run must have."""
    points = np.unique(np.r_[np.arange(0, spec.rounds + 1, spec.eval_every), spec.rounds])
    return RunTrace(np.full(spec.rounds, 0.5), points, np.full(len(points), level), np.zeros(spec.rounds, dtype=int))


def store_runs(store, specs, level_of) -> None:
    for spec in specs:
        fingerprint = data_fingerprint(spec.dataset, spec.fold, None)
        store.save(spec.key(fingerprint), spec, trace(level_of(spec), spec), fingerprint)


@pytest.fixture
def figure2_page(tmp_path):
    """The runs of the Figure 2 page (text configuration, synthetic data, 6 seeds) in a constructed store."""
    grids = dsp.experiments.config_grids(["synth-mq"], [1], 6, 50, ["text"])
    store = ResultStore(tmp_path / "store")
    store_runs(store, grids["text"], offline_level)
    return grids, store


def figure2_text(grids, store) -> tuple[list, str]:
    records = prose.page_records(dsp.claims, ["F2-faster"], grids, store)
    return records, prose.records_text(records, dsp.experiments.CONFIG_TITLES)


def test_the_pages_sentence_changes_with_the_verdict_when_one_run_changes(figure2_page):
    grids, store = figure2_page
    records, before = figure2_text(grids, store)
    assert records[0]["verdict"] == "reproduced"
    assert "F2-faster (as the text says): reproduced" in before
    assert "above 0 in 9, below 0 in 0 and on neither side in 0 of 9 cells" in before

    one = next(s for s in grids["text"] if s.algorithm == "mgd_dsp" and s.click_model == "perfect" and s.seed == 3)
    store_runs(store, [one], lambda spec: 0.0)           # one run of MGD-DSP far below MGD
    records, after = figure2_text(grids, store)
    assert records[0]["verdict"] == "partly"
    assert after != before
    assert "F2-faster (as the text says): partly" in after
    assert "above 0 in 8," in after


def test_the_sentence_and_the_table_beside_it_change_together_when_one_run_changes(figure2_page):
    """The page's sentence and the verdict table's row come from one record (#47): after one run changes, both
    name the new verdict, the sentence's cell counts are the row's cells, and neither carries Markdown or a code
    identifier (the sentence is pasted as plain text)."""
    from olr_core.reproductions import verdict_display as vd
    from olr_core.reproductions import verdict_table as vt

    grids, store = figure2_page

    def sentence_and_row():
        records = prose.page_records(dsp.claims, ["F2-faster"], grids, store)
        shown = {**records[0], "page": "dsp_figure2", "setup": ""}
        row = {"verdict": vt.verdict_td(shown), "cells": "<br>".join(["cells", *vd.cells_text(shown)])}
        return records[0], prose.records_text(records, dsp.experiments.CONFIG_TITLES), row

    record, before, row_before = sentence_and_row()
    one = next(s for s in grids["text"] if s.algorithm == "mgd_dsp" and s.click_model == "perfect" and s.seed == 3)
    store_runs(store, [one], lambda spec: 0.0)
    changed, after, row_after = sentence_and_row()
    for rec, sentence, row in ((record, before, row_before), (changed, after, row_after)):
        said = sentence_numbers(sentence)
        assert said["verdict"] == rec["verdict"] and f">{rec['verdict']}<" in row["verdict"]
        lines = row["cells"].split("<br>")[1:]                      # one line per cell, as the table shows them
        assert said["cells"] == len(lines) == len(rec["cells"])
        assert "`" not in sentence and "**" not in sentence and "_" not in sentence
    assert (record["verdict"], changed["verdict"]) == ("reproduced", "partly")
    assert before != after and row_before["cells"] != row_after["cells"]


def sentence_numbers(sentence: str) -> dict:
    found = re.search(r": ([a-z ]+); margin: .*lies above 0 in (\d+), below 0 in (\d+) and on neither side in (\d+) "
                      r"of (\d+) cells?\.", sentence)
    verdict, above, below, undecided, cells = found.groups()
    return {"verdict": verdict, "above": int(above), "below": int(below), "undecided": int(undecided),
            "cells": int(cells)}


def test_every_number_and_verdict_word_of_a_rendered_sentence_is_the_records(figure2_page):
    grids, store = figure2_page
    for level_of in (offline_level, lambda s: offline_level(s) - 0.1 * s.algorithm.endswith("_dsp"),
                     lambda s: offline_level(s) - 0.045 * s.algorithm.endswith("_dsp")):   # +0.005: undecided
        store_runs(store, grids["text"], level_of)
        for record in prose.page_records(dsp.claims, ["F2-faster", "T3-dsp-mostly", "T2-mgd-dsp"], grids, store):
            said = sentence_numbers(prose.verdict_sentence(record))
            cells = record["cells"]
            assert said["verdict"] == record["verdict"]
            assert said["cells"] == len(cells)
            assert said["above"] == sum(c["ci_low"] is not None and c["ci_low"] > 0 for c in cells)
            assert said["below"] == sum(c["ci_high"] is not None and c["ci_high"] < 0 for c in cells)
            assert said["above"] + said["below"] + said["undecided"] == said["cells"]
            if record.get("magnitude"):
                assert record["magnitude"]["summary"] in prose.verdict_sentence(record)


def test_a_claim_this_page_cannot_test_says_so_with_its_reason(figure2_page):
    grids, store = figure2_page
    record = prose.page_records(dsp.claims, ["T2-cells"], grids, store)[0]    # MQ2008 at 10,000 queries: not here
    assert record["verdict"] == "not testable here"
    assert prose.verdict_sentence(record).startswith("T2-cells (text): not testable here; ")


def test_an_unknown_claim_is_refused_in_one_line():
    with pytest.raises(ValueError, match="dsp has no claim 'T9'; valid: T2-cells"):
        prose.find_claim(dsp.claims, "T9")


def test_a_missing_data_sets_reason_names_the_option_not_this_machines_path(tmp_path):
    from olr_book import browsercheck
    from olr_core.data.registry import find_datasets
    from olr_core.reproductions.verdicts import without_data_path

    _, missing = find_datasets(["mq2008"], tmp_path)
    assert str(tmp_path) in missing["mq2008"]                      # the error itself names the folder
    reason = without_data_path(missing["mq2008"], tmp_path)
    assert str(tmp_path) not in reason and "DATA_DIR" in reason and "--data-dir" in reason
    pattern = browsercheck.READER_TEXT["absolute path"]          # what the browser check flags on a page
    assert re.search(pattern, missing["mq2008"]) and not re.search(pattern, reason)


def test_the_dsp_chapter_states_the_figure_runs_the_profiles_make():
    """The chapter's sentence on Figures 3-4 (it once said "two runs per cell" where the rows said 5)."""
    from pathlib import Path

    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "fifteen": 15}
    text = " ".join((Path(__file__).resolve().parents[1] / "book" / "dsp.md").read_text().split())
    found = re.search(r"\((\w+) runs per cell, ([\d,]+) queries, against (\d+) and ([\d,]+)\)", text)
    quick, paper = dsp.experiments.PROFILES["quick"]["figures"], dsp.experiments.PROFILES["paper"]["figures"]
    assert words[found[1]] == quick["seeds"] and int(found[2].replace(",", "")) == quick["rounds"]
    assert int(found[3]) == paper["seeds"] and int(found[4].replace(",", "")) == paper["rounds"]


def test_table2s_sentence_follows_the_interval_not_the_point_estimate(tmp_path, real_data_dir):
    """The contradiction of #40: every cell's mean within one paper s.d. while T2-cells is inconclusive. On
    constructed MQ2008 runs at the paper's horizon, the page's sentence says inconclusive while the spread leaves
    the intervals undecided, and reproduced once the runs agree, with the within-one-s.d. count 18 of 18 both times."""
    from olr_core.metrics import cumulative_online

    grids = dsp.experiments.config_grids(["mq2008"], [1, 2, 3], 1, 10_000, ["text"])
    paper = dsp.analysis.paper_frame("online").set_index(["dataset", "click_model", "algorithm"])
    unit = cumulative_online(np.ones(10_000))

    def store_at(spread):
        store = ResultStore(tmp_path / f"store{spread}")
        for spec in grids["text"]:
            mean, sd = paper.loc[(spec.dataset, spec.click_model, spec.algorithm)]
            value = mean + spread * sd * (spec.fold - 2)                 # folds 1, 2, 3: -spread, 0, +spread s.d.
            fingerprint = data_fingerprint(spec.dataset, spec.fold, None)
            online = trace(0.5, spec)
            online.online_ndcg[:] = value / unit
            store.save(spec.key(fingerprint), spec, online, fingerprint)
        record = prose.page_records(dsp.claims, ["T2-cells"], grids, store)[0]
        return record, prose.records_text([record], dsp.experiments.CONFIG_TITLES)

    loose, loose_text = store_at(0.9)
    assert prose.within_count(loose) == (18, 18) and loose["verdict"] == "inconclusive"
    assert "T2-cells (as the text says): inconclusive" in loose_text and "reproduced" not in loose_text
    tight, tight_text = store_at(0.01)
    assert prose.within_count(tight) == (18, 18) and tight["verdict"] == "reproduced"
    assert "reproduced; margin: 1 paper s.d. minus |our mean - paper mean|, the paper's mean uncertain by its s.d. " \
           "/ sqrt(15); its 95 % interval lies above 0 in 18, below 0 in 0 and on neither side in 0 of 18 cells" \
        in tight_text
