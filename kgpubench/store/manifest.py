"""A dataset store's ``manifest.json``: read and checked for shape, with no heavy import.

The store (:mod:`kgpubench.store.store`) reads its manifest through :func:`read_manifest`; so does ``kgpubench
collect`` when it looks up which configurations a store already holds (:mod:`kgpubench.measure.stored`), which must
not load the card's dependencies (pandas, PyYAML) on a GPU machine.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kgpubench.errors import DataFileNotFoundError, ManifestError
from kgpubench.schema import TABLES

MANIFEST = "manifest.json"
EMPTY_VERSION = "0.0.0"
_SEMVER = re.compile(r"\d+\.\d+\.\d+")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\.parquet")


def read_manifest(store: Path) -> dict:
    """The manifest of the store folder ``store`` (an empty one, version 0.0.0, when it has none yet), checked for
    shape; one-line errors for a store path that is a file, an unreadable or malformed manifest."""
    store = Path(store)
    path = store / MANIFEST
    if not path.exists():
        if store.exists() and not store.is_dir():
            raise DataFileNotFoundError(f"{store}: is a file, expected a dataset store folder.")
        return {"dataset_version": EMPTY_VERSION, "configs": {}, "changelog": []}
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read the manifest ({exc.strerror or exc}); check its "
                            "permissions.") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = " ".join(str(exc).split())[:100]
        raise ManifestError(f"{path}: malformed manifest ({why}); restore it from git (git checkout -- {path}) or a "
                            "backup.") from None
    return check_manifest(data, path)


def check_manifest(data: object, path: Path) -> dict:
    """``data`` (a parsed manifest) if it has the manifest's shape, else a one-line :class:`ManifestError`.

    Every listed file must be ``<config>/<name>.parquet`` inside the store (no ``..``, no absolute path), with a
    sha256 and a row count; configs must be known; the changelog entries need a version, a date and a note.
    """
    def bad(what: str) -> ManifestError:
        return ManifestError(f"{path}: malformed manifest ({what}); restore it from git (git checkout -- {path}) "
                             "or a backup.")

    if not isinstance(data, dict):
        raise bad(f"top level is a {type(data).__name__}, expected an object")
    version = data.get("dataset_version")
    if not isinstance(version, str) or not _SEMVER.fullmatch(version):
        raise bad(f"dataset_version {repr(version)[:40]} is not MAJOR.MINOR.PATCH")
    configs = data.get("configs")
    if not isinstance(configs, dict):
        raise bad("`configs` is missing or not an object")
    seen: set[str] = set()
    for name, block in configs.items():
        if name not in TABLES:
            raise bad(f"config {repr(name)[:40]} is not one of {', '.join(TABLES)}")
        if not isinstance(block, dict) or not isinstance(block.get("files"), list):
            raise bad(f"configs.{name}.files is missing or not a list")
        if not isinstance(block.get("schema_version", ""), str):
            raise bad(f"configs.{name}.schema_version is not a string")
        for i, entry in enumerate(block["files"]):
            where = f"configs.{name}.files[{i}]"
            if not isinstance(entry, dict):
                raise bad(f"{where} is not an object")
            rel, digest, rows = entry.get("path"), entry.get("sha256"), entry.get("rows")
            folder, _, file = rel.partition("/") if isinstance(rel, str) else ("", "", "")
            if folder != name or not _FILE_NAME.fullmatch(file):
                raise bad(f"{where}.path {repr(rel)[:60]} is not {name}/<file>.parquet inside the store")
            if rel in seen:
                raise bad(f"{where}.path {rel!r} is listed twice")
            seen.add(rel)
            if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
                raise bad(f"{where}.sha256 {repr(digest)[:40]} is not 64 hex digits")
            if not isinstance(rows, int) or isinstance(rows, bool) or rows < 0:
                raise bad(f"{where}.rows {repr(rows)[:40]} is not a row count")
    changelog = data.get("changelog", [])
    if not isinstance(changelog, list) or not all(
            isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("version", "date", "note"))
            for e in changelog):
        raise bad("changelog is not a list of entries with version, date and note")
    return data
