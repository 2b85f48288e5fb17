"""The neural chapter's package (olr_core.reproductions.neural): its analysis on frames built by hand, its claims'
registry and its experiments."""

import numpy as np
import pandas as pd

from olr_core.claims import judge
from olr_core.reproductions.neural import analysis, claims, experiments


def test_the_lda_claim_fails_on_another_linear_world_and_holds_on_a_network():
    """F3's excess is replicated over bootstrap resamples of the queries (one per run), against a linear world with
    the data's grades: a second linear world (another generator seed, the same grades) does not pass it, a world
    whose relevance is a ReLU network does; the control matches the grades of the data."""
    from olr_core.data.registry import load_fold
    from olr_core.data.synthetic import synthetic_fold

    claim = next(c for c in claims.CLAIMS if c.id == "F3-not-linear")
    control = load_fold(analysis.linear_control("synth-mq-linear")).train
    assert analysis.linear_control("synth-mq-net") == "synth-mq-5g-linear"
    worlds = {"another linear": (synthetic_fold("synth-mq-linear", 1, seed=7).train, control,
                                 {"inconclusive", "not reproduced"}),
              "network": (load_fold("synth-mq-net").train, load_fold("synth-mq-5g-linear").train, {"reproduced"})}
    for name, (data, linear, verdicts) in worlds.items():
        excess = [analysis.overlap_of(data, s) - analysis.overlap_of(linear, s) for s in range(5)]
        assert np.ptp(excess) > 0                                      # replicated: it varies from run to run
        frame = pd.DataFrame({"dataset": name, "fold": 1, "seed": range(5), "algorithm": "olranknet",
                              "click_model": "perfect", "lda_overlap_excess": excess})
        assert judge(claim, frame, "text")["verdict"] in verdicts, (name, excess)


def _ablation_runs(gaps, reference: float = 0.5) -> pd.DataFrame:
    """Final offline NDCG@10 of the reference and of one variant, one run each per seed, the variant ahead by
    ``gaps``."""
    seeds = range(len(gaps))
    return pd.DataFrame({"seed": [*seeds, *seeds], "variant": ["replay"] * len(gaps) + ["refit"] * len(gaps),
                         "final_offline_ndcg10": [reference] * len(gaps) + [reference + g for g in gaps]})


def test_the_ablation_reading_follows_the_paired_interval_over_five_or_more_seeds():
    from scipy import stats

    gaps = [0.02, 0.03, 0.025, 0.035, 0.03, 0.028]
    comparison, text = analysis.paired_reading(_ablation_runs(gaps), "refit", "replay")
    half = stats.t.ppf(0.975, 5) * np.std(gaps, ddof=1) / np.sqrt(6)
    assert comparison == "better than"
    assert text == (f"95 % interval of the paired difference [{np.mean(gaps) - half:+.3f}, "
                    f"{np.mean(gaps) + half:+.3f}] over 6 seeds")
    assert analysis.paired_reading(_ablation_runs([-g for g in gaps]), "refit", "replay")[0] == "worse than"
    mixed = [0.02, -0.03, 0.01, -0.02, 0.015]
    assert analysis.paired_reading(_ablation_runs(mixed), "refit", "replay")[0] == "not distinguishable from"


def test_the_ablation_reading_pairs_by_seed_and_needs_two_seeds():
    runs = _ablation_runs([0.02, 0.03, 0.025, 0.035, 0.03])
    unpaired = runs[~((runs.variant == "refit") & (runs.seed >= 1))]           # the variant ran one seed only
    assert analysis.paired_reading(unpaired, "refit", "replay") == ("not comparable at one seed with",
                                                                     "one seed: no interval")
    assert analysis.paired_reading(runs, "refit", "missing")[0] == "not comparable at one seed with"


def test_loglog_slope_recovers_a_power_law_over_the_second_half():
    t = np.arange(1, 2001)
    assert abs(analysis.loglog_slope(t, t ** 0.5) - 0.5) < 1e-9
    assert abs(analysis.loglog_slope(t, 3.0 * t) - 1.0) < 1e-9


def test_the_claims_judge_the_profiles_experiments_with_the_tuned_parameters():
    grids = experiments.experiments("tiny", "text", [])
    tiny = experiments.PROFILES["tiny"]
    assert set(grids) == {"main", "theory"} >= {c.experiment for c in claims.CLAIMS} - {"none"}
    assert {s.seed for s in grids["theory"]} == set(range(tiny["theory"]["seeds"]))
    assert {s.rounds for s in grids["main"]} == {tiny["main"]["rounds"]}
    assert {s.algorithm for s in grids["main"]} == set(experiments.ALGORITHMS)
