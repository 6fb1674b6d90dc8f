"""Reading and writing shards: parquet files holding rows of one config.

A shard records its config and schema version in the parquet schema metadata (key ``kgpubench``).
A shard path may be a ``.parquet`` file or a folder of them (read in name order).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.errors import DataFileNotFoundError, SchemaValidationError
from kgpubench.schema import TABLES

META_KEY = b"kgpubench"
COMPRESSION = "zstd"


def shard_files(path: Path) -> list[Path]:
    """The parquet files a shard path stands for (a file, or the ``*.parquet`` in a folder)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.parquet"))
        if not files:
            raise DataFileNotFoundError(f"{path}: folder holds no *.parquet shard; pass a shard file or folder.")
        return files
    if not path.exists():
        raise DataFileNotFoundError(f"{path}: no such file; check the path.")
    return [path]


def config_of(schema: pa.Schema, path: Path | str) -> str:
    """Which config a file's schema belongs to: its metadata, else the one table whose columns match."""
    meta = schema.metadata or {}
    if META_KEY in meta:
        try:
            name = json.loads(meta[META_KEY])["config"]
        except (ValueError, KeyError, TypeError):
            raise SchemaValidationError(f"{path}: unreadable kgpubench metadata {meta[META_KEY][:80]!r}") from None
        if name not in TABLES:
            raise SchemaValidationError(
                f"{path}: metadata names config {name!r}, which is not one of {sorted(TABLES)}."
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
        f"closest is {best.name!r}, missing e.g. {missing}. Write shards with kgpubench.shards.write_shard."
    )


def read_file(path: Path) -> pa.Table:
    """Read one parquet file, turning unreadable files into a clear error."""
    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise SchemaValidationError(f"{path}: not a readable parquet file ({exc}).") from None


def read_shard(path: Path) -> tuple[str, pa.Table]:
    """Read a shard (file or folder): its config and all rows as one table."""
    files = shard_files(Path(path))
    tables = [read_file(f) for f in files]
    configs = {config_of(t.schema, f) for t, f in zip(tables, files)}
    if len(configs) > 1:
        raise SchemaValidationError(f"{path}: holds rows of several configs {sorted(configs)}; one per shard.")
    return configs.pop(), pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, fsync, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_parquet_atomic(table: pa.Table, path: Path) -> None:
    """Write ``table`` as parquet to ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression=COMPRESSION)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_shard(table: pa.Table, path: Path, config: str | None = None) -> Path:
    """Write rows of one config as a shard file, atomically, cast to the declared schema.

    ``config`` defaults to the one recorded in ``table``'s schema metadata.
    """
    name = config or config_of(table.schema, path)
    schema = TABLES[name].arrow_schema()
    table = table.select(schema.names).cast(schema)
    write_parquet_atomic(table, Path(path))
    return Path(path)
