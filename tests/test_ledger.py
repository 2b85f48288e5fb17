"""The paper-scale ledger (olr_core.reproductions.ledger) and the horizon rule (olr_core.reproductions.scale), on
constructed records and on the run keys of KLRank's tiny profile (laid out, nothing run)."""

import contextlib
import json

import pandas as pd
import pytest

from olr_core.claims import Claim
from olr_core.cli import main
from olr_core.experiments import spec as spec_module
from olr_core.experiments.runner import spec_key
from olr_core.reproductions import ledger
from olr_core.reproductions.pairrank import experiments as pairrank
from olr_core.reproductions.scale import WHOLE_STREAM, Scale, claim_rows, is_headline, scale_fields
from olr_core.reproductions.verdicts import claim_grids, verdict_counts

from .conftest import one_line_error

QUALITY_BAR = ("horizon", "paper_horizon", "runs_per_cell", "paper_runs", "scale")


@pytest.fixture(autouse=True)
def _ledger_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("OLR_LEDGER_DIR", str(tmp_path / "ledger"))


def tiny_keys() -> list[str]:
    """The run keys the current code gives KLRank's claim runs at the tiny profile."""
    return [spec_key(s) for specs in claim_grids("klrank", "tiny").values() for s in specs]


def record(claim_id: str, verdict: str, keys: list[str], horizon=300, runs=1, scale="preview", role="headline"):
    """A testable record as :func:`claim_records` assembles it with ``keep_runs``."""
    return {"paper": "klrank", "id": claim_id, "config": "text", "config_role": role, "verdict": verdict,
            "claim": "c", "source": "Table 2", "paper_value": "", "ours": "", "runs": runs, "rule": "best",
            "reason": "", "setup": "", "cells": [{"cell": "synth-library", "margin": 0.5, "ci_low": 0.1,
                                                  "ci_high": 0.9, "runs": runs}],
            "horizon": horizon, "paper_horizon": 20000, "runs_per_cell": runs, "paper_runs": 1, "scale": scale,
            "run_values": {"metric": "neg_kl_cost", "values": {k: -1.0 - i for i, k in enumerate(keys)}},
            "run_ids": {k: {"algorithm": "random", "dataset": "synth-library", "seed": i, "rounds_run": horizon}
                        for i, k in enumerate(keys)}}


def written_ledger(keys=None) -> dict:
    keys = tiny_keys() if keys is None else keys
    records = [record("T2-a", "reproduced", keys[:2]), record("T2-b", "inconclusive", keys[2:4])]
    book = ledger.build_ledger("klrank", "tiny", records, wall_seconds=1.5, command="test")
    ledger.write_ledger(book)
    return book


def test_a_ledger_reads_back_as_written_with_its_provenance():
    book = written_ledger()
    back = ledger.read_ledger("klrank")
    assert back == json.loads(json.dumps(book))
    assert back["code"] == spec_module.code_fingerprint() and back["profile"] == "tiny" and back["machine"]
    assert [r["run_values"]["values"] for r in back["records"]] == [r["run_values"]["values"] for r in book["records"]]
    assert set(back["runs"]) == set(tiny_keys()[:4]) and all("run_ids" not in r for r in back["records"])
    assert ledger.read_ledger("topk") is None                 # no ledger: None, not an error


def test_an_edited_or_corrupt_ledger_is_refused_in_one_line(capsys):
    written_ledger()
    path = ledger.ledger_path("klrank")
    edited = json.loads(path.read_text())
    edited["records"][1]["verdict"] = "reproduced"              # a hand edit that keeps the JSON valid
    path.write_text(json.dumps(edited))
    with pytest.raises(ledger.LedgerError, match="checksum mismatch"):
        ledger.read_ledger("klrank")
    err = one_line_error(capsys, ["claims", "klrank", "--ledger", "--json"])
    assert str(path) in err and "--write-ledger" in err
    path.write_text(path.read_text()[:200])                     # truncated
    assert "unreadable" in one_line_error(capsys, ["claims", "klrank", "--ledger"])


