"""The figure ledger (olr_core.reproductions.figure_ledger): written at the paper profile, read back checked,
stale where the current code keys a run otherwise, decimated keeping the last round, the smoke check's rule on
constructed frames, and a page at the tiny profile drawing from a small figure ledger."""

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from olr_core.experiments import mean_ci
from olr_core.experiments.runner import spec_key
from olr_core.experiments.spec import RunSpec
from olr_core.reproductions import figure_ledger
from olr_core.reproductions.ledger import LedgerError


@pytest.fixture(autouse=True)
def _ledger_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("OLR_LEDGER_DIR", str(tmp_path / "ledger"))


def specs(seeds=3):
    return [RunSpec("mgd", "synth-mq", 1, click, rounds=100, seed=s) for click in ("perfect", "navigational")
            for s in range(seeds)]


def curves(runs, rounds=None, level=0.5, step=0.01, seed=0):
    """A curve frame as curve_frame gives it: per run and round (10, 20, ..., 1000 by default) a value about
    ``level`` with noise ``step``."""
    rng = np.random.default_rng(seed)
    rounds = np.arange(10, 1001, 10) if rounds is None else rounds
    rows = [pd.DataFrame({"algorithm": s.algorithm, "label": s.label(), "dataset": s.dataset, "fold": s.fold,
                          "click_model": s.click_model, "stop_rule": s.stop_rule, "seed": s.seed, "round": rounds,
                          "value": level + rng.normal(0, step, len(rounds))}) for s in runs]
    return pd.concat(rows, ignore_index=True).assign(config="text")


