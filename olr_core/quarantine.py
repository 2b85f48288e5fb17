"""Unreadable files are set aside, never deleted and never used: the one helper that does it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def quarantine_file(path: Path, folder: Path, reason: str, then: str = "it will be recomputed",
                    quiet: bool = False) -> str:
    """Move ``path`` into ``folder`` (kept for inspection), say so on stderr (unless ``quiet``: the caller
    reports it), return where it went as words: ``moved to PATH``, or ``left in place (...)`` when the folder
    cannot be written (a read-only store: the file is still never used)."""
    target = folder / f"{path.name}.{time.strftime('%Y%m%d-%H%M%S')}.{time.time_ns() % 10**9:09d}.{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        where = f"moved to {target}"
    except OSError as err:
        where = f"left in place (it could not be moved to {folder}: {err.strerror or err})"
    if not quiet:
        print(f"olr: warning: {path} could not be read ({reason}); {where}; {then}", file=sys.stderr)
    return where
