"""Validation of rows against the declared schema.

Every rule comes from the table declaration (:mod:`kgpubench.schema`): presence and type of every column,
nullability, finiteness, ranges, allowed values, patterns, refused values (``not_values``), conditional
requirements (``required_when``), column order pairs, ``row_id`` equal to the hash of the key columns, and no
duplicate (row_id, run_id). Types are strict: a number stored as text (or text as a number) is a violation,
never parsed. Each broken rule on each row is one :class:`Violation`; nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import ONE_LINE_RULE, SchemaValidationError, is_printable_line
from kgpubench.schema import Column, Table, arrow_row_id_array, get_table
from kgpubench.store.shards import read_shard


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


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


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
            _emit(out, file, table[col.name], col.name, pc.fill_null(bad, False), f"must be {op} {_num(col.min)}")
        if col.max is not None:
            bad = pc.fill_null(pc.greater(arr, col.max), False)
            _emit(out, file, table[col.name], col.name, bad, f"must be <= {_num(col.max)}")
    if col.values is not None:
        bad = pc.and_(pc.invert(pc.is_in(arr, value_set=pa.array(col.values))), pc.invert(nulls))
        _emit(out, file, arr, col.name, bad, f"must be one of {', '.join(col.values)}")
    if col.pattern is not None:
        bad = pc.and_(pc.invert(_full_match(arr, col.pattern)), pc.invert(nulls))
        _emit(out, file, arr, col.name, bad, f"must match `{col.pattern}`")
    if _text_leaves(pa.array([], type=arr.type)):  # the column holds text somewhere (no values read)
        _check_printable(out, file, arr, col.name)
    if col.not_values:
        refused = pa.array([v.lower() for v in col.not_values])
        bad = pc.fill_null(pc.is_in(pc.utf8_lower(arr), value_set=refused), False)
        fix = "use null or the real value" if col.nullable else "give the real value"
        _emit(out, file, arr, col.name, bad, f"is the text of a missing value; {fix}")


def _text_leaves(arr: pa.Array) -> list[tuple[pa.Array, Callable[[np.ndarray], np.ndarray]]]:
    """Every string inside ``arr`` (a column of text, of lists of text, of (name, value) structs) as a flat
    string array with a function from indices of its values to the indices of the rows that hold them."""
    t = arr.type
    if _is_text(t):
        return [(arr, lambda i: i)]
    if pa.types.is_dictionary(t):
        return _text_leaves(arr.cast(t.value_type))
    if _is_list(t):
        def up(i: np.ndarray, arr=arr) -> np.ndarray:
            return pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)[i]

        return [(leaf, lambda i, rows=rows: up(rows(i))) for leaf, rows in _text_leaves(pc.list_flatten(arr))]
    if pa.types.is_struct(t):
        return [leaf for i in range(t.num_fields) for leaf in _text_leaves(pc.struct_field(arr, [i]))]
    return []


def _beyond_printable_ascii(leaf: pa.Array) -> np.ndarray:
    """Indices of the values of a string array that hold a character other than printable ASCII (space to ``~``):
    only those can break the one-line rule. Read from the array's bytes (a UTF-8 byte outside 0x20-0x7e is such a
    character or part of one); a null may be among them."""
    if pa.types.is_string_view(leaf.type):  # no offsets buffer to read: look at each value
        return _rows(pc.fill_null(pc.match_substring_regex(leaf, "[^ -~]"), False))
    if len(leaf) == 0:
        return np.zeros(0, dtype=np.int64)
    _, offsets, data = leaf.buffers()
    width = np.int64 if pa.types.is_large_string(leaf.type) else np.int32
    bounds = np.frombuffer(offsets, dtype=width)[leaf.offset:leaf.offset + len(leaf) + 1]
    text = np.frombuffer(data, dtype=np.uint8)[bounds[0]:bounds[-1]] if data is not None else np.zeros(0, np.uint8)
    outside = np.flatnonzero((text < 0x20) | (text > 0x7E)) + bounds[0]
    return np.unique(np.searchsorted(bounds, outside, side="right") - 1)


def _check_printable(out: list, file: str, arr: pa.ChunkedArray, name: str) -> None:
    """Every text value of the column (nested ones included) is one printable line: a control character (ESC,
    BEL, NUL, a newline) or a bidi override would reach terminals, the card and the board pages.

    Text of printable ASCII alone always passes; only the values holding another character are looked at in
    Python, once per distinct value."""
    bad_rows: set[int] = set()
    start = 0
    for chunk in arr.chunks:
        for leaf, rows in _text_leaves(chunk):
            suspect = _beyond_printable_ascii(leaf)
            if not len(suspect):
                continue
            values = leaf.take(pa.array(suspect))
            refused = [v for v in pc.unique(values).drop_null().to_pylist() if not is_printable_line(v)]
            if refused:
                hit = suspect[_rows(pc.fill_null(pc.is_in(values, value_set=pa.array(refused, leaf.type)), False))]
                bad_rows.update(start + int(r) for r in rows(hit))
        start += len(chunk)
    for i in sorted(bad_rows):
        out.append(Violation(file, i, name, arr[i].as_py(), ONE_LINE_RULE))


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def compatible(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether values stored as ``src`` may stand for the declared ``dst`` without being parsed.

    Numbers widen or narrow among numbers (the safe cast then refuses lossy values), text stays text, times stay
    times; a number written as text (or text as a number, a bool as a number) is never compatible.
    """
    if src == dst or pa.types.is_null(src):
        return True
    if pa.types.is_dictionary(src):
        return compatible(src.value_type, dst)
    if _is_text(dst):
        return _is_text(src)
    if pa.types.is_boolean(dst):
        return pa.types.is_boolean(src)
    if pa.types.is_integer(dst) or pa.types.is_floating(dst):
        return pa.types.is_integer(src) or pa.types.is_floating(src)
    if pa.types.is_timestamp(dst):
        return pa.types.is_timestamp(src)
    if _is_list(dst):
        return _is_list(src) and compatible(src.value_type, dst.value_type)
    if pa.types.is_struct(dst):
        if not pa.types.is_struct(src):
            return False
        fields = {src.field(i).name: src.field(i).type for i in range(src.num_fields)}
        wanted = {dst.field(i).name: dst.field(i).type for i in range(dst.num_fields)}
        return set(fields) == set(wanted) and all(compatible(fields[n], wanted[n]) for n in wanted)
    return False


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
        have = table[col.name].type
        if not compatible(have, col.arrow_type):
            out.append(Violation(file, None, col.name, str(have), f"has type {have}, expected {col.arrow_type} "
                                 "(values are never parsed from text or reinterpreted); write the column with "
                                 "its declared type"))
            continue
        try:
            arrays.append(table[col.name].cast(col.arrow_type, safe=True))
        except (pa.ArrowException, ValueError, TypeError) as exc:
            why = " ".join(str(exc).split())[:120]
            out.append(Violation(file, None, col.name, str(have),
                                 f"has type {have}, expected {col.arrow_type}; a value does not convert ({why})"))
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
        expected = arrow_row_id_array(decl, table.select(keys))
        got = table["row_id"]
        for i in _rows(pc.fill_null(pc.not_equal(got, expected), False)):
            g = got[int(i)].as_py()
            out.append(Violation(file, int(i), "row_id", g, f"must equal the hash of the key columns "
                                                              f"({expected[int(i)].as_py()})"))
    _check_protocol_commit(out, file, table)
    if {"row_id", "run_id"} <= set(table.column_names):
        first = _first_of_pair(table["row_id"], table["run_id"])
        for i in np.flatnonzero(first != np.arange(table.num_rows)):
            out.append(Violation(file, int(i), "row_id", table["row_id"][int(i)].as_py(),
                                 f"duplicate key: same row_id and run_id as row {int(first[i])}"))


