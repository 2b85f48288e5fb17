"""The authors'-code results files: their validation (a corrupt file refused in one line), the stored DSP and
PairRank files read and checked, the fidelity table on constructed runs and on PairRank's file, the driver's
commands per paper, and the driver against a checkout when one is named (skipped otherwise)."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from olr_core.reproductions.authors_code import (
    EXPLAIN_SD,
    AuthorsCodeFileError,
    all_cells,
    fidelity_table,
    gap_lines,
    load_runs,
    paper_differs,
    paper_lines,
    shown_cells,
    three_columns,
)

REPO = Path(__file__).resolve().parent.parent
STORED = REPO / "olr_core" / "reproductions" / "dsp" / "authors_code.json"


def _record(runs):
    return {"repository": "HCDM/OnlineLearningToRank", "commit": "0" * 40, "command": "python x", "date": "2026-01-01",
            "shims": {"seed": "ours"}, "machine": "x86_64 Linux", "runs": runs}


def _run(algorithm, click_model, fold, seed, online, offline=0.5):
    return {"algorithm": algorithm, "click_model": click_model, "fold": fold, "seed": seed, "impressions": 10_000,
            "online": online, "offline": offline}


GOOD = _record([_run("dbgd", "navigational", 1, s, 800.0 + s) for s in range(3)])


@pytest.mark.parametrize("corrupt, says", [
    (lambda r: r.pop("commit"), "missing provenance: commit"),
    (lambda r: r.update(runs="none"), "missing provenance: runs"),
    (lambda r: r["runs"][1].update(online=float("nan")), "run 1: online"),
    (lambda r: r["runs"][0].pop("fold"), "run 0: fold"),
    (lambda r: r["runs"][2].update(seed=0), "stored twice"),
])
def test_a_corrupt_file_is_refused_in_one_line(tmp_path, corrupt, says):
    record = copy.deepcopy(GOOD)
    corrupt(record)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    with pytest.raises(AuthorsCodeFileError) as err:
        load_runs(path)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_missing_file_is_refused_in_one_line(tmp_path):
    with pytest.raises(AuthorsCodeFileError, match="no such file"):
        load_runs(tmp_path / "absent.json")


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(GOOD)[:-20])
    with pytest.raises(AuthorsCodeFileError, match="not JSON"):
        load_runs(path)


def test_a_good_file_gives_its_provenance_and_runs(tmp_path):
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    provenance, runs = load_runs(path)
    assert provenance["commit"] == "0" * 40 and "runs" not in provenance
    assert runs["online"].tolist() == [800.0, 801.0, 802.0]


def test_the_stored_dsp_results_are_valid_and_cover_their_cells():
    provenance, runs = load_runs(STORED)
    assert provenance["repository"] == "HCDM/OnlineLearningToRank" and len(provenance["commit"]) == 40
    assert {"seed", "numpy_aliases", "sharedmem"} <= set(provenance["shims"])
    assert set(runs["click_model"]) == {"perfect", "navigational", "informational"}
    assert (runs["impressions"] == 10_000).all()
    assert {"dbgd", "dbgd_dsp"} <= set(runs["algorithm"])
    assert runs.groupby(["algorithm", "click_model"]).size().min() >= 1
    assert runs["online"].between(0, 1 / (1 - 0.9995)).all() and runs["offline"].between(0, 1).all()


def _frame(algorithm, click_model, values, metric="online"):
    return pd.DataFrame({"algorithm": algorithm, "click_model": click_model, metric: values})


def test_fidelity_flags_a_gap_beyond_half_their_sd_and_not_a_small_one():
    rng = np.random.default_rng(0)
    theirs = pd.concat([_frame("dbgd", "perfect", 800 + 10 * rng.standard_normal(15)),
                        _frame("nsgd", "perfect", 800 + 10 * rng.standard_normal(15))])
    ours = pd.concat([_frame("dbgd", "perfect", 800 + 10 * rng.standard_normal(15)),
                      _frame("nsgd", "perfect", 840 + 10 * rng.standard_normal(15)),
                      _frame("mgd", "perfect", 800 + 10 * rng.standard_normal(15))])
    table = fidelity_table(ours, theirs, "online").set_index("algorithm")
    assert list(table.index) == ["dbgd", "nsgd"]                    # only cells both sides ran
    assert not table.loc["dbgd", "needs_explanation"] and table.loc["nsgd", "needs_explanation"]
    nsgd = table.loc["nsgd"]
    assert nsgd["low"] > EXPLAIN_SD * nsgd["their_sd"] and nsgd["low"] < nsgd["difference"] < nsgd["high"]
    assert nsgd["difference"] == pytest.approx(nsgd["ours"] - nsgd["theirs"])


def test_fidelity_interval_is_welchs():
    ours, theirs = _frame("dbgd", "perfect", [1.0, 2.0, 3.0, 4.0]), _frame("dbgd", "perfect", [0.0, 0.0, 1.0, 5.0, 9.0])
    row = fidelity_table(ours, theirs, "online").iloc[0]
    from scipy import stats
    expected = stats.ttest_ind([1, 2, 3, 4], [0, 0, 1, 5, 9], equal_var=False).confidence_interval(0.95)
    assert (row["low"], row["high"]) == pytest.approx((expected.low, expected.high))
    assert not row["needs_explanation"]


@pytest.mark.skipif(not os.environ.get("OLR_AUTHORS_CHECKOUT") or not os.environ.get("OLR_REFERENCE_PYTHON"),
                    reason="no checkout of HCDM/OnlineLearningToRank named (OLR_AUTHORS_CHECKOUT and "
                           "OLR_REFERENCE_PYTHON): the driver cannot run their code")
def test_the_driver_runs_their_code_and_writes_a_valid_file(tmp_path):
    out = tmp_path / "runs.json"
    command = [sys.executable, str(REPO / "benchmarks" / "authors_code.py"), "--algorithms", "dbgd",
               "--click-models", "perfect", "--folds", "1", "--seeds", "1", "--impressions", "50", "--out", str(out),
               "--commit", "0" * 40]
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{REPO / 'benchmarks'}"}
    subprocess.run(command, check=True, env=env, capture_output=True)
    _, runs = load_runs(out)
    assert len(runs) == 1 and runs.loc[0, "impressions"] == 50


def test_three_columns_adds_the_paper_and_names_each_gap_and_each_paper_difference():
    rng = np.random.default_rng(1)
    theirs = pd.concat([_frame("dbgd", "navigational", 800 + 20 * rng.standard_normal(15)),
                        _frame("dbgd_dsp", "navigational", 820 + 20 * rng.standard_normal(15))])
    ours = pd.concat([_frame("dbgd", "navigational", 880 + 20 * rng.standard_normal(15)),
                      _frame("dbgd_dsp", "navigational", 820 + 20 * rng.standard_normal(15))])
    paper = pd.DataFrame({"algorithm": ["dbgd", "dbgd_dsp"], "click_model": "navigational",
                          "paper_mean": [800.0, 900.0], "paper_sd": [20.0, 20.0]})
    table = three_columns(ours, theirs, paper, "online").set_index("algorithm")
    assert table.loc["dbgd", "paper_vs_code_p"] > 0.05 > table.loc["dbgd_dsp", "paper_vs_code_p"]
    lines = gap_lines(table.reset_index(), {("navigational", "dbgd"): "found: X, shown by run Y"}, "tried Z")
    assert len(lines) == 1 and lines[0].startswith("navigational / DBGD: ours minus theirs +77 [+63, +90]")
    assert lines[0].endswith("found: X, shown by run Y")
    assert gap_lines(table.reset_index(), {}, "tried Z")[0].endswith("open: tried Z")
    differs = paper_lines(table.reset_index())
    assert len(differs) == 1 and differs[0].startswith("navigational / DBGD-DSP: the paper prints 900")


def test_paper_differs_needs_two_runs_and_a_paper_number():
    assert np.isnan(paper_differs([1.0], 1.0, 0.1)) and np.isnan(paper_differs([1.0, 2.0], float("nan"), 0.1))
    assert paper_differs([10.0, 10.1, 9.9], 10.0, 0.1) > 0.5


def test_the_explanation_threshold_is_half_their_sd_from_zero():
    z = np.random.default_rng(2).standard_normal(15)
    their = 800 + 10 * (z - z.mean()) / z.std(ddof=1)                    # s.d. exactly 10
    half_width = 10 * np.sqrt(2 / 15) * __import__("scipy").stats.t.ppf(0.975, 28)
    theirs = pd.concat([_frame("dbgd", "perfect", their), _frame("mgd", "perfect", their)])
    ours = pd.concat([_frame("dbgd", "perfect", their + half_width + 5.5),    # interval 5.5 from zero: flagged
                      _frame("mgd", "perfect", their - half_width - 4.5)])    # 4.5 from zero: not flagged
    table = fidelity_table(ours, theirs, "online").set_index("algorithm")
    assert table.loc["dbgd", "low"] == pytest.approx(5.5) and table.loc["mgd", "high"] == pytest.approx(-4.5)
    assert table.loc["dbgd", "needs_explanation"] and not table.loc["mgd", "needs_explanation"]


def test_paper_differs_is_welchs_test_against_the_papers_fifteen_runs():
    from scipy import stats
    runs = [800.0, 810.0, 790.0, 805.0, 795.0]
    expected = stats.ttest_ind_from_stats(800.0, np.std(runs, ddof=1), 5, 830.0, 20.0, 15, equal_var=False).pvalue
    assert paper_differs(runs, 830.0, 20.0) == pytest.approx(expected)


def test_fidelity_compares_only_the_folds_their_runs_cover():
    theirs = _frame("dbgd", "perfect", [800.0, 802.0]).assign(fold=[1, 2])
    ours = _frame("dbgd", "perfect", [801.0, 803.0, 900.0, 905.0]).assign(fold=[1, 2, 3, 3])
    row = fidelity_table(ours, theirs, "online").iloc[0]
    assert row["ours_runs"] == 2 and row["ours"] == pytest.approx(802.0)


# -- PairRank: the driver's commands, the stored file, the fidelity rows ------------------------------------------

PAIRRANK_STORED = REPO / "olr_core" / "reproductions" / "pairrank" / "authors_code.json"


def _pairrank_file(tmp_path, seeds=3) -> Path:
    """The stored PairRank file's provenance with constructed runs of PairRank_C and PDGD in its format."""
    record = json.loads(PAIRRANK_STORED.read_text())
    params = {"pairrank_c": {"alpha": 0.01, "_lambda": 0.1, "rank": "certain"}, "pdgd": {"learning_rate": 0.1}}
    record["runs"] = [{**_run(algorithm, user, 1, seed, 300.0 + seed, 0.6 + 0.01 * seed), "impressions": 5000,
                       "params": params[algorithm]}
                      for algorithm in params for user in ("perfect", "navigational") for seed in range(seeds)]
    path = tmp_path / "pairrank.json"
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def driver(monkeypatch):
    """benchmarks/authors_code.py, imported as the script imports its neighbours."""
    import importlib

    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    return importlib.import_module("authors_code")


