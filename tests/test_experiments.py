import numpy as np
import pytest

from olr_core.experiments import (
    ResultStore,
    RunSpec,
    curve_frame,
    execute,
    expand_grid,
    mean_ci,
    run_grid,
    runner,
    spec_key,
    summary_frame,
)

GRID = {"algorithms": ["random", {"name": "offline_ranknet", "params": {"l2": 0.01}}],
        "click_models": ["perfect", "navigational"], "seeds": 2, "rounds": 60, "eval_every": 20}


def _arrays(store, keys):
    return [store.load(k)[1].arrays() for k in keys]


def test_grid_expansion_and_validation():
    specs = expand_grid(GRID)
    assert len(specs) == 2 * 2 * 2
    assert specs[-1].params == {"l2": 0.01} and specs[-1].label() == "offline_ranknet(l2=0.01)"
    with pytest.raises(ValueError, match=r"unknown grid key\(s\) seed"):
        expand_grid({**GRID, "seed": 3})
    with pytest.raises(KeyError, match="unknown algorithm"):
        expand_grid({**GRID, "algorithms": ["dbgd_x"]})
    with pytest.raises(ValueError, match="option rounds=-5 is invalid"):
        RunSpec("random", rounds=-5)


def test_key_depends_on_every_parameter():
    base = RunSpec("random")
    assert base.key() == RunSpec("random").key()
    for other in (RunSpec("random", seed=1), RunSpec("random", rounds=10), RunSpec("oracle"),
                  RunSpec("random", stop_rule="every_position"), RunSpec("random", click_model="perfect")):
        assert other.key() != base.key()
    assert base.key("data-a") != base.key("data-b")


def test_a_parameter_spelled_at_its_default_names_the_same_run_and_is_computed_once(tmp_path):
    """Figure 3's lambda = 1 and Figure 4's k = 3 and r = 10 are all MGD-DSP with its defaults."""
    spellings = [{"dsp_lambda": 1.0}, {"dsp_k": 3}, {"dsp_r": 10}, {}]
    specs = [RunSpec("mgd_dsp", rounds=40, eval_every=40, params=p) for p in spellings]
    assert len({s.key() for s in specs}) == 1
    assert specs[1].params == {"dsp_k": 3}                 # the spec (and its tables' columns) keep the spelling
    for other in ({"dsp_k": 4}, {"dsp_lambda": 0.5}, {"dsp_oracle": True}):
        assert RunSpec("mgd_dsp", rounds=40, eval_every=40, params=other).key() != specs[0].key()
    assert RunSpec("dbgd", params={"dsp": False}).key() == RunSpec("dbgd").key()
    assert RunSpec("mgd_dsp", params={"dsp": True}).key() == RunSpec("mgd_dsp").key()   # the alias's own default
    store = ResultStore(tmp_path)
    keys = run_grid(specs, store)
    assert len(store.keys()) == 1 and set(keys) == set(store.keys())


def test_store_round_trip(tmp_path):
    spec = RunSpec("random", rounds=30)
    trace = execute(spec)
    store = ResultStore(tmp_path)
    key = spec.key("fp")
    with pytest.raises(ValueError, match="refusing to store"):     # a key that is not the spec's
        store.save("abc123", spec, trace, "fp")
    store.save(key, spec, trace, "fp")
    meta, back = store.load(key)
    assert meta["spec"]["algorithm"] == "random"
    for name, arr in trace.arrays().items():
        np.testing.assert_array_equal(back.arrays()[name], arr)


def test_rerunning_a_finished_grid_costs_nothing(tmp_path, monkeypatch):
    specs = expand_grid(GRID)
    store = ResultStore(tmp_path)
    run_grid(specs, store)
    monkeypatch.setattr(runner, "execute", lambda *a, **k: pytest.fail("re-executed a stored run"))
    run_grid(specs, store)


def test_resumed_grid_equals_an_uninterrupted_one(tmp_path):
    specs = expand_grid(GRID)
    interrupted = ResultStore(tmp_path / "a")
    run_grid(specs[:3], interrupted)                 # "killed" after three runs
    keys = run_grid(specs, interrupted)              # restarted
    whole = ResultStore(tmp_path / "b")
    assert run_grid(specs, whole) == keys
    for a, b in zip(_arrays(interrupted, keys), _arrays(whole, keys)):
        for name in a:
            np.testing.assert_array_equal(a[name], b[name])


def test_parallel_runs_equal_serial_runs(tmp_path):
    specs = expand_grid(GRID)
    serial, parallel = ResultStore(tmp_path / "s"), ResultStore(tmp_path / "p")
    keys = run_grid(specs, serial)
    run_grid(specs, parallel, jobs=2)
    for a, b in zip(_arrays(serial, keys), _arrays(parallel, keys)):
        np.testing.assert_array_equal(a["online_ndcg"], b["online_ndcg"])
        np.testing.assert_array_equal(a["offline_ndcg"], b["offline_ndcg"])


@pytest.mark.slow
def test_dask_local_cluster_equals_serial(tmp_path):
    pytest.importorskip("dask.distributed")
    specs = expand_grid({**GRID, "click_models": "perfect", "seeds": 1})
    serial, dask = ResultStore(tmp_path / "s"), ResultStore(tmp_path / "d")
    keys = run_grid(specs, serial)
    run_grid(specs, dask, dask="local")
    for a, b in zip(_arrays(serial, keys), _arrays(dask, keys)):
        np.testing.assert_array_equal(a["online_ndcg"], b["online_ndcg"])


def test_tidy_tables_and_confidence_intervals(tmp_path):
    specs = expand_grid(GRID)
    store = ResultStore(tmp_path)
    run_grid(specs, store)
    summary = summary_frame(specs, store)
    assert len(summary) == len(specs)
    stats = mean_ci(summary, ["label", "click_model"], "final_offline_ndcg10")
    row = stats.iloc[0]
    values = summary[(summary.label == row.label) & (summary.click_model == row.click_model)].final_offline_ndcg10
    assert row["mean"] == pytest.approx(values.mean())
    # two seeds: t(0.975, 1) = 12.706
    assert row["ci"] == pytest.approx(12.706 * values.std() / np.sqrt(2), rel=1e-3)
    curves = curve_frame(specs, store, metric="offline_ndcg")
    assert set(curves["round"]) == {0, 20, 40, 60}
    with pytest.raises(KeyError, match="unknown metric"):
        curve_frame(specs, store, metric="stat:nothing")


def test_spec_key_includes_the_data_fingerprint():
    from olr_core.data import load_fold

    spec = RunSpec("random", dataset="synth-mq", fold=2)
    assert spec_key(spec) == spec.key(load_fold("synth-mq", 2).fingerprint())
    assert spec_key(spec) != spec.key()
