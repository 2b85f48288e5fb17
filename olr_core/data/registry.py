"""The data sets the papers use: what they are, where they come from, how to load them."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import settings
from ..plugins import is_reference, load_reference
from .letor import read_letor
from .library import CORA_FILES, LIBRARY_PRESETS, LibraryStream, cora_stream, synthetic_stream
from .ranking_data import Fold, RankingData
from .synthetic import PRESETS, fold_from_subsets, synthetic_fold


class DataNotFoundError(FileNotFoundError):
    """A real data set that is not in the named data directory."""


class DataWarning(UserWarning):
    """Data that loads, but not as its registry entry says (e.g. raw features in a normalised set)."""


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    title: str
    n_features: int
    max_grade: int
    n_folds: int
    source: str
    obtain: str
    dirnames: tuple[str, ...] = ()
    layout: str = "folds"          # folds | subsets | single | lightgbm | synthetic | library | synthetic-library
    split_files: tuple[str, str, str] = ("train.txt", "vali.txt", "test.txt")
    query_level_norm: bool = False  # features already min-max normalised per query
    sha256_uncompressed: dict = field(default_factory=dict)
    url: str | None = None          # a direct download, verified against url_sha256
    url_sha256: str | None = None

    @property
    def synthetic(self) -> bool:
        return self.layout in ("synthetic", "synthetic-library")

    @property
    def library(self) -> bool:
        """A growing-library stream (KLRank chapter), not a LETOR set of query folds."""
        return self.layout in ("library", "synthetic-library")


MQ2008_SHA256 = {
    "S1.txt": "cbd42504549a2388f6c0aefdb506f22074225b574c7a5df10194174c9b00e4e0",
    "S2.txt": "055ac792cb8f7d5a029090b8acbfb6c57323339d1371251bf2465ac182aa8605",
    "S3.txt": "a03fe2b6e76479de60fecdb37d560a40a4e899b0cd685553d2da31ea205af1ab",
    "S4.txt": "a239850bc6fe960ad08c2b7b0d99db90fe976dd93a15358e98036591b4e7a2ac",
    "S5.txt": "c68c52feb1ecae7f17b64c8e2fda2098302681bbd4ea5fad8c73a1d32a1cf2b2",
}
CORA_SHA256 = {
    "classification_papers.json.gz": "a1739fc47a9b6551b5f1e3a26e889e6d26063f92cb4e69c28871c7005ba12693",
    "paper_references.json.gz": "0c101060e6f2b22febef30a8344a2493dd2ac799b78f35d301ab2440db4fc391",
}
LETOR4 = ("LETOR 4.0 release by Microsoft Research (MQ2007.rar / MQ2008.rar), research use",
          "Download the LETOR 4.0 archive from the Microsoft Research LETOR project page, extract it and "
          "place the folder (with Fold1..Fold5 or S1..S5) under DATA_DIR/{dirname}/")

DATASETS: dict[str, DatasetSpec] = {
    s.name: s
    for s in [
        DatasetSpec("mq2008", "LETOR 4.0 MQ2008 (QueryLevelNorm)", 46, 2, 5, LETOR4[0],
                    LETOR4[1].format(dirname="mq2008"), ("mq2008", "MQ2008"), "subsets",
                    query_level_norm=True, sha256_uncompressed=MQ2008_SHA256),
        DatasetSpec("mq2007", "LETOR 4.0 MQ2007 (QueryLevelNorm)", 46, 2, 5, LETOR4[0],
                    LETOR4[1].format(dirname="mq2007"), ("mq2007", "MQ2007"), "subsets", query_level_norm=True),
        DatasetSpec("mslr-web10k", "Microsoft Learning to Rank MSLR-WEB10K", 136, 4, 5,
                    "Microsoft Research MSLR-WEB10K.zip, research use",
                    "Download MSLR-WEB10K.zip from the Microsoft Learning to Rank Datasets page and unzip it "
                    "into DATA_DIR/mslr-web10k/ (Fold1..Fold5)", ("mslr-web10k", "MSLR-WEB10K")),
        DatasetSpec("mslr-web30k", "Microsoft Learning to Rank MSLR-WEB30K", 136, 4, 5,
                    "Microsoft Research MSLR-WEB30K.zip, research use",
                    "Download MSLR-WEB30K.zip from the Microsoft Learning to Rank Datasets page and unzip it "
                    "into DATA_DIR/mslr-web30k/ (Fold1..Fold5)", ("mslr-web30k", "MSLR-WEB30K")),
        DatasetSpec("yahoo", "Yahoo! Learning to Rank Challenge, set 1", 700, 4, 1,
                    "Yahoo! Webscope L3 (C14B), licence agreement required",
                    "Request 'C14B Yahoo! Learning to Rank Challenge' from Yahoo Webscope (registration and "
                    "licence required) and put set1.train.txt, set1.valid.txt, set1.test.txt in DATA_DIR/yahoo/",
                    ("yahoo", "Yahoo", "ltrc_yahoo"), "single",
                    split_files=("set1.train.txt", "set1.valid.txt", "set1.test.txt")),
        DatasetSpec("np2003", "LETOR 3.0 TD/NP2003 (Gov, named-page finding)", 64, 1, 5,
                    "LETOR 3.0 release by Microsoft Research, research use",
                    "Download Gov.rar from the LETOR 3.0 page, extract QueryLevelNorm/2003_np_dataset into "
                    "DATA_DIR/np2003/ (Fold1..Fold5)", ("np2003", "NP2003", "2003_np_dataset"),
                    query_level_norm=True),
        DatasetSpec("ohsumed", "LETOR 3.0 OHSUMED", 45, 2, 5,
                    "LETOR 3.0 release by Microsoft Research, research use",
                    "Download OHSUMED.rar from the LETOR 3.0 page and extract QueryLevelNorm into "
                    "DATA_DIR/ohsumed/ (Fold1..Fold5)", ("ohsumed", "OHSUMED"), query_level_norm=True),
        DatasetSpec("istella-s", "Istella-S LETOR", 220, 4, 1,
                    "Istella, free for non-commercial use after accepting its licence",
                    "Accept the licence on the Istella LETOR page, download istella-s-letor.tar.gz and extract "
                    "sample/train.txt, vali.txt, test.txt into DATA_DIR/istella-s/", ("istella-s", "sample"),
                    "single"),
        DatasetSpec("yandex-im2009", "Yandex Internet Mathematics 2009", 245, 4, 1,
                    "Yandex Internet Mathematics 2009 competition data",
                    "Obtain imat2009_learning.txt and imat2009_test.txt and put them in DATA_DIR/yandex-im2009/; "
                    "grades must be integers 0-4 (round the real-valued labels first)",
                    ("yandex-im2009",), "single",
                    split_files=("imat2009_learning.txt", "imat2009_learning.txt", "imat2009_test.txt")),
        DatasetSpec("lightgbm-sample", "LightGBM lambdarank example (no qids, .query files)", 300, 4, 1,
                    "LightGBM repository examples/lambdarank, MIT licence",
                    "Put rank.train(.gz), rank.test(.gz) and their .query files in DATA_DIR/lightgbm_rank_sample/",
                    ("lightgbm_rank_sample", "lightgbm-sample"), "lightgbm"),
    ]
    + [
        DatasetSpec(p.name, f"Synthetic: {p.description}", p.n_features, p.max_grade, 5,
                    "generated by olr_core.data.synthetic", "built in; nothing to obtain", layout="synthetic",
                    query_level_norm=True)
        for p in PRESETS.values()
    ]
    + [
        DatasetSpec("cora", "Cora citation library (McCallum), as a growing library of papers", 0, 1, 1,
                    "Cora by A. McCallum et al., JSON subset (classification_papers, paper_references), research use",
                    "Put classification_papers.json.gz and paper_references.json.gz (the JSON Cora subset) in "
                    "DATA_DIR/cora_mccallum/", ("cora_mccallum", "cora"), "library",
                    sha256_uncompressed=CORA_SHA256),
    ]
    + [
        DatasetSpec(p.name, f"Synthetic library: {p.description}", 0, 1, 1, "generated by olr_core.data.library",
                    "built in; nothing to obtain", layout="synthetic-library")
        for p in LIBRARY_PRESETS.values()
    ]
}

DEFAULT_DATASET = "synth-mq"


def get_spec(name: str) -> DatasetSpec:
    """A registered data set, or your own: a LETOR folder (``Fold1``..``FoldN`` sub-folders, ``S1``..``S5``
    subsets, or ``train``/``vali``/``test`` files) or a Python function ``module:function`` / ``file.py:function``
    that takes the fold number and returns a :class:`Fold` or one :class:`RankingData` (split 60/20/20 by query)."""
    if name in DATASETS:
        return DATASETS[name]
    own = _own_spec(name)
    if own is None:
        raise KeyError(f"unknown data set {name!r}; valid names: {', '.join(sorted(DATASETS))}, a LETOR folder, or "
                       "your own function as package.module:function or file.py:function") from None
    return own


@functools.lru_cache(maxsize=16)
def _own_spec(name: str) -> DatasetSpec | None:
    if is_reference(name):
        return DatasetSpec(name, f"your data: {name}", 0, 0, 5, f"{name}(fold)", "", layout="python")
    folder = Path(name)
    if not folder.is_dir():
        return None
    folds = len([p for p in folder.glob("Fold*") if p.is_dir()])
    if folds:
        return DatasetSpec(name, f"LETOR folder {folder}", 0, 0, folds, str(folder), "", (str(folder.resolve()),),
                           layout="folds")
    if _find_file(folder, "S1.txt"):
        return DatasetSpec(name, f"LETOR folder {folder}", 0, 0, 5, str(folder), "", (str(folder.resolve()),),
                           layout="subsets")
    if _find_file(folder, "train.txt"):
        return DatasetSpec(name, f"LETOR folder {folder}", 0, 0, 1, str(folder), "", (str(folder.resolve()),),
                           layout="single")
    raise DataNotFoundError(f"{folder}: no Fold1..FoldN folders, S1..S5 files or train/vali/test files; a LETOR "
                            "folder has one of these layouts")


def _own_fold(spec: DatasetSpec, fold: int) -> Fold:
    """A fold of your data: the function's value, or the folder's files (feature width from the train split)."""
    if spec.layout == "python":
        return _grades_in_tables(spec.name, _plugin_fold(spec, fold))
    base = Path(spec.dirnames[0])
    folder = base / f"Fold{fold}" if spec.layout == "folds" else base
    if spec.layout == "subsets":
        subsets = {i: read_letor(_require(base, f"S{i}.txt", spec)) for i in range(1, 6)}
        width = max(s.n_features for s in subsets.values())
        subsets = {i: read_letor(_require(base, f"S{i}.txt", spec), n_features=width) for i in range(1, 6)}
        return one_grade_scale(fold_from_subsets(spec.name, fold, subsets))
    train = read_letor(_require(folder, "train.txt", spec))
    vali, test = (read_letor(_require(folder, f, spec), n_features=train.n_features) for f in ("vali.txt", "test.txt"))
    return one_grade_scale(Fold(spec.name, fold, train, vali, test))


def _plugin_fold(spec: DatasetSpec, fold: int) -> Fold:
    """Fold ``fold`` of a data plug-in (a function returning a Fold, or a RankingData split 60/20/20)."""
    from ..plugin_guard import failure_message
    from ..plugins import plugin_call

    function = load_reference(spec.name, "data set")
    try:
        with plugin_call():
            value = function(fold)
    except (Exception, SystemExit) as err:      # (the plug-in's own error, in one line naming it)
        raise ValueError(failure_message("data set", spec.name, "call", err)) from None
    if isinstance(value, Fold):
        return value
    if not isinstance(value, RankingData):
        raise ValueError(f"data set {spec.name}: the function returned {type(value).__name__}; return a Fold or "
                         "a RankingData (olr_core.data)")
    n = value.n_queries
    cut = [0, int(0.6 * n), int(0.8 * n), n]
    return Fold(spec.name, fold, *(value.subset(range(a, b)) for a, b in zip(cut, cut[1:])))


def _grades_in_tables(name: str, fold: Fold) -> Fold:
    """A data plug-in's fold, checked: finite features, and whole grades from 0 to the ``max_grade`` each split
    declares (``RankingData.max_grade``; integral floats are taken as integers). A scale beyond the user models'
    grade tables (0 .. 4) is for users of your own, which define their clicks (a click model refuses it)."""
    splits = {}
    for split in ("train", "vali", "test"):
        data = getattr(fold, split)
        where = f"data set {name}: its {split} split"
        if not np.isfinite(data.features).all():
            doc = int(np.flatnonzero(~np.isfinite(data.features).all(axis=1))[0])
            raise ValueError(f"{where} has a non-finite feature (NaN or inf) at document {doc}; replace it by a number")
        labels = data.labels
        if labels.dtype == bool or not np.issubdtype(labels.dtype, np.number):
            raise ValueError(f"{where} has labels of dtype {labels.dtype}; grades are integers 0 .. {data.max_grade}")
        top = int(data.max_grade)
        outside = labels[~np.isfinite(labels) | (labels != np.round(labels)) | (labels < 0) | (labels > top)]
        if len(outside):
            raise ValueError(f"{where} has grade {outside[0]:g}; grades must be integers 0 .. {top}, the max_grade it "
                             "declares (raise max_grade, or fix the grade)")
        splits[split] = data if np.issubdtype(labels.dtype, np.integer) else \
            dataclasses.replace(data, labels=labels.astype(np.int64), _derived={})
    return one_grade_scale(dataclasses.replace(fold, **splits))


def one_grade_scale(fold: Fold) -> Fold:
    """``fold`` with every split on the data set's grade scale: the highest grade of all its splits (in the
    LETOR layout each fold holds every document), so that no single file chooses the users' grade table."""
    top = max(s.max_grade for s in (fold.train, fold.vali, fold.test))
    if fold.train.max_grade < top:
        higher = [s for s in ("vali", "test") if getattr(fold, s).max_grade == top]
        warnings.warn(f"{fold.name}: grade {top} appears in the {' and '.join(higher)} split(s) but not in train "
                      f"(highest {fold.train.max_grade}); the users take the data set's grade table (0 .. {top}); if "
                      "that grade is a typo, fix it in the file", DataWarning, stacklevel=2)
    return dataclasses.replace(fold, **{s: dataclasses.replace(getattr(fold, s), max_grade=top, _derived={})
                                        for s in ("train", "vali", "test")})


