"""Tables for readers (olr_core.tables): no index column, names in words, blanks for missing values, no
negative zero, precision fitting the noise, wide tables transposed."""

import re

import numpy as np
import pandas as pd

from olr_core.tables import (
    column_label,
    fixed_text,
    mean_sd_table,
    mean_sd_text,
    noise_decimals,
    noise_digit_problems,
    readable_frame,
    reader_table,
    significant_text,
)


def test_column_names_read_as_words():
    assert column_label("paper_mean") == "paper mean"
    assert column_label("improvement_%") == "gain %" and column_label("click_model") == "user"
    assert column_label(("offline", "final_ndcg")) == "offline final ndcg"


def test_missing_values_are_blank_and_zero_has_no_sign():
    assert fixed_text(float("nan"), 2) == "" and significant_text(None) == ""
    assert fixed_text(-0.0004, 3) == "0.000" and fixed_text(-0.04, 1) == "0.0"
    assert fixed_text(-0.05, 2) == "-0.05"
    assert significant_text(-0.0) == "0"
    assert fixed_text(float("inf"), 2) == "infinite"          # in words: never "inf" (#47)


def test_significant_digits_and_thousands():
    assert significant_text(42164.341) == "42,164"
    assert significant_text(0.6651234) == "0.665"
    assert significant_text(161.1017370572207) == "161"
    assert significant_text(7) == "7" and significant_text(0.01) == "0.01" and significant_text(2.5e-7) == "2.5 × 10⁻⁷"
    assert significant_text(-0.0001) == "-0.0001" and significant_text(-1e-12, 3) == "-1 × 10⁻¹²"


def test_a_mean_is_printed_to_the_precision_of_its_sd():
    assert noise_decimals(39.7) == 0 and noise_decimals(0.0052) == 4 and noise_decimals(2.5) == 1
    assert noise_decimals(0.0) is None and noise_decimals(float("nan")) is None
    frame = pd.DataFrame({"mean": [876.3123, 0.66512345], "sd": [39.7, 0.0052]})
    text = readable_frame(frame, noise={"mean": "sd"})
    assert text["mean"].tolist() == ["876", "0.6651"]
    assert text["s.d."].tolist() == ["40", "0.0052"]
    given = readable_frame(frame[["mean"]], noise={"mean": [2.5, 0.05]})       # s.d.s not shown as a column
    assert given["mean"].tolist() == ["876.3", "0.665"]


def test_no_index_column_reaches_the_reader():
    counter = pd.DataFrame({"paper_mean": [1.0, np.nan]}, index=[0, 1])
    html = reader_table(counter).to_html()
    assert "row_heading" not in html and "NaN" not in html and "paper mean" in html
    twice = pd.concat([counter, counter])                  # index 0, 1, 0, 1: still a row counter
    assert readable_frame(twice).columns.tolist() == ["paper mean"]
    labelled = pd.DataFrame({"a": [1.0]}, index=pd.Index(["dbgd"], name="algorithm"))
    assert readable_frame(labelled).columns.tolist() == ["method", "a"]
    unnamed = pd.DataFrame({"a": [1.0]}, index=["dbgd"])
    assert readable_frame(unnamed, index_label="method").iloc[0].tolist() == ["DBGD", "1"]


def test_a_wide_table_with_few_rows_is_transposed():
    wide = pd.DataFrame([[f"m{i}" for i in range(1)] + list(range(12))],
                        columns=["method", *[f"metric_{i}" for i in range(12)]])
    html = reader_table(wide, max_columns=9).to_html()
    assert html.count("<tr>") == 13            # a header row and one row per metric
    assert "metric 11" in html


def test_a_transposed_table_heads_each_column_uniquely_even_when_the_first_label_repeats():
    # One dataset over two users with ten methods: the dataset alone would head two columns alike, which the
    # styler refuses (the neural Figure 4 table at test size).
    index = pd.MultiIndex.from_tuples([("MQ2008", "perfect"), ("MQ2008", "navigational")],
                                      names=["dataset", "click_model"])
    table = pd.DataFrame(np.arange(20.0).reshape(2, 10), index=index, columns=[f"m{i}" for i in range(10)])
    html = reader_table(table, max_columns=9).to_html()
    assert "MQ2008 · perfect" in html and "MQ2008 · navigational" in html
    twins = pd.DataFrame([["a", *range(10)], ["a", *range(10)]], columns=["method", *[f"x{i}" for i in range(10)]])
    assert "a (2)" in reader_table(twins, max_columns=9).to_html()


