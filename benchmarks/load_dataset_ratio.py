"""load_dataset of every config in a store versus pyarrow.parquet.read_table of the same files (target <= 1.2x).

For each config of the store (default: the packaged data, so configs other helpers add are covered as soon as
they are merged) it times, in the same run, best of several interleaved repeats:

1. reference: ``pyarrow.parquet.read_table`` of the config's files (``concat_tables`` when there are several);
2. ``load_dataset(config, format="arrow")`` (manifest, sha256 check of each file, conform to the schema);
3. ``load_dataset(config, format="datasets")`` (the same, wrapped as a ``datasets.Dataset``).

``--synthetic N`` adds a temporary store with N generated `autotune` rows (never merged anywhere).
Prints each ratio and exits 1 when one is above ``--target``.

    python benchmarks/load_dataset_ratio.py [--data DIR] [--synthetic 100000] [--repeats 7] [--target 1.2]

Measured on the shared 2-core development machine (load about 2), best of 9:

====================  ========  ==========  ===============  ================
config                rows      read_table  arrow            datasets
====================  ========  ==========  ===============  ================
autotune (packaged)   155,952   120.7 ms    123.1 ms 1.02x   139.6 ms 1.16x
autotune (synthetic)  100,000   47.6 ms     49.9 ms 1.05x    56.4 ms 1.19x
kernels               1,854     9.6 ms      13.7 ms 1.43x    24.4 ms 2.53x
npb                   255       4.5 ms      7.4 ms 1.64x     12.5 ms 2.76x
stencil               195       6.9 ms      9.7 ms 1.42x     21.8 ms 3.17x
====================  ========  ==========  ===============  ================

Before this change autotune was 1.17x (arrow) and 1.46x (datasets). What is left above 1.2x on the small
configs is a fixed cost, not one per row: about 3 ms for the manifest and the store (arrow) and 8 to 15 ms in
``datasets.Dataset``'s own constructor, which derives its features from the schema column by column (kernels
and stencil have many columns).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.resources import default_data_dir
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.tasks.loading import load_dataset
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


def _read_all(files: list[Path]) -> pa.Table:
    tables = [pq.read_table(f) for f in files]
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables, promote_options="default")


def ratios(store: Store, config: str, repeats: int) -> tuple[int, float, float, float]:
    """(rows, reference s, arrow s, datasets s): best of ``repeats`` rounds, the three interleaved."""
    files = [store.path / f["path"] for f in store.files(config)]
    load_dataset(config, format="datasets", data_dir=store.path)  # warm: imports, page cache
    best = [float("inf")] * 3
    rows = 0
    for _ in range(repeats):
        for i, fn in enumerate((lambda: _read_all(files),
                                lambda: load_dataset(config, format="arrow", data_dir=store.path),
                                lambda: load_dataset(config, format="datasets", data_dir=store.path))):
            t0 = time.perf_counter_ns()
            out = fn()
            best[i] = min(best[i], (time.perf_counter_ns() - t0) / 1e9)
            rows = out.num_rows if i == 0 else rows
    return rows, best[0], best[1], best[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="store folder (default: the packaged data)")
    parser.add_argument("--synthetic", type=int, default=0, help="also a temporary store with N autotune rows")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--target", type=float, default=1.2)
    args = parser.parse_args(argv)
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        stores = [("packaged" if args.data is None else str(args.data), Store(args.data or default_data_dir()))]
        if args.synthetic:
            stores.append((f"synthetic {args.synthetic} rows", build_store(Path(tmp), args.synthetic)))
        print(f"{'store':<24} {'config':<14} {'rows':>8} {'files':>5} {'read_table':>10} {'arrow':>14} "
              f"{'datasets':>14}")
        for label, store in stores:
            for config in store.configs():
                if not store.files(config):
                    continue
                rows, ref, arrow, ds = ratios(store, config, args.repeats)
                worst = max(worst, arrow / ref, ds / ref)
                print(f"{label:<24} {config:<14} {rows:>8} {len(store.files(config)):>5} {ref * 1e3:>8.1f}ms "
                      f"{arrow * 1e3:>7.1f}ms {arrow / ref:4.2f}x {ds * 1e3:>7.1f}ms {ds / ref:4.2f}x")
    print(f"worst ratio {worst:.2f}x (target <= {args.target}x)")
    return 0 if worst <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