def test_a_run_the_current_code_would_key_differently_makes_its_claims_stale(monkeypatch, capsys):
    keys = tiny_keys()
    book = written_ledger(keys)
    assert ledger.stale_records(book, set(keys)) == []
    assert main(["claims", "klrank", "--ledger", "--json"]) == 0
    assert capsys.readouterr().err == ""
    changed = [k for k in keys if k != keys[2]]                 # one run of T2-b would get another key
    assert ledger.stale_records(book, set(changed)) == [{"id": "T2-b", "config": "text", "stale_runs": 1}]
    elsewhere = {"synth-library-slow"}                          # the run's data set is not found on this machine:
    assert ledger.stale_records(book, set(changed), elsewhere) == []       # it cannot be keyed, so it is not judged
    assert ledger.unchecked_datasets(book, elsewhere) == ["synth-library"]
    monkeypatch.setattr(spec_module, "code_fingerprint", lambda: "changed-code")   # the code changed: every key
    assert not set(keys) & ledger.current_keys("klrank", "tiny")
    assert main(["claims", "klrank", "--ledger", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "T2-a, T2-b" in err and ledger.refresh_command("klrank") in err
    assert all(r["stale"] for r in json.loads(out))


def pairrank_keys(tuned=None) -> set[str]:
    with pairrank.pinned_tuning(tuned) if tuned is not None else contextlib.nullcontext():
        return {spec_key(s) for specs in claim_grids("pairrank", "tiny").values() for s in specs}


def test_a_tuned_papers_ledger_is_keyed_with_its_own_tuning_not_this_stores(tmp_path, monkeypatch):
    """A ledger computed after the paper profile's tuning keeps that choice; a fresh build whose quick tuning chose
    otherwise (or has not tuned) keys the ledger's runs with the ledger's choice, so they are not called stale."""
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "store"))
    (tmp_path / "store").mkdir()
    paper_choice = {"pairrank_c": {"alpha": 0.5, "l2": 100.0}, "pdgd": {"learning_rate": 0.03}}
    pairrank.write_tuned(pairrank.tuned_path(), paper_choice)
    at_writing = pairrank_keys()
    assert ledger.tuning_choices("pairrank") == {"pairrank_tuning": paper_choice}
    assert ledger.tuning_choices("neural") == {"pairrank_tuning": paper_choice, "neural_tuning": None}
    assert ledger.tuning_choices("klrank") == {}
    pairrank.write_tuned(pairrank.tuned_path(), {"pairrank_c": {"alpha": 0.01, "l2": 0.1}})   # this build's tuning
    assert pairrank_keys() != at_writing                            # unpinned: every PairRank_C run is re-keyed
    assert pairrank_keys({"pairrank_tuning": paper_choice}) == at_writing
    assert ledger.current_runs("pairrank", "tiny", tuned={"pairrank_tuning": paper_choice})[0] == at_writing
    pairrank.tuned_path().unlink()                                  # a build that has not tuned at all
    assert pairrank_keys({"pairrank_tuning": paper_choice}) == at_writing
    assert pairrank_keys({"pairrank_tuning": None}) == pairrank_keys()      # None: the page had not run: defaults
    assert pairrank.tuned_params()["pairrank_c"] == pairrank.DEFAULTS["pairrank_c"]     # the pin does not leak


