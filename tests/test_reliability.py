"""Bad input, corrupt files and busy machines: each case gives a one-line error naming the
option or file (or is repaired and reported), never a traceback and never a stored wrong result."""

import gzip
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olr_core.cli import main
from olr_core.data import DataFormatError, load_fold, read_letor, write_letor
from olr_core.data.ranking_data import Fold, RankingData
from olr_core.data.registry import DataWarning, _cached_fold
from olr_core.experiments import ResultStore, RunSpec, expand_grid, run_grid, summary_frame
from olr_core.experiments.spec import load_and_expand
from olr_core.experiments.store import CorruptResultError
from olr_core.loop import NonFiniteModelError, run_online
from olr_core.params import ParameterError
from olr_core.rankers import ALGORITHMS, algorithm_parameters, declared_parameters, make_ranker
from olr_core.users import make_user

from .conftest import tiny_data


def one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("olr: error: ") and err.count("\n") == 1, err
    return err


# -- parameters -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_parameter_is_declared_and_its_default_is_valid(name):
    declared = declared_parameters(name)
    defaults = algorithm_parameters(name)
    assert set(declared) == set(defaults), f"{name}: undeclared {set(defaults) - set(declared)}"
    for key, value in defaults.items():
        declared[key].check(key, value, name)


@pytest.mark.parametrize("algorithm, option, value", [
    ("pdgd", "learning_rate", float("nan")), ("pdgd", "learning_rate", float("inf")), ("pdgd", "decay", 2),
    ("pdgd", "learning_rate", 0), ("nsgd", "n_candidates", 0), ("dbgd", "hidden", 0), ("dbgd", "cutoff", 0),
    ("pairrank_c", "window", 0), ("pairrank_c", "l2", -1), ("pairrank_c", "alpha", -0.1),
    ("pairrank_c", "variant", "X"), ("epsilon_greedy", "epsilon", 1.5), ("mgd", "n_candidates", 2.5),
    ("dbgd", "dsp", "yes"), ("pdgd", "learning_rate", "fast"), ("pairrank_r", "newton_steps", True),
])
def test_out_of_range_parameters_are_refused_naming_the_option(algorithm, option, value):
    with pytest.raises(ParameterError, match=f"{algorithm}: option {option}="):
        make_ranker(algorithm, **{option: value})
    with pytest.raises(ParameterError, match=option):
        RunSpec(algorithm, params={option: value})


@pytest.mark.parametrize("argv, named", [
    (["run", "-a", "pdgd", "-T", "10", "--set", "learning_rate=.nan"], "learning_rate"),
    (["run", "-a", "pdgd", "-T", "10", "--set", "learning_rate=.inf"], "learning_rate"),
    (["run", "-a", "pdgd", "-T", "10", "--set", "decay=2"], "decay"),
    (["run", "-a", "nsgd", "-T", "10", "--set", "n_candidates=0"], "n_candidates"),
    (["run", "-a", "dbgd", "-T", "10", "--set", "scorer=mlp", "--set", "hidden=0"], "hidden"),
    (["run", "-a", "dbgd", "-T", "10", "--set", "cutoff=0"], "cutoff"),
    (["run", "-a", "pairrank_c", "-T", "10", "--set", "window=0"], "window"),
])
def test_cli_refuses_bad_parameters_and_stores_nothing(capsys, tmp_path, argv, named):
    err = one_line_error(capsys, [*argv, "--results", str(tmp_path / "r")])
    assert named in err
    assert not list((tmp_path / "r").glob("*/*.npz"))


def test_numbers_in_exponent_form_are_numbers(capsys):
    assert main(["run", "-a", "pdgd", "-T", "20", "--set", "learning_rate=1e-3", "--json", "--no-store"]) == 0
    assert json.loads(capsys.readouterr().out)["spec"]["params"] == {"learning_rate": 0.001}


