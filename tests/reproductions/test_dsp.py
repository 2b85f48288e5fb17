"""The DSP chapter's package (olr_core.reproductions.dsp): its configurations and grids, its claims' registry,
and its analysis on frames built by hand."""

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from olr_core.rankers import make_ranker
from olr_core.reproductions.dsp import analysis, claims, experiments
from olr_core.reproductions.dsp.experiments import ALGORITHMS
from olr_core.tables import reader_table


def test_evaluating_once_at_the_end_changes_no_final_number():
    """The sweep grids evaluate only after the last round; the learning and the final offline NDCG are
    those of a run evaluated every 10 rounds (evaluation has its own random stream)."""
    from olr_core.experiments import execute
    once = experiments.sweep_grid("synth-mq", 1, 1, 300, "dsp_k", [2])[0]
    assert once.eval_every == 300
    often = dataclasses.replace(once, eval_every=10)
    a, b = execute(once).summary(), execute(often).summary()
    for key in ("final_offline_ndcg10", "discounted_online_ndcg10", "cumulative_misordered_pairs"):
        assert a[key] == b[key], key


def test_every_dsp_table_and_figure_claim_is_judged_as_the_text_says_and_as_the_code_ran():
    for c in claims.CLAIMS:
        if c.rule != "not_testable":
            assert set(c.configs) == {"text", "code"}, c.id
    text, code = (experiments.experiments("quick", config, ["mq2008"]) for config in ("text", "code"))
    assert set(text) == set(code) == {"main", "lambda", "cosine", "gt", "k", "r"}
    for name in ("lambda", "cosine", "gt", "k", "r"):     # the same runs, in the code's configuration
        assert [(s.algorithm, s.click_model, s.seed) for s in text[name]] == \
            [(s.algorithm, s.click_model, s.seed) for s in code[name]]
        assert all(s.stop_rule == "every_position" and s.params.get("learning_rate") == 0.01 for s in code[name])

def test_dsp_configurations_differ_only_where_the_code_does():
    assert experiments.config_params("text", "mgd_dsp") == ({}, "after_click")
    params, rule = experiments.config_params("code", "mgd_dsp")
    assert params == {"learning_rate": 0.01, "multileave": "probabilistic", "credit_samples": 10_000,
                      "decay": 1.0, "dsp_renormalize": True}
    assert rule == "every_position"
    assert experiments.config_params("code", "dbgd")[0] == {"learning_rate": 0.01, "multileave": "probabilistic",
                                                    "credit_samples": 10_000}
    assert experiments.config_params("code", "nsgd")[0] == {"learning_rate": 0.01, "decay": 1.0,   # team draft
                                                    "winners": "mean"}
    assert experiments.config_params("text+decay", "dbgd") == ({}, "after_click")
    assert experiments.config_params("text+stop_rule", "dbgd") == ({}, "every_position")
    exact, _ = experiments.config_params("code-credit", "mgd_dsp")
    assert exact == {k: v for k, v in params.items() if k != "credit_samples"}
    # the sampled credit needs probabilistic multileaving: dropping that drops the credit too
    assert "credit_samples" not in experiments.config_params("code-multileave", "mgd")[0]
    assert "text+credit" not in experiments.CONFIGS
    for config in experiments.CONFIGS:                        # every configuration makes valid rankers
        for algorithm in experiments.ALGORITHMS:
            make_ranker(algorithm, **experiments.config_params(config, algorithm)[0])
    for bad in ("text+nothing", "code+credit", "text+credit"):
        with pytest.raises(ValueError, match="unknown DSP configuration"):
            experiments.config_params(bad, "dbgd")

def test_the_dsp_pages_name_only_known_configurations():
    """A typo in a page's `configs` (manifest or notebook default) would fail only deep inside a build."""
    from olr_book.manifest import load_pages
    root = Path(__file__).resolve().parents[2]
    pages = [p for p in load_pages(root) if p.name.startswith("dsp_") and {"config", "configs"} & set(p.declared)]
    assert {p.notebook for p in pages} >= {"dsp_table2.md", "dsp_table3.md", "dsp_figure2.md",
                                           "dsp_figure3.md", "dsp_figure4.md", "dsp_ablation.md"}
    for page in pages:
        name = "configs" if "configs" in page.declared else "config"
        for profile in ("quick", "paper"):
            configs = page.parameters(profile).get(name, page.declared[name].default)
            valid = set(experiments.CONFIGS)
            assert set([configs] if name == "config" else configs) <= valid, (page.notebook, profile)

