import dataclasses


def test_evaluating_once_at_the_end_changes_no_final_number():
    """The sweep grids evaluate only after the last round; the learning and the final offline NDCG are
    those of a run evaluated every 10 rounds (evaluation has its own random stream)."""
    from olr_core.experiments import execute
    from olr_core.reproductions import dsp

    once = dsp.experiments.sweep_grid("synth-mq", 1, 1, 300, "dsp_k", [2])[0]
    assert once.eval_every == 300
    often = dataclasses.replace(once, eval_every=10)
    a, b = execute(once).summary(), execute(often).summary()
    for key in ("final_offline_ndcg10", "discounted_online_ndcg10", "cumulative_misordered_pairs"):
        assert a[key] == b[key], key
