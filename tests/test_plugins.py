"""Your own ranker or user, in a file outside the package, runs wherever a built-in one does: ``olr run``,
a grid, ``olr claims PAPER --with``; its runs are stored, reused, and recomputed when its source changes."""

import json
import textwrap
from pathlib import Path

import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, RunSpec, expand_grid, run_grid
from olr_core.plugins import PluginError

RANKER = textwrap.dedent('''
    import numpy as np
    from olr_core.params import between
    from olr_core.rankers.base import Display, LinearRanker


    class Greedy(LinearRanker):
        """Rank by w.x, explore with probability epsilon, step towards the clicked documents."""

        PARAMS = {"epsilon": between(0, 1)}

        def __init__(self, epsilon: float = 0.1):
            self.epsilon = epsilon

        def rank(self, query):
            ranking = super().rank(query).ranking
            return Display(self.rng.permutation(ranking) if self.rng.random() < self.epsilon else ranking)

        def learn(self, query, display, feedback):
            shown = display.shown(len(feedback.clicks))
            if feedback.clicks.any():
                x = query.features
                self.w = self.w + 0.05 * (x[shown[feedback.clicks]].mean(0) - x[shown].mean(0))


    class NoLearn:
        def start(self, train, rng):
            pass

        def rank(self, query):
            pass

        def score(self, docs):
            pass


    class EveryClick:
        """A user who clicks every shown document (a user plug-in)."""

        feedback_kind = "clicks"

        def __init__(self, max_grade, cutoff=10):
            self.cutoff = cutoff

        def __call__(self, query, shown, rng):
            from olr_core.users import Clicks
            rng.random(self.cutoff)
            return Clicks(np.ones(len(shown), dtype=bool), len(shown) - 1)
''')


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "mymethod.py").write_text(RANKER)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.chdir(tmp_path)
    return folder / "mymethod.py"


def run_json(capsys, argv) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_olr_run_takes_a_class_by_module_or_file_and_recomputes_when_its_source_changes(plugin, capsys, tmp_path):
    results = str(tmp_path / "r")
    by_module = run_json(capsys, ["run", "-a", "mymethod:Greedy", "-T", "40", "--results", results, "--json"])
    assert by_module["spec"]["plugin"].startswith("mymethod:Greedy@")
    again = run_json(capsys, ["run", "-a", "mymethod:Greedy", "-T", "40", "--results", results, "--json"])
    assert again == by_module                                   # reused from the store, seconds and all
    by_file = run_json(capsys, ["run", "-a", "mine/mymethod.py:Greedy", "-T", "40", "--results", results, "--json"])
    assert by_file["final_offline_ndcg10"] == by_module["final_offline_ndcg10"] and by_file["key"] != by_module["key"]
    plugin.write_text(plugin.read_text() + "\n# a changed method\n")
    changed = run_json(capsys, ["run", "-a", "mine/mymethod.py:Greedy", "-T", "40", "--results", results, "--json"])
    assert changed["key"] != by_file["key"] and changed["spec"]["plugin"] != by_file["spec"]["plugin"]
    assert ResultStore(results).load(changed["key"])[0]["spec"]["plugin"] == changed["spec"]["plugin"]


def test_its_parameters_are_declared_and_checked(plugin, capsys, tmp_path):
    err = capsys.readouterr
    assert main(["run", "-a", "mymethod:Greedy", "--set", "epsilon=2", "-T", "5", "--no-store"]) == 2
    assert "epsilon=2 is invalid" in err().err
    assert main(["run", "-a", "mymethod:Greedy", "--set", "epsilonn=0.2", "-T", "5", "--no-store"]) == 2
    assert "no option epsilonn" in err().err