def test_ledger_json_carries_the_quality_bar_fields(capsys):
    """Written by the command from real (tiny) runs, read back without computing."""
    assert main(["claims", "klrank", "--profile", "tiny", "--write-ledger"]) == 0
    capsys.readouterr()
    assert main(["claims", "klrank", "--ledger", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    testable = [r for r in records if r["config_role"] == "headline" and r["verdict"] != "not testable here"]
    assert testable
    for r in testable:
        assert all(r[field] is not None for field in QUALITY_BAR), r
        assert r["scale"] == "preview" and r["horizon"] < r["paper_horizon"]     # tiny runs: never a headline
        assert r["run_values"]["values"] and r["ledger"]["profile"] == "tiny" and not r["stale"]
    assert ledger.read_ledger("klrank")["cpu_seconds"] > 0


def test_a_budgeted_ledger_records_its_looks_and_is_keyed_at_them(capsys):
    """``--write-ledger --budget``: the design's further looks add seeds to undecided experiments; the ledger keeps
    each experiment's last look (seeds, level), its records rest on those runs, and reading it back lays the runs
    out at those seeds, so none is called stale (keyed at the profile's seeds, the added ones would be)."""
    assert main(["claims", "klrank", "--profile", "tiny", "--write-ledger", "--budget", "30"]) == 0
    assert "olr claims --budget: budget 30 CPU s" in capsys.readouterr().err
    book = ledger.read_ledger("klrank")
    assert book["budget"]["cpu_seconds"] == 30 and set(book["looks"]) == {"table2", "regret"}
    assert "--budget 30 --write-ledger" in book["command"]
    beyond = {exp: look for exp, look in book["looks"].items() if look["index"] > 1}
    assert beyond, book["looks"]                               # the budget took a look past the profile's
    grids = claim_grids("klrank", "tiny")
    for exp, look in beyond.items():
        algorithms = {s.algorithm for s in grids[("klrank", "text", exp)]}
        seeds = {r["seed"] for r in book["runs"].values() if r["algorithm"] in algorithms}
        assert len(seeds) >= look["seeds"] > 1
    keys, _ = ledger.ledger_runs(book)
    assert ledger.stale_records(book, keys) == []
    unlooked = ledger.current_keys("klrank", "tiny")           # the profile's seeds only
    assert ledger.stale_records(book, unlooked)
    assert main(["claims", "klrank", "--ledger", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and not any(r["stale"] for r in json.loads(out))
    refused = one_line_error(capsys, ["claims", "klrank", "--ledger", "--budget", "30"])
    assert "--budget: only with --write-ledger" in refused


def claim(horizon=None, by=False) -> Claim:
    return Claim("p", "x", "Figure 1", "t", "main", "m", "above", {"threshold": 0.0}, horizon=horizon,
                 by_horizon=by, cells=("dataset",))


def rows(rounds: int, runs: int) -> pd.DataFrame:
    return pd.DataFrame({"dataset": "d", "seed": range(runs), "rounds_run": rounds, "m": 1.0, "config": "text"})


def judged(runs: int) -> dict:
    return {"verdict": "reproduced", "cells": [{"cell": "d", "runs": runs}]}


def test_only_runs_at_the_papers_horizon_and_run_count_give_a_paper_scale_verdict():
    paper = Scale(5000, 10, "")
    assert scale_fields(claim(), judged(10), rows(5000, 10), paper)["scale"] == "paper"
    assert scale_fields(claim(), judged(20), rows(20000, 20), paper)["scale"] == "paper"
    short = scale_fields(claim(), judged(10), rows(1000, 10), paper)
    assert short == {"horizon": 1000, "paper_horizon": 5000, "runs_per_cell": 10, "paper_runs": 10,
                     "scale": "preview"}
    assert scale_fields(claim(), judged(5), rows(5000, 5), paper)["scale"] == "preview"      # too few runs
    stated = scale_fields(claim(2000), judged(10), rows(2000, 10), paper)                     # "at 2,000 rounds"
    assert stated["paper_horizon"] == 2000 and stated["scale"] == "paper"
    assert scale_fields(claim(), judged(1), rows(22000, 1), Scale(WHOLE_STREAM, 1, ""), 22000)["scale"] == "paper"
    assert scale_fields(claim(), {"verdict": "not testable here"}, rows(5000, 10), paper) == {}


def test_a_claim_stated_by_a_horizon_rests_on_runs_at_least_that_long():
    frame = pd.concat([rows(1000, 3), rows(8000, 3)])
    assert set(claim_rows(claim(5000, by=True), frame, "text")["rounds_run"]) == {8000}
    assert claim_rows(claim(5000), frame, "text").empty


def test_a_preview_is_never_counted_with_the_headline_verdicts():
    keys = ["a", "b"]
    records = [record("x", "reproduced", keys, 5000, 10, "paper"), record("y", "reproduced", keys, 1000, 10),
               record("z", "not reproduced", keys, 5000, 10, "paper", role="sensitivity")]
    assert [is_headline(r) for r in records] == [True, False, False]
    assert int(verdict_counts(records, "paper").to_numpy().sum()) == 1
    assert int(verdict_counts(records, "preview").to_numpy().sum()) == 1
    assert verdict_counts(records[2:], "paper").empty


def test_the_book_shows_a_ledger_with_the_quick_runs_as_a_smoke_check_and_previews_without_one():
    written_ledger()                                          # klrank: T2-a reproduced, T2-b inconclusive
    quick = [record("T2-a", "inconclusive", []), record("T2-b", "inconclusive", []),
             {**record("T4-x", "inconclusive", [], 255), "paper": "topk"}]
    shown, notes = ledger.book_records(quick, ["klrank", "topk"])
    smoke = {r["id"]: (r["verdict_source"], r.get("smoke")) for r in shown}
    assert smoke == {"T2-a": ("ledger", "quick run undecided"), "T2-b": ("ledger", "agrees"),
                     "T4-x": ("this build", None)}
    assert "ledger of" in notes["klrank"] and "no ledger yet" in notes["topk"] and "--write-ledger" in notes["topk"]
    assert all("run_values" not in r for r in shown if r["verdict_source"] == "ledger")   # verdicts, not runs
    assert ledger.smoke_check({"verdict": "inconclusive"}, {"verdict": "reproduced"}) == "disagrees"
    assert ledger.smoke_check({"verdict": "reproduced"}, None) == "no quick run"


def test_each_row_and_box_says_its_scale_where_its_verdict_comes_from_and_if_it_is_stale():
    from olr_core.reproductions.verdict_display import claims_box
    from olr_core.reproductions.verdict_table import verdict_table

    shown = {**record("T2-a", "reproduced", ["k"], 300, 1), "page": "klrank_table2", "verdict_source": "ledger",
             "smoke": "disagrees", "quick_verdict": "not reproduced", "stale": True}
    row = verdict_table([shown])
    assert "preview, not counted: 300 rounds, 1 run per cell (the paper: 20,000 rounds, 1 run)" in row
    assert "this build&#x27;s quick run: disagrees (not reproduced)" in row and "stale" in row
    box = claims_box([{**shown, "verdict_source": "this build", "stale": False}], "klrank_table2")
    assert "from this build&#x27;s runs (no ledger)" in box and "stale" not in box