def test_the_pairrank_command_runs_their_class_with_the_readmes_options_and_our_overrides(driver):
    experiment = driver.EXPERIMENTS["pairrank"]
    command = driver.run_command("/ref/python", Path("/co"), Path("/fold"), experiment, "pairrank_c", "navigational",
                                 5000, 7, overrides={"alpha": 0.01, "not_theirs": 1})
    assert command[:4] == ["nice", "-n", "19", "/ref/python"] and command[4].endswith("authors_run.py")
    assert command[5:10] == ["/co", "/fold", "MQ2008", "algorithms.Pairwise.PairRank", "PairRank"]
    params = json.loads(command[10])
    assert params == {"learning_rate": 0.1, "learning_rate_decay": 0.9999977, "update": "gd", "_lambda": 0.1,
                      "alpha": 0.01, "refine": True, "ind": True, "rank": "certain"}
    assert command[11:] == ["navigational", "5000", "7"]
    assert json.loads(driver.run_command("p", Path("c"), Path("f"), experiment, "pairrank_r", "perfect", 1, 0)[10])[
        "rank"] == "random"


def test_the_pairrank_paper_sets_its_own_defaults_and_shims(driver):
    args = driver.parsed(["--paper", "pairrank", "--set", "alpha=0.01", "rank=certain"])
    assert (args.folds, args.impressions, args.algorithms) == ([1], 5000, ["pairrank_c", "pairrank_r", "pdgd"])
    assert args.out == "olr_core/reproductions/pairrank/authors_code.json" and args.set == {"alpha": 0.01,
                                                                                              "rank": "certain"}
    assert driver.parsed([]).impressions == 10_000 and driver.parsed([]).folds == [1, 2, 3, 4, 5]
    assert {"maxint", "nullspace_rows"}.isdisjoint(driver.shims_of(driver.EXPERIMENTS["pairrank"]))
    assert {"maxint", "nullspace_rows"} <= set(driver.shims_of(driver.EXPERIMENTS["dsp"]))
    with pytest.raises(SystemExit):
        driver.parsed(["--paper", "pairrank", "--algorithms", "nsgd"])


