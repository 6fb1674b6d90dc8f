"""Validation of rows against the declared schema.

Every rule comes from the table declaration (:mod:`kgpubench.schema`): presence and type of every column,
nullability, finiteness, ranges, allowed values, patterns, conditional requirements (``required_when``),
column order pairs, ``row_id`` equal to the hash of the key columns, and no duplicate (row_id, run_id).
Each broken rule on each row is one :class:`Violation`; nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.schema import Column, Table, get_table, row_ids
from kgpubench.shards import read_shard


@dataclass(frozen=True)
class Violation:
    """One broken rule: where (file, row, column), what (value) and which rule."""

    file: str
    row: int | None
    column: str | None
    value: Any
    rule: str

    def __str__(self) -> str:
        where = self.file
        if self.row is not None:
            where += f": row {self.row}"
        if self.column is not None:
            where += f", column {self.column!r}"
        value = "" if self.value is None and self.row is None else f": value {self.value!r}"
        return f"{where}{value}: {self.rule}"

    def to_dict(self) -> dict:
        value = self.value if isinstance(self.value, (str, int, float, bool, type(None))) else repr(self.value)
        return {"file": self.file, "row": self.row, "column": self.column, "value": value, "rule": self.rule}


def _rows(mask: pa.Array | np.ndarray) -> np.ndarray:
    arr = mask.to_numpy(zero_copy_only=False) if isinstance(mask, (pa.Array, pa.ChunkedArray)) else mask
    return np.flatnonzero(np.asarray(arr, dtype=bool))


def _emit(out: list, file: str, col: pa.ChunkedArray, name: str, mask, rule: str) -> None:
    for i in _rows(mask):
        out.append(Violation(file, int(i), name, col[int(i)].as_py(), rule))


def _full_match(arr: pa.ChunkedArray, pattern: str) -> pa.ChunkedArray:
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = pc.cast(arr, pa.string())  # a condition on a number (measurement_protocol = 2) matches its text
    return pc.fill_null(pc.match_substring_regex(arr, f"^(?:{pattern})$"), False)


def _check_column(out: list, file: str, table: pa.Table, col: Column) -> None:
    arr = table[col.name]
    nulls = pc.is_null(arr)
    if not col.nullable:
        _emit(out, file, arr, col.name, nulls, "must not be null")
    if col.required_when:
        other, pattern = col.required_when
        if other in table.column_names:
            cond = pc.and_(_full_match(table[other], pattern), nulls)
            _emit(out, file, arr, col.name, cond, f"must not be null when {other} matches `{pattern}`")
    if col.type.startswith("float"):
        finite = pc.fill_null(pc.is_finite(arr), True)
        _emit(out, file, arr, col.name, pc.invert(finite), "must be a finite number (null marks missing)")
        arr = pc.if_else(finite, arr, pa.scalar(None, arr.type))
    if col.is_numeric:
        if col.min is not None:
            bad = pc.less_equal(arr, col.min) if col.min_exclusive else pc.less(arr, col.min)
            op = ">" if col.min_exclusive else ">="
            _emit(out, file, table[col.name], col.name, pc.fill_null(bad, False), f"must be {op} {col.min:g}")
        if col.max is not None:
            bad = pc.fill_null(pc.greater(arr, col.max), False)
            _emit(out, file, table[col.name], col.name, bad, f"must be <= {col.max:g}")
    if col.values is not None:
        bad = pc.and_(pc.invert(pc.is_in(arr, value_set=pa.array(col.values))), pc.invert(nulls))
        _emit(out, file, arr, col.name, bad, f"must be one of {', '.join(col.values)}")
    if col.pattern is not None:
        bad = pc.and_(pc.invert(_full_match(arr, col.pattern)), pc.invert(nulls))
        _emit(out, file, arr, col.name, bad, f"must match `{col.pattern}`")


def _check_structure(out: list, file: str, table: pa.Table, decl: Table) -> pa.Table | None:
    """Presence and types; returns the table cast to the declared schema, or None when it cannot be."""
    have = set(table.column_names)
    for name in decl.column_names:
        if name not in have:
            out.append(Violation(file, None, name, None, f"required column is missing (schema {decl.name} "
                                                          f"{decl.version})"))
    for name in table.column_names:
        if name not in set(decl.column_names):
            out.append(Violation(file, None, name, None, f"column is not declared in schema {decl.name} "
                                                         f"{decl.version}; remove it or declare it"))
    if out:
        return None
    arrays = []
    for col in decl.columns:
        try:
            arrays.append(table[col.name].cast(col.arrow_type, safe=True))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            out.append(Violation(file, None, col.name, str(table[col.name].type),
                                 f"has type {table[col.name].type}, expected {col.arrow_type}"))
    if out:
        return None
    return pa.Table.from_arrays(arrays, schema=decl.arrow_schema())


def _check_rows(out: list, file: str, table: pa.Table, decl: Table) -> None:
    for a, b in decl.ordered:
        bad = pc.fill_null(pc.greater(table[a], table[b]), False)
        for i in _rows(bad):
            out.append(Violation(file, int(i), b, table[b][int(i)].as_py(), f"must be >= {a} "
                                                                            f"({table[a][int(i)].as_py()!r})"))
    keys = decl.key_columns
    if "row_id" in table.column_names and keys:
        expected = row_ids(decl, table.select(keys).to_pylist())
        got = table["row_id"].to_pylist()
        for i, (e, g) in enumerate(zip(expected, got)):
            if g is not None and e != g:
                out.append(Violation(file, i, "row_id", g, f"must equal the hash of the key columns ({e})"))
    if {"row_id", "run_id"} <= set(table.column_names):
        seen: dict[tuple, int] = {}
        for i, pair in enumerate(zip(table["row_id"].to_pylist(), table["run_id"].to_pylist())):
            if pair in seen:
                out.append(Violation(file, i, "row_id", pair[0],
                                     f"duplicate key: same row_id and run_id as row {seen[pair]}"))
            else:
                seen[pair] = i


def validate_table(table: pa.Table, config: str, *, file: str = "<table>") -> list[Violation]:
    """Every violation of the ``config`` schema in ``table`` (an empty list when it is valid)."""
    decl = get_table(config)
    out: list[Violation] = []
    cast = _check_structure(out, file, table, decl)
    if cast is None:
        return out
    for col in decl.columns:
        _check_column(out, file, cast, col)
    _check_rows(out, file, cast, decl)
    return out


def validate_paths(paths: Iterable[Path]) -> dict[str, list[Violation]]:
    """Validate shards or stores; returns violations keyed by path (empty lists for valid ones).

    A store folder (one with ``manifest.json``) is checked file by file, hashes included.
    """
    from kgpubench.store import Store

    result: dict[str, list[Violation]] = {}
    for path in map(Path, paths):
        if (path / "manifest.json").exists():
            result[str(path)] = Store(path).validate()
        else:
            config, table = read_shard(path)
            result[str(path)] = validate_table(table, config, file=str(path))
    return result
