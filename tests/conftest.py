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
