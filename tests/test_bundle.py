"""olr store export / import: a bundle round-trips whole, and any damaged or mismatched bundle is refused
before anything of it is written."""

import hashlib
import io
import json
import zipfile

import pytest

from olr_core.cli import main
from olr_core.experiments import ResultStore, expand_grid, run_grid
from olr_core.experiments import bundle as bundles


@pytest.fixture
def store(tmp_path):
    store = ResultStore(tmp_path / "source")
    run_grid(expand_grid({"algorithms": ["random", "oracle", "pdgd"], "rounds": 15, "seeds": 2}), store)
    return store


def _files(store: ResultStore) -> dict:
    return {p.relative_to(store.root): p.read_bytes() for p in store.root.glob("*/*.npz")}


def _reseal(path, manifest: dict, blobs: dict) -> None:
    """A bundle with this manifest and these files whose own SHA-256 is right (a forged, not a damaged, file)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("manifest.json", json.dumps(manifest))
        for name, blob in blobs.items():
            bundle.writestr(name, blob)
        bundle.comment = b"0" * bundles.DIGEST_BYTES
    data = buffer.getvalue()[:-bundles.DIGEST_BYTES]
    path.write_bytes(data + hashlib.sha256(data).hexdigest().encode())


def test_round_trip_keeps_every_run_byte_for_byte_and_the_store_check_clean(store, tmp_path, capsys):
    bundle = tmp_path / "runs.olrbundle"
    assert main(["store", "export", str(bundle), "--results", str(store.root)]) == 0
    assert "6 run(s)" in capsys.readouterr().out
    target = tmp_path / "target"
    assert main(["store", "import", str(bundle), "--results", str(target)]) == 0
    assert "6 run(s) added, 0 already stored" in capsys.readouterr().out
    assert _files(ResultStore(target)) == _files(store)
    assert main(["store", "check", "--results", str(target)]) == 0
    assert "6 readable run(s), 0 set aside now, 0 file(s) in the quarantine" in capsys.readouterr().out
    record, = bundles.imported_bundles(ResultStore(target))
    assert record["bundle"] == "runs.olrbundle" and record["runs"] == 6 and sorted(record["keys"]) == store.keys()
    assert main(["store", "import", str(bundle), "--results", str(target)]) == 0     # again: nothing new
    assert "0 run(s) added, 6 already stored" in capsys.readouterr().out
    assert len(bundles.imported_bundles(ResultStore(target))) == 1


@pytest.mark.parametrize("where", [0.0, 0.05, 0.3, 0.5, 0.8, 0.97, 0.995, 1.0])
def test_one_changed_byte_anywhere_is_refused_and_nothing_is_imported(store, tmp_path, capsys, where):
    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle)
    data = bytearray(bundle.read_bytes())
    offset = min(int(where * len(data)), len(data) - 1)
    data[offset] ^= 0x01
    bundle.write_bytes(bytes(data))
    target = ResultStore(tmp_path / "target")
    kept = run_grid(expand_grid({"algorithms": ["random"], "rounds": 7}), target)
    before = _files(target)
    assert main(["store", "import", str(bundle), "--results", str(target.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("olr: error: bundle") and "nothing imported" in err and err.count("\n") == 1
    assert _files(target) == before and target.keys() == kept and bundles.imported_bundles(target) == []


def test_a_truncated_bundle_is_refused(store, tmp_path):
    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle)
    bundle.write_bytes(bundle.read_bytes()[: bundle.stat().st_size // 2])
    with pytest.raises(bundles.BundleError, match="truncated or was changed"):
        bundles.read_bundle(bundle)


def _forged(store, tmp_path, change) -> ResultStore:
    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle)
    with zipfile.ZipFile(bundle) as z:
        manifest = json.loads(z.read("manifest.json"))
        blobs = {n: z.read(n) for n in z.namelist() if n != "manifest.json"}
    change(manifest, blobs)
    _reseal(bundle, manifest, blobs)
    target = ResultStore(tmp_path / "target")
    with pytest.raises(bundles.BundleError, match="nothing imported"):
        bundles.import_bundle(target, bundle)
    assert target.keys() == [] and bundles.imported_bundles(target) == []
    return target


def test_a_resealed_bundle_whose_run_was_swapped_is_refused(store, tmp_path):
    def swap(manifest, blobs):              # run 0's file replaced by run 1's, checksums made to fit
        a, b = manifest["runs"][0], manifest["runs"][1]
        blobs[f"runs/{a['key']}.npz"] = blobs[f"runs/{b['key']}.npz"]
        a["sha256"], a["bytes"] = b["sha256"], b["bytes"]
    _forged(store, tmp_path, swap)


def test_a_manifest_that_misdescribes_a_run_is_refused(store, tmp_path):
    def other_data(manifest, blobs):
        manifest["runs"][2]["data"] = "another data set"
    _forged(store, tmp_path, other_data)


def test_a_run_missing_from_the_zip_is_refused(store, tmp_path):
    def drop(manifest, blobs):
        del blobs[f"runs/{manifest['runs'][-1]['key']}.npz"]
    _forged(store, tmp_path, drop)


def test_the_provenance_note_names_the_bundle_a_page_read(store, tmp_path, monkeypatch):
    from olr_book.execute import imported_runs_note

    bundle = tmp_path / "dsp-paper.olrbundle"
    bundles.export_bundle(store, bundle, store.keys()[:4], profile="paper")
    target = ResultStore(tmp_path / "target")
    monkeypatch.setenv("OLR_RESULTS_DIR", str(target.root))
    assert imported_runs_note() == ""                                     # nothing imported: nothing said
    record = bundles.import_bundle(target, bundle)
    log = tmp_path / "runs.log"
    log.write_text("".join(f"reused {k}\n" for k in store.keys()[1:6]) + "computed abc\n")
    monkeypatch.setenv("OLR_RUN_LOG", str(log))
    note = imported_runs_note()
    assert "3 of its runs came from the imported bundle dsp-paper.olrbundle" in note
    assert "profile paper" in note and record["sha256"][:16] in note
    log.write_text("computed abc\n")
    assert "None of its runs" in imported_runs_note()


def _rewritten(blob: bytes, change) -> bytes:
    """A run's file with its arrays changed by ``change(arrays)`` (metadata kept): a forged run."""
    import numpy as np

    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    out = io.BytesIO()
    np.savez_compressed(out, **arrays)
    return out.getvalue()


