"""benchmarks/import_miopen.py on a small hand-written folder: it reads the same files both ways and prints the two
times, their ratio and the peak memory; a missing folder is one line and exit 2."""

from __future__ import annotations

import bz2
import importlib.util
import sys
from pathlib import Path

from kgpubench.importers.miopen import find_db_files

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("import_miopen_bench", ROOT / "benchmarks" / "import_miopen.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules["import_miopen_bench"] = bench
_spec.loader.exec_module(bench)

LINE = "64-56-56-3x3-128-56-56-8-1x1-1x1-1x1-0-NCHW-FP32-F=GemmFwdRest:1.25,4096,miopenConvolutionFwdAlgoGEMM\n"


def test_the_benchmark_times_both_readings_and_prints_the_ratio(tmp_path, capsys):
    (tmp_path / "gfx942130.HIP.fdb.txt.bz2").write_bytes(bz2.compress(LINE.encode() * 3))
    (tmp_path / "gfx906_60.HIP.fdb.txt").write_text(LINE)
    assert bench._reference(find_db_files(tmp_path)) == 4 + 2  # lines, with the empty one after each last newline
    assert bench.main([str(tmp_path), "--write"]) == 0
    out = capsys.readouterr().out
    assert "2 find-db files, 2 rows" in out  # the three identical lines of one file are one row
    assert "bz2 read + split alone:" in out and "(ratio " in out and "validate + write:" in out


def test_a_missing_folder_is_one_line(tmp_path, capsys):
    assert bench.main([str(tmp_path / "nope")]) == 2
    assert "no such folder" in capsys.readouterr().err
