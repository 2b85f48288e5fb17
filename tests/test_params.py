"""olr_core.params: the declared type and range of every option, checked before anything runs; a bad
value is a one-line ParameterError naming the option, and command-line values are YAML (numbers in
exponent form are numbers)."""

import json

import pytest

from olr_core.cli import main
from olr_core.experiments import RunSpec
from olr_core.params import ParameterError
from olr_core.rankers import ALGORITHMS, algorithm_parameters, declared_parameters, make_ranker


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_parameter_is_declared_and_its_default_is_valid(name):
    declared = declared_parameters(name)
    defaults = algorithm_parameters(name)
    assert set(declared) == set(defaults), f"{name}: undeclared {set(defaults) - set(declared)}"
    for key, value in defaults.items():
        declared[key].check(key, value, name)


@pytest.mark.parametrize("algorithm, option, value", [
    ("pdgd", "learning_rate", float("nan")), ("pdgd", "learning_rate", float("inf")), ("pdgd", "decay", 2),
    ("pdgd", "learning_rate", 0), ("nsgd", "n_candidates", 0), ("dbgd", "hidden", 0), ("dbgd", "cutoff", 0),
    ("pairrank_c", "window", 0), ("pairrank_c", "l2", -1), ("pairrank_c", "alpha", -0.1),
    ("pairrank_c", "variant", "X"), ("epsilon_greedy", "epsilon", 1.5), ("mgd", "n_candidates", 2.5),
    ("dbgd", "dsp", "yes"), ("pdgd", "learning_rate", "fast"), ("pairrank_r", "newton_steps", True),
])
def test_out_of_range_parameters_are_refused_naming_the_option(algorithm, option, value):
    with pytest.raises(ParameterError, match=f"{algorithm}: option {option}="):
        make_ranker(algorithm, **{option: value})
    with pytest.raises(ParameterError, match=option):
        RunSpec(algorithm, params={option: value})


def test_numbers_in_exponent_form_are_numbers(capsys):
    assert main(["run", "-a", "pdgd", "-T", "20", "--set", "learning_rate=1e-3", "--json", "--no-store"]) == 0
    assert json.loads(capsys.readouterr().out)["spec"]["params"] == {"learning_rate": 0.001}
