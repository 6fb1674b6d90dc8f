"""Reading and writing shards: parquet files holding rows of one config (written atomically through
:mod:`kgpubench.foundation.files`).

A shard records its config and schema version in the parquet schema metadata (key ``kgpubench``).
A shard path may be a ``.parquet`` file or a folder of them (read in name order). A folder that
``kgpubench collect`` left unfinished (the process was killed) also holds its journal, ``j<8 digits>.arrows``:
its complete rows are read with the parquet parts, so validate, merge and repeat see every finished row
without opening the folder for writing (the first copy of a row id wins, as when the collector resumes).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.errors import (
    DataFileNotFoundError,
    SchemaValidationError,
)
from kgpubench.foundation.files import write_parquet_atomic
from kgpubench.schema import TABLES

META_KEY = b"kgpubench"


JOURNAL_NAME = re.compile(r"^j\d{8}\.arrows$")


def _is_shard_file(name: str) -> bool:
    return name.endswith(".parquet") or bool(JOURNAL_NAME.match(name))


def is_shard_folder(path: Path) -> bool:
    """Whether ``path`` is a folder holding a shard (parquet parts, or a collector's journal)."""
    path = Path(path)
    try:
        return path.is_dir() and any(_is_shard_file(e.name) for e in os.scandir(path))
    except OSError:
        return False


def shard_files(path: Path) -> list[Path]:
    """The files a shard path stands for: a file, or the ``*.parquet`` parts and then the ``j*.arrows`` journals
    of a folder, each in name order."""
    path = Path(path)
    try:
        if path.is_dir():
            names = sorted((bool(JOURNAL_NAME.match(e.name)), e.name) for e in os.scandir(path)
                           if _is_shard_file(e.name))
            if not names:
                raise DataFileNotFoundError(f"{path}: folder holds no *.parquet shard; pass a shard file or folder.")
            return [path / n for _journal, n in names]
    except OSError as exc:
        raise DataFileNotFoundError(f"{path}: cannot list the folder ({exc.strerror or exc}); check its "
                                    "permissions.") from None
    if not path.exists():
        if path.is_symlink():
            raise DataFileNotFoundError(f"{path}: a broken or looping symbolic link; point it at a shard file.")
        raise DataFileNotFoundError(f"{path}: no such file; check the path.")
    return [path]


def read_journal(path: Path) -> pa.Table | None:
    """The complete rows of a collector's journal (an Arrow IPC stream, one batch per row) as a table with the
    stream's schema; a torn last record (the process died while writing it) is left out. ``None`` when not even
    the stream's header was written."""
    batches: list[pa.RecordBatch] = []
    schema = None
    try:
        with pa.OSFile(str(path), "rb") as fh:
            reader = pa.ipc.open_stream(fh)
            schema = reader.schema
            while True:
                try:
                    batches.append(reader.read_next_batch())
                except StopIteration:
                    break
    except (pa.ArrowException, OSError, EOFError):
        pass  # the stream ends in a partial message (or its header never made it): keep what came before
    if schema is None:
        return None
    return pa.Table.from_batches(batches, schema=schema)


def config_of(schema: pa.Schema, path: Path | str) -> str:
    """Which config a file's schema belongs to: its metadata, else the one table whose columns match."""
    meta = schema.metadata or {}
    if META_KEY in meta:
        try:
            name = json.loads(meta[META_KEY])["config"]
        except (ValueError, KeyError, TypeError, RecursionError):
            raise SchemaValidationError(f"{path}: unreadable kgpubench metadata {meta[META_KEY][:80]!r}; expected "
                                        'JSON like {"config": "npb", ...}. Write shards with '
                                        "kgpubench.store.shards.write_shard.") from None
        if not isinstance(name, str) or name not in TABLES:
            raise SchemaValidationError(
                f"{path}: metadata names config {repr(name)[:80]}, which is not one of {sorted(TABLES)}."
            )
        return name
    names = set(schema.names)
    matches = [t.name for t in TABLES.values() if set(t.column_names) == names]
    if len(matches) == 1:
        return matches[0]
    best = max(TABLES.values(), key=lambda t: len(names & set(t.column_names)))
    missing = sorted(set(best.column_names) - names)[:5]
    raise SchemaValidationError(
        f"{path}: cannot tell which config this file holds (no kgpubench metadata, columns match no table); "
        f"closest is {best.name!r}, missing e.g. {missing}. Write shards with kgpubench.store.shards.write_shard."
    )


def read_file(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """Read one parquet file, turning unreadable files into a clear error; ``columns``: only those the file
    holds, in that order (one it lacks is left out)."""
    try:
        if columns is None:
            return pq.read_table(path)
        with pq.ParquetFile(path) as file:
            present = set(file.schema_arrow.names)
            return file.read(columns=[c for c in columns if c in present])
    except PermissionError as exc:
        raise SchemaValidationError(f"{path}: cannot read the file ({exc.strerror or exc}); check its "
                                    "permissions.") from None
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        text = " ".join(str(exc).split())[:200]
        raise SchemaValidationError(f"{path}: not a readable parquet file ({text}).") from None


def read_shard(path: Path) -> tuple[str, pa.Table]:
    """Read a shard (file or folder): its config and all rows as one table (see the module docstring for a
    collector's journal)."""
    files = shard_files(Path(path))
    read = [(f, read_journal(f) if JOURNAL_NAME.match(f.name) else read_file(f)) for f in files]
    read = [(f, t) for f, t in read if t is not None]
    if not read:
        raise DataFileNotFoundError(f"{path}: its only files are journals without a complete header (a collector "
                                    "killed at its first row); rerun kgpubench collect to measure those rows.")
    files, tables = [f for f, _ in read], [t for _, t in read]
    configs = {config_of(t.schema, f) for t, f in zip(tables, files)}
    if len(configs) > 1:
        raise SchemaValidationError(f"{path}: holds rows of several configs {sorted(configs)}; one per shard.")
    if len(tables) == 1:
        return configs.pop(), tables[0]
    try:
        table = pa.concat_tables(tables, promote_options="permissive")
    except pa.ArrowException as exc:
        raise SchemaValidationError(f"{path}: its files have incompatible column types ({exc}); validate each "
                                    "file on its own.") from None
    if any(JOURNAL_NAME.match(f.name) for f in files) and "row_id" in table.column_names:
        table = _first_copies(table)
    return configs.pop(), table


def _first_copies(table: pa.Table) -> pa.Table:
    """``table`` with the first row of each ``row_id`` (a crash between writing a part and deleting the journal
    it came from leaves a row in both)."""
    seen: set = set()
    keep = []
    for i, rid in enumerate(table.column("row_id").to_pylist()):
        if rid is None or rid not in seen:
            keep.append(i)
            seen.add(rid)
    return table if len(keep) == table.num_rows else table.take(pa.array(keep, type=pa.int64()))


def write_shard(table: pa.Table, path: Path, config: str | None = None, *, overwrite: bool = True) -> Path:
    """Write rows of one config as a shard file, atomically, cast to the declared schema.

    ``config`` defaults to the one recorded in ``table``'s schema metadata. With ``overwrite=False`` an existing
    file is never replaced (:class:`kgpubench.errors.OutputExistsError`).
    """
    name = config or config_of(table.schema, path)
    schema = TABLES[name].arrow_schema()
    table = table.select(schema.names).cast(schema)
    write_parquet_atomic(table, Path(path), overwrite=overwrite)
    return Path(path)
