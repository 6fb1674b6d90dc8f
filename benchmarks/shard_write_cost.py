"""Cost of persisting one finished row: the journal of ``ShardWriter.append`` against one parquet part per row.

The reference, measured in the same run on the same rows, is what the writer did before: one parquet file per
row, written atomically (temp file, fsync, rename) and compacted every 200 rows into one file of all rows so
far. Both keep every finished row on disk before ``append`` returns (a crash loses at most the row in flight).
Rows are full ``stencil`` and ``kernels`` rows (every numeric column filled). Prints milliseconds per row,
their share of a row's time at 10 and 20 rows/s, and the ratio reference / journal, for the journal synced to
the disk per row (the default: a machine crash also loses at most the row in flight) and not synced (a
process crash still loses nothing written).

    PYTHONPATH=. python benchmarks/shard_write_cost.py [--rows 400]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def full_row(config: str, i: int) -> dict:
    """A :func:`kgpubench.testing.valid_row` with every numeric column filled and a distinct key."""
    import pyarrow as pa

    from kgpubench.schema import get_table
    from kgpubench.testing import valid_row

    table = get_table(config)
    row = valid_row(config, source="fake")
    for col in table.columns:
        if row.get(col.name) is None and col.name != "row_id":
            if pa.types.is_floating(col.arrow_type):
                row[col.name] = 1.5 + i
            elif pa.types.is_integer(col.arrow_type):
                row[col.name] = 3
    key = {"kernels": "grid_x", "stencil": "tile_b1", "npb": "tpb"}[config]
    row[key] = 1 + i
    return row


class OnePartPerRow:
    """The previous writer's appends: a parquet part per row, all rows rewritten every ``compact_every``."""

    def __init__(self, folder: Path, config: str, compact_every: int = 200) -> None:
        from kgpubench.schema import get_table

        self.folder, self.table, self.compact_every = folder, get_table(config), compact_every
        self.rows: list[dict] = []
        self.parts: list[Path] = []
        self.seq = 0

    def append(self, row: dict) -> None:
        from kgpubench.foundation.files import write_parquet_atomic

        data = self.table.from_rows([row])
        self.parts.append(self.folder / f"p{self.seq:08d}.parquet")
        self.seq += 1
        write_parquet_atomic(data, self.parts[-1])
        self.rows.append(data.to_pylist()[0])
        if len(self.parts) >= self.compact_every:
            write_parquet_atomic(self.table.from_rows(self.rows, fill_row_id=False),
                                 self.folder / f"c{self.seq:08d}.parquet")
            self.seq += 1
            for p in self.parts:
                p.unlink()
            self.parts = []


def per_row_ms(make, rows: list[dict], warmup: int = 5) -> float:
    """Milliseconds per ``append`` of ``rows`` (after ``warmup`` untimed appends: imports, first file)."""
    with tempfile.TemporaryDirectory() as tmp:
        writer = make(Path(tmp))
        for row in rows[:warmup]:
            writer.append(row)
        start = time.perf_counter()
        for row in rows[warmup:]:
            writer.append(row)
        return (time.perf_counter() - start) * 1e3 / max(1, len(rows) - warmup)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=400, help="rows appended per measurement (default 400)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; medians are printed")
    args = parser.parse_args()
    from kgpubench.measure.output import ShardWriter

    for config in ("stencil", "kernels"):
        rows = [full_row(config, i) for i in range(args.rows)]
        ways = {"one parquet part per row (reference)": lambda folder, c=config: OnePartPerRow(folder, c),
                "journal, synced to disk per row": lambda folder, c=config: ShardWriter(folder, c),
                "journal, not synced": lambda folder, c=config: ShardWriter(folder, c, durable=False)}
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, make in ways.items():
                times[name].append(per_row_ms(make, rows))
        med = {name: statistics.median(ts) for name, ts in times.items()}
        ref = med["one parquet part per row (reference)"]
        print(f"{config} ({args.rows} full rows, median of {args.rounds} rounds):")
        for name, ms in med.items():
            print(f"  {name}: {ms:.2f} ms/row = {ms / 100:.1%} of a row at 10 rows/s, {ms / 50:.1%} at 20; "
                  f"reference / this = {ref / ms:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
