"""Reader for LETOR / SVMlight ranking files, with a parse cache keyed by content.

Format: ``<rel> qid:<q> <fid>:<val> ... # comment`` with sparse 1-based feature ids;
absent features are 0 and a query's lines need not be contiguous. The variant without
``qid:`` takes a side file ``<file>.query`` of consecutive group sizes (LightGBM style).
"""

from __future__ import annotations

import gzip
import hashlib
import math
import zlib
from pathlib import Path

import numpy as np

from .. import settings
from ..cache import WriteError, warn_once, write_atomically
from ..quarantine import quarantine_file
from .ranking_data import RankingData

PARSER_VERSION = 2
# Without a declared width, a feature id above this is taken as a corrupt line: the features are stored dense
# (documents x width), and the LETOR sets have at most 700 (Yahoo!); a data set's spec may declare more.
MAX_FEATURE_ID = 10_000
MAX_DENSE_BYTES = 8e9           # a split's dense feature matrix (MSLR-WEB30K's largest: about 2.5 GB)
# The highest grade any user model's grade table has (the 5-grade tables: 0 .. 4); a label above it would
# never be clicked, so it is refused with its file and line.
MAX_GRADE = 4


class DataFormatError(ValueError):
    """A ranking file that cannot be parsed; the message names file, line and fix."""


