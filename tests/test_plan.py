"""olr book --plan / olr claims --plan: the runs still missing and their cost, from specs and the store alone."""

import nbformat
import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, RunSpec, run_grid
from olr_core.experiments.costs import estimate_seconds
from olr_core.plan import claim_grids, format_plan, page_specs, plan_groups

from .test_book import write_page

COSTS = {("pdgd", "synth-mq"): [(100, 2.0), (100, 4.0), (300, 9.0)],
         ("pdgd", "mq2008"): [(1000, 50.0)],
         ("dbgd(multileave=probabilistic)", "synth-mq"): [(100, 30.0)],
         ("ledger:pairrank_c", "synth-mq"): [(5000, 20.0)], ("ledger:pairrank_c", "mq2008"): [(1000, 1.0)],
         ("ledger:nsgd", "mq2008"): [(1000, 3.0)]}


@pytest.mark.parametrize("spec, seconds, basis", [
    ({"algorithm": "pdgd", "dataset": "synth-mq", "rounds": 100}, 3.0, "measured"),        # mean of 2 and 4
    ({"algorithm": "pdgd", "dataset": "synth-mq", "rounds": 1000}, 1000 * 15 / 500, "scaled"),
    ({"algorithm": "pdgd", "dataset": "synth-mslr", "rounds": 100}, 100 * 65 / 1500, "other data"),
    ({"algorithm": "dbgd", "dataset": "synth-mq", "rounds": 200, "params": {"multileave": "team"}}, 60.0,
     "other parameters"),
    ({"algorithm": "pairrank_c", "dataset": "synth-mq", "rounds": 100}, 100 * 20 / 5000, "ledger runs"),
    ({"algorithm": "nsgd", "dataset": "synth-mq", "rounds": 100}, 100 * 3 / 1000, "ledger runs, other data"),
    ({"algorithm": "pairrank", "dataset": "synth-mq", "rounds": 100}, None, "unknown"),
])
def test_a_run_is_estimated_from_the_closest_kind_of_stored_run(spec, seconds, basis):
    estimate, how = estimate_seconds(spec, COSTS)
    assert how == basis
    assert estimate == pytest.approx(seconds) if seconds is not None else estimate is None


def test_plan_counts_missing_runs_once_and_prices_them_from_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("OLR_LEDGER_DIR", str(tmp_path / "no-ledgers"))
    store = ResultStore(tmp_path / "r")
    stored = [RunSpec("random", rounds=40, seed=s) for s in range(3)]
    run_grid(stored, store)
    missing = [RunSpec("random", rounds=40, seed=s) for s in (3, 4)] + [RunSpec("random", rounds=80, seed=0)]
    unknown = [RunSpec("oracle", rounds=40, seed=0)]
    before = store.keys()
    rows = plan_groups({"a": stored + missing[:2], "b": missing + unknown}, store)
    assert store.keys() == before                                     # nothing ran
    a, b = rows
    assert (a["runs"], a["missing"], b["runs"], b["missing"]) == (5, 2, 4, 2)      # seeds 3, 4 counted in a only
    per_run = sum(store.run_seconds(k)[1] for k in before) / 3
    assert a["cpu_seconds"] == pytest.approx(2 * per_run) and a["basis"] == {"measured": 2}
    assert b["cpu_seconds"] == pytest.approx(2 * per_run) and b["basis"] == {"scaled": 1, "unknown": 1}
    assert b["unknown"] == {"oracle on synth-mq, 40 rounds": 1}
    text = format_plan(rows, "test", cores=2)
    assert text.splitlines()[-1].startswith("total: 4 runs missing") and "1 run(s) of unknown cost" in text
    with pytest.raises(ValueError, match="--cores=0"):
        format_plan(rows, "test", cores=0)