def test_hyper_parameters_read_as_words_not_a_dict():
    from olr_core.tables import params_text

    text = params_text({"pairrank_c": {"alpha": 0.01, "l2_weight": 10.0}, "pdgd": {}, "mgd": {"n_candidates": 49}})
    assert text == "PairRank_C: alpha 0.01, l2 weight 10; MGD: candidates 49"
    assert "{" not in text and params_text({}) == "the defaults"


def test_fixed_decimals_a_series_and_a_clear_error_for_anything_else():
    import pytest

    series = pd.Series([0.12345, -0.00001], index=pd.Index(["a", "b"], name="seed"), name="log-log slope")
    assert readable_frame(series, decimals=3).values.tolist() == [["a", "0.123"], ["b", "0.000"]]
    counts = pd.DataFrame({"seed": np.arange(3), "slope": [0.5, 0.25, np.nan]})
    assert readable_frame(counts, decimals=3).values.tolist() == [["0", "0.500"], ["1", "0.250"], ["2", ""]]
    with pytest.raises(TypeError, match="reader_table takes a pandas DataFrame or Series, not dict"):
        readable_frame({"a": 1})


def test_mean_and_sd_in_one_cell_to_the_sds_precision():
    from olr_core.tables import mean_sd_text

    assert mean_sd_text([876.31, 0.66512, 0.5, np.nan], [39.7, 0.0052, np.nan, 1.0]) == [
        "876 ± 40", "0.6651 ± 0.0052", "0.5", ""]


def test_a_table_names_methods_by_their_display_names():
    """One display-name map for tables too: algorithm ids in column headers and in a method column."""
    frame = pd.DataFrame({"algorithm": ["pairrank_c", "mgd_dsp(dsp_lambda=0.5)", "not-a-method"],
                          "topk_ranksvm": [0.5, 0.4, 0.3], "paper_mean": [1.0, 2.0, 3.0]})
    text = readable_frame(frame)
    assert list(text.columns) == ["method", "RTop-kF RankSVM", "paper mean"]
    assert list(text["method"]) == ["PairRank_C", "MGD-DSP (DSP λ 0.5)", "not-a-method"]


def test_cells_wrap_anywhere_but_a_verdict_keeps_its_words():
    """A long identifier may break anywhere (else the table grows past the page); a verdict keeps its words."""
    frame = pd.DataFrame({"claim": ["algorithms.DBGD.tdmgd.TD_MGD.multileave_with_probabilistic_credit"],
                          "with it": ["inconclusive"]})
    html = reader_table(frame).to_html()
    assert "overflow-wrap: anywhere" in html and html.count("overflow-wrap: normal;\n") >= 1
    assert "row0_col1 {" in html and "row0_col0 {" not in html


def test_a_seed_mean_never_prints_more_decimals_than_its_sd_supports():
    """Over many random (mean, s.d.) pairs: a mean printed beside its s.d. column (readable_frame's ``noise``) or in one
    "mean ± s.d." cell ends at the decimal of the s.d.'s second significant digit, never further."""
    rng = np.random.default_rng(7)
    sds = 10.0 ** rng.uniform(-5, 3, 400) * rng.choice([1, 0.996, 0.9996], 400)    # some that round up to 10^k
    means = rng.normal(0, 1, 400) * 10.0 ** rng.uniform(-1, 4, 400)
    text = readable_frame(pd.DataFrame({"mean": means, "sd": sds}), noise={"mean": "sd"})
    for mean, sd in zip(text["mean"], text["s.d."]):
        assert len(mean.partition(".")[2]) == len(sd.partition(".")[2]), (mean, sd)
        assert "." not in sd or len(sd.replace(",", "").replace(".", "").lstrip("0")) == 2, sd
    cells = mean_sd_text(means, sds)
    assert noise_digit_problems(cells) == []
    assert noise_decimals(0.0996) == 2 and noise_decimals(9.96) == 0 and noise_decimals(0.0994) == 3


def test_noise_digit_problems_names_a_cell_printed_beyond_its_noise():
    assert noise_digit_problems(["0.412 ± 0.013", "876 ± 40", "1,204 ± 397", "0.50", "text"]) == []
    assert noise_digit_problems(["0.4121 ± 0.013", "0.412 ± 0.0131", "0.41 ± 0.013"]) == [
        "0.4121 ± 0.013", "0.412 ± 0.0131", "0.41 ± 0.013"]


def test_a_table_of_group_statistics_reads_mean_plus_minus_sd():
    stats = pd.DataFrame({"dataset": ["a", "a", "b"], "algorithm": ["x", "y", "x"], "mean": [0.41234, 0.5, 876.31],
                          "std": [0.0131, np.nan, 39.7], "n": [5, 1, 5], "ci": [0.0163, np.nan, 49.3]})
    wide = mean_sd_table(stats, "dataset", "algorithm")
    assert wide.loc["a"].tolist() == ["0.412 ± 0.013", "0.5"] and wide.loc["b", "x"] == "876 ± 40"
    assert np.isnan(wide.loc["b", "y"])
    assert readable_frame(wide).iloc[1].tolist() == ["b", "876 ± 40", ""]
    ci = mean_sd_table(stats, ["dataset", "algorithm"], spread="ci")
    assert ci["mean ± 95 % interval"].tolist() == ["0.412 ± 0.016", "0.5", "876 ± 49"]


