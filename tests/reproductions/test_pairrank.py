"""The PairRank chapter's package (olr_core.reproductions.pairrank): the ablation's analysis on run frames built by
hand, the code configuration's grids and the claims' derived columns."""

import numpy as np
import pandas as pd
import pytest

from olr_core.claims import MIN_PAIRS, mean_interval
from olr_core.reproductions.pairrank import analysis, claims, experiments

METRIC = "final_offline_ndcg10"
USERS = ("perfect", "navigational", "informational")
VARIANTS = experiments.ablation_variants({}, (0.1,))


def _runs(effects: dict, seeds: int = 5, users=USERS, noise: float = 0.01, seed: int = 0) -> pd.DataFrame:
    """Runs of PDGD under both stop rules and of every variant of ``effects`` ({(variant, dataset): mean difference
    to its own baseline}): each (data set, user, seed) has its own level, shared by the runs of that pair."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset in sorted({d for _, d in effects}):
        for user in users:
            for s in range(seeds):
                level = rng.uniform(0.3, 0.6)
                base = {"PDGD": level, "PDGD (every position)": level - 0.2}
                values = dict(base)
                for (variant, d), effect in effects.items():
                    if d == dataset:
                        values[variant] = base[VARIANTS[variant]["baseline"]] + effect + noise * rng.standard_normal()
                rows += [{"variant": v, "dataset": dataset, "fold": 1, "click_model": user, "seed": s, METRIC: x}
                         for v, x in values.items()]
    return pd.DataFrame(rows)


def _versus(diff, low, high, pairs=15):
    return analysis.VersusPDGD(diff, low, high, pairs)


UP, DOWN, OPEN = _versus(0.05, 0.02, 0.08), _versus(-0.05, -0.08, -0.02), _versus(0.01, -0.02, 0.04)


# -- the paired differences -----------------------------------------------------------------------

def test_versus_is_the_mean_paired_difference_with_the_claims_interval():
    runs = pd.DataFrame({"variant": ["PDGD"] * 6 + ["x"] * 6, "dataset": "d", "click_model": "perfect",
                         "seed": list(range(6)) * 2,
                         METRIC: [0.5, 0.4, 0.6, 0.5, 0.3, 0.7] + [0.52, 0.45, 0.61, 0.49, 0.36, 0.74]})
    d = np.array([0.02, 0.05, 0.01, -0.01, 0.06, 0.04])
    versus = analysis.versus_pdgd(runs.sample(frac=1, random_state=1), "x", "PDGD", METRIC)    # row order is irrelevant
    low, high = mean_interval(d)[1](0.05)
    assert versus.pairs == 6 and versus.diff == pytest.approx(d.mean())
    assert (versus.low, versus.high) == pytest.approx((float(low), float(high)))
    assert versus.sign == (1 if low > 0 else 0)


def test_pairs_are_matched_by_user_and_seed_and_unmatched_runs_are_left_out():
    runs = _runs({("PairRank_C (paper)", "d"): 0.03}, seeds=3, noise=0.0)
    runs = runs[~((runs.variant == "PDGD") & (runs.seed == 2))]                  # three runs without a partner
    versus = analysis.versus_pdgd(runs, "PairRank_C (paper)", "PDGD", METRIC)
    assert versus.pairs == 6 and versus.diff == pytest.approx(0.03)


def test_each_variant_is_compared_with_pdgd_under_its_own_stop_rule():
    runs = _runs({("stop at every position", "d"): 0.04, ("PairRank_C (paper)", "d"): 0.04})
    table = analysis.ablation_versus(runs, VARIANTS, METRIC).set_index("variant")
    assert table.loc["stop at every position", "diff"] == pytest.approx(0.04, abs=0.01)   # not 0.04 - 0.2
    assert table.loc["PairRank_C (paper)", "diff"] == pytest.approx(0.04, abs=0.01)
    assert "PDGD" not in table.index and "PDGD (every position)" not in table.index


def test_a_decision_needs_an_interval_excluding_zero_and_five_pairs():
    assert _versus(0.05, 0.02, 0.08, pairs=MIN_PAIRS).sign == 1
    assert _versus(0.05, 0.02, 0.08, pairs=MIN_PAIRS - 1).sign == 0       # the pages never decide from fewer
    assert _versus(-0.05, -0.08, -0.02).sign == -1
    assert _versus(0.05, -0.01, 0.11).sign == 0 and _versus(-0.05, -0.11, 0.01).sign == 0


@pytest.mark.parametrize("seeds, decided", [(1, False), (2, True)])     # 3 pairs: never decided; 6: decided
def test_the_same_clear_gain_is_decided_only_from_five_pairs(seeds, decided):
    runs = _runs({("PairRank_C (paper)", "d"): 0.1}, seeds=seeds, noise=0.001)
    table = analysis.ablation_versus(runs, VARIANTS, METRIC)
    assert table["sign"].tolist() == [int(decided)]
    assert table["vs PDGD"].iloc[0].endswith("*") == decided


def test_the_table_prints_a_difference_to_the_decimals_its_interval_supports():
    # a quarter of the interval's width (about one s.e.) to two significant digits sets the decimals
    assert _versus(0.01234, 0.00234, 0.02234).cell() == "+0.0123*"           # s.e. 0.0050: four decimals
    assert _versus(0.01234, 0.0121, 0.0126).cell() == "+0.01234*"            # s.e. 0.00012: five
    assert _versus(0.1, -0.3, 0.5).cell() == "+0.10"                          # s.e. 0.20: two, undecided
    assert _versus(0.01234, -np.inf, np.inf).cell() == "+0.012"              # no finite interval: three


def test_two_runs_of_one_variant_under_the_same_keys_are_refused():
    runs = _runs({("PairRank_C (paper)", "d"): 0.0}, seeds=2)
    with pytest.raises(ValueError, match="share dataset=d"):
        analysis.versus_pdgd(pd.concat([runs, runs.iloc[[0]]]), "PairRank_C (paper)", "PDGD", METRIC)


def test_no_pair_gives_none():
    runs = _runs({("PairRank_C (paper)", "d"): 0.0})
    assert analysis.versus_pdgd(runs, "shuffled pairs", "PDGD", METRIC) is None
    assert analysis.on_dataset(runs, VARIANTS, METRIC, None) is None


# -- the reading: one branch each ------------------------------------------------------------------

def test_reading_data_decides_where_linear_wins_and_nonlinear_loses():
    text = analysis.ablation_reading({analysis.PAPER_VARIANT: OPEN}, linear=UP, nonlinear=DOWN)
    assert text.startswith("PairRank_C beats PDGD where relevance is linear") and "loses where it is not" in text
    assert "+0.050, 95 % interval +0.020 to +0.080, 15 pairs" in text and "-0.050" in text


def test_reading_the_papers_variant_already_beats():
    text = analysis.ablation_reading({analysis.PAPER_VARIANT: UP, "shuffled pairs": UP}, linear=UP, nonlinear=OPEN)
    assert text.startswith("PairRank_C as the paper describes it already beats PDGD") and "+0.020 to +0.080" in text


def test_reading_a_code_choice_decided_ahead_is_named_and_the_undecided_larger_mean_is_not():
    big_but_open = _versus(0.2, -0.1, 0.5)
    overall = {analysis.PAPER_VARIANT: OPEN, "shuffled pairs": UP, "refine (transitive closure)": big_but_open,
               "all code choices": _versus(0.03, 0.01, 0.05)}
    text = analysis.ablation_reading(overall, linear=OPEN, nonlinear=OPEN)
    assert "is not decided against PDGD at these runs" in text
    assert "the code's choice 'shuffled pairs' makes it beat PDGD" in text and "refine" not in text
    assert "loses to PDGD" in analysis.ablation_reading({**overall, analysis.PAPER_VARIANT: DOWN})


def test_reading_linear_wins_while_nonlinear_is_undecided():
    text = analysis.ablation_reading({analysis.PAPER_VARIANT: OPEN, "shuffled pairs": OPEN}, linear=UP, nonlinear=OPEN)
    assert text.startswith("PairRank_C beats PDGD where relevance is linear")
    assert "is not decided against PDGD at these runs where it is not" in text and "loses" not in text


def test_reading_the_paper_loses_and_nothing_is_decided_ahead():
    text = analysis.ablation_reading({analysis.PAPER_VARIANT: DOWN, "shuffled pairs": OPEN}, linear=OPEN,
                                     nonlinear=DOWN)
    assert text.startswith("PairRank_C as the paper describes it loses to PDGD (-0.050")
    assert "no variant tried here is decided ahead of PDGD" in text


def test_reading_nothing_decided_says_so_instead_of_a_winner():
    few = _versus(0.2, 0.1, 0.3, pairs=MIN_PAIRS - 1)      # a clear mean from too few pairs decides nothing
    text = analysis.ablation_reading({analysis.PAPER_VARIANT: few, "shuffled pairs": few}, linear=few, nonlinear=few)
    assert text.startswith("Whether PairRank_C as the paper describes it beats or loses to PDGD is not decided")
    assert "already beats" not in text and "makes it beat" not in text


def test_reading_without_the_papers_variant():
    assert "no run paired with PDGD" in analysis.ablation_reading({})


@pytest.mark.parametrize("seeds, start", [(5, "PairRank_C beats PDGD where relevance is linear"),
                                          (1, "Whether PairRank_C as the paper describes it")])
def test_reading_from_runs_follows_the_run_count(seeds, start):
    runs = _runs({(analysis.PAPER_VARIANT, "synth-mq"): -0.05, (analysis.PAPER_VARIANT, "synth-mq-linear"): 0.05},
                 seeds=seeds, noise=0.005)
    text = analysis.ablation_reading(analysis.ablation_overall(runs, VARIANTS, METRIC),
                               analysis.on_dataset(runs, VARIANTS, METRIC, "synth-mq-linear"),
                               analysis.on_dataset(runs, VARIANTS, METRIC, "synth-mq"))
    assert text.startswith(start)


def test_pairrank_code_configuration_changes_pairrank_pdgd_and_the_users_only():
    from olr_core.reproductions.sources import plain

    text = experiments.experiments("tiny", "text", ["synth-mslr", "mq2008"])["main"]
    code = experiments.experiments("tiny", "code", ["synth-mslr", "mq2008"])["main"]
    assert {s.dataset for s in code} == {"mq2008"}              # the real data set only
    same = [s for s in text if s.dataset == "mq2008"]
    assert [(s.algorithm, s.click_model, s.seed) for s in same] == [(s.algorithm, s.click_model, s.seed) for s in code]
    for before, after in zip(same, code):
        assert after.stop_rule == "every_position"
        if after.algorithm in experiments.CODE_PARAMS:          # PairRank_C, PairRank_R and PDGD
            assert after.params == {**before.params, **plain(experiments.CODE_PARAMS[after.algorithm])}
        else:
            assert after.params == before.params
    assert {c.id for c in claims.CLAIMS if "code" in c.configs} == {
        "F3-best-offline", "F3-c-over-r", "F3-perfect-converges", "F4-best-online", "F4-c-over-r", "F5-closest"}
    assert experiments.experiments("tiny", "code", ["synth-mslr"])["main"][0].dataset == "synth-mslr"

def test_pairrank_convergence_pairs_its_perfect_user_runs_with_offline_ranknet():
    for config in ("text", "code"):
        grids = experiments.experiments("tiny", config, ["synth-mslr", "mq2008"])
        runs = grids["convergence"]
        online = [s for s in runs if s.algorithm == "pairrank_c"]
        assert online and all(s in grids["main"] for s in online)     # the main grid's runs, computed once
        assert {s.click_model for s in runs} == {"perfect"}
        keys = {(s.dataset, s.fold, s.seed) for s in online}
        assert keys == {(s.dataset, s.fold, s.seed) for s in runs if s.algorithm == "offline_ranknet"}

def test_block_excess_is_the_deepest_block_minus_the_mean_above_it():
    frame = pd.DataFrame({**{f"mean:block_size_at_{r}": [2.0, 1.0, np.nan] for r in range(1, 10)},
                          "mean:block_size_at_10": [5.0, 1.0, np.nan]})
    excess = analysis.block_excess(frame)
    assert excess[0] == 3.0 and excess[1] == 0.0 and np.isnan(excess[2])    # the last: a run without blocks
    assert analysis.block_excess(frame.drop(columns="mean:block_size_at_10")).isna().all()


# -- "comes closest": only where the intervals separate the leader ---------------------------------

def test_closest_is_named_only_when_its_interval_lies_above_every_other():
    below = _versus(-0.01, -0.03, 0.015)
    text = analysis.closest_to_beating({analysis.PAPER_VARIANT: DOWN, "shuffled pairs": UP,
                                        "refine (transitive closure)": below})
    assert text.startswith("the variant that comes closest to beating it is 'shuffled pairs' (+0.050, 95 % interval")
    overlapping = {analysis.PAPER_VARIANT: DOWN, "shuffled pairs": UP,
                   "refine (transitive closure)": _versus(0.04, 0.0, 0.08)}
    text = analysis.closest_to_beating(overlapping)
    assert "comes closest" not in text and text.startswith("no variant can be called closest")
    assert "'shuffled pairs' has the largest mean" in text and "'refine (transitive closure)' (+0.040)" in text
    assert "PairRank_C (paper)" not in text           # its interval lies below the leader's: separated


def test_closest_from_too_few_pairs_or_no_runs_is_not_named():
    few = _versus(0.2, 0.1, 0.3, pairs=MIN_PAIRS - 1)
    assert "comes closest" not in analysis.closest_to_beating({"shuffled pairs": few, analysis.PAPER_VARIANT: DOWN})
    assert "comes closest" not in analysis.closest_to_beating({"shuffled pairs": UP, analysis.PAPER_VARIANT: few})
    assert analysis.closest_to_beating({}) == "no variant has a run paired with PDGD in this build"


@pytest.mark.parametrize("seeds, named", [(8, True), (1, False)])
def test_closest_from_runs_follows_the_run_count(seeds, named):
    runs = _runs({(analysis.PAPER_VARIANT, "synth-mq"): -0.05, ("shuffled pairs", "synth-mq"): 0.03}, seeds=seeds,
                 noise=0.01)
    text = analysis.closest_to_beating(analysis.ablation_overall(runs, VARIANTS, METRIC))
    assert ("comes closest to beating it is 'shuffled pairs'" in text) is named