def _forge_run(index: int, change):
    """A manifest change replacing run ``index``'s file by a forged one, checksums made to fit."""
    def forge(manifest, blobs):
        entry = manifest["runs"][index]
        name = f"runs/{entry['key']}.npz"
        blobs[name] = _rewritten(blobs[name], change)
        entry["sha256"], entry["bytes"] = hashlib.sha256(blobs[name]).hexdigest(), len(blobs[name])
    return forge


FORGED_RUNS = {                 # W1, L3: forged numbers whose checksums fit; each refused with the reason
    "ndcg -7": (lambda a: a["online_ndcg"].__setitem__(0, -7.0), "leaves [0.0, 1.000000001]"),
    "nan": (lambda a: a["offline_ndcg"].__setitem__(1, float("nan")), "not finite"),
    "2 rounds for 15": (lambda a: a.update(online_ndcg=a["online_ndcg"][:2]), "where its spec implies 15"),
    "strings": (lambda a: a.update(online_ndcg=a["online_ndcg"].astype(str)), "not an array of numbers"),
    "missing evaluations": (lambda a: a.update(eval_rounds=a["eval_rounds"][:1], offline_ndcg=a["offline_ndcg"][:1]),
                            "where its spec implies"),
}


@pytest.mark.parametrize("forgery", sorted(FORGED_RUNS))
def test_a_forged_run_is_refused_with_one_line(store, tmp_path, capsys, forgery):
    change, reason = FORGED_RUNS[forgery]
    target = _forged(store, tmp_path, _forge_run(0, change))
    assert main(["store", "import", str(tmp_path / "runs.olrbundle"), "--results", str(target.root)]) == 2
    err = capsys.readouterr().err
    assert reason in err and "nothing imported" in err and err.count("\n") == 1, err