def resolve_data_dir(data_dir=None) -> Path:
    """The data directory: the argument, else ``$OLR_DATA_DIR``; it must exist."""
    chosen = data_dir or settings.data_dir()
    if not chosen:
        raise DataNotFoundError("no data directory given: pass --data-dir DIR (data_dir=...) or set OLR_DATA_DIR")
    path = Path(chosen).expanduser()
    if not path.is_dir():
        raise DataNotFoundError(f"data directory {path} does not exist: check --data-dir / OLR_DATA_DIR")
    return path


def _find_file(folder: Path, name: str) -> Path | None:
    for cand in (folder / name, folder / (name + ".gz")):
        if cand.exists():
            return cand
    return None


def dataset_dir(spec: DatasetSpec, data_dir=None) -> Path:
    root = resolve_data_dir(data_dir)
    for dirname in spec.dirnames:
        if (root / dirname).is_dir():
            return root / dirname
    raise DataNotFoundError(
        f"{spec.name} not found in {root} (looked for {', '.join(spec.dirnames)}). To obtain it: "
        + spec.obtain.replace("DATA_DIR", str(root)))


def _read(spec: DatasetSpec, path: Path) -> RankingData:
    return read_letor(path, n_features=spec.n_features, max_grade=spec.max_grade)


def _require(folder: Path, name: str, spec: DatasetSpec) -> Path:
    found = _find_file(folder, name)
    if found is None:
        raise DataNotFoundError(f"{spec.name}: {folder / name} (or .gz) is missing. To obtain it: {spec.obtain}")
    return found