def test_several_values_of_runs_read_mean_plus_minus_sd_per_group():
    from olr_core.tables import mean_sd_columns

    runs = pd.DataFrame({"algorithm": ["x", "x", "x", "y", "y", "y"], "ndcg": [0.40, 0.42, 0.44, 0.5, 0.5, 0.5],
                         "cost": [1.0, 2.0, 3.0, 4.0, 6.0, 8.0]})
    table = mean_sd_columns(runs, "algorithm", ["ndcg", "cost"])
    assert table.loc["x"].tolist() == ["0.420 ± 0.020", "2.0 ± 1.0"]
    assert table.loc["y"].tolist() == ["0.5 ± 0", "6.0 ± 2.0"]   # runs that agree: s.d. 0, as the caption says
    assert noise_digit_problems(readable_frame(table).to_numpy().ravel()) == []


# One styled renderer for every result table (#47): padded cells, numbers right-aligned, names in words.

def test_every_rendered_table_has_the_books_class_and_padded_cells():
    html = reader_table(pd.DataFrame({"algorithm": ["mgd"], "mean": [0.5]})).to_html()
    assert 'class="olr-table"' in html
    assert html.count("padding: 0.3em 0.7em") >= 2                        # th and td, in the table's own styles


def test_number_columns_are_right_aligned_and_text_columns_are_not():
    frame = pd.DataFrame({"click_model": ["perfect", "navigational"], "ours": ["847 ± 38", "817 ± 46"],
                          "gain": ["+1.9*", "-0.2"], "runs": [15, 5], "cost": [float("inf"), 4.6],
                          "note": ["a", "b"]})
    text = readable_frame(frame)
    from olr_core.tables import number_columns
    assert [text.columns[i] for i in number_columns(text)] == ["ours", "gain", "runs", "cost"]
    html = reader_table(frame).to_html()
    right = set(re.findall(r"td\.col(\d) \{\n  text-align: right", html))
    assert right == {"1", "2", "3", "4"}                                 # the user and note columns stay left
    assert "infinite" in html and "inf<" not in html


def test_code_identifiers_in_cells_read_as_names_and_files_as_code():
    frame = pd.DataFrame({"parameter": ["learning_rate", "stop_rule"], "value": ["0.01", "every_position"],
                          "where": ["HCDM/algorithms/DBGD/pdbgd_dsp.py:37", "utils/clicks.py:38-42"]})
    text = readable_frame(frame)
    assert text["parameter"].tolist() == ["learning rate", "stop rule"] and text["value"][1] == "every position"
    html = reader_table(frame).to_html()
    assert "<code>HCDM/algorithms/DBGD/pdbgd_dsp.py:37</code>" in html and "`" not in html


def test_a_column_of_runs_that_agree_shows_its_zero_sd_as_its_caption_says():
    """klrank_regret was captioned "mean ± s.d." over cells that showed none (#47)."""
    from olr_core.tables import mean_sd_columns

    runs = pd.DataFrame({"T": [1, 1, 3, 3], "regret": [0.693, 0.693, 2.08, 2.08]})
    cells = mean_sd_columns(runs, "T", ["regret"])["regret"].tolist()
    assert cells == ["0.693 ± 0", "2.08 ± 0"] and noise_digit_problems(cells) == []


def test_a_number_stays_on_one_line_and_its_rank_and_its_header_may_wrap():
    """A table of many "mean ± s.d. (rank)" columns must fit the page (#47: klrank's Table 2 was 1,544 px wide): the
    number is kept whole, the rank after it and the column's header wrap."""
    frame = pd.DataFrame({"ranker": ["klrank_gper"], "relative click distance ours": ["20.1220 ± 0.0049 % (3)"],
                          "runs": [15]})
    html = reader_table(frame).to_html()
    assert '<span class="olr-number">20.1220 ± 0.0049 %</span> (3)<' in html
    assert '<span class="olr-number">15</span><' in html
    assert re.search(r"span\.olr-number \{\n  white-space: nowrap", html)
    assert "nowrap" not in "".join(re.findall(r"th\.col\d \{[^}]*\}", html))            # headers wrap
    assert "nowrap" not in "".join(re.findall(r"td\.col\d \{[^}]*\}", html))
