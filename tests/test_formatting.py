"""One formatter behind every generated number and name (#47): each rule here failed on the book's output
before (the old output is quoted in each test's docstring or comment)."""

import math

import pytest

from olr_core.claims import Claim, Unstated, sensitivity
from olr_core.formatting import (
    count_text,
    decimals_for,
    estimate_text,
    mean_sd_text,
    number_text,
    range_text,
    significant,
    threshold_text,
)
from olr_core.names import column_name, display_name, in_words, name_of


def test_an_estimate_and_its_interval_are_rounded_to_two_digits_of_the_intervals_width():
    """Old: "+0.00632 [-0.0647, +0.023]" and "+0.000232 [-0.0363, +0.02]"."""
    assert estimate_text(0.00632, -0.0647, 0.023) == "+0.006 [-0.065, +0.023]"
    assert estimate_text(0.000232, -0.0363, 0.02) == "0.000 [-0.036, +0.020]"
    assert estimate_text(847.3, 790.0, 905.0) == "+847 [+790, +905]"
    assert decimals_for(0.0877) == 3 and decimals_for(115.0) == 0 and decimals_for(0.0996) == 2


def test_an_open_or_missing_interval_is_said_in_words_never_inf_or_n_a():
    """Old: "+0.0955 [n/a, n/a]", "[-inf, +inf]", "at most n/a"."""
    assert estimate_text(0.0955, None, None) == "+0.096 (interval not estimable)"
    assert estimate_text(-0.0189, -math.inf, 0.02) == "-0.019, at most +0.020"
    assert estimate_text(0.3, 0.05, math.inf) == "+0.30, at least +0.05"
    assert estimate_text(0.5, 0.5, 0.5) == "+0.5 (exact)"
    for text in (estimate_text(1.0, -math.inf, math.inf), number_text(math.nan), number_text(math.inf),
                 number_text(None), estimate_text(None, None, None)):
        assert not any(word in text for word in ("inf ", "n/a", "nan", "NaN", "None")) and text != "inf", text


def test_a_difference_below_float_noise_is_zero():
    """Old: a regret table's gap column "-5.32e-13"."""
    assert number_text(-5.32e-13, scale=400.0) == "0"
    assert number_text(-5.32e-13) == "-5.32 × 10⁻¹³"                 # without a scale: a number, never e-notation
    assert number_text(0.004, scale=400.0) == "0.004"


def test_a_value_beside_its_sd_is_printed_to_the_sds_second_digit():
    """Old: "2 ± 0.1" (the paper's mean beside its s.d. in a within-s.d. record)."""
    assert mean_sd_text(2.0, 0.1) == "2.00 ± 0.10" and mean_sd_text(876.31, 39.7) == "876 ± 40"
    assert number_text(0.66512, 0.0052) == "0.6651" and number_text(876.31, 39.7) == "876"


def test_a_threshold_is_never_printed_as_zero():
    """Old: the thresholds table's "1e-12 reproduced | 0: not reproduced" (half of 1e-12 rounded to 10 decimals)."""
    claim = Claim("p", "R", "Remark", "c", "e", "m", "flat", {"parameter": "param:x", "tolerance": 1e-12}, "",
                  unstated={"tolerance": Unstated("largest gap that counts as equal")})
    rows = sensitivity(claim, None, "text", {})
    assert rows[0]["half"]["value"] == 5e-13 and rows[0]["base"] == 0.0
    assert threshold_text(rows[0]["half"]["value"]) == "5 × 10⁻¹³" and threshold_text(0.766667) == "0.767"


def test_counts_read_as_words_not_run_s():
    """Old: "1 seed(s) per fold" and "5 runs per cell" beside cells of 15 and 135 runs."""
    assert count_text(1, "seed") == "1 seed" and count_text(10_000, "round") == "10,000 rounds"
    assert range_text([15, 135, 15], "run") == "15 to 135 runs" and range_text([5, 5], "run") == "5 runs"


def test_significant_digits_without_padding_or_negative_zero():
    assert significant(42164.341) == "42,164" and significant(0.6651234) == "0.665" and significant(-0.0) == "0"
    assert significant(-0.00001, 2) == "-1 × 10⁻⁵" and significant(0.01) == "0.01"


@pytest.mark.parametrize("identifier, name", [
    ("klrank_gper", "NoRegret KLRank"), ("discounted_online_ndcg10", "online NDCG@10 (discounted sum)"),
    ("param:dsp_lambda", "DSP λ"), ("late:block_size_at_1", "block size at rank 1 (late rounds)"),
    ("final:cosine_to_reference", "cosine to the reference (at the end)"), ("neg_kl_cost", "negated K-L cost"),
    ("epsilon_greedy", "ε-greedy RankNet"), ("mq2008", "MQ2008"), ("trust_bias", "trust bias"),
    ("some_new_metric", "some new metric"),
])
def test_every_identifier_has_a_readers_name(identifier, name):
    """Old: `final:cosine_to_reference`, `epsilon_greedy`, `late:block_size_at_1` in reader-facing text."""
    assert name_of(identifier) == name


def test_generated_text_names_things_in_words_and_keeps_code_as_code():
    """Old: "highest klrank_gper of 8 ... in kl_cost", "(olr_core.rankers.dueling)", "mgd_dsp(dsp_lambda=0.5)"."""
    text = in_words("lead of klrank_gper in kl_cost on mq2008/perfect (olr_core.rankers.dueling); see "
                    "`olr claims klrank` and pdbgd_dsp.py:37; mgd_dsp(dsp_lambda=0.5); random and perfect stay")
    assert text == ("lead of NoRegret KLRank in K-L cost on MQ2008/perfect (`olr_core.rankers.dueling`); see "
                    "`olr claims klrank` and `pdbgd_dsp.py:37`; MGD-DSP (DSP λ 0.5); random and perfect stay")
    assert "`" not in in_words("see `olr claims klrank`", markup=False)
    assert in_words("mean ± s.d. over runs, e.g. here") == "mean ± s.d. over runs, e.g. here"      # no code spans
    assert column_name("click_model") == "user" and display_name("pairrank_c") == "PairRank_C"


def test_a_hyphenated_word_of_identifiers_reads_part_by_part():
    """Old: "closes 21% of the random-listnet_full gap" (a ledger's text, shown as the ledger holds it)."""
    assert in_words("the random-listnet_full gap, synth-mq, T2-gper-lowest-kl, in -rel_click_distance") == \
        "the random-ListNet (full feedback) gap, synth-mq, T2-gper-lowest-kl, in -relative position of the chosen item"


def test_a_large_number_is_shown_to_its_significant_digits_not_in_e_notation():
    """Old: "bound / trivial bound = 7.1e+09", "only after 4.3e+06 rounds"."""
    assert significant(7.1e9, 2) == "7,100,000,000" and significant(4319341.2, 2) == "4,300,000"
    assert significant(2.5e17, 2) == "2.5 × 10¹⁷" and significant(42164.341) == "42,164"
