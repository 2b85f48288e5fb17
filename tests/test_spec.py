"""olr_core.experiments.spec: grid files and run specs are checked whole when read, before the first run;
each mistake is a one-line error naming the file and the option."""

import pytest

from olr_core.experiments import ResultStore, RunSpec, expand_grid, run_grid
from olr_core.experiments.spec import load_and_expand
from olr_core.params import ParameterError

from .conftest import one_line_error


@pytest.mark.parametrize("text, named", [
    ('algorithms: [random]\nseeds: "10"\n', "seeds"),
    ("algorithms:\n  - {name: pdgd, param: {learning_rate: 0.5}}\n", "param"),
    ("algorithms: [random]\nrounds: 100.7\n", "rounds"),
    ("algorithms: []\n", "algorithms"),
    ("algorithms: [random]\nseeds: -2\n", "seeds"),
    ("algorithms: [random]\nfolds: [1, 9]\n", "fold"),
    ("algorithms: [random]\nclick_models: [lazy]\n", "user model"),
    ("algorithms: [random]\neval_every: 0\n", "eval_every"),
    ("algorithms: [random]\nstop_rule: sometimes\n", "stop_rule"),
    ("algorithms: [random]\nseed: 3\n", "seed"),
    ("algorithms: [random\nseeds: 2\n", "line 2"),
])
def test_bad_grid_files_are_one_line_errors_naming_file_and_option(capsys, tmp_path, text, named):
    path = tmp_path / "grid.yml"
    path.write_text(text)
    err = one_line_error(capsys, ["grid", str(path), "--results", str(tmp_path / "r")])
    assert "grid.yml" in err and named in err
    assert not (tmp_path / "r").exists()


def test_a_typo_in_the_last_entry_fails_before_the_first_run(tmp_path):
    path = tmp_path / "grid.yml"
    path.write_text("algorithms: [random, oracle, {name: pdgd, params: {learning_rat: 0.1}}]\nrounds: 10\n")
    with pytest.raises(ParameterError, match="pdgd has no option learning_rat"):
        run_grid(load_and_expand(path), ResultStore(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_grid_seed_lists_and_counts():
    assert [s.seed for s in expand_grid({"algorithms": ["random"], "seeds": 3})] == [0, 1, 2]
    assert [s.seed for s in expand_grid({"algorithms": ["random"], "seeds": [7, 4]})] == [7, 4]


def test_a_repeated_seed_is_refused_naming_it(tmp_path, capsys):
    with pytest.raises(ParameterError, match="repeats seed 1"):
        expand_grid({"algorithms": ["random"], "seeds": [1, 1, 2]})
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random]\nseeds: [1, 1, 2]\nrounds: 10\n")
    err = one_line_error(capsys, ["grid", str(grid), "--results", str(tmp_path / "r")])
    assert "g.yml" in err and "repeats seed 1" in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("reference", ["pdgd", "random", "oracle", "dbgd"])
def test_a_reference_without_an_offline_weight_vector_is_refused(capsys, tmp_path, reference):
    with pytest.raises(ParameterError, match="needs the weight vector of an offline fit"):
        RunSpec("pdgd", rounds=10, reference=reference)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-T", "10", "--reference", reference,
                                  "--results", str(tmp_path / "r")])
    assert "offline_ranknet" in err and not (tmp_path / "r").exists()
    assert RunSpec("pdgd", rounds=10, reference="offline_lambdarank").reference == "offline_lambdarank"


def test_a_learner_paired_with_the_wrong_feedback_fails_when_the_grid_is_read(tmp_path, capsys):
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random, pdgd, topk_squared]\nclick_models: [navigational]\nrounds: 10\n")
    err = one_line_error(capsys, ["grid", str(grid), "--results", str(tmp_path / "r")])
    assert "g.yml" in err and "topk_labels" in err and "navigational" in err and not (tmp_path / "r").exists()
    with pytest.raises(ParameterError, match="reveals 1; use click model top2"):
        RunSpec("topk_ranksvm", click_model="top1")
    with pytest.raises(ParameterError, match="learns from 'clicks'"):
        RunSpec("pdgd", click_model="top2")
