"""Rankers check themselves: a bad option is refused when a ranker is built, and ``check_ranker`` (after
scikit-learn's ``check_estimator``) passes every registered ranker and catches a plug-in that breaks the protocol."""

from pathlib import Path

import numpy as np
import pytest

from olr_core.params import ParameterError, positive
from olr_core.rankers import ALGORITHMS, REGISTERED, make_ranker, register
from olr_core.rankers.base import BaseRanker, Display, LinearRanker
from olr_core.rankers.checks import RankerCheckError, check_ranker
from olr_core.rankers.dueling import DBGD, MGD
from olr_core.rankers.library import PageRank

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_built_in_ranker_passes_the_conformance_suite(name):
    check_ranker(name)


def test_a_plugin_by_file_reference_passes_the_conformance_suite(monkeypatch):
    monkeypatch.chdir(ROOT)
    check_ranker("tests/fixtures/key_plugins.py:ClickSkipPerceptron", {"step": 0.02})


@pytest.mark.parametrize("build, message", [
    (lambda: DBGD(learning_rate=-1), "DBGD: option learning_rate=-1 is invalid; expected a finite number in (0, inf)"),
    (lambda: DBGD(0.1, -2.0), "DBGD: option step=-2.0 is invalid"),
    (lambda: MGD(n_candidates=0), "MGD: option n_candidates=0 is invalid"),
    (lambda: PageRank(damping=1.0), "PageRank: option damping=1.0 is invalid; expected a finite number in [0, 1)"),
])
def test_a_ranker_built_directly_refuses_a_bad_option_in_one_line(build, message):
    with pytest.raises(ParameterError) as err:
        build()
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_good_option_still_builds_and_an_unknown_one_is_refused_as_python_does():
    assert DBGD(learning_rate=0.5).learning_rate == 0.5
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        DBGD(bogus=1)


def test_an_option_the_constructor_does_not_take_is_not_listed_as_one():
    """online RankNet fixes KLRank's policy: it is no option of it (it used to end in a TypeError)."""
    with pytest.raises(ParameterError, match="online_ranknet_gper has no option policy; its options: alpha"):
        make_ranker("online_ranknet_gper", policy="greedy")


class Unchecked:
    """Declares an option but builds with any value (it does not derive from BaseRanker)."""

    PARAMS = {"epsilon": positive()}

    def __init__(self, epsilon: float = 0.1):
        self.epsilon = epsilon

    def start(self, train, rng):
        self.rng, self.w = rng, np.zeros(train.n_features)

    def rank(self, query):
        return Display(np.argsort(-self.score(query), kind="stable"))

    def learn(self, query, display, feedback):
        return None

    def score(self, docs):
        return docs.features @ self.w


class Repeats(LinearRanker):
    """Shows its first document twice."""

    def rank(self, query):
        ranking = super().rank(query).ranking
        return Display(np.concatenate([ranking[:1], ranking[:-1]]))


class Unseeded(LinearRanker):
    """Explores with a generator of its own, not the run's seed."""

    def start(self, train, rng):
        super().start(train, np.random.default_rng())

    def learn(self, query, display, feedback):
        self.w = self.w + self.rng.normal(size=self.w.shape)


class DrawingScores(LinearRanker):
    """Scores with noise from the ranker's random stream."""

    def score(self, docs):
        return docs.features @ self.w + self.rng.random(len(docs.features))


@pytest.mark.parametrize("cls, failed_check", [
    (Unchecked, "check_options_refused"), (Repeats, "check_plays_its_loop"),
    (Unseeded, "check_same_seed_same_run"), (DrawingScores, "check_scoring_is_pure"),
])
def test_the_suite_names_the_check_a_broken_plugin_fails(cls, failed_check):
    name = register(f"broken_{cls.__name__.lower()}", cls)
    try:
        with pytest.raises(RankerCheckError, match=f"ranker {name} fails {failed_check}"):
            check_ranker(name)
    finally:
        REGISTERED.pop(name)


def test_a_registered_ranker_that_keeps_the_protocol_passes():
    class Steady(BaseRanker):
        def score(self, docs):
            return np.asarray(docs.features)[:, 0].astype(float)

    name = register("steady", Steady)
    try:
        check_ranker(name)
    finally:
        REGISTERED.pop(name)
