"""olr_core.params: the declared type and range of every option, checked before anything runs; a bad
value is a one-line ParameterError naming the option, and command-line values are YAML (numbers in
exponent form are numbers)."""

import json

import pytest

from olr_core.cli import main
from olr_core.experiments import RunSpec
from olr_core.params import (
    FLAG,
    Param,
    ParameterError,
    at_least,
    between,
    check_all,
    choice,
    parse_assignments,
    positive,
    yaml_load,
)
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


# -- Param, check_all and the command-line values, on small exact cases ----------------------------------

@pytest.mark.parametrize("param, text", [
    (positive(), "a finite number in (0, inf)"),
    (at_least(1), "an integer in [1, inf)"),
    (between(0, 1, high_open=True), "a finite number in [0, 1)"),
    (Param("float"), "a finite number"),
    (choice("a", "b"), "one of a, b"),
    (FLAG, "true or false"),
    (Param("int", 0, 5, optional=True), "an integer in [0, 5] (or null)"),
])
def test_each_declaration_describes_what_it_accepts(param, text):
    assert param.describe() == text


@pytest.mark.parametrize("param, value, expected", [
    (positive(), 3, 3.0), (positive(), 1e-300, 1e-300), (at_least(1), 4.0, 4), (at_least(0), 0, 0),
    (between(0, 1), 0, 0.0), (between(0, 1), 1, 1.0), (choice("a", "b"), "b", "b"), (FLAG, False, False),
    (Param("float", optional=True), None, None),
])
def test_accepted_values_come_back_converted_to_their_kind(param, value, expected):
    converted = param.check("x", value)
    assert converted == expected and type(converted) is type(expected)


@pytest.mark.parametrize("param, value", [
    (positive(), 0), (positive(), -1), (positive(), float("nan")), (positive(), float("inf")), (positive(), "1"),
    (positive(), True), (at_least(1), 0), (at_least(1), 2.5), (between(0, 1, high_open=True), 1),
    (between(0, 1, low_open=True), 0), (between(0, 1), 1.0001), (choice("a", "b"), "c"), (choice("a"), 1),
    (FLAG, 1), (FLAG, "true"), (Param("float"), None),
])
def test_refused_values_are_one_line_errors_naming_owner_option_value_and_range(param, value):
    with pytest.raises(ParameterError) as caught:
        param.check("rate", value, "pdgd")
    message = str(caught.value)
    assert message == f"pdgd: option rate={value!r} is invalid; expected {param.describe()}"
    assert "\n" not in message


def test_an_error_without_an_owner_starts_with_the_option():
    with pytest.raises(ParameterError, match=r"^option seeds=-2 is invalid; expected an integer in \[1, inf\)$"):
        at_least(1).check("seeds", -2)


def test_check_all_converts_every_option_and_lists_the_valid_ones_for_an_unknown_name():
    declared = {"rate": positive(), "steps": at_least(1)}
    assert check_all(declared, {"rate": 1, "steps": 3.0}, "toy") == {"rate": 1.0, "steps": 3}
    assert check_all(declared, {}, "toy") == {}
    with pytest.raises(ParameterError, match=r"^toy has no option a, b, rat, step, z; its options: rate \(a finite "
                                             r"number in \(0, inf\)\), steps \(an integer in \[1, inf\)\)$"):
        check_all(declared, {"z": 1, "step": 1, "rat": 1, "rate": 1, "b": 1, "a": 1}, "toy")
    with pytest.raises(ParameterError, match="its options: none"):
        check_all({}, {"x": 1}, "random")


def test_assignments_are_yaml_values_with_exponents_as_numbers():
    parsed = parse_assignments(["lr=1e-3", "big=1E+5", "n=3", "flag=true", "name=mq2008", "sets=[a, b]",
                                " key =x=y"], "--set")
    assert parsed == {"lr": 0.001, "big": 100000.0, "n": 3, "flag": True, "name": "mq2008", "sets": ["a", "b"],
                      "key": "x=y"}
    assert type(parsed["n"]) is int and parse_assignments(None, "-p") == {}
    assert yaml_load("- 2e3\n- -1.5E-2\n- 1_000\n") == [2000.0, -0.015, 1000]


@pytest.mark.parametrize("pair", ["lr", "=3", " =3"])
def test_an_assignment_without_a_key_is_refused_naming_the_option(pair):
    with pytest.raises(ParameterError, match=rf"^-p expects key=value, got {pair!r}$"):
        parse_assignments([pair], "-p")
