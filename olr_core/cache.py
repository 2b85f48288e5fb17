"""Deterministic arrays computed once per machine and kept on disk, and the results store's folder.

Low in the package (it imports nothing of it), so that the rankers can keep their offline fits here
without importing the experiments package, which imports the rankers.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

from .settings import results_dir

REASONS = {errno.ENOSPC: "no space is left on the device", errno.EROFS: "the file system is read-only",
           errno.EACCES: "permission is denied", errno.EPERM: "permission is denied",
           errno.ENOTDIR: "a part of the path is not a folder", errno.EDQUOT: "the disk quota is exceeded",
           errno.EEXIST: "a file stands where its folder should be (move that file aside)"}


class WriteError(OSError):
    """A file of the store or a cache could not be written (one line: what, where, why, what to do)."""

    def __str__(self) -> str:
        return str(self.strerror)


def why(err: OSError) -> str:
    """The reason an OS error gives, in words (``no space is left on the device``)."""
    return REASONS.get(err.errno, err.strerror or type(err).__name__)


def write_atomically(path: Path, write, what: str, fix: str) -> Path:
    """``write(temporary)`` then rename it to ``path``: the file is there whole or not at all. When the disk is
    full, read-only or forbidden, the temporary file is removed and a :class:`WriteError` names ``what``,
    the folder, the reason and ``fix``."""
    partial = path.with_name(f"{path.stem}.{os.getpid()}.tmp{path.suffix}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(partial)
        os.replace(partial, path)
    except OSError as err:
        try:
            partial.unlink(missing_ok=True)
        except OSError:
            pass
        raise WriteError(err.errno, f"cannot write {what} in {path.parent}: {why(err)}; {fix}") from None
    return path


def warn_once(message: str, _said: set = set()) -> None:       # noqa: B006  (the set remembers what was said)
    """Print ``olr: warning: MESSAGE`` on stderr, once per process."""
    if message not in _said:
        _said.add(message)
        print(f"olr: warning: {message}", file=sys.stderr)


def default_store_dir() -> Path:
    """``$OLR_RESULTS_DIR`` or ``./results``."""
    return results_dir()


def cached_array(kind: str, key_parts: list, compute, extra: bytes = b"", root: Path | None = None) -> np.ndarray:
    """``compute()`` (a deterministic array, e.g. a regret comparator or an offline fit), kept as
    ``<root>/<kind>/<hash>.npy`` (root: the results store) keyed by ``key_parts`` (JSON) and ``extra``
    bytes; an absent, empty or truncated file is computed again, and a file is only ever written whole."""
    key = hashlib.sha256(json.dumps(key_parts).encode() + extra).hexdigest()[:20]
    path = (root or default_store_dir()) / kind / f"{key}.npy"
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        pass
    values = np.asarray(compute())
    try:
        write_atomically(path, lambda partial: np.save(partial, values), f"the cached {kind} array",
                         "it is computed again when needed")
    except WriteError as err:                     # (a cache: the value is right without it)
        warn_once(str(err))
    return values