def table(runs, level=0.5, step=0.01, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame([{"algorithm": s.algorithm, "dataset": s.dataset, "fold": s.fold, "click_model": s.click_model,
                          "seed": s.seed, "final_offline_ndcg10": level + rng.normal(0, step)} for s in runs])


def write(frame, runs, part="figure", rounds=1000):
    figure_ledger.paper_scale("page_x", frame, "paper", part=part, specs=runs, rounds=rounds)
    return figure_ledger.read_figures("page_x")


def test_a_figure_ledger_reads_back_with_its_provenance_and_run_keys():
    runs = specs()
    book = write(curves(runs), runs)
    back = figure_ledger.read_figures("page_x")
    assert back == book and back["profile"] == "paper" and back["code"] and back["machine"] and back["date"]
    entry = back["parts"]["figure"]
    assert entry["kind"] == "curves" and entry["horizon"] == 1000
    assert set(entry["runs"]) == {spec_key(s) for s in runs}
    summary = pd.DataFrame(entry["columns"])
    assert set(summary["value:n"]) == {3} and len(summary) == 2 * 100     # two cells, 100 rounds each


def test_a_second_part_joins_the_first_and_a_table_keeps_its_runs():
    runs = specs()
    write(curves(runs), runs)
    book = write(table(runs), runs, part="table")
    assert set(book["parts"]) == {"figure", "table"} and book["parts"]["table"]["kind"] == "table"
    assert len(book["parts"]["table"]["columns"]["seed"]) == len(runs)


@pytest.mark.parametrize("damage", ["edit", "truncate", "no checksum"])
def test_a_corrupt_figure_ledger_is_refused_in_one_line_naming_the_file_and_the_command(damage):
    runs = specs()
    write(curves(runs), runs)
    path = figure_ledger.figure_path("page_x")
    text = path.read_text()
    if damage == "edit":
        path.write_text(text.replace('"paper"', '"quick"', 1))
    elif damage == "truncate":
        path.write_text(text[: len(text) // 2])
    else:
        stored = json.loads(text)
        del stored["checksum"]
        path.write_text(json.dumps(stored))
    with pytest.raises(LedgerError) as err:
        figure_ledger.read_figures("page_x")
    assert "\n" not in str(err.value)
    assert str(path) in str(err.value) and "olr book --profile paper --only page_x" in str(err.value)


def test_a_large_figure_ledger_is_gzipped_and_still_checked(monkeypatch):
    monkeypatch.setattr(figure_ledger, "GZIP_ABOVE", 100)
    runs = specs()
    book = write(curves(runs), runs)
    path = figure_ledger.figure_path("page_x")
    assert path.name == "page_x.json.gz" and json.loads(gzip.decompress(path.read_bytes()))["checksum"]
    assert figure_ledger.read_figures("page_x") == book
    path.write_bytes(path.read_bytes()[:-20])
    with pytest.raises(LedgerError):
        figure_ledger.read_figures("page_x")


def test_a_run_the_current_code_keys_otherwise_makes_the_part_stale():
    runs = specs()
    book = write(curves(runs), runs)
    assert figure_ledger.stale_note("page_x", book) == ""
    described = next(iter(book["parts"]["figure"]["runs"].values()))
    described["rounds"] = 200                           # as if the code now laid the run out otherwise
    assert figure_ledger.stale_runs(book["parts"]["figure"])[0] == 1
    note = figure_ledger.stale_note("page_x", book)
    assert "stale: figure (1 runs)" in note and "olr book --profile paper --only page_x" in note


def test_decimation_keeps_at_most_the_limit_and_the_last_round():
    rounds = np.arange(10, 10_001, 10)
    kept = figure_ledger.decimated(rounds, 200)
    assert len(kept) <= 200 and kept[-1] == 10_000 and kept[0] == 10
    assert list(figure_ledger.decimated(np.arange(5), 200)) == list(range(5))
    summary = figure_ledger.curve_summary(curves(specs(), rounds=np.arange(1, 1002)))
    assert summary["round"].max() == 1001 and summary["round"].nunique() <= figure_ledger.MAX_POINTS


def test_a_pooled_summary_gives_the_mean_and_sd_of_all_its_runs():
    frame = curves(specs(), step=0.05)
    summary = figure_ledger.curve_summary(frame, max_points=1000)
    pooled = mean_ci(summary, ["algorithm", "round"]).set_index("round")
    direct = mean_ci(frame, ["algorithm", "round"]).set_index("round")
    assert np.allclose(pooled["mean"], direct["mean"]) and np.allclose(pooled["std"], direct["std"])
    assert (pooled["n"] == direct["n"]).all()


def test_the_smoke_check_agrees_within_three_standard_errors_and_disagrees_beyond():
    paper = figure_ledger.curve_summary(curves(specs(seeds=15), step=0.02))
    close = figure_ledger.smoke_check(curves(specs(seeds=2), step=0.02, seed=1), paper, ["value"])
    assert len(close) == 2 and close["agrees"].all() and (close["round"] == 1000).all()
    far = figure_ledger.smoke_check(curves(specs(seeds=2), level=0.6, step=0.02, seed=1), paper, ["value"])
    assert not far["agrees"].any()
    assert "**disagrees**" in figure_ledger.smoke_line(far, 1000)
    assert "**agrees**" in figure_ledger.smoke_line(close, 1000)


def test_the_smoke_check_of_a_table_compares_each_cells_mean():
    paper = table(specs(seeds=15), step=0.02)
    assert figure_ledger.smoke_check(table(specs(seeds=2), step=0.02, seed=1), paper,
                                     ["final_offline_ndcg10"])["agrees"].all()
    assert not figure_ledger.smoke_check(table(specs(seeds=1), level=0.4, seed=1), paper,
                                         ["final_offline_ndcg10"])["agrees"].any()


def test_without_a_figure_ledger_a_page_gets_its_own_frame_back():
    frame = curves(specs())
    assert figure_ledger.paper_scale("page_x", frame, "quick", specs=specs()) is frame


def test_at_the_quick_profile_the_ledger_frame_comes_back_with_its_caption(monkeypatch):
    shown_text = []
    monkeypatch.setattr("IPython.display.display", lambda item: shown_text.append(item.data))
    runs = specs(seeds=15)
    write(curves(runs, step=0.02), runs)
    shown = figure_ledger.paper_scale("page_x", curves(specs(seeds=1), seed=3), "quick", specs=specs(seeds=1),
                                      rounds=1000)
    assert "value:n" in shown and set(shown["value:n"]) == {15}, shown_text
    note = figure_ledger.caption_note(shown)
    assert "figure ledger" in note and "15 runs per cell" in note and "1,000 rounds" in note
    assert any("**agrees**" in text for text in shown_text)                 # the smoke line
    assert any("olr-figure" in text and "Smoke check" in text for text in shown_text)   # and its panel


def test_a_page_draws_its_headline_from_the_figure_ledger_with_the_quick_runs_as_smoke_check(tmp_path, monkeypatch):
    """dsp_figure2 executed at the paper profile writes its figure ledger; executed again at another profile it
    draws from it, says so in the caption and checks this build's runs against it."""
    import shutil

    from olr_core.cli import main

    root = figure_ledger.Path(__file__).resolve().parents[1]
    shutil.copy(root / "_config.yml", tmp_path / "_config.yml")
    shutil.copytree(root / "notebooks", tmp_path / "notebooks")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "results"))
    small = ["--only", "dsp_figure2", "-p", "rounds=40", "-p", "real_datasets=[]", "-p", "folds=[1]",
             "-p", "configs=['text']", "-p", "jobs=1", "--no-build"]
    assert main(["book", "--profile", "paper", "-p", "seeds=2", *small]) == 0
    book = figure_ledger.read_figures("dsp_figure2")
    assert book["profile"] == "paper" and len(book["parts"]["figure"]["runs"]) == 6 * 3 * 2
    assert main(["book", "--profile", "quick", "-p", "seeds=1", *small]) == 0
    page = (tmp_path / "book" / "generated" / "dsp_figure2.ipynb").read_text()
    assert "Drawn from the figure ledger (paper profile, 2 runs per cell, horizon 40 rounds" in page
    assert "Smoke check: **agrees**" in page


def test_named_cells_keep_a_frames_own_result_columns_out_of_its_cells():
    """A frame whose results are not the simulator's (KLRank's regret per cycle end: regret, bound, gap) names
    its cells; each run's rows are kept and the smoke check compares per cycle end."""
    runs = specs(seeds=4)
    rng = np.random.default_rng(0)
    regret = pd.DataFrame([{"T": t, "seed": s.seed, "regret": t ** 0.75 + rng.normal(0, 0.1), "bound": 20 * t ** 0.75,
                            "gap": rng.uniform()} for s in runs[:4] for t in (1, 3, 7, 15)])
    figure_ledger.paper_scale("page_x", regret, "paper", part="regret", specs=runs, rounds=15, cells=["T"])
    entry = figure_ledger.read_figures("page_x")["parts"]["regret"]
    assert entry["kind"] == "table" and entry["cells"] == ["T"] and figure_ledger._per_cell(entry) == "4"
    checked = figure_ledger.smoke_check(regret[regret.seed == 0], pd.DataFrame(entry["columns"]), ["regret"], ["T"])
    assert sorted(checked["cell"]) == ["1", "15", "3", "7"] and checked["agrees"].all()
