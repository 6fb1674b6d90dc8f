"""The versioned dataset store: parquet parts per config plus ``manifest.json``.

Layout::

    <store>/manifest.json            dataset version, per-config schema version, files (sha256, rows), changelog
    <store>/<config>/part-<hash>.parquet

Nothing is rewritten in place: a merge adds part files and then replaces the manifest atomically; the manifest
rename is the commit point. Files the manifest does not list are ignored. A merge that fails at any point
removes what it wrote, so the store is byte-identical to before.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kgpubench.errors import DataFileNotFoundError, ManifestError, SchemaValidationError
from kgpubench.schema import TABLES, get_table
from kgpubench.shards import COMPRESSION, atomic_write_bytes, read_file, read_shard
from kgpubench.validation import Violation, validate_table

MANIFEST = "manifest.json"
EMPTY_VERSION = "0.0.0"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def bump_minor(version: str) -> str:
    major, minor, _patch = (int(x) for x in version.split("."))
    return f"{major}.{minor + 1}.0"


@dataclass
class MergeReport:
    """What a merge did: rows added per config, duplicates skipped, the new version."""

    added: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    version_before: str = EMPTY_VERSION
    version_after: str = EMPTY_VERSION

    @property
    def changed(self) -> bool:
        return self.version_after != self.version_before


class Store:
    """A dataset store folder (the packaged one is :func:`kgpubench.resources.default_data_dir`)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._pending: dict | None = None  # the manifest being committed by a merge (for the README)

    # ----- manifest -------------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def manifest(self) -> dict:
        """The manifest (an empty one, version 0.0.0, for a store that has none yet)."""
        if self._pending is not None:
            return json.loads(json.dumps(self._pending))
        if not self.manifest_path.exists():
            if self.path.exists() and not self.path.is_dir():
                raise DataFileNotFoundError(f"{self.path}: is a file, expected a dataset store folder.")
            return {"dataset_version": EMPTY_VERSION, "configs": {}, "changelog": []}
        try:
            data = json.loads(self.manifest_path.read_text())
            data["dataset_version"], data["configs"]  # noqa: B018 - presence check
        except (ValueError, KeyError, TypeError) as exc:
            raise ManifestError(f"{self.manifest_path}: malformed manifest ({exc}); restore it from git.") from None
        return data

    def manifest_sha256(self) -> str | None:
        return sha256_file(self.manifest_path) if self.manifest_path.exists() else None

    @property
    def version(self) -> str:
        return self.manifest()["dataset_version"]

    def configs(self) -> list[str]:
        return sorted(self.manifest()["configs"])

    def files(self, config: str) -> list[dict]:
        return list(self.manifest()["configs"].get(config, {}).get("files", []))

    def rows(self, config: str) -> int:
        return sum(f["rows"] for f in self.files(config))

    # ----- reading --------------------------------------------------------------------------------------
    def _checked_path(self, entry: dict) -> Path:
        path = self.path / entry["path"]
        if not path.exists():
            raise DataFileNotFoundError(f"{path}: listed in {self.manifest_path} but missing; restore the store.")
        digest = sha256_file(path)
        if digest != entry["sha256"]:
            raise ManifestError(
                f"{path}: sha256 {digest[:12]}... does not match the manifest ({entry['sha256'][:12]}...); the "
                "file was changed after it was merged. Restore it (git checkout) or merge data anew."
            )
        return path

    def read(self, config: str, *, verify: bool = True) -> pa.Table:
        """All rows of ``config`` conformed to the current schema (an empty table when there are none)."""
        decl = get_table(config)
        tables = []
        for entry in self.files(config):
            path = self._checked_path(entry) if verify else self.path / entry["path"]
            tables.append(conform(read_file(path), config, path))
        if not tables:
            return decl.empty()
        return pa.concat_tables(tables) if len(tables) > 1 else tables[0]

    def validate(self) -> list[Violation]:
        """Every violation in the store: hashes, row counts and every row of every file."""
        out: list[Violation] = []
        for config in self.configs():
            for entry in self.files(config):
                path = self.path / entry["path"]
                try:
                    self._checked_path(entry)
                except (ManifestError, DataFileNotFoundError) as exc:
                    out.append(Violation(str(path), None, None, None, str(exc)))
                    continue
                table = read_file(path)
                if table.num_rows != entry["rows"]:
                    out.append(Violation(str(path), None, None, table.num_rows,
                                         f"manifest says {entry['rows']} rows"))
                out.extend(validate_table(conform(table, config, path), config, file=str(path)))
        return out

    def key_pairs(self, config: str) -> set[tuple[str, str]]:
        pairs: set[tuple[str, str]] = set()
        for entry in self.files(config):
            t = pq.read_table(self._checked_path(entry), columns=["row_id", "run_id"])
            pairs.update(zip(t["row_id"].to_pylist(), t["run_id"].to_pylist()))
        return pairs

    # ----- merging --------------------------------------------------------------------------------------
    def merge(self, shards: Iterable[Path], *, note: str | None = None, today: str | None = None,
              card_path: Path | None = None) -> MergeReport:
        """Validate ``shards``, add their new rows, bump the minor version; all or nothing.

        Raises :class:`SchemaValidationError` listing every violation when any shard is bad (nothing is
        written). The store's README.md (Hugging Face configs and card) is regenerated in the same
        transaction, its body taken from ``card_path`` when given, else from the current README. Exact
        duplicates (same row_id and run_id, in the store or among the shards) are skipped; repeated
        measurements of one key by other runs stay separate rows.
        """
        manifest = self.manifest()
        report = MergeReport(version_before=manifest["dataset_version"], version_after=manifest["dataset_version"])
        new_by_config = self._validated_new_rows(shards, report)
        if not new_by_config:
            return report
        written: list[Path] = []
        readme = self.path / "README.md"
        old_readme = readme.read_bytes() if readme.exists() else None
        try:
            for config, table in sorted(new_by_config.items()):
                entry = self._write_part(config, table, written)
                block = manifest["configs"].setdefault(config, {"files": []})
                block["schema_version"] = get_table(config).version
                block["files"].append(entry)
                report.files.append(entry["path"])
            version = bump_minor(manifest["dataset_version"])
            manifest["dataset_version"] = version
            manifest.setdefault("changelog", []).append({
                "version": version,
                "date": today or _dt.date.today().isoformat(),
                "added_rows": dict(sorted(report.added.items())),
                "note": note or "merged " + ", ".join(f"{n} {c} rows" for c, n in sorted(report.added.items())),
            })
            self._write_readme(manifest, card_path)
            self._write_manifest(manifest)
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            if old_readme is None:
                readme.unlink(missing_ok=True)
            elif not readme.exists() or readme.read_bytes() != old_readme:
                atomic_write_bytes(readme, old_readme)
            raise
        finally:
            self._pending = None
        report.version_after = version
        return report

    def _validated_new_rows(self, shards: Iterable[Path], report: MergeReport) -> dict[str, pa.Table]:
        violations: list[Violation] = []
        loaded: list[tuple[str, pa.Table]] = []
        for shard in map(Path, shards):
            config, table = read_shard(shard)
            found = validate_table(table, config, file=str(shard))
            violations.extend(found)
            if not found:
                loaded.append((config, table.select(get_table(config).column_names)
                               .cast(get_table(config).arrow_schema())))
        if violations:
            shown = "\n".join(f"  {v}" for v in violations[:20])
            more = f"\n  ... and {len(violations) - 20} more" if len(violations) > 20 else ""
            raise SchemaValidationError(
                f"refused: {len(violations)} schema violation(s); nothing was merged. Fix the shard(s) and "
                f"merge again (`kgpubench validate SHARD` lists them all).\n{shown}{more}", violations)
        new: dict[str, list[pa.Table]] = {}
        seen: dict[str, set] = {}
        for config, table in loaded:
            if config not in seen:
                seen[config] = self.key_pairs(config)
            pairs = list(zip(table["row_id"].to_pylist(), table["run_id"].to_pylist()))
            keep = []
            for pair in pairs:
                keep.append(pair not in seen[config])
                seen[config].add(pair)
            dupes = len(keep) - sum(keep)
            report.duplicates[config] = report.duplicates.get(config, 0) + dupes
            if any(keep):
                new.setdefault(config, []).append(table.filter(pa.array(keep)))
        out = {c: pa.concat_tables(ts) for c, ts in new.items()}
        for c, t in out.items():
            report.added[c] = t.num_rows
        return out

    def _write_part(self, config: str, table: pa.Table, written: list[Path]) -> dict:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression=COMPRESSION)
        data = sink.getvalue().to_pybytes()
        digest = hashlib.sha256(data).hexdigest()
        rel = f"{config}/part-{digest[:16]}.parquet"
        path = self.path / rel
        if path.exists():
            raise ManifestError(f"{path}: a part with this content already exists; the store is inconsistent.")
        written.append(path)
        atomic_write_bytes(path, data)
        return {"path": rel, "sha256": digest, "rows": table.num_rows}

    def _write_readme(self, manifest: dict, card_path: Path | None) -> None:
        from kgpubench.card import readme_body, store_readme

        self._pending = manifest
        body = card_path.read_text() if card_path is not None else readme_body(self.path / "README.md")
        atomic_write_bytes(self.path / "README.md", store_readme(self, body).encode())

    def _write_manifest(self, manifest: dict) -> None:
        text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
        atomic_write_bytes(self.manifest_path, text.encode())