def test_diverging_weights_stop_the_run_naming_algorithm_and_round(tmp_path):
    fold = load_fold("synth-mq")
    with pytest.raises(NonFiniteModelError, match=r"PDGD: .* by round \d+"):
        run_online(make_ranker("pdgd", learning_rate=1e300), fold, make_user("perfect", fold.max_grade), 200, 0)
    spec = RunSpec("pdgd", click_model="perfect", rounds=200, params={"learning_rate": 1e300})
    store = ResultStore(tmp_path / "r")
    with pytest.raises(NonFiniteModelError, match=r"pdgd\(learning_rate=1e\+300\) on synth-mq fold 1, seed 0"):
        run_grid([spec], store)
    assert store.keys() == []


# -- grid files --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, named", [
    ('algorithms: [random]\nseeds: "10"\n', "seeds"),
    ("algorithms:\n  - {name: pdgd, param: {learning_rate: 0.5}}\n", "param"),
    ("algorithms: [random]\nrounds: 100.7\n", "rounds"),
    ("algorithms: []\n", "algorithms"),
    ("algorithms: [random]\nseeds: -2\n", "seeds"),
    ("algorithms: [random]\nfolds: [1, 9]\n", "fold"),
    ("algorithms: [random]\nclick_models: [lazy]\n", "user model"),
    ("algorithms: [random]\neval_every: 0\n", "eval_every"),
    ("algorithms: [random]\nstop_rule: sometimes\n", "stop_rule"),
    ("algorithms: [random]\nseed: 3\n", "seed"),
    ("algorithms: [random\nseeds: 2\n", "line 2"),
])
def test_bad_grid_files_are_one_line_errors_naming_file_and_option(capsys, tmp_path, text, named):
    path = tmp_path / "grid.yml"
    path.write_text(text)
    err = one_line_error(capsys, ["grid", str(path), "--results", str(tmp_path / "r")])
    assert "grid.yml" in err and named in err
    assert not (tmp_path / "r").exists()