def test_a_checkout_of_the_wrong_repository_is_refused_by_name(driver, tmp_path):
    with pytest.raises(SystemExit, match="not a checkout of yilingjia/PairRank"):
        driver.checkout_dir(str(tmp_path), driver.EXPERIMENTS["pairrank"])


def test_a_corrupt_pairrank_file_is_refused_in_one_line(tmp_path):
    record = json.loads(_pairrank_file(tmp_path).read_text())
    record["runs"][0]["offline"] = "high"
    path = tmp_path / "pairrank.json"
    path.write_text(json.dumps(record))
    with pytest.raises(AuthorsCodeFileError) as err:
        load_runs(path)
    assert str(err.value).endswith("run 0: offline is 'high', expected a finite float") and "\n" not in str(err.value)


def test_the_stored_pairrank_results_are_valid_with_provenance_and_parameters():
    provenance, runs = load_runs(PAIRRANK_STORED)
    assert provenance["repository"] == "yilingjia/PairRank" and len(provenance["commit"]) == 40
    assert {"seed", "numpy_aliases", "data_path"} <= set(provenance["shims"]) and "--paper pairrank" in \
        provenance["command"]
    assert "CPU seconds" in provenance["note"]                       # what was run, and what a run costs
    assert set(runs["algorithm"]) <= {"pairrank_c", "pairrank_r", "pdgd"}
    assert (runs["impressions"] == 5000).all() and (runs["fold"] == 1).all()
    assert runs["offline"].between(0, 1).all() and runs["online"].between(0, 1 / (1 - 0.9995)).all()
    assert all(p["rank"] == {"pairrank_c": "certain", "pairrank_r": "random"}[a]
               for a, p in zip(runs["algorithm"], runs["params"]) if a != "pdgd")


