"""The book driver: execute every notebook of the manifest with papermill, then build the book.

The manifest (``notebooks/manifest.yml``) lists each notebook with its parameters per
profile (``quick``: minutes for the whole book; ``paper``: the papers' horizons and seed
counts). Executed notebooks go to ``book/generated/``, each with a cell stating the
profile and parameters that produced it; Jupyter Book then compiles them with the
narrative chapters, warnings as errors.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from . import __version__

PROFILES = ("quick", "paper")


def project_root(start: Path | None = None) -> Path:
    """The folder holding ``_config.yml`` and ``notebooks/manifest.yml`` (searching upwards)."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "_config.yml").exists() and (folder / "notebooks" / "manifest.yml").exists():
            return folder
    raise FileNotFoundError("no book here: run 'olr book' inside the OL2R Book checkout (where _config.yml is)")


def load_manifest(root: Path) -> list[dict]:
    entries = yaml.safe_load((root / "notebooks" / "manifest.yml").read_text())["notebooks"]
    for entry in entries:
        missing = [p for p in PROFILES if p not in entry.get("profiles", {})]
        if missing:
            raise ValueError(f"manifest entry {entry.get('notebook')} lacks profile(s) {missing}")
    return entries


def parameters_for(entry: dict, profile: str) -> dict:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; valid: {', '.join(PROFILES)}")
    return {**entry.get("common", {}), **(entry["profiles"][profile] or {})}


def _provenance_cell(profile: str, params: dict, seconds: float):
    import nbformat

    rows = "\n".join(f"| `{k}` | `{v!r}` |" for k, v in params.items())
    text = (f"```{{admonition}} How this page was produced\n:class: note\n"
            f"Executed with profile **{profile}** by `olr book` (olr_core {__version__}) in {seconds:.0f} s. "
            f"Re-run it with other parameters from the command line or with papermill.\n\n"
            f"| parameter | value |\n|---|---|\n{rows}\n```")
    return nbformat.v4.new_markdown_cell(text)


def execute_notebook(root: Path, entry: dict, profile: str) -> Path:
    """Run one notebook with its profile's parameters into ``book/generated``."""
    import nbformat
    import papermill

    source = root / "notebooks" / entry["notebook"]
    target = root / "book" / "generated" / source.name
    target.parent.mkdir(parents=True, exist_ok=True)
    params = parameters_for(entry, profile)
    started = time.perf_counter()
    papermill.execute_notebook(str(source), str(target), parameters=params, cwd=str(root / "notebooks"),
                               progress_bar=False, kernel_name="python3")
    nb = nbformat.read(target, as_version=4)
    position = 1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0
    nb.cells.insert(position, _provenance_cell(profile, params, time.perf_counter() - started))
    nbformat.write(nb, target)
    return target


def mathjax_ready(root: Path) -> bool:
    return (root / "_static" / "mathjax" / "tex-chtml.js").exists()


def build_book(profile: str = "quick", only: str | None = None, skip_build: bool = False) -> int:
    """Execute the manifest's notebooks (failing on the first error) and build the HTML book."""
    root = project_root()
    os.environ.setdefault("OLR_RESULTS_DIR", str(root / "results"))
    for entry in load_manifest(root):
        if only and only not in entry["notebook"]:
            continue
        print(f"[olr book] executing {entry['notebook']} ({profile})", flush=True)
        execute_notebook(root, entry, profile)
    if skip_build:
        return 0
    if not mathjax_ready(root):
        print("[olr book] MathJax is not bundled: run 'make mathjax' (npm) so that math renders offline",
              file=sys.stderr)
        return 1
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(root), "--warningiserror",
               "--keep-going"]
    print("[olr book] " + " ".join(command), flush=True)
    return subprocess.call(command, cwd=root)