def test_a_forged_run_in_the_store_is_never_served_and_store_check_reads_values(store, tmp_path, capsys):
    key = store.keys()[0]
    path = store.path(key)
    path.write_bytes(_rewritten(path.read_bytes(), lambda a: a["online_ndcg"].__setitem__(3, 1.5)))
    assert main(["store", "check", "--results", str(store.root)]) == 0
    assert "5 readable run(s), 1 set aside now" in capsys.readouterr().out
    assert not store.verified(key, quiet=True)


def test_verify_recomputes_runs_and_refuses_a_plausible_forgery(store, tmp_path, capsys):
    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle)
    target = tmp_path / "honest"
    assert main(["store", "import", str(bundle), "--results", str(target), "--verify", "6"]) == 0
    assert "6 run(s) computed again and identical" in capsys.readouterr().out
    assert bundles.imported_bundles(ResultStore(target))[0]["verified"] == 6
    with zipfile.ZipFile(bundle) as z:               # a random ranker's NDCG raised to 1.0: in range, but false
        manifest = json.loads(z.read("manifest.json"))
        blobs = {n: z.read(n) for n in z.namelist() if n != "manifest.json"}
    for index in range(len(manifest["runs"])):
        _forge_run(index, lambda a: a["online_ndcg"].fill(1.0))(manifest, blobs)
    _reseal(bundle, manifest, blobs)
    assert main(["store", "import", str(bundle), "--results", str(tmp_path / "forged"), "--verify", "1"]) == 2
    err = capsys.readouterr().err
    assert "computed again here gives other numbers" in err and err.count("\n") == 1
    assert ResultStore(tmp_path / "forged").keys() == []


def test_a_zip_bomb_is_refused_before_it_is_decompressed(store, tmp_path):
    import resource

    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle)
    with zipfile.ZipFile(bundle) as z:
        manifest = json.loads(z.read("manifest.json"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest))
        with z.open(f"runs/{manifest['runs'][0]['key']}.npz", "w", force_zip64=True) as member:
            chunk = b"\0" * 2 ** 24
            for _ in range(2 ** 30 // len(chunk) + 1):          # 1 GB of zeros, about 1 MB on disk
                member.write(chunk)
        z.comment = b"0" * bundles.DIGEST_BYTES
    data = buffer.getvalue()[:-bundles.DIGEST_BYTES]
    bundle.write_bytes(data + hashlib.sha256(data).hexdigest().encode())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(bundles.BundleError, match="once decompressed"):
        bundles.read_bundle(bundle)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000        # KB: nothing inflated


def test_two_imports_at_once_both_leave_their_record(store, tmp_path):
    import threading

    paths = []
    for i, keys in enumerate((store.keys()[:3], store.keys()[3:])):
        paths.append(tmp_path / f"part{i}.olrbundle")
        bundles.export_bundle(store, paths[-1], keys)
    target = ResultStore(tmp_path / "target")
    real = bundles.imported_bundles

    def slow(s):                    # read, then wait: without the lock the other import's record is lost
        records = real(s)
        __import__("time").sleep(0.3)
        return records

    bundles.imported_bundles = slow
    try:
        threads = [threading.Thread(target=bundles.import_bundle, args=(target, p)) for p in paths]
        [t.start() for t in threads]
        [t.join() for t in threads]
    finally:
        bundles.imported_bundles = real
    assert sorted(r["bundle"] for r in bundles.imported_bundles(target)) == ["part0.olrbundle", "part1.olrbundle"]


def test_a_corrupt_record_of_imports_is_one_line_and_nothing_is_imported(store, tmp_path, capsys):
    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle)
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "imports.json").write_text("{not json")
    assert main(["store", "import", str(bundle), "--results", str(tmp_path / "target")]) == 2
    err = capsys.readouterr().err
    assert "imports.json cannot be read" in err and err.count("\n") == 1
    assert ResultStore(tmp_path / "target").keys() == []


