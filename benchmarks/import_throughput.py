"""Import throughput: rows per second for a whole folder of Kernel Tuner caches (default: benchmark_hub).

Three timings over the same files, in one run:

1. reference: decompress and ``json.load`` every file (the floor any importer pays);
2. rows: :func:`kgpubench.importers.import_rows` (parse, GPU look-up, statistics, provenance);
3. shard: rows plus the arrow table (row ids), schema validation and the zstd parquet write.

Prints rows/s for each and the ratio of each importer timing to the reference.

Usage: ``python benchmarks/import_throughput.py [FOLDER] [--gpu-for-empty MI250X]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "external" / "benchmark_hub"


def _files(folder: Path) -> tuple[list[Path], list[Path]]:
    """Cache files split into (named device, empty device name)."""
    named, empty = [], []
    for path in sorted(folder.rglob("*.json.gz")):
        with gzip.open(path) as fh:
            head = fh.read(4096).decode(errors="replace")
        (empty if '"device_name": ""' in head else named).append(path)
    return named, empty


def _timed(fn):
    start = time.perf_counter_ns()
    out = fn()
    return out, (time.perf_counter_ns() - start) / 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--gpu-for-empty", default="MI250X", help="GPU of files with an empty device_name")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"error: {args.folder}: no such folder; pass the benchmark_hub folder", file=sys.stderr)
        return 1
    from kgpubench.importers import import_rows, import_to_shard

    named, empty = _files(args.folder)
    groups = [(named, None), (empty, args.gpu_for_empty)]
    _, t_ref = _timed(lambda: [json.loads(gzip.decompress(p.read_bytes())) for p in named + empty])
    rows, t_rows = _timed(lambda: sum(len(import_rows(files, gpu=gpu)) for files, gpu in groups if files))
    with tempfile.TemporaryDirectory() as tmp:
        _, t_shard = _timed(lambda: [import_to_shard(files, Path(tmp) / f"s{i}.parquet", gpu=gpu)
                                     for i, (files, gpu) in enumerate(groups) if files])
    print(f"{len(named) + len(empty)} files, {rows} rows ({args.folder})")
    print(f"reference  json.load only      {t_ref:7.2f} s  {rows / t_ref:10,.0f} rows/s  ratio 1.00")
    print(f"import     rows                {t_rows:7.2f} s  {rows / t_rows:10,.0f} rows/s  ratio {t_rows / t_ref:.2f}")
    print(f"import     rows+validate+write {t_shard:7.2f} s  {rows / t_shard:10,.0f} rows/s  "
          f"ratio {t_shard / t_ref:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
