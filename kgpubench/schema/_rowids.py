"""Row ids of a whole arrow table at once, byte for byte those of :func:`kgpubench.schema.row_id_of`.

:func:`row_id_of` dumps ``[table, [[key, canonical value], ...]]`` as compact JSON and hashes it, one Python
call per row. Here the same JSON text is assembled with arrow string kernels: each distinct value of a key
column is turned into its JSON fragment once (with :func:`canonical_value` and :func:`json.dumps`, so the
fragment is exactly the text the reference writes for it), adjacent scalar keys whose value combinations are few
are merged into one fragment per combination, fragments are gathered per row, parameter lists are joined
element-wise, and only the sha256 of each row's text is left to a Python loop (over slices of the joined
buffer: no Python string per row; the hex text of the digests is built with numpy). JSON text composes: a
fragment dumped alone is the same text as inside the whole dump (same separators; the payload holds no
objects, so ``sort_keys`` changes nothing).

Rows whose values this fast path does not cover (a parameter list not sorted by name, a null parameter
element or name, a column type without a fragment rule) get the reference computation, value by value.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.schema._parallel import parallel_map


class KeyedTable(Protocol):
    """What a row id needs of a table declaration (:class:`kgpubench.schema._core.Table` has it)."""

    @property
    def name(self) -> str:
        """The config's name."""
        ...

    @property
    def key_columns(self) -> list[str]:
        """The columns whose values identify a row."""
        ...

_SEP = (",", ":")
# Rows whose JSON texts are built at once (their memory is about a kilobyte per row, held twice).
_CHUNK_ROWS = 1 << 18


def canonical_value(value: Any) -> Any:
    """A JSON-stable form of a key value (floats that are whole become ints; params are sorted pairs)."""
    if value is None:
        return None
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return repr(value)
    if isinstance(value, Mapping):
        return [[str(k), canonical_value(v)] for k, v in sorted(value.items())]
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], Mapping) and set(value[0]) == {"name", "value"}:
            return [[p["name"], canonical_value(p["value"])] for p in sorted(value, key=lambda p: p["name"])]
        return [canonical_value(v) for v in value]
    if hasattr(value, "item"):  # numpy scalar
        return canonical_value(value.item())
    return value


