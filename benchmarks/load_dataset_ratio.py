"""load_dataset of a 100k-row config versus pyarrow.parquet.read_table of the same files (target <= 2x).

Builds a temporary store with synthetic test rows (never merged anywhere), then times both readers in the
same run, best of several repeats, and prints the ratios.

    python benchmarks/load_dataset_ratio.py [--rows 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from kgpubench.loading import load_dataset
from kgpubench.schema import get_table
from kgpubench.shards import write_shard
from kgpubench.store import Store
from kgpubench.testing import valid_row


def build_store(folder: Path, rows: int) -> Store:
    table = get_table("autotune")
    base = valid_row("autotune")
    chunk = 25_000
    shards = []
    for start in range(0, rows, chunk):
        batch = [dict(base, params=[{"name": "block_size_x", "value": float(i)}], time_ms_median=1.0 + i * 1e-6)
                 for i in range(start, min(rows, start + chunk))]
        shards.append(write_shard(table.from_rows(batch), folder / f"shard-{start}.parquet"))
    store = Store(folder / "store")
    store.merge(shards)
    return store


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn()
        best = min(best, (time.perf_counter_ns() - t0) / 1e9)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = build_store(Path(tmp), args.rows)
        files = [store.path / f["path"] for f in store.files("autotune")]
        ref = best_of(lambda: [pq.read_table(f) for f in files], args.repeats)
        arrow = best_of(lambda: load_dataset("autotune", format="arrow", data_dir=store.path), args.repeats)
        ds = best_of(lambda: load_dataset("autotune", format="datasets", data_dir=store.path), args.repeats)
        print(f"rows={args.rows} files={len(files)}")
        print(f"pyarrow.parquet.read_table: {ref * 1e3:8.1f} ms")
        print(f"load_dataset(format=arrow):  {arrow * 1e3:8.1f} ms  ratio {arrow / ref:5.2f}x (target <= 2x)")
        print(f"load_dataset(format=datasets): {ds * 1e3:6.1f} ms  ratio {ds / ref:5.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