def _open_bytes(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


UTF8_BOM = b"\xef\xbb\xbf"


def _text_lines(path: Path, fh):
    """Each line's content before ``#`` as text; comments may hold any bytes (they are ignored). A UTF-8 byte
    order mark opening the file (as some editors on Windows write) is not content: it is dropped."""
    for lineno, raw in enumerate(fh, start=1):
        body = raw.split(b"#", 1)[0]
        if lineno == 1:
            body = body.removeprefix(UTF8_BOM)
        try:
            yield body.decode("utf-8")
        except UnicodeDecodeError:
            _fail(path, lineno, "bytes that are not UTF-8 text before any '#' comment",
                  "Is this a LETOR text file? Only comments after '#' may hold other bytes")


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes as stored (compressed files are hashed compressed)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_dir() -> Path:
    """Where parsed and generated arrays are kept: ``$OLR_CACHE_DIR`` or ``~/.cache/olr_core``."""
    return settings.cache_dir() / "parsed"


def _fail(path, lineno, what, fix):
    raise DataFormatError(f"{path}, line {lineno}: {what}. {fix}")


def _parse_lines(path: Path, lines, has_qid: bool, n_features: int | None, max_grade: int | None = None):
    labels, qids, rows, cols, vals = [], [], [], [], []
    top = MAX_GRADE if max_grade is None else max_grade
    for lineno, line in enumerate(lines, start=1):
        tokens = line.split()
        if not tokens:
            continue
        try:
            label = float(tokens[0])
        except ValueError:
            _fail(path, lineno, f"relevance label {tokens[0]!r} is not a number",
                  "Each line must start with an integer relevance grade such as 0, 1 or 2")
        if not math.isfinite(label) or label != int(label) or label < 0:
            _fail(path, lineno, f"relevance label {tokens[0]!r} is not a non-negative integer grade",
                  "Use integer grades 0, 1, 2, ...")
        if label > top:
            _fail(path, lineno, f"relevance label {tokens[0]} is above the highest grade {top} "
                  + ("of the data set" if max_grade is not None else "of the user models' grade tables (0 .. 4)"),
                  "Map the grades to 0 .. 4 in the file (e.g. by rank of the grade), or fix the line")
        rest = tokens[1:]
        if has_qid:
            if not rest or not rest[0].startswith("qid:"):
                _fail(path, lineno, "missing 'qid:<id>' after the label",
                      "Add the query id, or give a '.query' group file for files without qids")
            if rest[0] == "qid:":
                _fail(path, lineno, "empty query id 'qid:'", "Write the query id right after 'qid:' (e.g. qid:10)")
            qids.append(rest[0][4:])
            rest = rest[1:]
        elif rest and rest[0].startswith("qid:"):
            _fail(path, lineno, "unexpected 'qid:' in a file read with a '.query' group file",
                  "Remove the '.query' file or the qid tokens")
        row = len(labels)
        labels.append(int(label))
        seen = set()
        for tok in rest:
            fid, sep, val = tok.partition(":")
            if not sep:
                _fail(path, lineno, f"token {tok!r} is not '<feature id>:<value>'",
                      "Write features as id:value pairs separated by spaces")
            try:
                fid_i = int(fid)
                val_f = float(val)
            except ValueError:
                _fail(path, lineno, f"feature {tok!r} has a non-numeric id or value",
                      "Replace NULL or text values by numbers (absent features may be omitted)")
            if fid_i < 1:
                _fail(path, lineno, f"feature id {fid_i} is below 1", "Feature ids are 1-based")
            if n_features is not None and fid_i > n_features:
                _fail(path, lineno, f"feature id {fid_i} exceeds the declared {n_features} features",
                      "Check that the file belongs to this data set, or raise n_features")
            if n_features is None and fid_i > MAX_FEATURE_ID:
                _fail(path, lineno, f"feature id {fid_i} is above {MAX_FEATURE_ID:,}, the most features a data set "
                      "without a declared width may have (they are stored dense)",
                      "Check the line for corruption, or renumber the features 1, 2, ...")
            if fid_i in seen:
                _fail(path, lineno, f"feature id {fid_i} appears twice on the line",
                      "Each feature may be given once per document; remove the duplicate")
            seen.add(fid_i)
            if not np.isfinite(val_f):
                _fail(path, lineno, f"feature {tok!r} is not finite", "Replace inf/nan by a number")
            rows.append(row)
            cols.append(fid_i - 1)
            vals.append(val_f)
    return labels, qids, rows, cols, vals


def _group_by_query(path, labels, qids, rows, cols, vals, n_features):
    n = len(labels)
    if n == 0:
        raise DataFormatError(f"{path}: no ranking lines found. Is this a LETOR/SVMlight file?")
    width = n_features or (max(cols) + 1 if cols else 1)
    if n * width * 8 > MAX_DENSE_BYTES:
        raise DataFormatError(f"{path}: {n:,} documents x {width:,} features would take {n * width * 8 / 1e9:,.1f} GB "
                              f"stored dense, above the {MAX_DENSE_BYTES / 1e9:g} GB a data set may take here. Check "
                              "the feature ids for corruption, or split the file")
    dense = np.zeros((n, width))
    dense[np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)] = vals
    qid_arr = np.asarray(qids)
    uniq, first, inverse = np.unique(qid_arr, return_index=True, return_inverse=True)
    order_of_queries = np.argsort(first)            # keep queries in order of first appearance
    rank = np.empty_like(order_of_queries)
    rank[order_of_queries] = np.arange(len(uniq))
    doc_order = np.argsort(rank[inverse], kind="stable")
    sizes = np.bincount(rank[inverse], minlength=len(uniq))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return dense[doc_order], np.asarray(labels, dtype=np.int64)[doc_order], offsets, uniq[order_of_queries]


def _read_groups(path: Path, group_file: Path, n_lines: int) -> list[str]:
    sizes = []
    for lineno, line in enumerate(group_file.read_text().split(), start=1):
        if not line.isdigit() or int(line) == 0:
            _fail(group_file, lineno, f"group size {line!r} is not a positive integer", "One size per line")
        sizes.append(int(line))
    if sum(sizes) != n_lines:
        raise DataFormatError(f"{group_file}: group sizes add up to {sum(sizes)} but {path} has {n_lines} "
                              "lines. The .query file must list consecutive group sizes of that file")
    return [f"{i}" for i, s in enumerate(sizes) for _ in range(s)]


def query_file_for(path: Path) -> Path | None:
    """The LightGBM-style group file beside ``path`` if there is one."""
    for cand in (Path(str(path).removesuffix(".gz") + ".query"), Path(str(path) + ".query")):
        if cand.exists():
            return cand
    return None


