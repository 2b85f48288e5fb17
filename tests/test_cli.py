import json

import pytest

from olr_core.cli import main

from .conftest import one_line_error


def test_run_json_reports_the_contracted_fields(capsys):
    assert main(["run", "-a", "random", "-T", "50", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("final_offline_ndcg10", "discounted_online_ndcg10", "rounds", "seconds"):
        assert key in out
    assert out["rounds"] == 50


def test_run_twice_reads_the_store(capsys):
    main(["run", "-a", "offline_ranknet", "-T", "20", "--set", "l2=0.01", "--json"])
    first = json.loads(capsys.readouterr().out)
    main(["run", "-a", "offline_ranknet", "-T", "20", "--set", "l2=0.01", "--json"])
    second = json.loads(capsys.readouterr().out)
    assert first == second and first["spec"]["params"] == {"l2": 0.01}


@pytest.mark.parametrize("argv, message", [
    (["run", "-a", "nope"], "unknown algorithm 'nope'; valid:"),
    (["run", "-a", "random", "-c", "lazy"], "unknown user model 'lazy'"),
    (["run", "-a", "random", "-T", "-1"], "option rounds=-1 is invalid"),
    (["run", "-a", "random", "-d", "mq2099"], "unknown data set 'mq2099'"),
    (["run", "-a", "random", "--set", "x"], "--set expects key=value"),
    (["run", "-a", "offline_ranknet", "--set", "lr=1"], "has no option lr"),
    (["data", "info", "mq2008", "--data-dir", "/nonexistent"], "does not exist"),
])
def test_bad_input_gives_a_one_line_error(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_list_and_data_commands(capsys):
    assert main(["list"]) == 0
    assert "offline_lambdarank" in capsys.readouterr().out
    assert main(["data", "list"]) == 0
    assert "mslr-web10k" in capsys.readouterr().out
    assert main(["data", "info", "synth-mq"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["train"]["features"] == 46
    assert main(["data", "get", "yahoo"]) == 1
    assert "registration" in capsys.readouterr().out


def test_grid_command(tmp_path, capsys):
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random, oracle]\nrounds: 20\nseeds: 2\nclick_models: [perfect]\n")
    assert main(["grid", str(grid), "--results", str(tmp_path / "r")]) == 0
    assert "oracle" in capsys.readouterr().out


def test_claims_command_prints_one_json_record_per_claim(capsys, tmp_path):
    from olr_core.claims import VERDICTS
    from olr_core.reproductions import pairrank

    assert main(["claims", "pairrank", "--profile", "tiny", "--json", "--results", str(tmp_path / "r")]) == 0
    records = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert {r["id"] for r in records} == {c.id for c in pairrank.claims.CLAIMS}
    for record in records:
        assert set(record) >= {"paper", "claim", "config", "paper_value", "ours", "runs", "rule", "verdict", "reason"}
        assert record["verdict"] in VERDICTS
    assert main(["claims", "nope"]) == 2
    assert "unknown paper 'nope'; valid: dsp, pairrank" in capsys.readouterr().err


def test_run_plays_a_whole_library_stream_and_reports_table2_fields(capsys, tmp_path):
    from olr_core.data import load_library

    assert main(["run", "-a", "klrank_greedy", "-d", "synth-library-slow", "--json", "--no-store"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == load_library("synth-library-slow").n_queries        # no -T: the whole stream
    assert out["avg_kl_cost"] is None and out["kl_cost_infinite"] is True        # deterministic: infinite cost
    for key in ("avg_rel_click_distance", "clicked_first_rate", "avg_ndcg"):
        assert 0 <= out[key] <= 1
    assert main(["run", "-a", "klrank_gper", "-d", "synth-library", "-T", "300", "--json", "--no-store"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == 300 and out["kl_cost_infinite"] is False and out["avg_kl_cost"] > 0


def test_run_on_cora_when_the_data_directory_has_it(capsys):
    import os

    from olr_core.data import DataNotFoundError, load_library

    try:
        queries = load_library("cora", os.environ.get("OLR_DATA_DIR")).n_queries
    except DataNotFoundError as err:
        pytest.skip(str(err))
    assert main(["run", "-a", "random", "-d", "cora", "-T", "500", "--json", "--no-store"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == 500 < queries and out["avg_kl_cost"] > 0


@pytest.mark.parametrize("argv, named", [
    (["run", "-a", "pdgd", "-T", "10", "--set", "learning_rate=.nan"], "learning_rate"),
    (["run", "-a", "pdgd", "-T", "10", "--set", "learning_rate=.inf"], "learning_rate"),
    (["run", "-a", "pdgd", "-T", "10", "--set", "decay=2"], "decay"),
    (["run", "-a", "nsgd", "-T", "10", "--set", "n_candidates=0"], "n_candidates"),
    (["run", "-a", "dbgd", "-T", "10", "--set", "scorer=mlp", "--set", "hidden=0"], "hidden"),
    (["run", "-a", "dbgd", "-T", "10", "--set", "cutoff=0"], "cutoff"),
    (["run", "-a", "pairrank_c", "-T", "10", "--set", "window=0"], "window"),
])
def test_cli_refuses_bad_parameters_and_stores_nothing(capsys, tmp_path, argv, named):
    err = one_line_error(capsys, [*argv, "--results", str(tmp_path / "r")])
    assert named in err
    assert not list((tmp_path / "r").glob("*/*.npz"))


def test_zero_rounds_json_is_valid_json(capsys):
    assert main(["run", "-a", "random", "-T", "0", "--json", "--no-store"]) == 0
    text = capsys.readouterr().out
    record = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert record["mean_online_ndcg10"] is None and record["rounds"] == 0


def test_a_results_path_that_is_a_file_fails_before_anything_runs(tmp_path, capsys, monkeypatch):
    import olr_core.experiments as experiments

    ran = []
    monkeypatch.setattr(experiments, "execute", lambda *a, **k: ran.append(1))
    target = tmp_path / "results.txt"
    target.write_text("not a folder")
    err = one_line_error(capsys, ["run", "-a", "random", "-T", "10", "--results", str(target)])
    assert "is a file, not a folder" in err and str(target) in err and not ran
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random]\nrounds: 10\n")
    assert "is a file, not a folder" in one_line_error(capsys, ["grid", str(grid), "--results", str(target)])