def test_fidelity_rows_of_a_pairrank_file_cover_every_cell_theirs_ran(tmp_path):
    _, theirs = load_runs(_pairrank_file(tmp_path))
    ours = pd.concat([theirs.assign(offline=theirs["offline"] + 0.05 + jitter) for jitter in (-0.001, 0.001)])
    cells = all_cells(ours, theirs, pd.DataFrame(columns=["algorithm", "click_model", "paper_mean", "paper_sd"]),
                      "offline")                                      # ours 0.05 above theirs, run for run
    assert len(cells) == theirs.groupby(["click_model", "algorithm"]).ngroups
    assert (cells["their_runs"] == theirs.groupby(["click_model", "algorithm"], sort=False).size().to_numpy()).all()
    compared = cells[cells["their_runs"] >= 2]                        # a cell of one run of theirs has no interval
    assert np.allclose(compared["difference"], 0.05) and (compared["ours_runs"] == 2 * compared["their_runs"]).all()
    assert cells.loc[cells["their_runs"] < 2, "needs_explanation"].eq(False).all()
    shown = shown_cells(cells, "none on MQ2008")
    assert (shown["paper"] == "none on MQ2008").all() and list(shown.columns)[:3] == ["user", "algorithm", "paper"]


def test_a_cell_ours_did_not_run_is_shown_and_needs_no_line():
    theirs = pd.concat([_frame("pairrank_c", "perfect", [0.70, 0.72, 0.71], "offline"),
                        _frame("pairrank_c", "navigational", [0.60, 0.61, 0.62], "offline")])
    ours = _frame("pairrank_c", "perfect", [0.80, 0.81, 0.82], "offline")
    cells = all_cells(ours, theirs, pd.DataFrame(columns=["algorithm", "click_model", "paper_mean", "paper_sd"]),
                      "offline").set_index("click_model")
    assert cells.loc["perfect", "needs_explanation"] and not cells.loc["navigational", "needs_explanation"]
    shown = shown_cells(cells.reset_index(), "none").set_index("user")
    assert shown.loc["navigational", "ours"] == "not stored here" and shown.loc["perfect", "gap"] == "line below"
    assert shown.loc["perfect", "their_code"].endswith("(3)")
    assert len(gap_lines(cells.reset_index(), {}, "tried")) == 1