def _load_real_fold(spec: DatasetSpec, fold: int, data_dir) -> Fold:
    base = dataset_dir(spec, data_dir)
    if spec.layout in ("folds", "subsets") and (base / f"Fold{fold}").is_dir():
        folder = base / f"Fold{fold}"
        train, vali, test = (_read(spec, _require(folder, f, spec)) for f in spec.split_files)
        return Fold(spec.name, fold, train, vali, test)
    if spec.layout == "subsets":
        subsets = {i: _read(spec, _require(base, f"S{i}.txt", spec)) for i in range(1, 6)}
        return fold_from_subsets(spec.name, fold, subsets)
    if spec.layout == "lightgbm":
        train_all = _read(spec, _require(base, "rank.train", spec))
        n_vali = max(1, train_all.n_queries // 5)   # no official validation split: the last 20% of train
        train = train_all.subset(range(train_all.n_queries - n_vali))
        vali = train_all.subset(range(train_all.n_queries - n_vali, train_all.n_queries))
        return Fold(spec.name, fold, train, vali, _read(spec, _require(base, "rank.test", spec)))
    folder = base
    train, vali, test = (_read(spec, _require(folder, f, spec)) for f in spec.split_files)
    return Fold(spec.name, fold, train, vali, test)


def _normalized(fold: Fold) -> Fold:
    return Fold(fold.name, fold.fold, *(s.query_minmax_normalized() for s in (fold.train, fold.vali, fold.test)))


@functools.lru_cache(maxsize=8)
def _cached_fold(name: str, fold: int, data_dir: str | None, normalize: bool | None) -> Fold:
    spec = get_spec(name)
    if spec.library:
        raise ValueError(f"{name} is a growing-library stream, not a set of query folds; load it with "
                         "load_library (the KLRank chapter's loop)")
    if not 1 <= fold <= spec.n_folds:
        raise ValueError(f"{name} has folds 1..{spec.n_folds}; got fold {fold}")
    if spec.synthetic:
        loaded = synthetic_fold(name, fold)
    elif name not in DATASETS:
        loaded = _own_fold(spec, fold)
    else:
        loaded = _load_real_fold(spec, fold, data_dir)
    if normalize is None:
        normalize = not spec.query_level_norm or not _within_unit_range(loaded, name)
    return _normalized(loaded) if normalize else loaded


def _within_unit_range(fold: Fold, name: str) -> bool:
    """True when every feature lies in [0, 1], as a query-level normalised set's must; else say so (a warning)."""
    low = min(float(s.features.min(initial=0.0)) for s in (fold.train, fold.vali, fold.test))
    high = max(float(s.features.max(initial=0.0)) for s in (fold.train, fold.vali, fold.test))
    if low >= -1e-9 and high <= 1 + 1e-9:
        return True
    warnings.warn(f"{name} is registered as query-level normalised but its features span [{low:g}, {high:g}] "
                  "(the raw files?); normalising them per query by min-max. Use the QueryLevelNorm files to "
                  "match the papers", DataWarning, stacklevel=3)
    return False


def load_fold(name: str = DEFAULT_DATASET, fold: int = 1, data_dir=None, normalize: bool | None = None) -> Fold:
    """Load one fold of a registered data set.

    ``normalize``: per-query min-max normalisation of every feature; ``None`` applies it
    only to data sets that are not already query-level normalised.
    """
    spec = get_spec(name)
    resolved = None if spec.synthetic or name not in DATASETS else str(resolve_data_dir(data_dir))
    return _cached_fold(name, int(fold), resolved, normalize)


def load_library(name: str, data_dir=None) -> LibraryStream:
    """A growing-library stream: ``cora`` from the data directory, or a synthetic library preset."""
    spec = get_spec(name)
    if not spec.library:
        raise ValueError(f"{name} is a LETOR data set, not a growing library; library streams: "
                         f"{', '.join(n for n, s in DATASETS.items() if s.library)}")
    if spec.synthetic:
        return _cached_library(name, None)
    return _cached_library(name, str(resolve_data_dir(data_dir)))


@functools.lru_cache(maxsize=4)
def _cached_library(name: str, data_dir: str | None) -> LibraryStream:
    spec = get_spec(name)
    if spec.synthetic:
        return synthetic_stream(LIBRARY_PRESETS[name])
    base = dataset_dir(spec, data_dir)
    for fname in CORA_FILES:
        _require(base, fname.removesuffix(".gz"), spec)
    return cora_stream(base)


def verify_checksums(name: str, data_dir=None) -> dict[str, bool]:
    """Compare the SHA-256 of each (decompressed) file with the registry's, where known."""
    spec = get_spec(name)
    base = dataset_dir(spec, data_dir)
    result = {}
    fold_layout = (base / "Fold1").is_dir()
    for fname, expected in spec.sha256_uncompressed.items():
        if fold_layout and _find_file(base, fname) is None:
            continue                       # FoldN/ copies: checksums are known for the subset files only
        path = _require(base, fname, spec)
        opener = gzip.open if path.suffix == ".gz" else open
        h = hashlib.sha256()
        with opener(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        result[fname] = h.hexdigest() == expected
    return result


def describe(data: RankingData) -> dict:
    """Summary statistics of a data split (used by ``olr data info``)."""
    import numpy as np

    sizes = data.docs_per_query
    grades = np.bincount(data.labels, minlength=data.max_grade + 1)
    return {
        "queries": data.n_queries,
        "documents": data.n_docs,
        "features": data.n_features,
        "grade_share": {int(g): round(float(c) / data.n_docs, 4) for g, c in enumerate(grades)},
        "docs_per_query": {"min": int(sizes.min()), "median": float(np.median(sizes)), "max": int(sizes.max())},
        "queries_without_relevant": round(float(1 - data.has_relevant().mean()), 4),
    }


def find_datasets(names, data_dir=None) -> tuple[list[str], dict[str, str]]:
    """The data sets of ``names`` this machine has (synthetic ones always), and why each other one is missing."""
    found, missing = [], {}
    for name in names:
        try:
            load_library(name, data_dir) if get_spec(name).library else load_fold(name, 1, data_dir)
            found.append(name)
        except DataNotFoundError as err:
            missing[name] = str(err)
    return found, missing


def available(synthetic, real, data_dir=None, verbose: bool = False, fallback: str | None = None) -> list[str]:
    """The synthetic data sets plus those real ones found in the data directory (``verbose``: name the others),
    or ``[fallback]`` when that leaves none (a quick page runs a real set when present, else a preset).

    The book names the data sets a build had once, on its verdicts page.
    """
    found, missing = find_datasets(real, data_dir)
    if verbose:
        for name, reason in missing.items():
            print(f"skipping {name}: {reason}")
    return (list(synthetic) + found) or ([fallback] if fallback else [])