def test_manifest_fields_are_plain_text_in_the_page(store, tmp_path, monkeypatch):
    from olr_book.execute import imported_runs_note

    bundle = tmp_path / "runs.olrbundle"
    bundles.export_bundle(store, bundle, profile="quick")
    with zipfile.ZipFile(bundle) as z:
        manifest = json.loads(z.read("manifest.json"))
        blobs = {n: z.read(n) for n in z.namelist() if n != "manifest.json"}
    manifest["profile"] = "<img src=x onerror=alert(1)>"
    manifest["created"] = "\n```{include} /etc/hostname\n```\n[x](javascript:alert(1)) **b**"
    _reseal(bundle, manifest, blobs)
    target = ResultStore(tmp_path / "target")
    bundles.import_bundle(target, bundle)
    monkeypatch.setenv("OLR_RESULTS_DIR", str(target.root))
    note = imported_runs_note()
    assert "6 of its runs came from the imported bundle runs.olrbundle" in note
    assert not any(c in note for c in "<>`{}[]()*\n!#|&=/\\"[:-1].replace("(", "").replace(")", "")), note
    assert "include" in note and "img src" in note         # shown, as inert text


def test_export_of_a_paper_at_a_profile_takes_only_its_claims_runs(tmp_path, capsys):
    from olr_core.experiments.runner import spec_key
    from olr_core.plan import claim_grids

    store = ResultStore(tmp_path / "source")
    specs = claim_grids("dsp", "tiny")[("dsp", "text", "main")][:2]
    run_grid(specs + expand_grid({"algorithms": ["random"], "rounds": 9}), store)
    bundle = tmp_path / "dsp.olrbundle"
    assert main(["store", "export", str(bundle), "--paper", "dsp", "--profile", "tiny",
                 "--results", str(store.root)]) == 0
    manifest, runs = bundles.read_bundle(bundle)
    assert sorted(runs) == sorted(spec_key(s) for s in specs) and manifest["profile"] == "tiny"
    assert all(e["bytes"] == len(runs[e["key"]]) and e["spec"]["code"] for e in manifest["runs"])


def test_the_evaluation_count_is_the_loops():
    from olr_core.experiments.validate import evaluations

    assert [evaluations(r, 10) for r in (0, 9, 10, 15, 20)] == [1, 2, 2, 3, 3]


MALFORMED_MANIFESTS = {
    "no runs": (lambda m, b: m.pop("runs"), "its manifest has no list of runs ('runs')"),
    "runs not a list": (lambda m, b: m.update(runs="x"), "its manifest has no list of runs ('runs')"),
    "entry not a mapping": (lambda m, b: m["runs"].__setitem__(0, 5), "run 0 of its manifest has no valid 'key'"),
    "spec not a mapping": (lambda m, b: m["runs"][0].update(spec="x"), "run 0 of its manifest has no valid 'spec'"),
    "bytes not a count": (lambda m, b: m["runs"][1].update(bytes="12"), "run 1 of its manifest has no valid 'bytes'"),
}


@pytest.mark.parametrize("malformed", sorted(MALFORMED_MANIFESTS))
def test_a_malformed_manifest_is_one_line_naming_the_field_and_the_fix(store, tmp_path, capsys, malformed):
    change, reason = MALFORMED_MANIFESTS[malformed]
    target = _forged(store, tmp_path, change)
    assert main(["store", "import", str(tmp_path / "runs.olrbundle"), "--results", str(target.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("olr: error: bundle ") and reason in err and "export it again" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
