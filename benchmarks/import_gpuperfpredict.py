"""Import speed of gpuperfpredict (`kgpubench import gpuperfpredict`) against a plain pandas read of the same files.

Times, in one run on this machine:

- reference: ``pandas.read_csv`` of every ``datasets/<kernel>-<GPU>.csv.gz`` (gzip by name, no checks);
- import: :func:`kgpubench.importers.gpuperfpredict.import_table` (capped reads, every check, unit conversion,
  GPU catalogue columns, row ids, the arrow table), then ``validate_table`` and ``write_shard`` apart;

and prints each with its ratio to the reference (target: import <= 3x the reference; the whole import, validation
and write included, <= 90 s on 2 cores). Asserts the row counts of PROVENANCE.md per GPU and kernel.

    PYTHONPATH=. python benchmarks/import_gpuperfpredict.py [SNAPSHOT]   # default ../shared/external/gpuperfpredict
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 3.0
TARGET_TOTAL_S = 90.0
PER_KERNEL = {"bpnn_layerforward_CUDA": 57, "bpnn_adjust_weights_cuda": 57, "calculate_temp": 6400, "kernel": 5270,
              "lud_diagonal": 8448, "lud_perimeter": 8416}
GPUS = ("GeForce GTX 680", "Tesla K20c", "GeForce GTX TITAN", "Quadro K5200", "GeForce GTX TITAN X",
        "GeForce GTX 970", "GeForce GTX 980", "Tesla P100-PCIE-12GB")
NO_LUD_PERIMETER = ("GeForce GTX TITAN X", "GeForce GTX 970")


def main(argv: list[str]) -> int:
    import pandas as pd

    from kgpubench.importers.gpuperfpredict import find_files, import_table
    from kgpubench.store.shards import write_shard
    from kgpubench.store.validation import validate_table

    snapshot = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "shared" / "external" / "gpuperfpredict"
    files = find_files(snapshot)
    start = time.perf_counter()
    rows = sum(len(pd.read_csv(f.path)) for f in files)
    reference = time.perf_counter() - start

    start = time.perf_counter()
    table = import_table(snapshot)
    imported = time.perf_counter() - start
    start = time.perf_counter()
    violations = validate_table(table, "profiles")
    validated = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        write_shard(table, Path(tmp) / "profiles.parquet", "profiles")
        written = time.perf_counter() - start

    assert not violations, violations[:3]
    assert table.num_rows == rows == 212_352, (table.num_rows, rows)
    counts = table.group_by(["gpu_name", "kernel"]).aggregate([("row_id", "count")]).to_pylist()
    got = {(c["gpu_name"], c["kernel"]): c["row_id_count"] for c in counts}
    expected = {(g, k): n for g in GPUS for k, n in PER_KERNEL.items()
                if not (k == "lud_perimeter" and g in NO_LUD_PERIMETER)}
    assert got == expected, sorted(set(got.items()) ^ set(expected.items()))[:5]

    total = imported + validated + written
    print(f"files: {len(files)}, rows: {table.num_rows:,} (counts per GPU and kernel as PROVENANCE.md)")
    print(f"pandas.read_csv reference: {reference:.1f} s")
    print(f"import_table:              {imported:.1f} s  ratio {imported / reference:.2f} (target <= {TARGET_RATIO})")
    print(f"validate_table:            {validated:.1f} s  ratio {validated / reference:.2f}")
    print(f"write_shard:               {written:.1f} s  ratio {written / reference:.2f}")
    print(f"import + validate + write: {total:.1f} s  ratio {total / reference:.2f} (target <= {TARGET_TOTAL_S:.0f} s)")
    return 0 if imported / reference <= TARGET_RATIO and total <= TARGET_TOTAL_S else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
