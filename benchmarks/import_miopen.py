"""Import speed of MIOpen's find-db: `kgpubench import miopen` against reading the same files with bz2 alone.

Times, in the same run and on the same files (:func:`kgpubench.importers.miopen.find_db_files`):

- reference: ``bz2.open(path).read()`` of every file and splitting its text into lines, nothing else;
- import: :func:`kgpubench.importers.miopen.import_miopen` (capped reading, parsing, checks, GPU columns, problem and
  row ids, the arrow table), without the schema validation and the shard write that ``kgpubench import`` adds
  (timed apart with ``--write``, since another part of kgpubench owns their speed).

Prints each best-of-``--repeat`` time, the ratio import / reference (target <= 3) and the peak resident memory.

    PYTHONPATH=. python benchmarks/import_miopen.py [DIR] [--repeat 1] [--write]
"""

from __future__ import annotations

import argparse
import bz2
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

TARGET_RATIO = 3.0
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "external" / "miopen"


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _reference(files) -> int:
    lines = 0
    for f in files:
        with bz2.open(f.path) if f.path.name.endswith(".bz2") else open(f.path, "rb") as fh:
            lines += len(fh.read().split(b"\n"))
    return lines


def main(argv: list[str] | None = None) -> int:
    from kgpubench.hardware import gpu_columns
    from kgpubench.importers.miopen import find_db_files, import_miopen

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="also time validation + the shard write")
    args = parser.parse_args(argv)
    if not args.dir.is_dir():
        print(f"{args.dir}: no such folder; pass the folder holding MIOpen's find-db files.", file=sys.stderr)
        return 2
    files = find_db_files(args.dir)
    gpu_columns("AMD Instinct MI300X")  # load the GPU catalogue once, outside both timings
    ref, _ = _best(lambda: _reference(files), args.repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        imp, table = _best(lambda: import_miopen(args.dir), args.repeat)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{len(files)} find-db files, {table.num_rows:,} rows")
    print(f"bz2 read + split alone: {ref:.2f} s")
    print(f"import_miopen:          {imp:.2f} s  (ratio {imp / ref:.2f}, target <= {TARGET_RATIO:g})")
    print(f"peak resident memory:   {peak:.2f} GiB")
    if args.write:
        from kgpubench.importers.api import write_import_shard

        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            write_import_shard(table, "convolutions", Path(tmp) / "conv.parquet", where=str(args.dir))
            print(f"validate + write:       {time.perf_counter() - t:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
