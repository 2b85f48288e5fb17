"""Every parameter of a configuration other than a paper's text cites where in the authors' code it comes
from (#34), and the citations do not change what the configurations run."""

import re

import pytest

from olr_core.reproductions import dsp, pairrank, topk
from olr_core.reproductions.sources import Cited, citation_rows, plain, uncited

FILE_LINE = re.compile(r"^(HCDM/OnlineLearningToRank|yilingjia/PairRank)/[\w/.-]+\.(py|md):\d+")


def test_every_dsp_code_value_names_a_file_and_line_of_the_authors_code():
    for name, (_, per_scope, rule) in dsp.experiments.CODE_CHOICES.items():
        for scope, params in per_scope.items():
            assert params and not uncited(params), (name, scope)
            for key, value in params.items():
                assert FILE_LINE.match(value.source), (name, scope, key, value.source)
        if rule:
            assert isinstance(rule, Cited) and FILE_LINE.match(rule.source), name
    table = dsp.experiments.code_sources("code")
    choices = dsp.experiments.CODE_CHOICES.values()
    assert len(table) == sum(len(p) for _, scopes, _ in choices for p in scopes.values()) + 1
    assert table["authors' code"].str.match(FILE_LINE).all()


def test_every_pairrank_code_value_names_a_file_and_line_of_the_authors_code():
    for algorithm, params in pairrank.experiments.CODE_PARAMS.items():
        assert not uncited(params), algorithm
        assert all(FILE_LINE.match(value.source) for value in params.values()), algorithm
    assert FILE_LINE.match(pairrank.experiments.CODE_STOP.source)
    table = pairrank.experiments.code_sources()
    assert set(table["applies to"]) == {"pairrank_c", "pairrank_r", "pdgd", "every user"}


def test_the_code_configurations_run_the_cited_values():
    """The values the runs get are the cited ones, unchanged from before the citations (DSP, PairRank)."""
    assert dsp.experiments.config_params("code", "mgd_dsp") == ({"learning_rate": 0.01, "multileave": "probabilistic",
                                                     "credit_samples": 10_000, "decay": 1.0,
                                                     "dsp_renormalize": True}, "every_position")
    assert dsp.experiments.config_params("code", "nsgd") == ({"learning_rate": 0.01, "decay": 1.0, "winners": "mean"},
                                                 "every_position")
    assert dsp.experiments.config_params("code", "pdgd") == ({}, "every_position")   # PDGD keeps its own rate (0.1)
    spec = pairrank.experiments.main_grid(["synth-mq"], 1, 10, {"pdgd": {"learning_rate": 0.003}}, ["navigational"],
                              ["pdgd", "pairrank_c"])
    code = {s.algorithm: s for s in pairrank.experiments.in_config(spec, "code")}
    assert code["pdgd"].params == {"learning_rate": 0.1} and code["pdgd"].stop_rule == "every_position"
    assert code["pairrank_c"].params == plain(pairrank.experiments.CODE_PAIRRANK)


def test_top_k_values_say_where_they_come_from_even_when_no_script_was_found():
    table = topk.experiments.code_sources()
    assert set(table["configuration"]) == {"code", "written-sign"}
    assert table["authors' code"].str.len().gt(20).all()
    assert topk.experiments.config_params("topk_kl", "code") == {"eta0": 0.1}
    assert topk.experiments.config_params("topk_smoothdcg", "written-sign") == {"surrogate": "smoothdcg_gain"}


def test_plain_and_citation_rows():
    params = {"a": Cited(1, "x/y.py:3"), "b": 2}
    assert plain(params) == {"a": 1, "b": 2}
    assert uncited(params) == ["b"]
    assert citation_rows("code", "all", params) == [{"configuration": "code", "choice": "", "applies to": "all",
                                                    "parameter": "a", "value": 1, "authors' code": "x/y.py:3"}]


@pytest.mark.parametrize("config", ["code", "code-learning_rate", "text+decay"])
def test_every_configuration_table_lists_what_it_sets(config):
    table = dsp.experiments.code_sources(config)
    chosen = dsp.experiments.config_choices(config)
    assert set(table["choice"]) == set(chosen)