def test_a_typo_in_the_last_entry_fails_before_the_first_run(tmp_path):
    path = tmp_path / "grid.yml"
    path.write_text("algorithms: [random, oracle, {name: pdgd, params: {learning_rat: 0.1}}]\nrounds: 10\n")
    with pytest.raises(ParameterError, match="pdgd has no option learning_rat"):
        run_grid(load_and_expand(path), ResultStore(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_grid_seed_lists_and_counts():
    assert [s.seed for s in expand_grid({"algorithms": ["random"], "seeds": 3})] == [0, 1, 2]
    assert [s.seed for s in expand_grid({"algorithms": ["random"], "seeds": [7, 4]})] == [7, 4]


# -- corrupt files -------------------------------------------------------------------------------

def _truncate(path, size=100):
    path.write_bytes(path.read_bytes()[:size])


def test_a_truncated_result_is_quarantined_reported_and_recomputed(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    specs = expand_grid({"algorithms": ["random", "oracle"], "rounds": 20})
    keys = run_grid(specs, store)
    before = summary_frame(specs, store)
    _truncate(store.path(keys[0]))
    with pytest.raises(CorruptResultError, match=str(store.path(keys[0]))):
        summary_frame(specs, store)
    assert "could not be read" in capsys.readouterr().err
    assert len(list((store.root / "quarantine").iterdir())) == 1
    run_grid(specs, store)                                    # recomputed, identical
    after = summary_frame(specs, store)
    assert after["final_offline_ndcg10"].tolist() == before["final_offline_ndcg10"].tolist()


def test_grid_and_run_commands_survive_a_corrupt_store(tmp_path, capsys):
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random]\nrounds: 20\n")
    results = str(tmp_path / "r")
    assert main(["grid", str(grid), "--results", results]) == 0
    store = ResultStore(results)
    _truncate(store.path(store.keys()[0]))
    capsys.readouterr()
    assert main(["grid", str(grid), "--results", results]) == 0
    assert str(store.root) in capsys.readouterr().err
    _truncate(store.path(store.keys()[0]))
    assert main(["run", "-a", "random", "-T", "20", "--results", results, "--json"]) == 0
    assert main(["store", "check", "--results", results]) == 0
    out = capsys.readouterr().out
    assert "1 readable run(s), 0 set aside now, 2 file(s) in the quarantine" in out and "quarantined:" in out


def test_store_check_finds_corruption_itself(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    keys = run_grid(expand_grid({"algorithms": ["random", "oracle"], "rounds": 10}), store)
    store.path(keys[1]).write_bytes(b"not a zip file at all")
    assert main(["store", "check", "--results", str(store.root)]) == 0
    captured = capsys.readouterr()
    assert "1 readable run(s), 1 set aside now, 1 file(s) in the quarantine" in captured.out
    assert captured.err == ""                                   # the report is printed once, on stdout
    assert not store.has(keys[1]) and store.has(keys[0])


def test_a_truncated_parse_cache_is_set_aside_and_the_file_reparsed(tmp_path, capsys):
    path = tmp_path / "d.txt"
    write_letor(tiny_data(), path)
    first = read_letor(path)
    (cached,) = (tmp_path / "cache" / "parsed").glob("*.npz")
    _truncate(cached)
    again = read_letor(path)
    np.testing.assert_array_equal(again.features, first.features)
    assert "could not be read" in capsys.readouterr().err
    assert (cached.parent / "quarantine").is_dir() and cached.exists()


def test_a_generated_preset_is_cached_and_a_corrupt_copy_is_rebuilt(tmp_path, capsys):
    from olr_core.data.synthetic import PRESETS, _generate_single_threaded, generate

    fresh = _generate_single_threaded(PRESETS["synth-mq"])
    first = generate(PRESETS["synth-mq"])
    (cached,) = (tmp_path / "cache" / "parsed").glob("synthetic-synth-mq-*.npz")
    again = generate(PRESETS["synth-mq"])                    # read back from the cache
    for data in (first, again):
        np.testing.assert_array_equal(data.features, fresh.features)
        np.testing.assert_array_equal(data.labels, fresh.labels)
        np.testing.assert_array_equal(data.qids, fresh.qids)
    assert generate(PRESETS["synth-mq"], seed=1).fingerprint() != first.fingerprint()   # the seed is in the key
    _truncate(cached)
    np.testing.assert_array_equal(generate(PRESETS["synth-mq"]).features, fresh.features)
    assert "could not be read" in capsys.readouterr().err


def test_offline_weights_are_fitted_once_per_machine_and_a_corrupt_copy_is_refitted(tmp_path):
    from olr_core.rankers import offline

    train = tiny_data(3, n_queries=12)
    calls = []

    def fit():
        calls.append(1)
        return offline.OfflineRankNet()._fit(train)

    learner = offline.OfflineRankNet()
    first = offline.fitted_once(learner, train, fit)
    offline._FITTED.clear()                                   # a new process: only the disk copy remains
    np.testing.assert_array_equal(offline.fitted_once(learner, train, fit), first)
    assert len(calls) == 1
    (stored,) = (tmp_path / "cache" / "parsed" / "fitted").glob("*.npy")
    for corrupt in (b"", stored.read_bytes()[:100]):                   # empty, truncated
        stored.write_bytes(corrupt)
        offline._FITTED.clear()
        np.testing.assert_array_equal(offline.fitted_once(learner, train, fit), first)
    assert len(calls) == 3
    offline._FITTED.clear()
    assert not np.array_equal(offline.fitted_once(offline.OfflineRankNet(l2=1.0), train,
                                                  lambda: offline.OfflineRankNet(l2=1.0)._fit(train)), first)


# -- data files -------------------------------------------------------------------------------------

def test_a_truncated_gzip_file_names_the_file(tmp_path):
    path = tmp_path / "d.txt.gz"
    write_letor(tiny_data(n_queries=40), path)
    _truncate(path, path.stat().st_size // 2)
    with pytest.raises(DataFormatError, match=r"d\.txt\.gz: the gzip stream is truncated"):
        read_letor(path, use_cache=False)


def test_non_utf8_bytes_in_a_comment_are_ignored_and_elsewhere_named(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes(b"1 qid:1 1:0.5 # caf\xe9\n0 qid:1 1:0.1\n")
    assert read_letor(path, use_cache=False).n_docs == 2
    path.write_bytes(b"1 qid:1 1:0.5\n0 qid:1 1:0.1 caf\xe9\n")
    with pytest.raises(DataFormatError, match="line 2: bytes that are not UTF-8"):
        read_letor(path, use_cache=False)


def _fake_mq2008(root, scale=1.0, layout="subsets"):
    folder = root / "mq2008"
    folder.mkdir(parents=True)
    parts = [tiny_data(seed=i, n_queries=5, n_features=46) for i in range(5)]
    for part in parts:
        part.features[:] *= scale
    if layout == "subsets":
        for i, part in enumerate(parts, start=1):
            write_letor(part, folder / f"S{i}.txt")
    else:
        (folder / "Fold1").mkdir()
        for name, part in zip(("train.txt", "vali.txt", "test.txt"), parts):
            write_letor(part, folder / "Fold1" / name)
    return root


def test_raw_features_in_a_normalised_set_are_reported_and_normalised(tmp_path):
    root = _fake_mq2008(tmp_path / "data", scale=30.0)
    _cached_fold.cache_clear()
    with pytest.warns(DataWarning, match=r"mq2008 is registered as query-level normalised but its features span"):
        fold = load_fold("mq2008", 1, root)
    assert fold.train.features.max() <= 1.0 and fold.train.features.min() >= 0.0


def test_data_info_accepts_the_fold_layout(tmp_path, capsys):
    root = _fake_mq2008(tmp_path / "data", layout="folds")
    _cached_fold.cache_clear()
    assert main(["data", "info", "mq2008", "--data-dir", str(root)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["checksums_ok"] is None and "Fold1..5" in info["checksums_note"]


def test_zero_rounds_json_is_valid_json(capsys):
    assert main(["run", "-a", "random", "-T", "0", "--json", "--no-store"]) == 0
    text = capsys.readouterr().out
    record = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert record["mean_online_ndcg10"] is None and record["rounds"] == 0


VALID = b"2 qid:1 1:0.5 2:0.25 # doc a\n0 qid:1 1:0.1\n1 qid:2 2:1 3:0.75\n0 qid:2 1:0.2 3:0.1 # doc d\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.binary(min_size=0, max_size=3)),
                      min_size=1, max_size=4))
def test_fuzzed_letor_files_parse_or_fail_with_a_named_line(tmp_path, edits):
    data = bytearray(VALID)
    for position, replacement in edits:
        position = min(position, len(data))
        data[position: position + 1] = replacement
    path = tmp_path / "fuzz.txt"
    path.write_bytes(bytes(data))
    try:
        parsed = read_letor(path, use_cache=False)
    except DataFormatError as err:
        message = str(err)
        assert "fuzz.txt" in message and "\n" not in message
        return
    assert parsed.n_docs == len(parsed.labels) == parsed.offsets[-1]
    assert np.isfinite(parsed.features).all() and (parsed.labels >= 0).all()


# -- processes and threads -------------------------------------------------------------------------

def test_runs_use_one_blas_thread():
    from threadpoolctl import threadpool_info

    seen = []

    class Probe:
        feedback_kind = "clicks"

        def start(self, train, rng):
            seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

        def rank(self, query):
            from olr_core.rankers import Display
            return Display(np.arange(query.n_docs))

        def learn(self, query, display, feedback):
            return None

        def score(self, docs):
            return np.zeros(len(docs.features))

        def weights(self):
            return None

    fold = load_fold("synth-mq")
    run_online(Probe(), fold, make_user("perfect", fold.max_grade), 5, 0)
    assert seen and set(seen) == {1}


def test_unreachable_dask_scheduler_is_a_clear_error():
    from olr_core.experiments.runner import _iterate_dask

    with pytest.raises(ConnectionError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        list(_iterate_dask([RunSpec("random", rounds=5)], "tcp://127.0.0.1:9", None, timeout=1))


@pytest.mark.slow
def test_grid_workers_exit_when_the_parent_is_killed(tmp_path):
    psutil = pytest.importorskip("psutil")
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [pairrank_c]\ndatasets: [synth-mslr]\nrounds: 200000\nseeds: 4\n")
    env = {**os.environ, "OLR_RESULTS_DIR": str(tmp_path / "r")}
    parent = subprocess.Popen([sys.executable, "-m", "olr_core.cli", "grid", str(grid), "--jobs", "2"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children = []
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(children) < 2:
            time.sleep(0.5)
            children = [c for c in psutil.Process(parent.pid).children(recursive=True) if "python" in c.name()]
        assert len(children) >= 2, "the grid did not start its workers"
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        gone, alive = psutil.wait_procs(children, timeout=15)
        assert not alive, f"workers still alive 15 s after the parent died: {[p.pid for p in alive]}"
    finally:                                            # only the grid's own processes, never pytest's
        for process in [*children, parent]:
            try:
                psutil.Process(process.pid).kill()
            except psutil.NoSuchProcess:
                pass


def test_store_keys_skip_the_quarantine(tmp_path):
    store = ResultStore(tmp_path / "r")
    (store.root / "quarantine").mkdir(parents=True)
    (store.root / "quarantine" / "x.npz").write_bytes(b"")
    assert store.keys() == []


def test_a_whole_gzip_file_still_parses(tmp_path):
    gz = tmp_path / "x.gz"
    with gzip.open(gz, "wb") as fh:
        fh.write(VALID)
    assert read_letor(gz, use_cache=False).n_queries == 2


# -- the holes of the hostile probe (issue 26) ----------------------------------------------------------

def test_a_results_path_that_is_a_file_fails_before_anything_runs(tmp_path, capsys, monkeypatch):
    import olr_core.experiments as experiments

    ran = []
    monkeypatch.setattr(experiments, "execute", lambda *a, **k: ran.append(1))
    target = tmp_path / "results.txt"
    target.write_text("not a folder")
    err = one_line_error(capsys, ["run", "-a", "random", "-T", "10", "--results", str(target)])
    assert "is a file, not a folder" in err and str(target) in err and not ran
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random]\nrounds: 10\n")
    assert "is a file, not a folder" in one_line_error(capsys, ["grid", str(grid), "--results", str(target)])


def test_a_repeated_seed_is_refused_naming_it(tmp_path, capsys):
    with pytest.raises(ParameterError, match="repeats seed 1"):
        expand_grid({"algorithms": ["random"], "seeds": [1, 1, 2]})
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random]\nseeds: [1, 1, 2]\nrounds: 10\n")
    err = one_line_error(capsys, ["grid", str(grid), "--results", str(tmp_path / "r")])
    assert "g.yml" in err and "repeats seed 1" in err and not (tmp_path / "r").exists()


@pytest.mark.parametrize("reference", ["pdgd", "random", "oracle", "dbgd"])
def test_a_reference_without_an_offline_weight_vector_is_refused(capsys, tmp_path, reference):
    with pytest.raises(ParameterError, match="needs the weight vector of an offline fit"):
        RunSpec("pdgd", rounds=10, reference=reference)
    err = one_line_error(capsys, ["run", "-a", "pdgd", "-T", "10", "--reference", reference,
                                  "--results", str(tmp_path / "r")])
    assert "offline_ranknet" in err and not (tmp_path / "r").exists()
    assert RunSpec("pdgd", rounds=10, reference="offline_lambdarank").reference == "offline_lambdarank"


def test_a_result_copied_over_another_key_is_quarantined_not_served(tmp_path, capsys):
    store = ResultStore(tmp_path / "r")
    specs = expand_grid({"algorithms": ["random", "oracle"], "rounds": 30})
    keys = run_grid(specs, store)
    oracle = summary_frame(specs, store)["final_offline_ndcg10"].tolist()[1]
    store.path(keys[1]).write_bytes(store.path(keys[0]).read_bytes())     # random's run under oracle's key
    with pytest.raises(CorruptResultError, match="holds the run"):
        store.load(keys[1])
    assert "holds the run" in capsys.readouterr().err and not store.has(keys[1])
    run_grid(specs, store)                                                 # recomputed: oracle's numbers again
    assert summary_frame(specs, store)["final_offline_ndcg10"].tolist()[1] == oracle
    store.path(keys[1]).write_bytes(store.path(keys[0]).read_bytes())
    assert main(["store", "check", "--results", str(store.root)]) == 0
    captured = capsys.readouterr()
    assert "1 set aside now" in captured.out and "holds the run" in captured.out and captured.err == ""


def test_a_parse_cache_copied_over_another_is_set_aside_and_the_file_reparsed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OLR_CACHE_DIR", str(tmp_path / "cache"))
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    data = tiny_data()
    write_letor(data, a)
    write_letor(RankingData(data.features, np.zeros_like(data.labels), data.offsets, data.qids, data.max_grade,
                            "b"), b)
    read_letor(a)
    read_letor(b)
    cached = sorted((tmp_path / "cache").rglob("*.npz"), key=os.path.getmtime)
    cached[1].write_bytes(cached[0].read_bytes())                          # a's arrays under b's name
    again = read_letor(b)
    assert (again.labels == 0).all()                                        # b's own labels, parsed again
    assert "holds the arrays of" in capsys.readouterr().err


def test_a_learner_paired_with_the_wrong_feedback_fails_when_the_grid_is_read(tmp_path, capsys):
    grid = tmp_path / "g.yml"
    grid.write_text("algorithms: [random, pdgd, topk_squared]\nclick_models: [navigational]\nrounds: 10\n")
    err = one_line_error(capsys, ["grid", str(grid), "--results", str(tmp_path / "r")])
    assert "g.yml" in err and "topk_labels" in err and "navigational" in err and not (tmp_path / "r").exists()
    with pytest.raises(ParameterError, match="reveals 1; use click model top2"):
        RunSpec("topk_ranksvm", click_model="top1")
    with pytest.raises(ParameterError, match="learns from 'clicks'"):
        RunSpec("pdgd", click_model="top2")


def test_olr_run_stores_the_data_fingerprint_and_reuses_the_run(tmp_path, capsys):
    from olr_core.experiments.runner import data_fingerprint

    results = str(tmp_path / "r")
    assert main(["run", "-a", "random", "-T", "20", "--results", results, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    meta, _ = ResultStore(results).load(first["key"])
    assert meta["data"] == data_fingerprint("synth-mq", 1, None) != ""
    assert main(["run", "-a", "random", "-T", "20", "--results", results, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first


def test_the_online_sums_are_named_for_what_they_are():
    data = tiny_data()
    trace = run_online(make_ranker("random"), Fold("tiny", 1, data, data, data), make_user("perfect", 2), 50, seed=0)
    summary = trace.summary()
    assert "cumulative_online_ndcg10" not in summary
    assert summary["summed_online_ndcg10"] == pytest.approx(trace.online_ndcg.sum())
    assert summary["discounted_online_ndcg10"] == pytest.approx(
        float(np.sum(trace.online_ndcg * 0.9995 ** np.arange(50))))
