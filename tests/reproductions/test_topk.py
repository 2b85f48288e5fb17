"""The top-k chapter's package (olr_core.reproductions.topk): its analysis on small exact cases, its grids and its
claims' registry."""

import json

import numpy as np

from olr_core.reproductions.topk import analysis, claims, experiments


def test_the_running_average_is_the_cumulative_mean():
    np.testing.assert_allclose(analysis.running_average(np.array([1.0, 0.0, 0.5, 0.5])), [1.0, 0.5, 0.5, 0.5])


def test_theorem_5_2s_worlds_give_the_same_top1_feedback_and_different_best_rankings():
    table = analysis.impossibility_table()
    assert len(table) == 6
    np.testing.assert_allclose(table["P(feedback = 1), world A"], table["P(feedback = 1), world B"])
    best_a = table.loc[table["E[NDCG], world A"].idxmax(), "ranking"]
    best_b = table.loc[table["E[NDCG], world B"].idxmax(), "ranking"]
    assert best_a != best_b
    assert analysis.calibrated_regret_floor() > 0


def test_the_regret_is_read_at_geometric_horizons_up_to_the_last_round():
    horizons = experiments.checkpoints(10_000)
    assert horizons[0] == 10_000 // 64 and horizons[-1] == 10_000 and np.all(np.diff(horizons) > 0)
    assert experiments.checkpoints(200)[0] == 10                      # never below 10 rounds


def test_every_claim_experiment_is_one_the_profiles_size():
    judged = {c.experiment for c in claims.CLAIMS} - {"none"}
    assert judged <= set(experiments.PROFILES["quick"])
    grids = experiments.experiments("tiny", "code", ["synth-mslr"])
    assert {s.params.get("eta0") for s in grids["figure1"] if s.algorithm in experiments.TOPK} == {0.1}


def test_the_round_cost_claim_reads_the_controlled_benchmark_not_a_timing_taken_during_the_verdict(tmp_path,
                                                                                                   monkeypatch):
    from olr_core.experiments import ResultStore, run_frame, run_grid

    stored = tmp_path / "results.json"
    stored.write_text(json.dumps({analysis.ROUND_COST_SUITE: {"exponents": {"0": 1.05}}}))
    assert analysis.benchmarked_cost_exponent(0, stored) == 1.05
    assert np.isnan(analysis.benchmarked_cost_exponent(1, stored))               # a seed the benchmark did not run
    assert np.isnan(analysis.benchmarked_cost_exponent(0, tmp_path / "absent.json"))

    def no_timing(*_, **__):
        raise AssertionError("a timing taken while the verdict is computed")

    monkeypatch.setattr(analysis, "cost_exponent", no_timing)
    monkeypatch.setattr(analysis, "round_seconds", no_timing)
    monkeypatch.setattr(analysis.benchmarked_cost_exponent, "__defaults__", (stored,))
    specs = [s for s in experiments.experiments("tiny", "text", [])["regret"] if s.algorithm == "topk_squared"]
    store = ResultStore()
    run_grid(specs, store)
    frame = analysis.decorate("regret", specs, run_frame(specs, store), store=store)
    assert list(frame["cost_exponent"]) == [1.05]
