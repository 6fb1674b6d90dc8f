"""The declarative building blocks of a table: :class:`Column` and :class:`Table`.

A table declaration is the single source of truth; the arrow schema, validation, the card's field tables
and the Hugging Face ``features`` block are all derived from it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from kgpubench.errors import ONE_LINE_RULE, escape_text, is_printable_line, unknown_name  # noqa: F401
from kgpubench.schema._rowids import arrow_row_id_array, canonical_value, row_id_of  # noqa: F401 (re-exported)

# Scalar type names a column may declare, with their arrow type.
_SCALAR_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "bool": pa.bool_(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
# Named composite types.
_COMPOSITE_TYPES: dict[str, pa.DataType] = {
    # Tunable parameters: a list of (name, value) pairs, sorted by name. Queryable in arrow/pandas/HF alike.
    "params": pa.list_(pa.struct([("name", pa.string()), ("value", pa.float64())])),
    # Non-numeric tunable parameters (strings, booleans): (name, JSON text of the value), sorted by name.
    "params_text": pa.list_(pa.struct([("name", pa.string()), ("value", pa.string())])),
    # Where each of a row's figures came from: (column name, source), sorted by name.
    "sources": pa.list_(pa.struct([("name", pa.string()), ("value", pa.string())])),
    "list<float64>": pa.list_(pa.float64()),
    "list<int64>": pa.list_(pa.int64()),
    "list<string>": pa.list_(pa.string()),
}
ARROW_TYPES: dict[str, pa.DataType] = {**_SCALAR_TYPES, **_COMPOSITE_TYPES}



@dataclass(frozen=True)
class Column:
    """One column of a table.

    Parameters
    ----------
    name : str
        Column name; units live in the name (``time_ms_median``).
    type : str
        One of :data:`ARROW_TYPES`.
    doc : str
        One-line description for the card.
    unit : str, optional
        Unit of the values, for the card.
    nullable : bool
        Whether nulls are allowed at all.
    min, max : float, optional
        Inclusive bounds (``min_exclusive`` makes the lower bound strict).
    values : tuple of str, optional
        Allowed values (an enumeration).
    pattern : str, optional
        Regular expression a string value must match in full.
    not_values : tuple of str, optional
        Values refused whatever their case: the text of a missing value (``None``, ``nan``) is not a name.
    key : bool
        Whether the column is part of the row key (``row_id`` is the hash of the key columns).
    required_when : (column, regex), optional
        The value must be non-null on rows where ``column`` fully matches ``regex``.
    measured : bool
        Whether the value was measured on the GPU while (or around) the row's run, as a profiler counter is: an
        outcome of the run, so no task may use it as an input (:func:`kgpubench.tasks.forbidden_features`)
        whatever its unit.
    derived : bool
        Whether the value is a figure of the GPU catalogue (:mod:`kgpubench.hardware`) written with the row rather
        than part of its measurement: a newer catalogue may correct it. A merge never tells two measurements apart
        by it, but refuses a row that changes it unless asked to replace the stored row
        (``kgpubench merge --replace-derived``).
    """

    name: str
    type: str
    doc: str
    unit: str | None = None
    nullable: bool = True
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    values: tuple[str, ...] | None = None
    pattern: str | None = None
    not_values: tuple[str, ...] | None = None
    key: bool = False
    required_when: tuple[str, str] | None = None
    measured: bool = False
    derived: bool = False

    def __post_init__(self) -> None:
        if self.derived and (self.key or self.measured):
            raise ValueError(f"column {self.name!r}: a derived (catalogue) figure is neither a key nor measured")
        if self.type not in ARROW_TYPES:
            raise ValueError(f"column {self.name!r}: unknown type {self.type!r}; use one of {sorted(ARROW_TYPES)}")

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW_TYPES[self.type]

    @property
    def is_numeric(self) -> bool:
        return self.type in ("int32", "int64", "float32", "float64")

    def rule_text(self) -> str:
        """Human-readable constraints, for the card's field table."""
        parts = []
        if not self.nullable:
            parts.append("not null")
        if self.required_when:
            parts.append(f"required when {self.required_when[0]} ~ `{self.required_when[1]}`")
        if self.min is not None:
            parts.append(f"{'>' if self.min_exclusive else '>='} {_fmt_num(self.min)}")
        if self.max is not None:
            parts.append(f"<= {_fmt_num(self.max)}")
        if self.values:
            parts.append("one of " + ", ".join(f"`{v}`" for v in self.values))
        if self.pattern:
            parts.append(f"matches `{self.pattern}`")
        if self.not_values:
            parts.append("not " + ", ".join(f"`{v}`" for v in self.not_values) + " (any case)")
        if self.key:
            parts.append("key")
        if self.measured:
            parts.append("measured on the GPU (never a feature)")
        return "; ".join(parts)


def _fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