def test_figure_grids_in_the_code_configuration_keep_their_swept_parameter_and_variants():
    text = experiments.sweep_grid("synth-mq", 1, 1, 50, "dsp_k", [0, 5])
    code = experiments.sweep_grid("synth-mq", 1, 1, 50, "dsp_k", [0, 5], config="code")
    assert [s.params for s in text] == [{"dsp_k": 0}] * 3 + [{"dsp_k": 5}] * 3     # the text: nothing added
    assert [s.params["dsp_k"] for s in code] == [0] * 3 + [5] * 3
    assert all(s.stop_rule == "every_position" and s.params["credit_samples"] == 10_000 for s in code)
    gt = experiments.gt_grid("synth-mq", 1, 1, 50, config="code")
    assert [experiments.gt_variant(s) for s in gt] == ["DBGD", "DBGD-DSP", "DBGD-DSP-GT",
                                                          "MGD", "MGD-DSP", "MGD-DSP-GT"]
    assert [s.params.get("dsp_renormalize", False) for s in gt] == [False, True, True] * 2

def test_dsp_cells_within_one_paper_sd_counted_only_at_the_papers_horizon():
    paper = analysis.paper_frame("offline").query("dataset == 'mq2008' and click_model == 'perfect'")
    paper = paper.set_index("algorithm")
    ours = pd.DataFrame({"dataset": "mq2008", "click_model": "perfect", "algorithm": ["dbgd", "mgd", "nsgd"],
                         "mean": [paper.paper_mean["dbgd"] + 0.5 * paper.paper_sd["dbgd"],     # inside
                                  paper.paper_mean["mgd"] - 1.5 * paper.paper_sd["mgd"],       # outside
                                  paper.paper_mean["nsgd"] + 0.99 * paper.paper_sd["nsgd"]]})   # just inside
    table = analysis.with_paper(ours, "offline")
    np.testing.assert_allclose(table.z, [0.5, -1.5, 0.99])
    assert analysis.within_paper_sd(table) == (2, 3)
    assert analysis.within_paper_sd(analysis.with_paper(ours, "offline", comparable=False)) == (0, 0)
    synthetic = ours.assign(dataset="synth-mq")                                         # not a data set of the paper
    assert analysis.within_paper_sd(analysis.with_paper(synthetic, "offline")) == (0, 0)
    assert experiments.config_datasets("code", ["synth-mq", "mq2008"]) == ["mq2008"]
    assert experiments.config_datasets("code", ["synth-mq"]) == ["synth-mq"]
    assert experiments.config_datasets("text", ["synth-mq", "mq2008"]) == ["synth-mq", "mq2008"]


def _summary(dsp_gains, base: float = 0.6) -> pd.DataFrame:
    """MGD and MGD-DSP runs on one data set and user, one pair per seed, MGD-DSP ahead by ``dsp_gains``."""
    seeds = range(len(dsp_gains))
    return pd.DataFrame({"dataset": "mq2008", "click_model": "perfect", "fold": 1,
                         "seed": [*seeds, *seeds], "algorithm": ["mgd"] * len(seeds) + ["mgd_dsp"] * len(seeds),
                         "online": [base] * len(seeds) + [base + g for g in dsp_gains]})


def test_comparison_table_tests_x_dsp_against_x_on_five_or_more_pairs():
    gains = [0.03, 0.05, 0.04, 0.06, 0.02, 0.04]
    table = analysis.comparison_table(_summary(gains), "online").set_index("algorithm")
    assert table.loc["mgd", "mean"] == 0.6 and table.loc["mgd", "runs"] == 6
    assert abs(table.loc["mgd_dsp", "improvement_%"] - 100 * np.mean(gains) / 0.6) < 1e-9
    assert 0 < table.loc["mgd_dsp", "p_value"] < 0.05
    assert "p_value" not in table or np.isnan(table.loc["mgd", "p_value"])          # the base has no test
    four = analysis.comparison_table(_summary(gains[:4]), "online").set_index("algorithm")
    assert np.isnan(four.loc["mgd_dsp", "p_value"])                                   # below 5 pairs: no test
    shown = analysis.format_table(table.reset_index(), 2).set_index("algorithm")
    se = table.loc["mgd_dsp", "gain_se"]                                   # the gain to the precision of its s.e.
    assert shown.loc["mgd_dsp", "gain over the base %"] == \
        f"+{100 * np.mean(gains) / 0.6:.{analysis.decimals_for(se)}f}*"


def test_the_paper_layout_prints_our_mean_to_the_decimals_its_sd_supports():
    row = {"dataset": "mq2008", "click_model": "perfect", "algorithm": "mgd", "mean": 876.2871, "sd": 39.71}
    noisy = analysis.format_table(pd.DataFrame([row]), 2).iloc[0]
    assert (noisy["ours"], noisy["s.d."]) == ("876", "40")
    precise = analysis.format_table(pd.DataFrame([{**row, "mean": 0.712345, "sd": 0.00523}]), 2).iloc[0]
    assert (precise["ours"], precise["s.d."]) == ("0.7123", "0.0052")
    unknown = analysis.format_table(pd.DataFrame([{**row, "mean": 0.71, "sd": np.nan}]), 2).iloc[0]
    assert (unknown["ours"], unknown["s.d."]) == ("0.71", "")                  # never "nan"


