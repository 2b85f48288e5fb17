"""Unreadable files are set aside, never deleted and never used: the one helper that does it."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def quarantine_file(path: Path, folder: Path, reason: str, then: str = "it will be recomputed",
                    quiet: bool = False) -> Path:
    """Move ``path`` into ``folder`` (kept for inspection), say so on stderr (unless ``quiet``: the caller
    reports it), return where it went."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{path.name}.{time.strftime('%Y%m%d-%H%M%S')}.{time.time_ns() % 10**9:09d}.{os.getpid()}"
    os.replace(path, target)
    if not quiet:
        print(f"olr: warning: {path} could not be read ({reason}); moved to {target}; {then}", file=sys.stderr)
    return target