def row_id_of(table_name: str, key: Mapping[str, Any]) -> str:
    """Stable row id: the first 16 hex digits of sha256 over the table name and canonical key values."""
    payload = json.dumps(
        [table_name, [[k, canonical_value(key[k])] for k in sorted(key)]], separators=(",", ":"), sort_keys=True
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _dump(value) -> str:
    return json.dumps(canonical_value(value), separators=_SEP, sort_keys=True)


def _is_scalar(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_boolean(t)
            or pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_null(t))


def _scalar_fragments(arr: pa.Array, dump=_dump) -> pa.Array:
    """One JSON fragment per value of a scalar array (``null`` for nulls), each distinct value dumped once."""
    if pa.types.is_null(arr.type):
        return pa.array(["null"] * len(arr), pa.string())
    encoded = arr.dictionary_encode()
    texts = pa.array([dump(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.fill_null(pc.take(texts, encoded.indices), "null")


def _join_lists(arr: pa.Array, element_fragments: pa.Array) -> pa.Array:
    """``[e1,e2,...]`` per list of ``arr`` from the fragments of its (flattened) elements; ``null`` for nulls."""
    offsets = arr.offsets
    offsets = pc.subtract(offsets, offsets[0]) if offsets[0].as_py() else offsets
    lists = pa.ListArray.from_arrays(offsets, element_fragments)
    joined = pc.binary_join(lists, ",")
    framed = pc.binary_join_element_wise("[", joined, "]", "")
    return pc.if_else(arr.is_null(), pa.scalar("null"), framed)


def _name_value_fragments(arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """Fragments of a list<struct<name, value>> column and the rows the reference must compute.

    The reference sorts each list by name (stable); a list already in order is left as it is, so it is
    encoded directly. An unsorted list, a null element or a null name goes to the reference.
    """
    n = len(arr)
    items = arr.flatten()
    parents = pc.list_parent_indices(arr).to_numpy(zero_copy_only=False)
    slow = np.zeros(n, dtype=bool)
    names, values = items.field("name"), items.field("value")
    if items.null_count:  # a null element
        slow[parents[items.is_null().to_numpy(zero_copy_only=False)]] = True
    if names.null_count:
        slow[parents[names.is_null().to_numpy(zero_copy_only=False)]] = True
    if len(items) > 1:
        descending = pc.fill_null(pc.less(names[1:], names[:-1]), False).to_numpy(zero_copy_only=False)
        same_list = parents[1:] == parents[:-1]
        slow[parents[1:][descending & same_list]] = True
    # Each distinct (name, value) pair is dumped once: the pair's codes in the two dictionaries, combined.
    enc_names, enc_values = names.dictionary_encode(), values.dictionary_encode()
    n_values = len(enc_values.dictionary) + 1  # the last code stands for a null value
    # a null name (its row goes to the reference, so its text is never used) takes the last code, past the names
    name_codes = pc.fill_null(enc_names.indices, len(enc_names.dictionary)).to_numpy(zero_copy_only=False)
    name_codes = name_codes.astype(np.int64)
    value_codes = pc.fill_null(enc_values.indices, n_values - 1).to_numpy(zero_copy_only=False).astype(np.int64)
    pair_codes = pa.array(name_codes * n_values + value_codes).dictionary_encode()
    name_list = enc_names.dictionary.to_pylist() + [None]
    value_list = enc_values.dictionary.to_pylist() + [None]
    texts = []
    for code in pair_codes.dictionary.to_numpy():
        name, value = name_list[code // n_values], value_list[code % n_values]
        texts.append("[" + json.dumps(name, separators=_SEP) + "," + _dump(value) + "]")
    pairs = pc.take(pa.array(texts, pa.string()), pair_codes.indices)
    return _join_lists(arr, pairs), slow


def _fragments(arr: pa.Array) -> tuple[pa.Array | None, np.ndarray | None]:
    """(JSON fragment per row, rows for the reference) for one key column; (None, None): all rows slow."""
    t = arr.type
    if _is_scalar(t):
        return _scalar_fragments(arr), None
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = t.value_type
        if pa.types.is_struct(inner) and sorted(f.name for f in inner) == ["name", "value"] \
                and _is_scalar(inner.field("value").type) and _is_scalar(inner.field("name").type):
            return _name_value_fragments(arr)
        if _is_scalar(inner) and not pa.types.is_null(inner):
            if pa.types.is_large_list(t):
                arr = arr.cast(pa.list_(inner))
            return _join_lists(arr, _scalar_fragments(arr.flatten())), None
    return None, None


# Adjacent scalar key columns are merged into one piece while their distinct value combinations stay this few
# (each combination's text is written once; fewer, longer pieces make the element-wise join cheaper).
_GROUP_TEXTS = 1 << 15


def coded_fragments(arr: pa.Array) -> tuple[np.ndarray, list[str]]:
    """(code per row, JSON fragment per code) of a scalar column; nulls take the last code, ``null``."""
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=np.int64), ["null"]
    encoded = arr.dictionary_encode()
    texts = [_dump(v) for v in encoded.dictionary.to_pylist()] + ["null"]
    codes = pc.fill_null(encoded.indices, len(texts) - 1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, texts


def group_limit(n: int) -> int:
    """How many distinct texts a merged group of ``n`` rows may have (:func:`merged_group`)."""
    return min(_GROUP_TEXTS, n // 8 + 1)


def merged_group(group: tuple[np.ndarray, list], codes: np.ndarray, texts: list, limit: float,
                 pieces: list) -> tuple[np.ndarray, list]:
    """``group`` (code per row, text per code) with the next coded column appended (each row's text followed by
    the column's; texts or bytes), or, when that makes more than ``limit`` distinct texts, the column alone as a
    new group (``group`` goes to ``pieces``)."""
    width = len(texts)
    combined = pa.array(group[0] * width + codes).dictionary_encode()
    if len(combined.dictionary) > limit:
        pieces.append(group)
        return codes, texts
    head = group[1]
    merged = [head[c // width] + texts[c % width] for c in combined.dictionary.to_pylist()]
    return combined.indices.to_numpy(zero_copy_only=False).astype(np.int64), merged


def _group_texts(group: tuple[np.ndarray, list[str]]) -> pa.Array:
    codes, texts = group
    return pc.take(pa.array(texts, pa.string()), pa.array(codes))


def arrow_row_ids(table: KeyedTable, data: pa.Table) -> list[str]:
    """Row ids of every row of the arrow table ``data`` of ``table``: equal to :func:`row_id_of` of the row's
    key values (``table.select(keys).to_pylist()``), a key column missing from ``data`` counting as null."""
    return arrow_row_id_array(table, data).to_pylist()


@dataclass(frozen=True)
class _Keys:
    """What :func:`arrow_row_id_array` reads of a table declaration, sent to a worker process."""

    name: str
    key_columns: list[str]


def _ids_of_slice(piece: tuple[_Keys, pa.Buffer]) -> pa.Array:
    """Row ids of one slice of key columns, sent as an arrow IPC stream (only the slice's bytes travel)."""
    keys, stream = piece
    return arrow_row_id_array(keys, pa.ipc.open_stream(stream).read_all())


def _ipc(data: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)
    return sink.getvalue()


def arrow_row_id_array(table: KeyedTable, data: pa.Table, *, jobs: int = 1) -> pa.Array:
    """:func:`arrow_row_ids` as an arrow string array (what a table's ``row_id`` column holds); with ``jobs``
    above 1, slices of more than :data:`_CHUNK_ROWS` rows are hashed in that many worker processes
    (:func:`kgpubench.schema._parallel.parallel_map`; the same ids)."""
    n = data.num_rows
    if n == 0:
        return pa.array([], pa.string())
    if n > _CHUNK_ROWS:  # the texts of a few million rows take gigabytes at once: a slice at a time
        starts = range(0, n, _CHUNK_ROWS)
        if jobs > 1:
            keys = _Keys(table.name, list(table.key_columns))
            present = data.select([k for k in keys.key_columns if k in data.column_names])
            pieces = [(keys, _ipc(present.slice(start, _CHUNK_ROWS))) for start in starts]
            return pa.concat_arrays(parallel_map(_ids_of_slice, pieces, jobs=jobs))
        return pa.concat_arrays([arrow_row_id_array(table, data.slice(start, _CHUNK_ROWS)) for start in starts])
    keys = sorted(table.key_columns)
    slow = np.zeros(n, dtype=bool)
    pieces: list = []
    group: tuple[np.ndarray, list[str]] | None = None  # the adjacent scalar keys merged so far: (codes, texts)
    limit = group_limit(n)
    for i, key in enumerate(keys):
        lead = ("[" + json.dumps(table.name) + ",[" if i == 0 else ",") + "[" + json.dumps(key) + ","
        col = data[key].combine_chunks() if key in data.column_names else pa.nulls(n)
        if _is_scalar(col.type):
            codes, texts = coded_fragments(col)
            texts = [lead + t + "]" for t in texts]
            group = (codes, texts) if group is None else merged_group(group, codes, texts, limit, pieces)
            continue
        frags, col_slow = _fragments(col)
        if frags is None:
            slow[:] = True
            break
        if col_slow is not None:
            slow |= col_slow
        if group is not None:
            pieces.append(group)
            group = None
        pieces += [pa.scalar(lead), frags, pa.scalar("]")]
    if group is not None:
        pieces.append(group)
    if slow.all():
        ids = pa.nulls(n, pa.string())
    elif pieces and all(isinstance(p, tuple) for p in pieces):  # scalar keys only: no row's whole text built
        last_codes, last_texts = pieces[-1]
        pieces[-1] = (last_codes, [t + "]]" for t in last_texts])
        groups = [(codes, [t.encode() for t in texts]) for codes, texts in pieces]
        ids = row_ids_of_digests(group_digests(groups))
    else:
        pieces = [_group_texts(p) if isinstance(p, tuple) else p for p in pieces]
        pieces.append(pa.scalar("]]"))
        ids = hashed_texts(pc.binary_join_element_wise(*pieces, pa.scalar("")))
    if not slow.any():
        return ids
    fixed = ids.to_pylist()
    present = [k for k in keys if k in data.column_names]
    for i in np.flatnonzero(slow):
        row = data.slice(int(i), 1).select(present).to_pylist()[0]
        fixed[int(i)] = row_id_of(table.name, {k: row.get(k) for k in keys})
    return pa.array(fixed, pa.string())


# Two lower-case hex digits of each byte value, as one uint16 each (the byte order of the machine).
_HEX_PAIRS = np.frombuffer(b"".join(f"{i:02x}".encode() for i in range(256)), dtype=np.uint16)


def row_ids_of_digests(digests: bytes) -> pa.Array:
    """Row ids (the first 16 hex digits) of concatenated 32-byte sha256 digests, as an arrow string array."""
    first = np.frombuffer(digests, dtype=np.uint8).reshape(-1, 32)[:, :8]
    n = len(first)
    data = _HEX_PAIRS[first].tobytes()  # 16 characters per row
    offsets = np.arange(0, 16 * n + 1, 16, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def hashed_groups(groups: list[tuple[np.ndarray, list[bytes]]]) -> list:
    """A sha256 object per row that has hashed the row's text, given as coded groups ((code per row, text per
    code), a row's text being its groups' texts one after the other): each text of the first group hashed once,
    copied and updated with the row's texts of the other groups (no row's whole text is built). Rows may share an
    object: it is to be read (``digest``, ``copy``), never updated."""
    (codes, texts), rest = groups[0], groups[1:]
    first = [hashlib.sha256(t) for t in texts]
    if not rest:
        return list(map(first.__getitem__, codes.tolist()))
    others = [list(map(t.__getitem__, c.tolist())) for c, t in rest]  # each other group's text of every row
    out = []
    for i, code in enumerate(codes.tolist()):
        h = first[code].copy()
        for other in others:
            h.update(other[i])
        out.append(h)
    return out


def group_digests(groups: list[tuple[np.ndarray, list[bytes]]]) -> bytes:
    """The sha256 digests of the rows' texts given as coded groups (see :func:`hashed_groups`), concatenated."""
    if len(groups) != 2:
        return b"".join([h.digest() for h in hashed_groups(groups)])
    (codes, texts), (more_codes, more_texts) = groups  # the common case, in one loop
    first = [hashlib.sha256(t) for t in texts]
    digests = []
    for code, more in zip(codes.tolist(), map(more_texts.__getitem__, more_codes.tolist())):
        h = first[code].copy()
        h.update(more)
        digests.append(h.digest())
    return b"".join(digests)


def hashed_texts(texts: pa.Array) -> pa.Array:
    """The row id (first 16 hex digits of the sha256 of the utf-8 text) of every text of a string array whose
    values are all valid (no null): hashed from arrow's buffer, one hashlib call per text and no Python string."""
    if texts.null_count:
        raise ValueError("hashed_texts: a null text has no row id")
    _, offsets, data = texts.buffers()
    width = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    o = np.frombuffer(offsets, dtype=width)[texts.offset:texts.offset + len(texts) + 1].tolist()
    view = memoryview(data) if data is not None else memoryview(b"")
    sha = hashlib.sha256
    return row_ids_of_digests(b"".join([sha(view[a:b]).digest() for a, b in zip(o[:-1], o[1:])]))
