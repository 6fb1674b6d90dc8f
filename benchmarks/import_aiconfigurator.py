"""Import speed of `kgpubench import aiconfigurator` against reading the same parquet files with pyarrow alone.

Timings over the same folder, in one process (CPU time of this process and wall time):

1. reference: ``pyarrow.parquet.read_table`` of every GEMM and attention table of the folder (the floor any
   importer pays);
2. table: :func:`kgpubench.importers.aiconfigurator.import_aiconfigurator` (checks, nominal work, GPU look-up,
   arrow columns, row ids);
3. shard: :func:`kgpubench.importers.aiconfigurator.import_to_shard` (the table, schema validation and the zstd
   parquet write: what the command does), ``--packaged`` for the declared selection.

Issue 39's target is at most 3x the reference for both new folders together; the ratios printed here are the
aiconfigurator half (``benchmarks/import_miopen.py`` prints the other). Most of the import is the row ids (a
sha256 of each row's canonical key, computed once in the table and once more by the validation): reading
columnar parquet is far cheaper per row than any row-keyed import can be.

Usage: ``python benchmarks/import_aiconfigurator.py [FOLDER] [--packaged]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import pyarrow.parquet as pq

from kgpubench.importers.aiconfigurator import import_aiconfigurator, import_to_shard, table_files

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "external" / "aiconfigurator"


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--packaged", action="store_true", help="time the packaged selection's shard")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    files, _ = table_files(args.folder)
    tables, ref_wall, ref_cpu = timed(lambda: [pq.read_table(f.path) for f in files])
    rows = sum(t.num_rows for t in tables)
    print(f"reference: pyarrow read of {len(files)} tables, {rows:,} rows: {ref_wall:.2f} s wall, {ref_cpu:.2f} s CPU")
    table, wall, cpu = timed(lambda: import_aiconfigurator(args.folder))
    print(f"table: {table.num_rows:,} rows: {wall:.2f} s wall ({wall / ref_wall:.1f}x), {cpu:.2f} s CPU "
          f"({cpu / ref_cpu:.1f}x)")
    del table
    with tempfile.TemporaryDirectory() as tmp:
        (_, shard), wall, cpu = timed(lambda: import_to_shard(args.folder, Path(tmp) / "s.parquet",
                                                              packaged=args.packaged))
    print(f"shard{' (packaged)' if args.packaged else ''}: {shard.num_rows:,} rows: {wall:.2f} s wall "
          f"({wall / ref_wall:.1f}x), {cpu:.2f} s CPU ({cpu / ref_cpu:.1f}x)")


if __name__ == "__main__":
    main()
