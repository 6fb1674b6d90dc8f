"""Row identity (row_id, run_id) and the value-by-value comparison that tells a duplicate from a conflict.

Two rows with one identity are the same measurement when every value agrees, the kgpubench version that wrote the
row aside (:data:`IGNORED`: a re-import with a newer kgpubench is the same measurement). The columns a table
declares :attr:`~kgpubench.schema._core.Column.derived` (the GPU's catalogue figures, which a newer catalogue may
correct) are told apart from the measured ones: a row whose measured values agree with a stored row's but whose
derived figures differ is neither a duplicate nor a conflict, but a *derived change*, which a merge applies only
when asked (``kgpubench merge --replace-derived``). The comparison is column by column over row-aligned tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import DerivedChangeError, MergeConflictError


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


IGNORED = ("kgpubench_version",)  # describes the writer of a row, not the row


def unequal_columns(a: pa.Table, b: pa.Table, columns: Iterable[str]) -> dict[str, np.ndarray]:
    """Per column of ``columns`` (those both row-aligned tables hold) with a difference: which rows differ."""
    out = {}
    for name in columns:
        if name in IGNORED or name not in a.column_names or name not in b.column_names or a[name].equals(b[name]):
            continue
        mask = unequal(a[name], b[name])
        if mask.any():
            out[name] = mask
    return out


def conflicts_of(a: pa.Table, b: pa.Table, masks: dict[str, np.ndarray], origin: Sequence[tuple[str, int]],
                 where: Callable[[int], str]) -> list[Conflict]:
    """One :class:`Conflict` per differing value of the row-aligned tables ``a`` (incoming; its row ``i`` is row
    ``origin[i]`` of a shard file) and ``b`` (``where(i)`` says where that row lies), in row then column order.
    Values are read column by column, never row by row."""
    found = []
    for name, mask in masks.items():
        rows = np.flatnonzero(mask)
        picked = pa.array(rows)
        ids, runs = a["row_id"].take(picked).to_pylist(), a["run_id"].take(picked).to_pylist()
        values, others = a[name].take(picked).to_pylist(), b[name].take(picked).to_pylist()
        for k, i in enumerate(rows.tolist()):
            file, row = origin[i]
            found.append((i, name, Conflict(file, row, ids[k], runs[k], name, values[k], others[k], where(i))))
    return [c for _, _, c in sorted(found, key=lambda t: t[:2])]


def conflict_error(conflicts: list[Conflict], where: str) -> MergeConflictError:
    """One-line error for ``conflicts`` with rows ``where`` (the first quoted, all of them attached)."""
    rows = len({(c.file, c.row) for c in conflicts})
    return MergeConflictError(
        f"refused: {rows} row(s) have the row_id and run_id of a row {where} but different values ({len(conflicts)} "
        f"value(s) differ); nothing was merged. First: {conflicts[0]}. A new measurement needs its own run_id; "
        "a merged measurement cannot be replaced by a merge.", conflicts)


def derived_change_error(changes: list[Conflict]) -> DerivedChangeError:
    """One-line refusal of rows that differ from stored ones only in derived (catalogue) columns."""
    rows = len({(c.file, c.row) for c in changes})
    columns = ", ".join(sorted({c.column for c in changes}))
    return DerivedChangeError(
        f"refused: {rows} row(s) have the row_id, run_id and measured values of a row in the store but other "
        f"catalogue figures ({columns}); nothing was merged. First: {changes[0]}. A re-import with a corrected "
        "catalogue replaces the stored rows only when asked: pass --replace-derived (Store.merge(..., "
        "replace_derived=True)).", changes)