@dataclass(frozen=True)
class Table:
    """A dataset table (a Hugging Face config).

    ``ordered`` lists (a, b) column pairs with a <= b wherever both are present.
    """

    name: str
    version: str
    description: str
    columns: tuple[Column, ...]
    ordered: tuple[tuple[str, str], ...] = ()
    changelog: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"table {self.name!r} declares columns twice: {dupes}")
        for a, b in self.ordered:
            if a not in names or b not in names:
                raise ValueError(f"table {self.name!r}: ordered pair ({a}, {b}) names an unknown column")
        for c in self.columns:
            if c.required_when and c.required_when[0] not in names:
                raise ValueError(f"column {c.name!r}: required_when names unknown column {c.required_when[0]!r}")

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def key_columns(self) -> list[str]:
        return [c.name for c in self.columns if c.key]

    @property
    def derived_columns(self) -> list[str]:
        """Columns holding catalogue figures (:attr:`Column.derived`), which ``merge --replace-derived`` may
        replace."""
        return [c.name for c in self.columns if c.derived]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise unknown_name(f"column of table {self.name!r}", name, self.column_names)

    def arrow_schema(self) -> pa.Schema:
        """The arrow schema, with the table name and schema version in its metadata (built once; arrow schemas
        are immutable)."""
        cached = self.__dict__.get("_arrow_schema")
        if cached is None:
            fields = [pa.field(c.name, c.arrow_type, nullable=c.nullable) for c in self.columns]
            meta = {b"kgpubench": json.dumps({"config": self.name, "schema_version": self.version}).encode()}
            cached = pa.schema(fields, metadata=meta)
            object.__setattr__(self, "_arrow_schema", cached)
        return cached

    def empty(self) -> pa.Table:
        """An empty table with the declared schema."""
        return self.arrow_schema().empty_table()

    def from_rows(self, rows: Sequence[Mapping[str, Any]], *, fill_row_id: bool = True) -> pa.Table:
        """Build an arrow table from dict rows (missing columns become null), computing ``row_id``.

        Unknown keys in a row raise ``ValueError`` naming them: no silent drop.
        """
        names = set(self.column_names)
        seen: set[frozenset] = set()  # rows of one importer share a few key sets: check each set once
        for i, r in enumerate(rows):
            keys = frozenset(r)
            if keys in seen:
                continue
            extra = keys - names
            if extra:
                raise ValueError(f"row {i}: unknown columns {sorted(extra)} for table {self.name!r}")
            seen.add(keys)
        arrays = self._arrays(rows)
        table = pa.Table.from_arrays(arrays, schema=self.arrow_schema())
        if fill_row_id and "row_id" in names:
            index = self.column_names.index("row_id")
            ids = arrow_row_id_array(self, table)
            table = table.set_column(index, self.arrow_schema().field(index), ids)
        return table

    def from_columns(self, columns: Mapping[str, Any], num_rows: int, *, constants: Mapping[str, Any] = {},
                     fill_row_id: bool = True, jobs: int = 1) -> pa.Table:
        """Build an arrow table column by column, computing ``row_id`` (as :meth:`from_rows` does; over ``jobs``
        worker processes for a large table, see :func:`arrow_row_id_array`).

        ``columns`` maps a column name to its ``num_rows`` values (an arrow array or a Python sequence);
        ``constants`` maps a column name to the one value every row holds (see :func:`repeated`); any other
        column is null. Unknown names raise ``ValueError``; a value that does not fit its column raises
        ``ValueError`` naming it.
        """
        unknown = sorted((set(columns) | set(constants)) - set(self.column_names))
        if unknown:
            raise ValueError(f"unknown columns {unknown} for table {self.name!r}")
        zeros = None
        arrays = []
        for c in self.columns:
            if c.name in columns:
                values = columns[c.name]
                if len(values) != num_rows:
                    raise ValueError(f"column {c.name!r} has {len(values)} values for {num_rows} rows")
                if isinstance(values, (pa.Array, pa.ChunkedArray)):
                    array = values if values.type == c.arrow_type else values.cast(c.arrow_type)
                else:
                    array = _column_array(self.name, c, list(values))
            elif c.name in constants and constants[c.name] is not None:
                one = _column_array(self.name, c, [constants[c.name]])
                if not _fixed_width(c.arrow_type):
                    array = repeated(one, num_rows)
                else:
                    if zeros is None:
                        zeros = pa.array(np.zeros(num_rows, dtype=np.int32))
                    array = one.take(zeros)
            else:
                array = pa.nulls(num_rows, c.arrow_type)
            arrays.append(array)
        table = pa.Table.from_arrays(arrays, schema=self.arrow_schema())
        if fill_row_id and "row_id" in self.column_names:
            index = self.column_names.index("row_id")
            ids = arrow_row_id_array(self, table, jobs=jobs)
            table = table.set_column(index, self.arrow_schema().field(index), ids)
        return table

    def _arrays(self, rows: Sequence[Mapping[str, Any]]) -> list[pa.Array]:
        """One arrow array per column from dict rows: converted at once as a struct array (arrow's own loop);
        when a value does not convert, column by column, to name the row, column and value."""
        struct = pa.struct([pa.field(c.name, c.arrow_type) for c in self.columns])
        try:
            whole = pa.array(rows, type=struct)
        except (pa.ArrowException, OverflowError, TypeError, ValueError):
            return [_column_array(self.name, c, [r.get(c.name) for r in rows]) for c in self.columns]
        return [whole.field(i) for i in range(len(self.columns))]


