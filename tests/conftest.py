import os
from pathlib import Path

import numpy as np
import pytest

from olr_core.cli import main
from olr_core.data import RankingData


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Each test parses into its own cache and stores results in its own folder."""
    monkeypatch.setenv("OLR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OLR_RESULTS_DIR", str(tmp_path / "results"))


@pytest.fixture
def real_data_dir() -> Path:
    """The shared real data (CI sets OLR_DATA_DIR=../shared/data); skipped when absent."""
    value = os.environ.get("OLR_DATA_DIR")
    if not value or not (Path(value) / "mq2008").is_dir():
        pytest.skip("real data tests need OLR_DATA_DIR pointing at a folder with mq2008/ (e.g. ../shared/data)")
    return Path(value)


def tiny_data(seed=0, n_queries=6, n_features=4, max_grade=2) -> RankingData:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 7, n_queries)
    n = int(sizes.sum())
    return RankingData(rng.random((n, n_features)), rng.integers(0, max_grade + 1, n),
                       np.concatenate([[0], np.cumsum(sizes)]), np.array([f"q{i}" for i in range(n_queries)]),
                       max_grade, "tiny")


def one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("olr: error: ") and err.count("\n") == 1, err
    return err


def _truncate(path, size=100):
    path.write_bytes(path.read_bytes()[:size])


def assert_compiled_replays_protocol(name, params, fold, user, rounds, seeds, eval_every, model=("theta", "lr")):
    """Run ``name`` with ``params`` on ``fold`` against ``user`` once in its compiled rounds and once through the
    protocol, per seed: the compiled rounds must be offered, and every stored array and the ranker's final
    ``model`` attributes (the weights, the learning rate or round count) must be equal to the last bit. Returns
    [(compiled ranker, protocol ranker, compiled trace)]."""
    from olr_core.loop import run_online
    from olr_core.rankers import make_ranker

    probe = make_ranker(name, **params)
    probe.start(fold.train, np.random.default_rng(0))
    assert probe.compiled_rounds(user, fold.train, 10) is not None
    out = []
    for seed in seeds:
        compiled, protocol = make_ranker(name, **params), make_ranker(name, **params)
        fast = run_online(compiled, fold, user, rounds, seed=seed, eval_every=eval_every)
        slow = run_online(protocol, fold, user, rounds, seed=seed, eval_every=eval_every, compiled=False)
        assert fast.arrays().keys() == slow.arrays().keys()
        for key, value in fast.arrays().items():
            assert value.tobytes() == slow.arrays()[key].tobytes(), (seed, key)
        # the model too: a last-bit slip in theta would not show in the NDCGs for a while
        for attribute in model:
            fast_value, slow_value = (np.asarray(getattr(r, attribute)) for r in (compiled, protocol))
            assert fast_value.tobytes() == slow_value.tobytes(), (seed, attribute)
        out.append((compiled, protocol, fast))
    return out
