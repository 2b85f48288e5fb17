"""A run is described once: ``olr run`` parses its -c value once into a UserSpec and its data set into a Task,
and the checks, make_user and the key read them."""

import json
import sys
from pathlib import Path

import pytest

from olr_core import click_models, users
from olr_core.cli import main
from olr_core.experiments import RunSpec, expand_grid
from olr_core.experiments.task import LetorTask, LibraryTask, task_of
from olr_core.params import ParameterError
from olr_core.users import UserSpec, make_user, parse_user

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def parser_calls(monkeypatch):
    """Counts of calls to the user parser and the click model grammar, wherever olr_core imported them."""
    calls = {"parse_user": 0, "parse_user_name": 0}
    for owner, name in ((users, "parse_user"), (click_models, "parse_user_name")):
        original = getattr(owner, name)

        def counting(*args, _original=original, _name=name, **kwargs):
            calls[_name] += 1
            return _original(*args, **kwargs)

        for module in [m for n, m in sys.modules.items() if n.startswith("olr_core") and m is not None]:
            if getattr(module, name, None) is original:
                monkeypatch.setattr(module, name, counting)
    return calls


@pytest.mark.parametrize("argv", [
    ["-a", "dbgd", "-c", "dbn:informational,gamma=0.7+noise=0.1"],
    ["-a", "pdgd"],
    ["-a", "topk_squared", "-c", "top2"],
    ["-a", "klrank_gper", "-d", "synth-library", "-T", "30"],
    ["-a", "random", "-c", "tests/fixtures/key_plugins.py:FirstOnly"],
])
def test_one_olr_run_parses_its_user_once(parser_calls, capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(ROOT)
    for _ in range(2):                   # computed and stored, then found in the store
        assert main(["run", *argv, "-T", "30", "--results", str(tmp_path), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["key"]
        assert parser_calls["parse_user"] == 1, parser_calls
        parser_calls["parse_user"] = 0
    assert parser_calls["parse_user_name"] <= 2          # (once per run, for a click model)


def test_a_grid_parses_each_user_once_for_all_its_runs(parser_calls):
    runs = expand_grid({"algorithms": ["dbgd", "mgd", "pdgd"], "click_models": ["perfect", "ubm:eta=2"], "seeds": 4,
                        "folds": [1, 2]})
    assert len(runs) == 48 and parser_calls == {"parse_user": 2, "parse_user_name": 2}
    assert {r.user.family for r in runs} == {"cascade", "ubm"}


def test_a_user_spec_holds_what_its_name_says():
    spec = parse_user("ccm:informational,alpha1=0.8+noise=0.05")
    assert (spec.family, spec.preset, dict(spec.params), spec.noise, spec.feedback_kind, spec.k) == \
        ("ccm", "informational", {"alpha1": 0.8}, 0.05, "clicks", None)
    assert parse_user("top3") == UserSpec("top3", "top", "topk_labels", 3)
    assert parse_user("full").feedback_kind == "all_labels" and parse_user("choice").feedback_kind == "choice"


def test_a_plugin_user_spec_holds_its_reference_and_source_hash(monkeypatch):
    monkeypatch.chdir(ROOT)
    spec = parse_user("tests/fixtures/key_plugins.py:FirstOnly")
    assert spec.family == "plugin" and spec.plugin.endswith("key_plugins.py:FirstOnly")
    assert len(spec.source_hash) == 12


@pytest.mark.parametrize("name, message", [
    ("top11", "user top11 reveals the top 11 documents; k must be between 1 and the 10 shown"),
    ("dbn:bogus", "unknown dbn preset 'bogus'"),
    ("ubm:eta=20", "eta must lie in [0, 10]"),
    ("nobody", "unknown user model 'nobody'; valid: perfect"),
])
def test_a_bad_user_is_refused_in_one_line(name, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        parse_user(name)
    assert "\n" not in str(err.value)


def test_make_user_builds_from_the_spec_as_from_the_name():
    spec = parse_user("dbn:informational,gamma=0.7+noise=0.1")
    assert make_user(spec, 2) == make_user("dbn:informational,gamma=0.7+noise=0.1", 2)


def test_the_task_owns_its_defaults_learners_and_users():
    letor, library = task_of("synth-mq"), task_of("synth-library")
    assert isinstance(letor, LetorTask) and isinstance(library, LibraryTask)
    assert (letor.default_user, library.default_user) == ("navigational", "choice")
    assert letor.default_rounds() == 1000 and library.default_rounds() > 0
    assert "klrank_gper" in library.learners and "klrank_gper" not in letor.learners and "random" in letor.learners
    with pytest.raises(ParameterError, match="use click model 'choice'"):
        RunSpec("klrank_gper", "synth-library", click_model="navigational")
    with pytest.raises(ParameterError, match="dbgd does not run on synth-library; algorithms for growing-library"):
        RunSpec("dbgd", "synth-library", click_model="choice")


def test_a_run_spec_holds_its_user_and_task_and_they_stay_out_of_its_key():
    spec = RunSpec("topk_squared", "synth-mq", click_model="top2")
    assert spec.user == parse_user("top2") and isinstance(spec.task, LetorTask)
    assert "user" not in spec.canonical() and "task" not in spec.canonical()
    assert RunSpec("topk_squared", "synth-mq", click_model=parse_user("top2")) == spec
