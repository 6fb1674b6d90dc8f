"""The resumable shard writer: a folder of parquet parts, and a journal that holds each row as it finishes.

Layout of a shard folder ``OUT/``::

    OUT/c00000200.parquet   parts (many rows each), written every ``compact_every`` rows and on close
    OUT/j00000201.arrows    the journal: an Arrow IPC stream, one record batch per finished row, flushed to
                            the operating system (and, with ``durable``, to the disk) before ``append`` returns

``kgpubench validate`` / ``merge`` read the parquet parts (all ``*.parquet`` in name order) and the complete rows
of a journal (:func:`kgpubench.store.shards.read_shard`), so a killed collection's rows are never invisible. A crash
loses at most the row in flight: the rows in a journal are folded into a parquet part the next time the folder is
opened (a torn last record, the row being written when the process died, is dropped). If a crash strikes
between writing a part and deleting the journal it came from, a row may sit in two files:
:meth:`ShardWriter.open` keeps the first copy of each ``row_id`` and the next compaction removes the
duplicate. Older writers left one ``p*.parquet`` part per row; they are read the same way.

Appending a row costs one small IPC record batch (about a millisecond with the disk sync), not a parquet file
per row; ``benchmarks/shard_write_cost.py`` measures both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.errors import SchemaValidationError
from kgpubench.foundation.files import write_parquet_atomic
from kgpubench.schema import get_table
from kgpubench.store.shards import read_journal as read_table

_PART = re.compile(r"^([pc])(\d{8})\.parquet$")
_JOURNAL = re.compile(r"^j(\d{8})\.arrows$")


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The complete rows of a journal; a torn last record (a crash while writing it) is left out."""
    table = read_table(path)
    return table.to_pylist() if table is not None else []


class ShardWriter:
    """Append rows of one table to a shard folder, skipping nothing by itself (see :meth:`has`).

    Parameters
    ----------
    folder : Path
        The shard folder (created if missing).
    table : str
        Table name (``kernels``, ``npb``, ``stencil``).
    compact_every : int
        Write the journal's rows as a parquet part after this many new rows.
    durable : bool
        Sync the journal to the disk after every row (a machine crash, not only a process crash, then loses
        at most the row in flight).
    """

    def __init__(self, folder: Path, table: str, *, compact_every: int = 200, durable: bool = True) -> None:
        self.folder = Path(folder)
        self.table = get_table(table)
        self.compact_every = compact_every
        self.durable = durable
        self.folder.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, dict[str, Any]] = {}
        self._pending: list[dict[str, Any]] = []  # rows in the journal, not yet in a parquet part
        self._run_ids: list[str] = []
        self._next = 0
        self._journal: Any = None  # (file, IPC stream writer, path) of the open journal
        self._load()
        if self._journals():
            self._flush_pending()  # rows a crashed run left in its journal become a parquet part now

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
                self._keep(row)
        for path in self._journals():
            for row in read_journal(path):
                if "row_id" in row and self._keep(row):
                    self._pending.append(row)
        seqs = [int(_PART.match(p.name).group(2)) for p in self._parts()]
        seqs += [int(_JOURNAL.match(p.name).group(1)) for p in self._journals()]
        self._next = max(seqs) + 1 if seqs else 0

    def _keep(self, row: dict[str, Any]) -> bool:
        """Record ``row`` unless its row id is already there (first copy wins); whether it was new."""
        if row["row_id"] in self._rows:
            return False
        self._rows[row["row_id"]] = row
        if row.get("run_id") and row["run_id"] not in self._run_ids:
            self._run_ids.append(row["run_id"])
        return True

    def _parts(self) -> list[Path]:
        return sorted(p for p in self.folder.glob("*.parquet") if _PART.match(p.name))

    def _journals(self) -> list[Path]:
        return sorted(p for p in self.folder.glob("*.arrows") if _JOURNAL.match(p.name))

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
        """Validate ``row`` (``Table.from_rows``), add it to the journal at once and return its ``row_id``."""
        data = self.table.from_rows([row])
        if self._journal is None:
            path = self.folder / f"j{self._next:08d}.arrows"
            self._next += 1
            fh = open(path, "wb")  # noqa: SIM115 - kept open across appends, closed in _close_journal
            self._journal = (fh, pa.ipc.new_stream(fh, data.schema), path)
        fh, writer, _path = self._journal
        writer.write_table(data)
        fh.flush()
        if self.durable:
            (getattr(os, "fdatasync", None) or os.fsync)(fh.fileno())
        stored = data.to_pylist()[0]
        if self._keep(stored):
            self._pending.append(stored)
        if len(self._pending) >= self.compact_every:
            self._flush_pending()
        return stored["row_id"]

    def _close_journal(self) -> None:
        if self._journal is not None:
            fh, writer, _path = self._journal
            self._journal = None
            try:
                writer.close()
            finally:
                fh.close()

    def _write(self, data: pa.Table, kind: str) -> Path:
        path = self.folder / f"{kind}{self._next:08d}.parquet"
        self._next += 1
        write_parquet_atomic(data, path)
        return path

    def _flush_pending(self) -> Path | None:
        """Write the journal's rows as one parquet part, then drop the journal files."""
        self._close_journal()
        path = None
        if self._pending:
            path = self._write(self.table.from_rows(self._pending, fill_row_id=False), "c")
            self._pending = []
        for journal in self._journals():
            journal.unlink(missing_ok=True)
        return path

    def compact(self) -> Path | None:
        """Merge every part and the journal into one file (first copy of each row id wins); return it, or
        None if the shard is empty."""
        self._flush_pending()
        old = self._parts()
        if len(old) <= 1:
            return old[0] if old else None
        data = self.table.from_rows(list(self._rows.values()), fill_row_id=False)
        path = self._write(data, "c")
        for p in old:
            p.unlink(missing_ok=True)
        return path

    def close(self) -> None:
        """Compact the parts (call on normal exit and on Ctrl-C)."""
        self.compact()