def test_a_class_that_is_not_a_ranker_is_refused_naming_the_missing_method(plugin, capsys):
    assert main(["run", "-a", "mymethod:NoLearn", "-T", "5", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no method learn" in err
    with pytest.raises(PluginError, match="cannot import nothere"):
        RunSpec("nothere.module:Ranker")
    with pytest.raises(PluginError, match="has no Missing"):
        RunSpec("mymethod:Missing")


def test_a_grid_runs_it_in_worker_processes_and_a_user_plugin_too(plugin, tmp_path):
    specs = expand_grid({"algorithms": ["random", {"name": "mine/mymethod.py:Greedy", "params": {"epsilon": 0.2}}],
                         "click_models": ["navigational", "mymethod:EveryClick"], "rounds": 30, "seeds": 2})
    store = ResultStore(tmp_path / "r")
    keys = run_grid(specs, store, jobs=2)
    assert all(store.verified(k) for k in keys)
    meta, _ = store.load(keys[-1])
    assert meta["spec"]["user_plugin"].startswith("mymethod:EveryClick@")


def test_claims_judge_a_paper_with_your_method_added(plugin, capsys, tmp_path):
    records = run_json(capsys, ["claims", "pairrank", "--profile", "tiny", "--with", "mymethod:Greedy",
                                "--results", str(tmp_path / "r"), "--json"])
    mine = [r for r in records if r["id"].startswith("with-mymethod:Greedy")]
    from olr_core.reproductions import pairrank

    assert {r["rule"] for r in mine} == {"paired_gain", "best"}
    assert len(mine) == 4 * len(pairrank.claims.CONFIGS)                  # two metrics x two rules, per configuration
    assert {r["config"] for r in mine} == set(pairrank.claims.CONFIGS)
    assert all(r["cells"] for r in mine)
    best = next(r for r in records if r["id"] == "F3-best-offline")
    methods = {s.algorithm for s in pairrank.experiments.experiments("tiny", "text", ["synth-mslr"])["main"]}
    assert f" of {len(methods) + 1} methods (margin" in best["ours"]    # judged with it among the paper's methods


def test_the_rankers_do_not_import_the_experiments_package():
    """The registry that plug-ins extend sits below the experiments package: no import runs upward (a cycle)."""
    import ast

    root = Path(__file__).resolve().parents[1] / "olr_core" / "rankers"
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not any("experiments" in n for n in names), (path.name, names)


def test_an_installed_package_registers_short_names(plugin, monkeypatch, capsys):
    """``pip install olr-mymethod`` with an ``olr_core.rankers`` entry point makes ``-a mymethod`` work."""
    from importlib.metadata import EntryPoint

    import olr_core.plugins as plugins

    points = [EntryPoint("mymethod", "mymethod:Greedy", plugins.RANKER_GROUP),
              EntryPoint("everyclick", "mymethod:EveryClick", plugins.USER_GROUP)]
    monkeypatch.setattr(plugins, "entry_points", lambda group: [p for p in points if p.group == group])
    spec = RunSpec("mymethod", click_model="everyclick", rounds=10)
    assert spec.canonical()["plugin"].startswith("mymethod:Greedy@")
    assert spec.canonical()["user_plugin"].startswith("everyclick@")
    assert main(["list"]) == 0
    assert "mymethod" in capsys.readouterr().out


def test_a_class_registered_from_a_notebook_cell_runs_in_process():
    from olr_core.rankers import register
    from olr_core.rankers.base import LinearRanker

    class Still(LinearRanker):
        def learn(self, query, display, feedback):
            return None

    register("still-for-test", Still)
    assert RunSpec("still-for-test", rounds=5).canonical()["plugin"].startswith("still-for-test@")
    with pytest.raises(PluginError, match="built-in"):
        register("pdgd", Still)


def test_your_data_a_letor_folder_or_a_function_runs_like_a_registered_set(plugin, tmp_path, capsys):
    from olr_core.data import load_fold, write_letor
    from olr_core.experiments.runner import data_fingerprint

    from .conftest import tiny_data

    folder = tmp_path / "mydata"
    folder.mkdir()
    for split, seed in (("train", 0), ("vali", 1), ("test", 2)):
        write_letor(tiny_data(seed, n_queries=12), folder / f"{split}.txt")
    (plugin.parent / "mydata.py").write_text(
        "from tests.conftest import tiny_data\n\ndef make(fold):\n    return tiny_data(fold, n_queries=20)\n")
    for name in (str(folder), "mydata:make"):
        fold = load_fold(name, 1)
        assert fold.train.n_queries >= 10 and fold.test.n_queries >= 2 and fold.n_features == 4
        out = run_json(capsys, ["run", "-a", "pdgd", "-d", name, "-T", "30", "--results", str(tmp_path / "r"),
                                "--json"])
        assert out["spec"]["dataset"] == name and data_fingerprint(name, 1, None)
    assert main(["run", "-a", "pdgd", "-d", str(tmp_path), "-T", "5", "--no-store"]) == 2
    assert "no Fold1..FoldN folders" in capsys.readouterr().err