def conform(table: pa.Table, config: str, path: Path | str = "<table>") -> pa.Table:
    """Cast a stored file to the current schema; columns added by a later schema version become null."""
    decl = get_table(config)
    cols = []
    for col in decl.columns:
        if col.name in table.column_names:
            cols.append(table[col.name].cast(col.arrow_type))
        elif col.nullable:
            cols.append(pa.nulls(table.num_rows, col.arrow_type))
        else:
            raise ManifestError(f"{path}: lacks non-nullable column {col.name!r} of schema {config} {decl.version}; "
                                "the schema changed incompatibly: migrate the store.")
    return pa.Table.from_arrays(cols, schema=decl.arrow_schema())


def merge(shards: Iterable[Path], into: Path | str | None = None, *, note: str | None = None) -> MergeReport:
    """Merge shards into a store (default: the packaged one). See :meth:`Store.merge`."""
    from kgpubench.card import CARD_PATH
    from kgpubench.resources import default_data_dir

    store = Store(into or default_data_dir())
    packaged = store.path.resolve() == default_data_dir().resolve()
    card = CARD_PATH if packaged and CARD_PATH.exists() else None
    report = store.merge(shards, note=note, card_path=card)
    if card is not None and report.changed:
        from kgpubench.card import update

        update(store, card)
    return report


def gpus(table: pa.Table) -> list[str]:
    """Distinct GPU names in a table, sorted."""
    if table.num_rows == 0:
        return []
    return sorted(pc.unique(table["gpu_name"]).to_pylist())


__all__ = ["MergeReport", "Store", "TABLES", "conform", "gpus", "merge", "sha256_file"]
