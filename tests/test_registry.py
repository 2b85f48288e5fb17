"""olr_core.data.registry: registered data sets in either layout, and features that do not match what
the registry says of them."""

import json

import pytest

from olr_core.cli import main
from olr_core.data import load_fold, write_letor
from olr_core.data.registry import DataWarning, _cached_fold

from .conftest import tiny_data


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
