"""Results that travel: stored runs packed into one checked bundle (``olr store export`` / ``import``).

A bundle is a zip file: ``manifest.json`` (per run: key, spec with its code fingerprint, data fingerprint, size
and SHA-256 of its file) and ``runs/<key>.npz`` (the store's own files, byte for byte). The zip's comment holds
the SHA-256 of every byte before it, so that one changed byte anywhere in the file is caught. An import
verifies the whole bundle before it writes anything; what the store already holds is never replaced. The
store keeps a list of what it imported (``imports.json``), which the book's pages name.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
import zipfile
from pathlib import Path

import numpy as np

from .store import STORE_FIX, ResultStore, inflated_bytes, key_of, read_run, write_atomically

FORMAT = "olr-bundle/1"
DIGEST_BYTES = 64            # the hex SHA-256 in the zip's comment, the file's last bytes
IMPORTS = "imports.json"
MAX_MANIFEST_BYTES = 64 * 2 ** 20
MAX_RUN_BYTES = 2 ** 30      # one run's file, and its arrays once decompressed


class BundleError(ValueError):
    """A bundle that cannot be trusted: nothing of it was imported."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _stored_meta(blob: bytes) -> dict:
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return json.loads(str(z["__meta__"]))


def export_bundle(store: ResultStore, path, keys: list[str] | None = None, profile: str | None = None) -> dict:
    """Write the runs ``keys`` (default: every readable run) of ``store`` to the bundle ``path``; returns its
    manifest. Each run is read back first (a file that cannot be read is quarantined and left out)."""
    keys = store.keys() if keys is None else keys
    missing = [k for k in keys if not store.verified(k, quiet=True)]
    if missing:
        raise ValueError(f"{len(missing)} selected run(s) are not readable in {store.root} (e.g. {missing[0]}); "
                         "run 'olr store check' and compute them again before exporting")
    entries, blobs = [], {}
    for key in keys:
        blob = store.path(key).read_bytes()
        meta = _stored_meta(blob)
        entries.append({"key": key, "spec": meta["spec"], "data": meta.get("data", ""),
                        "bytes": len(blob), "sha256": _digest(blob)})
        blobs[key] = blob
    manifest = {"format": FORMAT, "profile": profile, "created": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "runs": entries}
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_STORED) as bundle:
        bundle.writestr("manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
        for key, blob in blobs.items():
            bundle.writestr(f"runs/{key}.npz", blob)
        bundle.comment = b"0" * DIGEST_BYTES
    body = zipped.getvalue()[:-DIGEST_BYTES]
    write_atomically(Path(path), lambda tmp: tmp.write_bytes(body + _digest(body).encode()), "the bundle",
                     "free space or name another file")
    return manifest


def bundle_digest(path) -> str:
    """The bundle's SHA-256 as its comment records it (checked by :func:`read_bundle`)."""
    return Path(path).read_bytes()[-DIGEST_BYTES:].decode("ascii", "replace")


def read_bundle(path) -> tuple[dict, dict[str, bytes]]:
    """(manifest, {key: file bytes}) of a bundle whose every byte and every run checks out; else a
    :class:`BundleError` naming the file and what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"bundle {path} does not exist; give the file 'olr store export' wrote")
    data = path.read_bytes()
    body, recorded = data[:-DIGEST_BYTES], data[-DIGEST_BYTES:]
    if len(data) <= DIGEST_BYTES or _digest(body).encode() != recorded:
        raise BundleError(f"bundle {path} is truncated or was changed after export (its SHA-256 does not match the "
                          "one it records); nothing imported: copy it again from where it was exported")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as bundle:
            _check_sizes(path, bundle)
            manifest = json.loads(bundle.read("manifest.json"))
            blobs = {name: bundle.read(name) for name in bundle.namelist() if name != "manifest.json"}
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise BundleError(f"bundle {path} is not a readable olr bundle ({type(err).__name__}: {err}); "
                          "nothing imported") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise BundleError(f"bundle {path} has format {found!r}, not {FORMAT}; nothing imported: export it again "
                          "with this version of olr")
    return manifest, _checked_runs(path, manifest, blobs)


def _check_sizes(path: Path, bundle: zipfile.ZipFile) -> None:
    """Refuse, before anything is decompressed, a bundle whose entries would inflate past their limits."""
    for info in bundle.infolist():
        limit = MAX_MANIFEST_BYTES if info.filename == "manifest.json" else MAX_RUN_BYTES
        if info.file_size > limit:
            raise BundleError(f"bundle {path}: {info.filename} would take {info.file_size:,} bytes once "
                              f"decompressed (at most {limit:,}); nothing imported")


def _entries(path: Path, manifest: dict) -> list[dict]:
    """The manifest's runs, each entry checked for its fields' types (one line naming the first that is not)."""
    runs = manifest.get("runs")
    if not isinstance(runs, list):
        raise BundleError(f"bundle {path}: its manifest has no list of runs ('runs'); nothing imported: export it "
                          "again with 'olr store export'")
    fields = {"key": str, "spec": dict, "data": str, "bytes": int, "sha256": str}
    for number, entry in enumerate(runs):
        wrong = [f for f, kind in fields.items() if not isinstance(entry, dict) or not isinstance(entry.get(f), kind)]
        if wrong or not entry["key"].isalnum():
            raise BundleError(f"bundle {path}: run {number} of its manifest has no valid {(wrong or ['key'])[0]!r}; "
                              "nothing imported: export it again with 'olr store export'")
    return runs


def _checked_runs(path: Path, manifest: dict, blobs: dict[str, bytes]) -> dict[str, bytes]:
    """Every run of the manifest: each file's size, checksum, key, spec, data and code checked against it, and
    its numbers against its spec (lengths, evaluations, ranges, dtypes)."""
    expected = {f"runs/{e['key']}.npz" for e in _entries(path, manifest)}
    if set(blobs) != expected:
        odd = sorted(set(blobs) ^ expected)[0]
        raise BundleError(f"bundle {path}: {odd} is in the manifest or in the zip but not in both; nothing imported")
    runs = {}
    for entry in manifest["runs"]:
        key, blob = entry["key"], blobs[f"runs/{entry['key']}.npz"]
        if len(blob) != entry["bytes"] or _digest(blob) != entry["sha256"]:
            raise BundleError(f"bundle {path}: run {key} does not match its checksum in the manifest; nothing imported")
        try:
            inflated_bytes(blob, MAX_RUN_BYTES)
            meta, _ = read_run(blob, MAX_RUN_BYTES)
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, json.JSONDecodeError) as err:
            reason = err.args[0] if isinstance(err, ValueError) and err.args else type(err).__name__
            raise BundleError(f"bundle {path}: run {key} cannot be used ({reason}); nothing imported") from None
        if key_of(meta) != key or meta["spec"] != entry["spec"] or meta.get("data", "") != entry["data"]:
            raise BundleError(f"bundle {path}: run {key} holds another run than its manifest entry describes "
                              f"(key {key_of(meta)}); nothing imported")
        runs[key] = blob
    return runs


def verify_runs(path: Path, runs: dict[str, bytes], count: int, data_dir: str | None = None) -> int:
    """Compute ``count`` of the bundle's runs again, chosen at random, and require each to equal its bundled
    file bit for bit (runs are deterministic); the number verified. A run this code would key differently
    (other code, other data) or a plug-in's cannot be verified here: :class:`BundleError`."""
    import random

    from .migrate import NOT_DESCRIBED, same_records
    from .runner import execute, spec_key
    from .spec import RunSpec

    if not isinstance(count, int) or count < 0:
        raise ValueError(f"option --verify={count!r} is invalid; give how many runs to compute again (0 or more)")
    for key in random.SystemRandom().sample(sorted(runs), min(count, len(runs))):
        meta, stored = read_run(runs[key], MAX_RUN_BYTES)
        if meta["spec"].get("plugin") or meta["spec"].get("user_plugin"):
            raise BundleError(f"bundle {path}: run {key} is a plug-in's and cannot be verified here; nothing "
                              "imported (import without --verify to trust it)")
        spec = RunSpec(**{k: v for k, v in meta["spec"].items() if k not in NOT_DESCRIBED})
        if spec_key(spec, data_dir) != key:
            raise BundleError(f"bundle {path}: run {key} was made by other code or on other data than this "
                              "checkout's, so it cannot be verified; nothing imported (check out the exporter's "
                              "version, or give --data-dir)")
        if not same_records(execute(spec, data_dir), stored):
            raise BundleError(f"bundle {path}: run {key} ({spec.label()}) computed again here gives other numbers "
                              "than the bundle's; nothing imported: the bundle's runs cannot be trusted")
    return min(count, len(runs))


def import_bundle(store: ResultStore, path, verify: int = 0, data_dir: str | None = None) -> dict:
    """Verify the whole bundle (:func:`read_bundle`; with ``verify``, that many random runs computed again and
    found bit-identical), then write each run the store lacks (atomically, as :meth:`ResultStore.save` does)
    and record the import in ``imports.json``, under a lock. Returns that record."""
    manifest, runs = read_bundle(path)
    verified = verify_runs(Path(path), runs, verify, data_dir)
    store.root.mkdir(parents=True, exist_ok=True)
    with _imports_lock(store):
        imports = imported_bundles(store)               # (a corrupt record refuses the import before any write)
        added = [key for key in runs if not store.verified(key, quiet=True)]
        for key in added:
            write_atomically(store.path(key), lambda tmp, blob=runs[key]: tmp.write_bytes(blob), f"the run {key}",
                             STORE_FIX)
        record = {"bundle": Path(path).name, "sha256": bundle_digest(path), "profile": manifest.get("profile"),
                  "created": manifest.get("created"), "runs": len(runs), "added": len(added), "verified": verified,
                  "imported": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "keys": sorted(runs)}
        imports = [r for r in imports if r["sha256"] != record["sha256"]] + [record]
        write_atomically(store.root / IMPORTS, lambda tmp: tmp.write_text(json.dumps(imports, indent=1)),
                         "the store's record of imports", STORE_FIX)
    return record


class _imports_lock:
    """An exclusive lock on the store's record of imports (``imports.json.lock``), held while it is read,
    changed and written back, so that two imports at once both leave their record."""

    def __init__(self, store: ResultStore):
        self.path = store.root / f"{IMPORTS}.lock"

    def __enter__(self):
        import fcntl

        self.handle = open(self.path, "a")
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


def imported_bundles(store: ResultStore) -> list[dict]:
    """The store's record of its imports (oldest first), or [] if it imported none; a record that cannot be
    read is one line naming it (:class:`ValueError`)."""
    path = store.root / IMPORTS
    if not path.exists():
        return []
    try:
        records = json.loads(path.read_text())
        if not isinstance(records, list) or not all(isinstance(r, dict) and isinstance(r.get("keys"), list)
                                                    and isinstance(r.get("sha256"), str) for r in records):
            raise ValueError("not a list of import records")
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise ValueError(f"the store's record of imports {path} cannot be read ({str(err)[:80]}); move it aside "
                         "(the runs stay usable; only the pages' note of their bundles is lost) and import again") \
            from None
    return records


def bundle_sources(store: ResultStore, keys) -> list[tuple[dict, int]]:
    """For each imported bundle, how many of ``keys`` it brought: [(import record, count)] with count > 0."""
    keys = set(keys)
    return [(r, len(keys & set(r["keys"]))) for r in imported_bundles(store) if keys & set(r["keys"])]
