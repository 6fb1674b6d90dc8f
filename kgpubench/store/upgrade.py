"""Rewrite a store's parts written under an older schema version so that each carries every declared column.

A part written before a column existed lacks it; ``Store.read`` fills it with nulls, but a reader of the files
themselves (plain ``datasets``, mlcroissant, ``kgpubench validate PART``) finds the column missing. ``upgrade``
rewrites those parts with the missing nullable columns as nulls: no row is added, removed or changed (each row's
values are compared before the commit), and the new parts replace the old ones in one manifest commit, as a
merge does (the old files are removed afterwards; an interrupted upgrade leaves orphans that
``validate --repair`` removes).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from kgpubench.errors import ManifestError
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.foundation.locking import DEFAULT_LOCK_TIMEOUT
from kgpubench.schema import TABLES, get_table
from kgpubench.store.store import Store, bump_minor, conform


@dataclass
class UpgradeReport:
    """What an upgrade rewrote: parts per config and their rows, and the dataset versions around it."""

    version_before: str
    version_after: str
    parts: dict[str, int] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)


def stale_parts(store: Store) -> dict[str, list[dict]]:
    """Per config, the manifest entries of parts that lack a declared column."""
    out: dict[str, list[dict]] = {}
    for config in store.configs():
        if config not in TABLES:
            continue
        declared = set(get_table(config).column_names)
        for entry in store.files(config):
            names = set(pq.read_schema(store.path / entry["path"]).names)
            if declared - names:
                out.setdefault(config, []).append(entry)
    return out


def upgrade(store: Store, *, today: str | None = None, card_path: Path | None = None,
            lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT) -> UpgradeReport:
    """Rewrite every stale part of ``store`` (see the module doc); a store with none is left untouched.

    Raises
    ------
    ManifestError
        A rewritten part would differ from the old one in a value (never expected: report it).
    """
    with store.writing(timeout=lock_timeout):
        manifest = store.manifest()
        report = UpgradeReport(manifest["dataset_version"], manifest["dataset_version"])
        stale = stale_parts(store)
        if not stale:
            return report
        written: list[Path] = []
        replaced: list[Path] = []
        try:
            for config, entries in sorted(stale.items()):
                block = manifest["configs"][config]
                for entry in entries:
                    old = store.path / entry["path"]
                    table = pq.read_table(old)
                    new = conform(table, config, old)
                    if not new.select(table.column_names).equals(table.cast(new.select(table.column_names).schema)):
                        raise ManifestError(f"{old}: rewriting it would change a value; nothing was upgraded. "
                                            "Report this.")
                    fresh = store._write_part(config, new, manifest, written)
                    block["files"] = [fresh if e["path"] == entry["path"] else e for e in block["files"]]
                    replaced.append(old)
                    report.parts[config] = report.parts.get(config, 0) + 1
                    report.rows[config] = report.rows.get(config, 0) + new.num_rows
                block["schema_version"] = get_table(config).version
            version = bump_minor(manifest["dataset_version"])
            manifest["dataset_version"] = version
            parts = ", ".join(f"{c} {n} part(s)" for c, n in sorted(report.parts.items()))
            manifest.setdefault("changelog", []).append({
                "version": version, "date": today or _dt.date.today().isoformat(), "added_rows": {},
                "note": "parts rewritten to the current schema (missing nullable columns as nulls; no row added, "
                        f"removed or changed): {parts}",
            })
            atomic_write_bytes(store.manifest_path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            raise
        report.version_after = version
        for path in replaced:
            if path not in written:
                path.unlink(missing_ok=True)
        store._write_generated(card_path)
    return report
