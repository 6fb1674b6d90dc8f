"""Import speed of NeuSight's operator files: `kgpubench import neusight` against reading the same files with pandas.

Times, in the same run and on the same files (the primary ones, :func:`kgpubench.importers.neusight.primary_files`):

- reference: ``pandas.read_csv`` of every primary file (gzip included), nothing else;
- import: :func:`kgpubench.importers.neusight.import_neusight` (reading, checks, GPU columns, row ids, the arrow
  table), without the schema validation and the shard write that ``kgpubench import`` adds (timed apart, as
  ``validate + write``, since another part of kgpubench owns their speed).

Prints each best-of-``--repeat`` time and the ratio import / reference (target <= 3).

    PYTHONPATH=. python benchmarks/import_neusight.py [DIR] [--repeat 3] [--write]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 3.0
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "shared" / "external" / "neusight"


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main(argv: list[str] | None = None) -> int:
    import pandas as pd

    from kgpubench.importers.neusight import import_neusight, primary_files

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="also time validation + the shard write")
    args = parser.parse_args(argv)
    if not args.dir.is_dir():
        print(f"{args.dir}: no such folder; pass NeuSight's scripts/asplos folder.", file=sys.stderr)
        return 2
    files = primary_files(args.dir)
    ref, _ = _best(lambda: sum(len(pd.read_csv(f.path)) for f in files), args.repeat)
    imp, table = _best(lambda: import_neusight(args.dir), args.repeat)
    print(f"{len(files)} primary files, {table.num_rows:,} rows")
    print(f"pandas.read_csv alone: {ref:.2f} s")
    print(f"import_neusight:       {imp:.2f} s  (ratio {imp / ref:.2f}, target <= {TARGET_RATIO:g})")
    if args.write:
        from kgpubench.importers.api import write_import_shard

        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            write_import_shard(table, "operators", Path(tmp) / "ops.parquet", where=str(args.dir))
            print(f"validate + write:      {time.perf_counter() - t:.2f} s")
    return 0 if imp / ref <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