def parse_letor(path, n_features: int | None = None, max_grade: int | None = None) -> RankingData:
    """Parse one LETOR/SVMlight file (plain or gzip) without caching."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist. Check the data directory (--data-dir or OLR_DATA_DIR)")
    group_file = query_file_for(path)
    has_qid = group_file is None
    try:
        with _open_bytes(path) as fh:
            labels, qids, rows, cols, vals = _parse_lines(path, _text_lines(path, fh), has_qid, n_features,
                                                          max_grade)
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise DataFormatError(f"{path}: the gzip stream is truncated or corrupt ({err}). Download or compress the "
                              "file again (gzip -t checks it)") from None
    if not has_qid:
        qids = _read_groups(path, group_file, len(labels))
    feats, labs, offsets, qid_arr = _group_by_query(path, labels, qids, rows, cols, vals, n_features)
    top = int(labs.max())
    return RankingData(feats, labs, offsets, qid_arr.astype(str), max_grade if max_grade is not None else top,
                       path.name)


def read_letor(path, n_features: int | None = None, max_grade: int | None = None, use_cache: bool = True
               ) -> RankingData:
    """Parse a ranking file, reusing arrays cached under the file's SHA-256 (never stale)."""
    path = Path(path)
    if not use_cache:
        return parse_letor(path, n_features, max_grade)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist. Check the data directory (--data-dir or OLR_DATA_DIR)")
    digest = file_sha256(path)
    group = query_file_for(path)
    if group is not None:
        digest = hashlib.sha256((digest + file_sha256(group)).encode()).hexdigest()
    key = f"{digest}-v{PARSER_VERSION}-f{n_features}-g{max_grade}"
    return cached_data(key, path.name, lambda: parse_letor(path, n_features, max_grade))


def cached_data(key: str, name: str, build) -> RankingData:
    """``build()``'s data set, kept in the cache directory under ``key`` (which must change whenever
    the data would); an unreadable cache file is set aside and the data built again."""
    cached = cache_dir() / f"{key}.npz"
    if cached.is_file():
        data = _load_cached(cached, name, key)
        if data is not None:
            return data
    data = build()
    try:
        write_atomically(cached, lambda tmp: np.savez(tmp, features=data.features, labels=data.labels,
                                                      offsets=data.offsets, qids=data.qids, max_grade=data.max_grade,
                                                      cache_key=np.array(key)),
                         "the parse cache", "data files are parsed again each time (set OLR_CACHE_DIR to a "
                         "writable folder to keep them)")
    except WriteError as err:                     # (a cache: the data are right without it)
        warn_once(str(err))
    return data


def _load_cached(cached: Path, name: str, key: str) -> RankingData | None:
    """Arrays of a cached data set, or None (the file quarantined) when the cache file cannot be read or was
    written for another key (a cache file copied over another's name)."""
    try:
        with np.load(cached, allow_pickle=False) as z:
            recorded = str(z["cache_key"]) if "cache_key" in z.files else "(none recorded)"
            if recorded != key:
                raise KeyError(f"it holds the arrays of {recorded}, not {key}")
            return RankingData(z["features"], z["labels"], z["offsets"], z["qids"], int(z["max_grade"]), name)
    except Exception as err:        # any unreadable cache file is set aside and the data built again
        reason = err.args[0] if isinstance(err, KeyError) and err.args else type(err).__name__
        quarantine_file(cached, cached.parent / "quarantine", reason, "the data is built again")
        return None


def write_letor(data: RankingData, path, comment: str | None = None) -> None:
    """Write a data set as a LETOR file (dense ids, 1-based); gzip if the name ends in .gz."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as fh:
        for q in range(data.n_queries):
            lo, hi = data.offsets[q], data.offsets[q + 1]
            for i in range(lo, hi):
                feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(data.features[i]) if v != 0)
                tail = f" # {comment}" if comment else ""
                fh.write(f"{data.labels[i]} qid:{data.qids[q]} {feats}{tail}\n")