def test_our_runs_beside_theirs_have_their_horizon_fold_and_parameters():
    from olr_core.reproductions.pairrank import experiments as pr

    theirs = pd.DataFrame({"algorithm": ["pairrank_c", "pdgd"], "impressions": 5000, "fold": 1,
                           "params": [{"alpha": 0.01, "_lambda": 0.1, "rank": "certain"}, {"learning_rate": 0.1}]})
    with pr.pinned_tuning({"pairrank_tuning": {"pairrank_c": {"alpha": 0.01, "l2": 10.0}}}):
        specs = pr.authors_code_specs("paper", theirs)
    assert {s.algorithm for s in specs} == {"pairrank_c", "pdgd"} and {s.rounds for s in specs} == {5000}
    assert len(specs) == 2 * 3 * 20 and all(s.stop_rule == "every_position" for s in specs)
    with pr.pinned_tuning({"pairrank_tuning": {"pairrank_c": {"alpha": 0.5}}}):     # their alpha is not ours
        assert {s.algorithm for s in pr.authors_code_specs("paper", theirs)} == {"pdgd"}
    assert pr.authors_code_specs("quick", theirs) == []                        # 1,000 rounds: not their horizon


def test_the_pairrank_view_reads_ours_from_the_store_only(tmp_path):
    from olr_core.experiments import ResultStore
    from olr_core.reproductions.pairrank.analysis import PAPER_ON_MQ2008, authors_code_view

    empty_store = ResultStore(tmp_path / "empty")
    view = authors_code_view("offline", "quick", None, empty_store, results=_pairrank_file(tmp_path))
    assert len(view.shown) == len(view.cells) == 4 and not view.lines
    assert (view.shown["ours"] == "not stored here").all() and (view.shown["paper"] == PAPER_ON_MQ2008).all()
    assert "(quick)" in view.source and "yilingjia/PairRank" in view.source and not (tmp_path / "empty").exists()
    assert "0 of its runs match" in view.source and "12 runs stored" in view.source
    empty = authors_code_view("offline", "quick", None, empty_store, results=PAIRRANK_STORED)
    assert len(empty.shown) == len(load_runs(PAIRRANK_STORED)[1].groupby(["click_model", "algorithm"]).size())
