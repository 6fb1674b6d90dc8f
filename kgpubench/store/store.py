"""The versioned dataset store: parquet parts per config plus ``manifest.json``.

Layout::

    <store>/manifest.json            dataset version, per-config schema version, files (sha256, rows), changelog
    <store>/README.md                Hugging Face configs and card, generated from the manifest
    <store>/croissant.json           Croissant metadata, generated from the schema and the manifest
    <store>/<config>/part-<hash>.parquet
    <store>/.kgpubench.lock          taken by writers (fcntl), never removed

Writes are transactions. A writer takes the store's lock (a second writer waits, then fails with one line), adds
new part files, then replaces ``manifest.json`` atomically: that rename is the commit point, so a reader sees
the old version or the new one, never a half state. ``README.md`` and ``croissant.json`` are regenerated from the
committed manifest afterwards, so they never describe a version that does not exist. A kill before the commit
leaves the store's data as they were plus, at most, orphaned parts or temp files; a kill after it leaves the
new version with a README (or croissant.json) that may still describe the previous one. ``kgpubench validate``
reports both and ``kgpubench validate --repair`` clears them; a later merge is never blocked by them and finishes
that work itself (it removes the leftovers under its lock, and a retry that adds nothing regenerates a stale
README and croissant.json).

A store never follows a symbolic link out of its folder: :meth:`Store.links` lists any among the files and
folders it owns, ``validate`` reports them, and merge and repair refuse such a store with nothing changed.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from kgpubench.errors import (
    DataFileNotFoundError,
    KgpubenchError,
    ManifestError,
    OutputWriteError,
)
from kgpubench.foundation.files import COMPRESSION, TEMP_SUFFIX, atomic_write_bytes, write_error
from kgpubench.foundation.locking import DEFAULT_LOCK_TIMEOUT, LOCK, store_lock
from kgpubench.resources import default_data_dir
from kgpubench.schema import TABLES, get_table
from kgpubench.store.card import CARD_PATH, readme_body, render_card, store_readme, update
from kgpubench.store.croissant import CROISSANT, render
from kgpubench.store.identity import (
    Conflict,
    conflict_error,
    conflicts_of,
    derived_change_error,
    identity,
    unequal_columns,
)
from kgpubench.store.manifest import EMPTY_VERSION, MANIFEST, read_manifest
from kgpubench.store.shards import read_file
from kgpubench.store.validation import Violation, refusal, validate_shard, validate_table

README = "README.md"
_PART = re.compile(r"part-[0-9a-f]{16}\.parquet")

# Points a merge passes, in order; tests kill the process at each (see _checkpoint).
KILL_POINTS = ("locked", "part-temp", "part", "manifest-temp", "manifest", "readme-temp", "readme")
_FAULT_HOOK: Callable[[str], None] | None = None


def _checkpoint(point: str) -> None:
    """Call the test hook (if one is installed) at a named point of a write."""
    if _FAULT_HOOK is not None:
        _FAULT_HOOK(point)


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
    """What a merge did: rows added per config, duplicates skipped, rows replaced (``replace_derived``) and the
    derived columns that changed in them, the new version."""

    added: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    replaced: dict[str, int] = field(default_factory=dict)
    replaced_columns: dict[str, list[str]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    version_before: str = EMPTY_VERSION
    version_after: str = EMPTY_VERSION
    finished: list[str] = field(default_factory=list)  # what an interrupted earlier write left, cleared now

    @property
    def changed(self) -> bool:
        return self.version_after != self.version_before


@dataclass
class _Incoming:
    """Validated rows of one config from the shards being merged, with where each row came from."""

    table: pa.Table
    origin: list[tuple[str, int]]  # (shard file, row in that shard) per row


@dataclass
class _Replacement:
    """Incoming rows that replace stored ones: ``positions`` (row numbers in the config's stored rows, in manifest
    file order) and, row-aligned, the replacing ``rows``; ``columns``: the derived columns that differ."""

    positions: np.ndarray
    rows: pa.Table
    columns: list[str]


class Store:
    """A dataset store folder (the packaged one is :func:`kgpubench.resources.default_data_dir`)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    # ----- manifest -------------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def manifest(self) -> dict:
        """The manifest (an empty one, version 0.0.0, for a store that has none yet), checked for shape."""
        return read_manifest(self.path)

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

    def card_path(self) -> Path | None:
        """DATASET_CARD.md when this is the packaged store of a source checkout (its README body), else None."""
        try:
            packaged = self.path.resolve() == default_data_dir().resolve()
        except OSError:
            return None
        return CARD_PATH if packaged and CARD_PATH.exists() else None

    # ----- reading --------------------------------------------------------------------------------------
    def _checked_path(self, entry: dict) -> Path:
        path = self.path / entry["path"]
        if path.is_symlink() or path.parent.is_symlink():
            raise ManifestError(f"{path}: is (or is in) a symbolic link; a store never follows one out of its "
                                "folder. Replace it with the real file.")
        if not path.is_file():
            raise DataFileNotFoundError(f"{path}: listed in {self.manifest_path} but missing; restore the store.")
        try:
            digest = sha256_file(path)
        except OSError as exc:
            raise DataFileNotFoundError(f"{path}: listed in {self.manifest_path} but unreadable "
                                        f"({exc.strerror or exc}); check its permissions.") from None
        if digest != entry["sha256"]:
            raise ManifestError(
                f"{path}: sha256 {digest[:12]}... does not match the manifest ({entry['sha256'][:12]}...); the "
                "file was changed after it was merged. Restore it (git checkout) or merge data anew."
            )
        return path

    def _read_checked(self, entry: dict) -> pa.Table:
        """A listed file read while its sha256 is checked in a second thread (both release the GIL, so the check
        costs no wall time); a hash mismatch is raised before anything the read raised, as when done in turn."""
        path = self.path / entry["path"]
        if not path.is_file():
            raise DataFileNotFoundError(f"{path}: listed in {self.manifest_path} but missing; restore the store.")
        with ThreadPoolExecutor(max_workers=1) as pool:
            checked = pool.submit(self._checked_path, entry)
            try:
                table, failure = read_file(path), None
            except KgpubenchError as exc:
                table, failure = None, exc
            checked.result()
        if failure is not None:
            raise failure
        return table

    def read(self, config: str, *, verify: bool = True, columns: Sequence[str] | None = None) -> pa.Table:
        """All rows of ``config`` conformed to the current schema (an empty table when there are none).

        ``columns`` (declared names) reads only those, in that order, without hash checks (``verify`` must be
        False): a column a file lacks is null, as the whole table would have it.
        """
        decl = get_table(config)
        if columns is not None:
            if verify:
                raise ValueError("Store.read: columns= reads parts of files, which cannot be hash-checked; "
                                 "pass verify=False")
            return self._read_columns(config, list(columns))
        tables = []
        for entry in self.files(config):
            path = self.path / entry["path"]
            table = self._read_checked(entry) if verify else read_file(path)
            tables.append(conform(table, config, path))
        if not tables:
            return decl.empty()
        return pa.concat_tables(tables) if len(tables) > 1 else tables[0]

    def _read_columns(self, config: str, columns: list[str]) -> pa.Table:
        schema = get_table(config).arrow_schema()
        unknown = [c for c in columns if c not in schema.names]
        if unknown:
            raise ValueError(f"Store.read: {unknown[0]!r} is not a column of schema {config}")
        target = pa.schema([schema.field(c) for c in columns])
        tables = []
        for entry in self.files(config):
            path = self.path / entry["path"]
            table = read_file(path, columns=columns)
            tables.append(conform(table, config, path, schema=target))
        if not tables:
            return target.empty_table()
        return pa.concat_tables(tables) if len(tables) > 1 else tables[0]

    def _keys(self, config: str) -> pa.Array:
        parts = [pq.read_table(self._checked_path(e), columns=["row_id", "run_id"]) for e in self.files(config)]
        if not parts:
            return pa.array([], pa.string())
        return identity(pa.concat_tables(parts))

    # ----- symbolic links ------------------------------------------------------------------------------
    def links(self) -> list[Path]:
        """Symbolic links among the files and folders a store owns (manifest, README, croissant, lock, config
        folders and what they hold). A store never follows one: through a linked config folder, a repair would
        delete (and a merge write) another store's parts as if they were this one's leftovers."""
        if not self.path.is_dir():
            return []
        found = [p for p in (self.path / n for n in (MANIFEST, README, CROISSANT, LOCK, *TABLES)) if p.is_symlink()]
        for config in TABLES:
            folder = self.path / config
            if folder.is_dir() and not folder.is_symlink():
                try:
                    found.extend(folder / n for n in sorted(os.listdir(folder)) if (folder / n).is_symlink())
                except OSError:
                    continue
        return found

    def _refuse_links(self, doing: str) -> None:
        links = self.links()
        if links:
            raise ManifestError(f"{links[0]}: is a symbolic link ({len(links)} in the store); a store never follows "
                                f"one out of its folder, so nothing was {doing}. Replace it with the real file or "
                                "folder (or remove it) and try again.")

    # ----- checking -------------------------------------------------------------------------------------
    def validate(self, *, lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT,
                 on_wait: Callable[[str], None] | None = None) -> list[Violation]:
        """Every violation in the store: hashes, row counts, every row, and what interrupted writes left.

        Waits for a merge in progress (shared lock) so that its parts are not mistaken for orphans.
        """
        with self._lock(exclusive=False, timeout=lock_timeout, on_wait=on_wait):
            out: list[Violation] = [Violation(str(p), None, None, None, "is a symbolic link; a store never follows "
                                              "one out of its folder (replace it with the real file or folder)")
                                    for p in self.links()]
            if out:
                return out
            for config in self.configs():
                for entry in self.files(config):
                    out.extend(self._validate_file(config, entry))
            readable = not out  # the README is generated from the listed parts: only checked when they are sound
            out.extend(Violation(str(p), None, None, None, why) for p, why in self.leftovers())
            if readable:
                try:
                    out.extend(Violation(str(p), None, None, None, why) for p, why in self._stale_generated())
                except OSError as exc:
                    out.append(Violation(str(exc.filename or self.path), None, None, None,
                                         f"cannot be read to check it ({exc.strerror or exc})"))
            return out

    def _validate_file(self, config: str, entry: dict) -> list[Violation]:
        path = self.path / entry["path"]
        try:
            self._checked_path(entry)
            table = read_file(path)
            if table.num_rows != entry["rows"]:
                return [Violation(str(path), None, None, table.num_rows, f"manifest says {entry['rows']} rows")]
            return validate_table(conform(table, config, path), config, file=str(path))
        except (KgpubenchError, pa.ArrowException) as exc:
            text = str(exc).removeprefix(f"{path}: ")
            return [Violation(str(path), None, None, None, text)]

    def leftovers(self) -> list[tuple[Path, str]]:
        """Files an interrupted write left behind, each with what it is: parts no manifest lists, temp files.

        They are never read; ``kgpubench validate --repair`` removes them.
        """
        if not self.path.is_dir():
            return []
        fix = f"the data are unaffected; `kgpubench validate --repair {self.path}` removes it"
        found: list[tuple[Path, str]] = []
        folders = [(self.path, None)] + [(self.path / c, c) for c in TABLES
                                         if (self.path / c).is_dir() and not (self.path / c).is_symlink()]
        names = {}
        for folder, _ in folders:
            try:
                names[folder] = sorted(os.listdir(folder))
            except OSError:  # an unreadable folder: nothing a write of ours left can be told apart in it
                names[folder] = []
        listed = {e["path"] for c in self.configs() for e in self.files(c)}  # after listing: a commit in between
        for folder, config in folders:
            for name in names[folder]:
                if (folder / name).is_symlink():
                    continue
                if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                    found.append((folder / name, f"unfinished temp file of an interrupted write; {fix}"))
                elif config and _PART.fullmatch(name) and f"{config}/{name}" not in listed:
                    found.append((folder / name, f"orphaned part: not listed in {MANIFEST} (left by a merge that "
                                                 f"was interrupted before its commit); {fix}"))
        return found

    def _stale_generated(self) -> list[tuple[Path, str]]:
        """README.md (and the packaged DATASET_CARD.md) when they do not describe the committed manifest."""
        if not self.manifest_path.exists():
            return []
        stale = update(self, self.card_path(), check=True)
        return [(p, f"does not describe dataset version {self.version} of {MANIFEST} as this "
                    f"kgpubench's schema generates it (a merge was interrupted after its commit, the file was "
                    f"edited, or the schema's descriptions changed); `kgpubench validate --repair {self.path}` "
                    "regenerates it") for p in stale]

    def _clear_leftovers(self) -> list[str]:
        """Remove what an interrupted write left (temp files, orphaned parts); the caller holds the write lock.
        Returns one line per file removed."""
        actions = []
        for path, _why in self.leftovers():
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise write_error(path, exc) from None
            actions.append(f"removed {path}")
        return actions

    def repair(self, *, lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT,
               on_wait: Callable[[str], None] | None = None) -> list[str]:
        """Clear what interrupted writes left: remove orphaned parts and temp files, regenerate the README.

        Listed files are never touched: a missing or changed part must be restored from git. A store holding a
        symbolic link (see :meth:`links`) is refused, with nothing removed. Returns one line per action taken.
        """
        if not self.manifest_path.exists():
            raise DataFileNotFoundError(f"{self.path}: no {MANIFEST}; not a dataset store, nothing to repair.")
        self._refuse_links("repaired")  # before the lock: the lock file itself may be the link
        with self._lock(exclusive=True, timeout=lock_timeout, on_wait=on_wait):
            self.manifest()  # a malformed manifest cannot be repaired here: one line saying so
            self._refuse_links("repaired")
            actions = self._clear_leftovers()
            for path in update(self, self.card_path()):
                actions.append(f"regenerated {path}")
            return actions

    # ----- locking --------------------------------------------------------------------------------------
    @contextmanager
    def writing(self, *, timeout: float | None = DEFAULT_LOCK_TIMEOUT,
                on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the store's write lock (creating the store folder); see :meth:`merge` for ``timeout``."""
        with self._lock(exclusive=True, timeout=timeout, on_wait=on_wait):
            yield

    def _lock(self, *, exclusive: bool, timeout: float | None, on_wait: Callable[[str], None] | None):
        on_locked = (lambda: _checkpoint("locked")) if exclusive else None
        return store_lock(self.path, exclusive=exclusive, timeout=timeout, on_wait=on_wait, on_locked=on_locked)

    # ----- merging --------------------------------------------------------------------------------------
    def merge(self, shards: Iterable[Path], *, note: str | None = None, today: str | None = None,
              card_path: Path | None = None, lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT,
              on_wait: Callable[[str], None] | None = None, replace_derived: bool = False) -> MergeReport:
        """Validate ``shards``, add their new rows, bump the minor version; all or nothing.

        A row's identity is (row_id, run_id). A row whose identity is already in the store (or earlier in the
        shards) with identical values is a duplicate and is skipped, so merging a shard again adds nothing; with
        a different measured value it is a conflict and nothing is merged. Repeated measurements of one key by
        other runs are separate rows. A row that agrees with a stored row in every value but the *derived* ones
        (:attr:`kgpubench.schema.Table.derived_columns`: catalogue figures written with the row) is refused too,
        unless ``replace_derived``: then it replaces the stored row in place (the part holding it is rewritten,
        in the same commit), and the changelog says how many rows of which config were replaced and which
        columns changed.

        Parameters
        ----------
        shards : iterable of path
            Shard files or folders.
        note, today : str, optional
            Changelog note and date (default: a summary of the rows added, today's date).
        card_path : path, optional
            Body of the regenerated README.md (DATASET_CARD.md, kept up to date too); default: the README's own.
        lock_timeout : float or None
            Seconds to wait for another writer of the store (0: fail at once, None: wait as long as it takes).
        on_wait : callable, optional
            Receives the one-line message when the merge has to wait (default: printed on stderr).

        Raises
        ------
        SchemaValidationError
            A shard breaks the schema (every violation attached); nothing is written.
        MergeConflictError
            A row conflicts with a stored or another incoming row (every conflict attached); nothing is written.
        DerivedChangeError
            Without ``replace_derived``, a row differs from a stored one in derived columns only; nothing is
            written.
        StoreLockedError
            Another process kept the store locked for ``lock_timeout`` seconds.
        """
        incoming, duplicates = self._incoming(shards)
        self._refuse_links("merged")
        with self._lock(exclusive=True, timeout=lock_timeout, on_wait=on_wait):
            self._refuse_links("merged")
            manifest = self.manifest()  # read under the lock: a concurrent writer's commit is seen
            report = MergeReport(version_before=manifest["dataset_version"],
                                 version_after=manifest["dataset_version"])
            report.finished = self._clear_leftovers()
            new, conflicts, changes, replacements = {}, [], [], {}
            for config, rows in sorted(incoming.items()):
                kept, dupes, found, changed, replacement = self._against_store(config, rows, replace_derived)
                conflicts.extend(found)
                changes.extend(changed)
                report.duplicates[config] = duplicates.get(config, 0) + dupes
                if kept.num_rows:
                    new[config] = kept
                if replacement is not None:
                    replacements[config] = replacement
            if conflicts:
                raise conflict_error(conflicts, "in the store")
            if changes and not replace_derived:
                raise derived_change_error(changes)
            if not new and not replacements:  # a retry after a kill past the commit: finish its README, croissant
                if self.manifest_path.exists():
                    try:
                        report.finished += [f"regenerated {p}" for p in update(self, card_path or self.card_path())]
                    except OSError as exc:
                        raise write_error(Path(exc.filename or self.path), exc) from None
                return report
            report.added = {c: t.num_rows for c, t in new.items()}
            report.replaced = {c: r.rows.num_rows for c, r in replacements.items()}
            report.replaced_columns = {c: r.columns for c, r in replacements.items()}
            self._commit(manifest, new, report, note=note, today=today, replacements=replacements)
            _checkpoint("manifest")
            try:
                self._write_generated(card_path)
            except OutputWriteError as exc:
                raise type(exc)(f"merged as dataset version {report.version_after}, but {exc} "
                                f"`kgpubench validate --repair {self.path}` regenerates README.md.") from None
            _checkpoint("readme")
        return report

    def _incoming(self, shards: Iterable[Path]) -> tuple[dict[str, _Incoming], dict[str, int]]:
        """Validated rows per config, duplicates among the shards removed (conflicts among them refused)."""
        violations: list[Violation] = []
        by_config: dict[str, list[tuple[str, pa.Table]]] = {}
        for shard in map(Path, shards):
            config, table, found = validate_shard(shard)
            violations.extend(found)
            if not found:
                decl = get_table(config)
                table = table.select(decl.column_names).cast(decl.arrow_schema())
                by_config.setdefault(config, []).append((str(shard), table))
        if violations:
            raise refusal(violations, "nothing was merged", "`kgpubench validate SHARD` lists every violation; "
                                                            "fix the shard(s) and merge again.")
        out: dict[str, _Incoming] = {}
        duplicates: dict[str, int] = {}
        conflicts: list[Conflict] = []
        for config, parts in by_config.items():
            table = pa.concat_tables([t for _, t in parts]) if len(parts) > 1 else parts[0][1]
            origin = [(name, i) for name, t in parts for i in range(t.num_rows)]
            keys = identity(table).to_pylist()
            first: dict[str, int] = {}
            later: list[tuple[int, int]] = []
            for i, key in enumerate(keys):
                if key in first:
                    later.append((i, first[key]))
                else:
                    first[key] = i
            if later:  # every column compared, derived ones too: two shards cannot both be right
                news, olds = [i for i, _ in later], [j for _, j in later]
                a, b = table.take(news), table.take(olds)
                masks = unequal_columns(a, b, table.column_names)
                conflicts.extend(conflicts_of(a, b, masks, [origin[i] for i in news],
                                              lambda i, o=origin, j=olds: "{} row {}".format(*o[j[i]])))
                keep = np.ones(table.num_rows, dtype=bool)
                keep[news] = False
                table = table.filter(pa.array(keep))
                origin = [o for o, k in zip(origin, keep) if k]
            duplicates[config] = len(later)
            out[config] = _Incoming(table, origin)
        if conflicts:
            raise conflict_error(conflicts, "in another shard of this merge")
        return out, duplicates

    def _against_store(self, config: str, rows: _Incoming, replace_derived: bool = False
                       ) -> tuple[pa.Table, int, list[Conflict], list[Conflict], _Replacement | None]:
        """The rows not yet in the store, how many were exact duplicates, the conflicts (a measured value
        differs), the derived changes (only derived values differ; listed for the refusal, so not when
        ``replace_derived``) and the rows that would replace stored ones.

        Vectorised: the rows with a stored identity and their stored counterparts are aligned once and compared
        column by column."""
        table = rows.table
        if not self.files(config):
            return table, 0, [], [], None
        keys = identity(table)
        present = pc.is_in(keys, value_set=self._keys(config)).to_numpy(zero_copy_only=False)
        if not present.any():
            return table, 0, [], [], None
        stored = self.read(config)
        news = np.flatnonzero(present)
        olds = pc.index_in(keys.take(pa.array(news)), value_set=identity(stored)).to_numpy(zero_copy_only=False)
        a, b = table.take(pa.array(news)), stored.take(pa.array(olds))
        origin = [rows.origin[i] for i in news]
        derived = set(get_table(config).derived_columns)
        measured = unequal_columns(a, b, [c for c in table.column_names if c not in derived])
        conflicts = conflicts_of(a, b, measured, origin, lambda _i: "the store")
        if conflicts:
            return table.filter(pa.array(~present)), 0, conflicts, [], None
        masks = unequal_columns(a, b, [c for c in table.column_names if c in derived])
        # every changed value read out, for the refusal only: a replacement of many rows need not read them
        changes = [] if replace_derived else conflicts_of(a, b, masks, origin, lambda _i: "the store")
        replacement = None
        if masks:
            changed = np.logical_or.reduce(list(masks.values()))
            picked = pa.array(np.flatnonzero(changed))
            replacement = _Replacement(olds[changed], a.take(picked), sorted(masks))
        dupes = len(news) - (replacement.rows.num_rows if replacement else 0)
        return table.filter(pa.array(~present)), dupes, [], changes, replacement

    def _commit(self, manifest: dict, new: dict[str, pa.Table], report: MergeReport, *, note: str | None,
                today: str | None, replacements: dict[str, _Replacement] | None = None) -> None:
        """Write the parts (rewritten ones for replaced rows, then new ones), then the manifest (the commit point);
        on any failure before it, remove the parts written. Parts that rewritten ones replace are removed after the
        commit (an interruption leaves them as orphans, which ``validate --repair`` or the next merge removes)."""
        written: list[Path] = []
        superseded: list[Path] = []
        try:
            for config, replacement in sorted((replacements or {}).items()):
                superseded.extend(self._rewrite_parts(config, replacement, manifest, written))
            for config, table in sorted(new.items()):
                entry = self._write_part(config, table, manifest, written)
                block = manifest["configs"].setdefault(config, {"files": []})
                block["schema_version"] = get_table(config).version
                block["files"].append(entry)
                report.files.append(entry["path"])
                _checkpoint("part")
            _sync_dirs({p.parent for p in written})
            version = bump_minor(manifest["dataset_version"])
            manifest["dataset_version"] = version
            summary = "merged " + (", ".join(f"{n} {c} rows" for c, n in sorted(report.added.items())) or "no new rows")
            entry = {
                "version": version,
                "date": today or _dt.date.today().isoformat(),
                "added_rows": dict(sorted(report.added.items())),
                "note": note or summary,
            }
            if report.replaced:
                replaced = "; ".join(f"replaced {n} {c} rows whose catalogue-derived columns changed "
                                     f"({', '.join(report.replaced_columns[c])}); their measured values are unchanged"
                                     for c, n in sorted(report.replaced.items()))
                entry["note"] = f"{entry['note']}. {replaced}" if note else f"{summary}; {replaced}"
                entry["replaced_rows"] = dict(sorted(report.replaced.items()))
            manifest.setdefault("changelog", []).append(entry)
            text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
            atomic_write_bytes(self.manifest_path, text.encode(), before_rename=lambda _p: _checkpoint("manifest-temp"))
        except BaseException:
            for path in written:
                path.unlink(missing_ok=True)
            raise
        _sync_dirs({self.path})
        report.version_after = version
        for path in superseded:
            if path not in written:
                path.unlink(missing_ok=True)

    def _rewrite_parts(self, config: str, replacement: _Replacement, manifest: dict,
                       written: list[Path]) -> list[Path]:
        """Rewrite each listed part of ``config`` holding a replaced row, with the replacing row in its place (the
        row order is kept); list the new part in ``manifest`` instead of the old one. Returns the old parts."""
        block = manifest["configs"][config]
        order = np.argsort(replacement.positions, kind="stable")
        positions = replacement.positions[order]
        start, superseded, files = 0, [], []
        for entry in block["files"]:
            end = start + entry["rows"]
            lo, hi = np.searchsorted(positions, [start, end])
            if lo == hi:
                files.append(entry)
            else:
                path = self.path / entry["path"]
                part = conform(self._read_checked(entry), config, path)
                index = np.arange(part.num_rows)
                index[positions[lo:hi] - start] = part.num_rows + np.arange(hi - lo)
                rows = replacement.rows.take(pa.array(order[lo:hi]))
                fresh = pa.concat_tables([part, rows]).take(pa.array(index))
                files.append(self._write_part(config, fresh, manifest, written))
                superseded.append(path)
                _checkpoint("part")
            start = end
        block["files"] = files
        block["schema_version"] = get_table(config).version
        return superseded

    def _write_part(self, config: str, table: pa.Table, manifest: dict, written: list[Path]) -> dict:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression=COMPRESSION)
        data = sink.getvalue().to_pybytes()
        digest = hashlib.sha256(data).hexdigest()
        rel = f"{config}/part-{digest[:16]}.parquet"
        path = self.path / rel
        listed = {e["path"] for e in manifest["configs"].get(config, {}).get("files", [])}
        if rel in listed:  # never overwrite a listed part (the rows were filtered, so this is a hash collision)
            raise ManifestError(f"{path}: a listed part already has this name; nothing was merged. Report this.")
        entry = {"path": rel, "sha256": digest, "rows": table.num_rows}
        if path.is_file() and not path.is_symlink() and sha256_file(path) == digest:
            return entry  # an orphan with exactly these bytes, left by an interrupted merge: adopt it
        written.append(path)
        atomic_write_bytes(path, data, before_rename=lambda _p: _checkpoint("part-temp"))
        return entry

    def _write_generated(self, card_path: Path | None) -> None:
        """croissant.json and README.md from the committed manifest, and ``card_path`` (DATASET_CARD.md) when
        given."""
        readme = self.path / README
        body = card_path.read_text() if card_path is not None else readme_body(readme)
        atomic_write_bytes(self.path / CROISSANT, render(self).encode())
        atomic_write_bytes(readme, store_readme(self, body).encode(),
                           before_rename=lambda _p: _checkpoint("readme-temp"))
        if card_path is not None:
            text = render_card(body, self)
            if card_path.read_text() != text:
                atomic_write_bytes(card_path, text.encode())


