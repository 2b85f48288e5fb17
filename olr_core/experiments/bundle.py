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

from .store import STORE_FIX, ResultStore, key_of, write_atomically

FORMAT = "olr-bundle/1"
DIGEST_BYTES = 64            # the hex SHA-256 in the zip's comment, the file's last bytes
IMPORTS = "imports.json"


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
            manifest = json.loads(bundle.read("manifest.json"))
            blobs = {name: bundle.read(name) for name in bundle.namelist() if name != "manifest.json"}
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BundleError(f"bundle {path} is not a readable olr bundle ({type(err).__name__}: {err}); "
                          "nothing imported") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise BundleError(f"bundle {path} has format {found!r}, not {FORMAT}; nothing imported: export it again "
                          "with this version of olr")
    return manifest, _checked_runs(path, manifest, blobs)


def _checked_runs(path: Path, manifest: dict, blobs: dict[str, bytes]) -> dict[str, bytes]:
    """Every run of the manifest, each file's size, checksum, key, spec, data and code checked against it."""
    expected = {f"runs/{e['key']}.npz" for e in manifest["runs"]}
    if set(blobs) != expected:
        odd = sorted(set(blobs) ^ expected)[0]
        raise BundleError(f"bundle {path}: {odd} is in the manifest or in the zip but not in both; nothing imported")
    runs = {}
    for entry in manifest["runs"]:
        key, blob = entry["key"], blobs[f"runs/{entry['key']}.npz"]
        if len(blob) != entry["bytes"] or _digest(blob) != entry["sha256"]:
            raise BundleError(f"bundle {path}: run {key} does not match its checksum in the manifest; nothing imported")
        try:
            meta = _stored_meta(blob)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError) as err:
            raise BundleError(f"bundle {path}: run {key} cannot be read ({type(err).__name__}); nothing imported") \
                from None
        if key_of(meta) != key or meta["spec"] != entry["spec"] or meta.get("data", "") != entry["data"]:
            raise BundleError(f"bundle {path}: run {key} holds another run than its manifest entry describes "
                              f"(key {key_of(meta)}); nothing imported")
        runs[key] = blob
    return runs


def import_bundle(store: ResultStore, path) -> dict:
    """Verify the whole bundle (:func:`read_bundle`), then write each run the store lacks (atomically, as
    :meth:`ResultStore.save` does) and record the import in ``imports.json``. Returns that record."""
    manifest, runs = read_bundle(path)
    added = [key for key in runs if not store.verified(key, quiet=True)]
    for key in added:
        write_atomically(store.path(key), lambda tmp, blob=runs[key]: tmp.write_bytes(blob), f"the run {key}",
                         STORE_FIX)
    record = {"bundle": Path(path).name, "sha256": bundle_digest(path), "profile": manifest.get("profile"),
              "created": manifest.get("created"), "runs": len(runs), "added": len(added),
              "imported": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "keys": sorted(runs)}
    imports = imported_bundles(store)
    imports = [r for r in imports if r["sha256"] != record["sha256"]] + [record]
    write_atomically(store.root / IMPORTS, lambda tmp: tmp.write_text(json.dumps(imports, indent=1)),
                     "the store's record of imports", STORE_FIX)
    return record


def imported_bundles(store: ResultStore) -> list[dict]:
    """The store's record of its imports (oldest first), or [] if it imported none."""
    path = store.root / IMPORTS
    return json.loads(path.read_text()) if path.exists() else []


def bundle_sources(store: ResultStore, keys) -> list[tuple[dict, int]]:
    """For each imported bundle, how many of ``keys`` it brought: [(import record, count)] with count > 0."""
    keys = set(keys)
    return [(r, len(keys & set(r["keys"]))) for r in imported_bundles(store) if keys & set(r["keys"])]