def test_the_paper_layout_has_the_papers_sd_in_its_own_column_and_the_papers_order():
    """DSP Table 2 as the paper prints it (#47): ours, s.d., gain, paper, paper s.d. in separate columns, users
    perfect, navigational, informational and methods DBGD ... NSGD-DSP, not sorted alphabetically."""
    rows = [{"dataset": "mq2008", "click_model": user, "algorithm": algo, "mean": 800.0 + i, "sd": 38.4}
            for user in ("informational", "navigational", "perfect") for i, algo in enumerate(ALGORITHMS[::-1])]
    shown = analysis.format_table(analysis.with_paper(pd.DataFrame(rows), "online"), 1)
    assert list(shown.columns) == ["click_model", "algorithm", "ours", "s.d.", "gain over the base %", "paper",
                                   "paper s.d."]
    assert list(dict.fromkeys(shown["click_model"])) == ["perfect", "navigational", "informational"]
    assert shown["algorithm"].tolist()[:6] == ALGORITHMS
    first = shown.iloc[0]
    assert (first["ours"], first["s.d."], first["paper"], first["paper s.d."]) == ("805", "38", "847.1", "38.4")
    html = reader_table(shown).to_html()
    assert "847 ± 38" not in html and ">847.1<" in html and ">38.4<" in html


def test_the_claims_registry_reads_the_papers_gains_from_the_analysis():
    claim = next(c for c in claims.CLAIMS if c.id == "T2-mgd-dsp")
    paper = analysis.paper_frame("online").query("dataset == 'mq2008'").set_index(["click_model", "algorithm"])
    expected = round(100 * (paper.paper_mean[("perfect", "mgd_dsp")] / paper.paper_mean[("perfect", "mgd")] - 1), 2)
    assert claim.paper_number["mq2008/perfect"] == expected
    assert set(experiments.PROFILES) == {"tiny", "quick", "paper"}


def _ablation_runs(config_gains: dict, seeds: int = 5) -> pd.DataFrame:
    """MGD (0.5) and MGD-DSP (0.5 (1 + gain)) under one user, each configuration over ``seeds`` seeds; the gain
    wobbles by seed so that the paired test has a spread."""
    rows = []
    for config, gain in config_gains.items():
        for seed in range(seeds):
            wobble = 0.002 * (seed - (seeds - 1) / 2)
            rows += [{"config": config, "dataset": "mq2008", "click_model": "perfect", "fold": 1, "seed": seed,
                      "algorithm": "mgd", "online": 0.5},
                     {"config": config, "dataset": "mq2008", "click_model": "perfect", "fold": 1, "seed": seed,
                      "algorithm": "mgd_dsp", "online": 0.5 * (1 + gain) + wobble}]
    return pd.DataFrame(rows)


def test_the_ablation_gains_mark_a_paired_test_only_from_five_pairs():
    gains = analysis.ablation_gains(_ablation_runs({"text": 0.02, "code": 0.0}), "online").set_index("config")
    assert abs(gains.loc["text", "gain_%"] - 2.0) < 1e-9 and gains.loc["text", "pairs"] == 5
    # the wobble's standard error is 0.28 % of MGD's mean: two decimals, as its noise supports
    assert gains.loc["text", "se_%"] == pytest.approx(100 * np.std(0.002 * np.arange(-2, 3), ddof=1) / 5 ** 0.5 / 0.5)
    assert gains.loc["text", "cell"] == "+2.00%*" and gains.loc["code", "cell"] == "+0.00%"
    four = analysis.ablation_gains(_ablation_runs({"text": 0.02}, seeds=4), "online")
    assert np.isnan(four.loc[0, "p"]) and four.loc[0, "cell"] == "+2.00%"           # below 5 pairs: no mark
    one = analysis.ablation_gains(_ablation_runs({"text": 0.02}, seeds=1), "online")
    assert one.loc[0, "cell"] == "+2.0%"                                              # no spread: one decimal


def test_the_ablation_names_the_choices_whose_drop_halves_the_codes_gain():
    gains = analysis.ablation_gains(_ablation_runs({
        "text": 0.01, "code": 0.06, "text+learning_rate": 0.04, "text+decay": 0.005,
        "code-learning_rate": 0.02, "code-decay": 0.055}), "online")
    effects = analysis.ablation_effects(gains)
    assert sorted(effects["dropped"]) == ["decay", "learning_rate"] and effects["needed"] == ["learning_rate"]
    assert effects["top"] == "learning_rate"
    np.testing.assert_allclose(effects["change"][["learning_rate", "decay"]], [3.0, -0.5], atol=1e-9)
    np.testing.assert_allclose(effects["interaction"], (6.0 - 1.0) - 2.5, atol=1e-9)
    none = analysis.ablation_effects(gains[gains.config.isin(["text", "code"])])
    assert none["top"] is None and none["needed"] == [] and none["dropped"] == []