# Rows of one block of a repeated value; every block of the column shares its buffers.
REPEAT_BLOCK = 1 << 16
# The shortest mean run of equal codes that :func:`spread_runs` repeats run by run (shorter: arrow's take).
RUN_ROWS = 256


def _fixed_width(t: pa.DataType) -> bool:
    return pa.types.is_primitive(t) and not pa.types.is_boolean(t)


def repeated(one: pa.Array | pa.ChunkedArray, num_rows: int, block: pa.Array | None = None) -> pa.ChunkedArray:
    """``num_rows`` copies of the one value of ``one``: chunks of :data:`REPEAT_BLOCK` rows that share one block's
    buffers (the values of ``one.take`` of zeros, without writing them ``num_rows`` times: a text or a list of a
    dozen structs per row is hundreds of megabytes to gigabytes over millions of rows). ``block``: a block of the
    same value made by an earlier call, at least ``min(num_rows, REPEAT_BLOCK)`` rows long."""
    if block is None:
        block = one.take(pa.array(np.zeros(min(num_rows, REPEAT_BLOCK), dtype=np.int32)))
        if isinstance(block, pa.ChunkedArray):
            block = block.combine_chunks()
    whole, rest = divmod(num_rows, REPEAT_BLOCK)
    chunks = [block] * whole + ([block.slice(0, rest)] if rest or not whole else [])
    return pa.chunked_array(chunks, type=one.type)


def long_runs(codes: np.ndarray, sizes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(code of each run of equal codes, its length) when the codes come in long runs (on average
    :data:`RUN_ROWS` rows or more: the rows of one file or one GPU together), else None (arrow's take is then the
    better way); computed once for several columns spread by the same codes (:func:`spread_runs`). ``sizes``: code
    ``i`` stands for ``sizes[i]`` rows (a file's), found without building the rows' codes."""
    if sizes is None:
        n = len(codes)
        if not n:
            return None
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1, [n]])
        starts, lengths = bounds[:-1], np.diff(bounds)
    else:
        kept = sizes > 0  # a part without rows is no run, and its neighbours of one code are one
        codes, sizes = codes[kept], sizes[kept]
        n = int(sizes.sum())
        if not n:
            return None
        starts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1])
        lengths = np.add.reduceat(sizes, starts)
    if len(starts) > max(1, n // RUN_ROWS):
        return None
    return codes[starts].astype(np.int64), lengths


def spread_runs(values: pa.Array, run_codes: np.ndarray, lengths: np.ndarray) -> pa.ChunkedArray:
    """``values.take`` of each run's code repeated its length (:func:`long_runs`): each run's value
    :func:`repeated`, blocks shared by the runs of one value (numbers included: no column of millions of rows
    written for a few values)."""
    # one block per value, as long as its longest run (at most a block): every run of the value is cut from it
    longest = np.zeros(len(values), dtype=np.int64)
    np.maximum.at(longest, run_codes, np.minimum(lengths, REPEAT_BLOCK))
    blocks: dict[int, pa.Array] = {}
    chunks: list[pa.Array] = []
    for code, length in zip(run_codes.tolist(), lengths.tolist()):
        if code not in blocks:
            blocks[code] = repeated(values.slice(code, 1), int(longest[code])).chunks[0]
        chunks += repeated(values.slice(code, 1), length, blocks[code]).chunks
    return pa.chunked_array(chunks, type=values.type)


def joined(tables: list[pa.Table], name: str, arrow_type: pa.DataType) -> pa.ChunkedArray:
    """Column ``name`` of each of ``tables``, one after the other: their chunks, not copied (the files' rows an
    importer's workers sent back, joined)."""
    return pa.chunked_array([chunk for t in tables for chunk in t[name].chunks], arrow_type)


def _column_array(table: str, col: Column, values: list) -> pa.Array:
    """``values`` as an arrow array of ``col``'s type; a value that does not fit is a ``ValueError`` naming it."""
    try:
        return pa.array(values, type=col.arrow_type)
    except (pa.ArrowException, OverflowError, TypeError, ValueError) as exc:
        for i, value in enumerate(values):  # find the first value that does not convert, to name it
            try:
                pa.array([value], type=col.arrow_type)
            except (pa.ArrowException, OverflowError, TypeError, ValueError):
                raise ValueError(f"row {i}: column {col.name!r} of table {table!r} cannot hold {repr(value)[:80]} "
                                 f"(expected {col.type})") from None
        raise ValueError(f"column {col.name!r} of table {table!r}: {exc}") from None


def row_ids(table: Table, rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Row ids for dict rows of ``table`` (key columns missing from a row count as null)."""
    keys = table.key_columns
    return [row_id_of(table.name, {k: r.get(k) for k in keys}) for r in rows]
