"""Row identity (row_id, run_id) and the value-by-value comparison that tells a duplicate from a conflict.

Two rows with one identity are the same measurement when every *measured* value agrees. Columns that describe
the row rather than the measurement are not compared (:func:`compared`): the kgpubench version that wrote
the row (a re-import with a newer kgpubench is the same measurement) and the GPU's catalogue figures, which a
newer catalogue may correct (``gpu_name`` and ``gpu_uuid_hash``, the GPU's identity, are compared).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import MergeConflictError


@dataclass(frozen=True)
class Conflict:
    """A row whose identity (row_id, run_id) is already taken by a row with a different value in ``column``."""

    file: str
    row: int
    row_id: str
    run_id: str
    column: str
    value: object
    other_value: object
    other: str  # "the store" or "<file> row <n>"

    def __str__(self) -> str:
        return (f"{self.file}: row {self.row}, column {self.column!r} (row_id {self.row_id}, run_id {self.run_id}): "
                f"{_short(self.value)} here, {_short(self.other_value)} in {self.other}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def identity(table: pa.Table) -> pa.Array:
    """``row_id`` and ``run_id`` joined (run ids cannot hold the separator) as one string per row."""
    joined = pc.binary_join_element_wise(table["row_id"], table["run_id"], "\x1f")
    return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


def unequal(a: pa.ChunkedArray, b: pa.ChunkedArray) -> np.ndarray:
    """Per row: whether ``a`` and ``b`` hold different values (two nulls are equal)."""
    try:
        same = pc.or_(pc.fill_null(pc.equal(a, b), False), pc.and_(pc.is_null(a), pc.is_null(b)))
        return ~same.to_numpy(zero_copy_only=False).astype(bool)
    except pa.ArrowNotImplementedError:  # nested types (parameter lists): compare as Python values
        return np.array([x != y for x, y in zip(a.to_pylist(), b.to_pylist())], dtype=bool)


KEPT_GPU_COLUMNS = ("gpu_name", "gpu_uuid_hash")


def compared(name: str) -> bool:
    """Whether column ``name`` takes part in telling a duplicate from a conflict."""
    if name in KEPT_GPU_COLUMNS:
        return True
    return name != "kgpubench_version" and not name.startswith("gpu_")


def differences(a: pa.Table, b: pa.Table) -> list[tuple[int, str]]:
    """(row, column) of every measured value that differs between the row-aligned tables ``a`` and ``b``."""
    out = []
    for name in a.column_names:
        if not compared(name) or name not in b.column_names or a[name].equals(b[name]):
            continue
        out.extend((int(i), name) for i in np.flatnonzero(unequal(a[name], b[name])))
    return sorted(out)


def conflict(table: pa.Table, index: int, file: str, row: int, column: str, other: pa.Table,
             where: str) -> Conflict:
    """The conflict of row ``index`` of ``table`` (row ``row`` of ``file``) with the one-row table ``other``."""
    return Conflict(file, row, table["row_id"][index].as_py(), table["run_id"][index].as_py(), column,
                    table[column][index].as_py(), other[column][0].as_py(), where)


def conflict_error(conflicts: list[Conflict], where: str) -> MergeConflictError:
    """One-line error for ``conflicts`` with rows ``where`` (the first quoted, all of them attached)."""
    rows = len({(c.file, c.row) for c in conflicts})
    return MergeConflictError(
        f"refused: {rows} row(s) have the row_id and run_id of a row {where} but different values ({len(conflicts)} "
        f"value(s) differ); nothing was merged. First: {conflicts[0]}. A new measurement needs its own run_id; "
        "a row that is already merged cannot be replaced by a merge.", conflicts)