TRACED_PROTOCOL = 2  # measured rows of this protocol and later must name the commit that measured them (issue 44)


def _check_protocol_commit(out: list, file: str, table: pa.Table) -> None:
    """A measured row of protocol 2 or later must record ``kgpubench_commit``: without it the row cannot be traced
    to the code that measured it. (Protocol-1 rows predate the column; :func:`provenance_warnings` names them.)"""
    names = set(table.column_names)
    if not {"source", "measurement_protocol"} <= names:
        return
    traced = pc.and_(pc.fill_null(pc.equal(table["source"], "measured"), False),
                     pc.fill_null(pc.greater_equal(table["measurement_protocol"], TRACED_PROTOCOL), False))
    commit = table["kgpubench_commit"] if "kgpubench_commit" in names else None
    missing = traced if commit is None else pc.and_(traced, pc.is_null(commit))
    for i in _rows(missing):
        out.append(Violation(file, int(i), "kgpubench_commit", None,
                             f"a measured row of protocol {table['measurement_protocol'][int(i)].as_py():g} must "
                             "name the project commit that measured it; collect from a git checkout, or set "
                             "KGPUBENCH_COMMIT (scripts/device_slim.sh writes it for a GPU session)"))


def _codes(col: pa.ChunkedArray) -> np.ndarray:
    """A code per row equal for equal values (null is a value of its own)."""
    encoded = col.combine_chunks().dictionary_encode(null_encoding="encode")
    return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _first_of_pair(a: pa.ChunkedArray, b: pa.ChunkedArray) -> np.ndarray:
    """For each row, the first row with the same (a, b) pair (itself when it is the first)."""
    ca, cb = _codes(a), _codes(b)
    pair = ca * (int(cb.max(initial=0)) + 1) + cb
    _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


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


