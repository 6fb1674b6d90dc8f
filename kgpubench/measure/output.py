"""The resumable shard writer: a folder of parquet parts, one written (atomically) per finished row.

Layout of a shard folder ``OUT/``::

    OUT/p00000012.parquet   one row each, written as rows finish (temp file + rename)
    OUT/c00000200.parquet   compacted parts (many rows), written every ``compact_every`` rows and on close

``kgpubench validate`` / ``merge`` read the folder (all ``*.parquet`` in name order). A crash loses at most the
row in flight; if it strikes during compaction, a row may sit in two files: :meth:`ShardWriter.open` keeps
the first copy of each ``row_id`` and the next compaction removes the duplicate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.errors import SchemaValidationError
from kgpubench.schema import get_table

_PART = re.compile(r"^([pc])(\d{8})\.parquet$")


class ShardWriter:
    """Append rows of one table to a shard folder, skipping nothing by itself (see :meth:`has`).

    Parameters
    ----------
    folder : Path
        The shard folder (created if missing).
    table : str
        Table name (``kernels``, ``npb``, ``stencil``).
    compact_every : int
        Merge the one-row parts into one file after this many new rows.
    """

    def __init__(self, folder: Path, table: str, *, compact_every: int = 200) -> None:
        self.folder = Path(folder)
        self.table = get_table(table)
        self.compact_every = compact_every
        self.folder.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, dict[str, Any]] = {}
        self._run_ids: list[str] = []
        self._next = 0
        self._new_parts = 0
        self._load()

    # -- reading -------------------------------------------------------------------------------------
    def _load(self) -> None:
        for path in self._parts():
            try:
                data = pq.read_table(path)
            except (pa.ArrowInvalid, OSError) as exc:
                raise SchemaValidationError(
                    f"{path}: unreadable parquet part in the output folder ({type(exc).__name__}); move it "
                    "away and rerun to measure its rows again."
                ) from None
            if "row_id" not in data.column_names:
                raise SchemaValidationError(f"{path}: no row_id column; this folder is not a {self.table.name} "
                                            "shard written by kgpubench collect; choose another --out.")
            for row in data.to_pylist():
                self._rows.setdefault(row["row_id"], row)
                if row.get("run_id") and row["run_id"] not in self._run_ids:
                    self._run_ids.append(row["run_id"])
        seqs = [int(_PART.match(p.name).group(2)) for p in self._parts()]
        self._next = max(seqs) + 1 if seqs else 0

    def _parts(self) -> list[Path]:
        return sorted(p for p in self.folder.glob("*.parquet") if _PART.match(p.name))

    def has(self, row_id: str) -> bool:
        """Whether a row with this ``row_id`` is already in the shard."""
        return row_id in self._rows

    @property
    def row_ids(self) -> set[str]:
        return set(self._rows)

    @property
    def run_id(self) -> str | None:
        """The run id of the rows already present (the first one found), for resuming the same run."""
        return self._run_ids[0] if self._run_ids else None

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[dict[str, Any]]:
        """The rows in the shard, in the order they were written (first copy of each ``row_id``)."""
        return list(self._rows.values())

    # -- writing -------------------------------------------------------------------------------------
    def append(self, row: Mapping[str, Any]) -> str:
        """Write ``row`` at once as its own part (built with ``Table.from_rows``); return its ``row_id``."""
        data = self.table.from_rows([row])
        row_id = data.column("row_id")[0].as_py()
        self._write(data, "p")
        self._rows[row_id] = data.to_pylist()[0]
        self._new_parts += 1
        if self._new_parts >= self.compact_every:
            self.compact()
        return row_id

    def _write(self, data: pa.Table, kind: str) -> Path:
        from kgpubench.shards import write_parquet_atomic

        path = self.folder / f"{kind}{self._next:08d}.parquet"
        self._next += 1
        write_parquet_atomic(data, path)
        return path

    def compact(self) -> Path | None:
        """Merge every part into one file (first copy of each row id wins); return it, or None if empty."""
        old = self._parts()
        if len(old) <= 1 and self._new_parts == 0:
            return old[0] if old else None
        if not self._rows:
            return None
        data = self.table.from_rows(list(self._rows.values()), fill_row_id=False)
        path = self._write(data, "c")
        for p in old:
            p.unlink(missing_ok=True)
        self._new_parts = 0
        return path

    def close(self) -> None:
        """Compact the parts (call on normal exit and on Ctrl-C)."""
        self.compact()
