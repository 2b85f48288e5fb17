import json
from pathlib import Path

import pytest

from olr_core.book import PROFILES, load_manifest, parameters_for

ROOT = Path(__file__).resolve().parents[1]


def test_manifest_lists_every_notebook_with_both_profiles():
    entries = load_manifest(ROOT)
    listed = {e["notebook"] for e in entries}
    on_disk = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert listed == on_disk
    for entry in entries:
        nb = json.loads((ROOT / "notebooks" / entry["notebook"]).read_text())
        params_cell = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(params_cell) == 1, entry["notebook"]
        names = {line.split("=")[0].strip() for line in "".join(params_cell[0]["source"]).splitlines()
                 if "=" in line and not line.startswith("#")}
        for profile in PROFILES:
            assert set(parameters_for(entry, profile)) <= names, (entry["notebook"], profile)


def test_notebooks_are_committed_without_outputs():
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        nb = json.loads(path.read_text())
        assert not any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code"), path.name


def test_every_toc_file_exists():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]] + [s["file"] for part in toc["parts"] for ch in part["chapters"]
                             for s in [ch, *ch.get("sections", [])]]
    for name in files:
        generated = name.startswith("book/generated/")
        source = ROOT / "notebooks" / (Path(name).name + ".ipynb") if generated else ROOT / (name + ".md")
        assert source.exists(), name


def test_unknown_profile():
    with pytest.raises(ValueError, match="valid: quick, paper"):
        parameters_for(load_manifest(ROOT)[0], "huge")