def _sync_dirs(folders: Iterable[Path]) -> None:
    """fsync folders so renames in them survive a power cut (best effort: not every file system allows it)."""
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


def conform(table: pa.Table, config: str, path: Path | str = "<table>", *,
            schema: pa.Schema | None = None) -> pa.Table:
    """Cast a stored file to the current schema; columns added by a later schema version become null.

    ``schema``: only these declared columns (a subset of the current schema, in its order or any other).
    """
    decl = get_table(config)
    schema = decl.arrow_schema() if schema is None else schema
    wanted = set(schema.names)
    if table.schema.equals(schema, check_metadata=False):  # written by this schema version: nothing to cast
        return table.replace_schema_metadata(schema.metadata)
    have = {name: i for i, name in enumerate(table.schema.names)}
    cols = []
    by_name = {col.name: col for col in decl.columns if col.name in wanted}
    for col in (by_name[name] for name in schema.names):
        if col.name in have:
            cols.append(table.column(have[col.name]).cast(col.arrow_type))
        elif col.nullable:
            cols.append(pa.nulls(table.num_rows, col.arrow_type))
        else:
            raise ManifestError(f"{path}: lacks non-nullable column {col.name!r} of schema {config} {decl.version}; "
                                "the schema changed incompatibly: migrate the store.")
    return pa.Table.from_arrays(cols, schema=schema)


def merge(shards: Iterable[Path], into: Path | str | None = None, *, note: str | None = None,
          lock_timeout: float | None = DEFAULT_LOCK_TIMEOUT,
          on_wait: Callable[[str], None] | None = None, replace_derived: bool = False) -> MergeReport:
    """Merge shards into a store (default: the packaged one, whose DATASET_CARD.md is kept up to date).

    See :meth:`Store.merge`.
    """
    store = Store(into or default_data_dir())
    return store.merge(shards, note=note, card_path=store.card_path(), lock_timeout=lock_timeout, on_wait=on_wait,
                       replace_derived=replace_derived)


def gpus(table: pa.Table) -> list[str]:
    """Distinct GPU names in a table, sorted."""
    if table.num_rows == 0:
        return []
    return sorted(pc.unique(table["gpu_name"]).to_pylist())


__all__ = ["LOCK", "Conflict", "MergeReport", "Store", "TABLES", "conform", "gpus", "merge", "sha256_file"]