def validate_shard(path: Path) -> tuple[str, pa.Table, list[Violation]]:
    """Read a shard (file or folder) and check it: its config, its rows and every violation.

    A shard without rows is a violation (there is nothing to check or merge); an unreadable file raises
    :class:`~kgpubench.errors.SchemaValidationError` naming it.
    """
    config, table = read_shard(path)
    if table.num_rows == 0:
        return config, table, [Violation(str(path), None, None, None,
                                         "holds no rows; a shard carries at least one row (remove the file)")]
    return config, table, validate_table(table, config, file=str(path))


UNKNOWN_VERSION = "0.0.0+unknown"


def provenance_warnings(table: pa.Table, file: str) -> list[str]:
    """Warnings (not violations) for measured rows that do not say which kgpubench wrote them: no version (or
    ``0.0.0+unknown``, a source tree before kgpubench could tell) or no project commit (protocol-1 rows and
    rows from an installed wheel built without git lack it). Such rows stay valid; a reader should know."""
    if "source" not in table.column_names or table.num_rows == 0:
        return []
    measured = pc.fill_null(pc.equal(table["source"], "measured"), False)
    n = int(pc.sum(measured).as_py() or 0)
    if not n:
        return []
    out = []
    if "kgpubench_version" in table.column_names:
        version = table["kgpubench_version"]
        bad = pc.and_(measured, pc.fill_null(pc.equal(version, UNKNOWN_VERSION), True))
        k = int(pc.sum(bad).as_py() or 0)
        if k:
            out.append(f"{file}: warning: {k} of {n} measured row(s) do not record the kgpubench version that "
                       "wrote them (null or 0.0.0+unknown)")
    commits = table["kgpubench_commit"] if "kgpubench_commit" in table.column_names else None
    if "measurement_protocol" in table.column_names:  # a traced protocol's rows without it are violations instead
        measured = pc.and_(measured, pc.invert(pc.fill_null(
            pc.greater_equal(table["measurement_protocol"], TRACED_PROTOCOL), False)))
    k = n if commits is None else int(pc.sum(pc.and_(measured, pc.is_null(commits))).as_py() or 0)
    if k:
        out.append(f"{file}: warning: {k} of {n} measured row(s) do not record the project commit "
                   "(kgpubench_commit); collect from a git checkout or pass KGPUBENCH_COMMIT")
    return out


def refusal(violations: list[Violation], what: str, fix: str) -> SchemaValidationError:
    """One-line error for ``violations`` (the first one quoted, all of them attached).

    ``what`` says what was refused ("nothing was merged"), ``fix`` what to do next.
    """
    n = len(violations)
    return SchemaValidationError(f"refused: {n} schema violation(s); {what}. First: {violations[0]}. {fix}",
                                 violations)
