"""``olr store migrate``: runs of earlier code carried over only where today's code recomputes them bit for bit."""

import numpy as np
import pytest

from olr_core.experiments import ResultStore
from olr_core.experiments import spec as spec_module
from olr_core.experiments.migrate import migrate_store, same_records
from olr_core.experiments.runner import data_fingerprint, execute, spec_key
from olr_core.experiments.spec import RunSpec


def _store_under_old_code(store, monkeypatch, specs, traces=None):
    """Store runs as an earlier version of the code would have (another code fingerprint)."""
    with monkeypatch.context() as patch:
        patch.setattr(spec_module, "code_fingerprint", lambda: "0ldc0de0ldc0")
        for i, spec in enumerate(specs):
            trace = execute(spec) if traces is None else traces[i]
            store.save(spec_key(spec), spec, trace, data_fingerprint(spec.dataset, spec.fold, None))
        return [spec_key(spec) for spec in specs]


def test_runs_recomputed_bit_for_bit_are_carried_over_under_todays_keys(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    specs = [RunSpec(name, rounds=60, seed=s) for name in ("dbgd", "pdgd") for s in range(3)]
    old_keys = _store_under_old_code(store, monkeypatch, specs)
    assert not any(store.has(spec_key(s)) for s in specs)             # today's code cannot find them
    result = migrate_store(store, report=lambda line: None)
    assert (result.carried, result.recomputed, result.left) == (6, 2, [])
    for spec, old in zip(specs, old_keys):
        assert same_records(store.load(spec_key(spec))[1], store.load(old)[1])
    again = migrate_store(store, report=lambda line: None)
    assert (again.carried, again.current, again.recomputed) == (0, 12, 0)    # today's 6 and their old files


def test_a_kind_whose_recomputation_differs_is_left_whole(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    specs = [RunSpec("dbgd", rounds=60, seed=s) for s in range(2)]
    wrong = [execute(RunSpec("dbgd", rounds=60, seed=7)), execute(specs[1])]   # seed 0 holds other numbers
    _store_under_old_code(store, monkeypatch, specs, wrong)
    result = migrate_store(store, report=lambda line: None)
    assert result.carried == 0 and len(result.left) == 1 and "seed 0 gives other numbers" in result.left[0]
    assert not any(store.has(spec_key(s)) for s in specs)


def test_the_sample_checks_more_than_the_first_seed(tmp_path, monkeypatch):
    store = ResultStore(tmp_path)
    specs = [RunSpec("dbgd", rounds=60, seed=s) for s in range(3)]
    wrong = [execute(specs[0]), execute(RunSpec("dbgd", rounds=60, seed=9)), execute(specs[2])]
    _store_under_old_code(store, monkeypatch, specs, wrong)
    assert migrate_store(store, sample=1, report=lambda line: None).carried == 3      # one look misses it
    store2 = ResultStore(tmp_path / "second")
    _store_under_old_code(store2, monkeypatch, specs, wrong)
    assert migrate_store(store2, sample=2, report=lambda line: None).carried == 0


def test_same_records_compares_every_array_bit_for_bit():
    a = execute(RunSpec("dbgd", rounds=40, seed=1))
    b = execute(RunSpec("dbgd", rounds=40, seed=1))
    assert same_records(a, b)
    b.online_ndcg = np.nextafter(b.online_ndcg, 2.0)
    assert not same_records(a, b)


def test_a_sample_below_one_is_refused(tmp_path):
    with pytest.raises(ValueError, match="--sample=0"):
        migrate_store(ResultStore(tmp_path), sample=0)


def test_the_command_says_what_it_carried(tmp_path, monkeypatch, capsys):
    from olr_core.cli import main

    store = ResultStore(tmp_path)
    _store_under_old_code(store, monkeypatch, [RunSpec("dbgd", rounds=60, seed=s) for s in range(2)])
    assert main(["store", "migrate", "--results", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "carried over: dbgd on synth-mq fold 1, navigational, 60 rounds, 2 run(s)" in out
    assert "2 run(s) carried over to today's code (1 recomputed to check), 0 already current" in out
