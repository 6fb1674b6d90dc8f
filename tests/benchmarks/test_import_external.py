"""benchmarks/import_external.py on slices of the staged folders: it times the reference and both imports with the
jobs asked for, counts the workers' CPU, and judges the target on wall time."""

from __future__ import annotations

import bz2
import importlib.util
import re
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTERNAL = ROOT.parent / "shared" / "external"
FDB = EXTERNAL / "miopen" / "perfdb" / "gfx906_60.HIP.fdb.txt.bz2"
AIC = EXTERNAL / "aiconfigurator" / "data" / "b200_sxm" / "gemm" / "trtllm" / "1.3.0rc20" / "gemm_perf.parquet"
_spec = importlib.util.spec_from_file_location("import_external_bench", ROOT / "benchmarks" / "import_external.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["import_external_bench"] = bench
_spec.loader.exec_module(bench)


@pytest.mark.skipif(not (FDB.is_file() and AIC.is_file()), reason="../shared/external not staged")
def test_the_benchmark_prints_wall_and_cpu_ratios(tmp_path, monkeypatch, capsys):
    fdb = tmp_path / "miopen"
    fdb.mkdir()
    with bz2.open(FDB, "rb") as fh:
        (fdb / FDB.name).write_bytes(bz2.compress(b"".join(fh.readline() for _ in range(40))))
    table = tmp_path / "aic" / "data" / AIC.relative_to(AIC.parents[4])
    table.parent.mkdir(parents=True)
    pq.write_table(pq.read_table(AIC).slice(0, 300), table)
    monkeypatch.setattr(sys, "argv", ["import_external.py", "--aiconfigurator", str(tmp_path / "aic"), "--miopen",
                                      str(fdb), "--jobs", "1"])
    bench.main()
    out = capsys.readouterr().out
    assert re.search(r"reference: .*\(340 rows and lines\)", out)
    assert "import aiconfigurator (1 jobs): 300 rows" in out and "0.0 s in workers" in out
    assert re.search(r"import miopen \(1 jobs\): [\d,]+ rows", out)
    assert re.search(r"ratio, both folders: [\d.]+x wall \(target <= 3x: (met|not met)\), [\d.]+x CPU", out)