def test_wall_time_is_the_cpu_time_over_the_cores_but_never_below_the_longest_run():
    rows = [{"group": "g", "runs": 2, "missing": 2, "cpu_seconds": 100.0, "longest": 90.0, "basis": {"measured": 2},
             "unknown": {}}]
    assert "~50 s wall on 2 core(s)" in format_plan([{**rows[0], "longest": 10.0}], "t", 2)
    assert "~90 s wall on 2 core(s)" in format_plan(rows, "t", 2)


def _notebook(root, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(cells[0], metadata={"tags": ["parameters"]}),
                *[nbformat.v4.new_code_cell(c) for c in cells[1:]]]
    (root / "notebooks").mkdir(parents=True, exist_ok=True)
    write_page(nb, root / "notebooks" / "page.md")
    return root / "notebooks" / "page.md"


def test_page_specs_follow_the_pages_own_grid_functions_and_stop_after_the_last(tmp_path):
    notebook = _notebook(tmp_path, [
        "seeds = 1\nrounds = 30",
        "from olr_core.experiments import expand_grid, run_grid\n"
        "def run(algorithm):\n    return run_grid(expand_grid({'algorithms': [algorithm], 'rounds': rounds, "
        "'seeds': seeds}))\n",
        "run('random')\nprint(undefined_name)\nrun('oracle')\nraise SystemExit('after the last grid: never run')",
        "raise SystemExit('a cell after the last grid: never run')"])
    specs = page_specs(notebook, {"seeds": 3})
    assert [(s.algorithm, s.seed, s.rounds) for s in specs] == [("random", 0, 30), ("random", 1, 30),
                                                                ("random", 2, 30), ("oracle", 0, 30),
                                                                ("oracle", 1, 30), ("oracle", 2, 30)]
    from olr_core.experiments import run_grid as restored
    from olr_core.experiments.runner import run_grid as original
    assert restored is original and restored.__module__ == "olr_core.experiments.runner"


def test_claims_plan_command_prints_each_group_and_a_total_without_running(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    grids = claim_grids("dsp", "tiny")
    run_grid(grids[("dsp", "text", "k")], store)
    before = store.keys()
    assert main(["claims", "dsp", "--profile", "tiny", "--plan", "--cores", "4", "--results", str(store.root)]) == 0
    out = capsys.readouterr().out
    assert store.keys() == before
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("dsp/")}
    assert lines["dsp/text/k"][1:3] == [str(len(before)), "0"]
    assert lines["dsp/text/main"][1] == lines["dsp/text/main"][2] != "0"
    assert out.splitlines()[-1].startswith("total: ") and "on 4 core(s)" in out


def test_book_plan_of_the_paper_profile_prints_a_total(capsys):
    assert main(["book", "--plan", "--profile", "paper", "--only", "dsp_figure4", "--cores", "2"]) == 0
    out = capsys.readouterr().out
    row = next(line.split() for line in out.splitlines() if line.startswith("dsp_figure4"))
    assert int(row[1].replace(",", "")) > 0 and row[1] == row[2]            # an empty store: every run missing
    assert out.splitlines()[-1].startswith(f"total: {row[2]} runs missing")


def test_a_fresh_store_prices_a_kind_it_never_ran_from_the_ledgers_runs(tmp_path, monkeypatch):
    """A fresh clone's paper-profile plan: kinds this store never ran are priced by the repository's ledgers."""
    from olr_core.reproductions import ledger

    monkeypatch.setenv("OLR_LEDGER_DIR", str(tmp_path / "ledger"))
    spec = RunSpec("oracle", rounds=40, seed=0)
    assert plan_groups({"g": [spec]}, ResultStore(tmp_path / "r"))[0]["unknown"]
    book = ledger.build_ledger("klrank", "tiny", [], ResultStore(tmp_path / "r"))
    book["runs"] = {"k": {"algorithm": "oracle", "dataset": "synth-mq", "rounds_run": 400, "cpu_seconds": 8.0}}
    ledger.write_ledger(book)
    row = plan_groups({"g": [spec]}, ResultStore(tmp_path / "r"))[0]
    assert row["basis"] == {"ledger runs": 1} and row["cpu_seconds"] == pytest.approx(0.8) and not row["unknown"]
