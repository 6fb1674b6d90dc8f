"""Hostile AIConfigurator folders through `kgpubench import aiconfigurator`: each is one error line naming the file
(and the row and column where there is one), no traceback, and no shard written."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import cli


@pytest.fixture(autouse=True)
def _licence(tmp_path):
    """The staged folders of these cases carry their upstream LICENSE (in the folder or the one above it)."""
    (tmp_path / "LICENSE").write_text("test data licence\n")

GEMM = "h200_sxm/gemm/trtllm/1.0/gemm_perf.parquet"


def _gemm(**over) -> pa.Table:
    cols = {"framework": ["TRTLLM"], "version": ["1.0"], "device": ["NVIDIA H200"], "op_name": ["gemm"],
            "kernel_source": ["torch_flow"], "gemm_dtype": ["bfloat16"], "m": pa.array([8], pa.int64()),
            "n": pa.array([8], pa.int64()), "k": pa.array([8], pa.int64()), "latency": [0.01]}
    cols.update(over)
    return pa.table(cols)


CASES = {
    "time 0": (_gemm(latency=[0.0]), "row 1, column 'latency': 0.0 ms"),
    "time NaN": (_gemm(latency=[float("nan")]), "row 1, column 'latency': nan ms"),
    "time below 0": (_gemm(latency=[-0.5]), "row 1, column 'latency': -0.5 ms"),
    "unknown dtype": (_gemm(gemm_dtype=["fp6"]), "row 1, column 'gemm_dtype': 'fp6' is not a dtype"),
    "escape in device": (_gemm(device=["\x1b[2JNVIDIA H200"]), "row 1, column 'device': '\\x1b[2JNVIDIA H200'"),
    "newline in kernel source": (_gemm(kernel_source=["a\nerror: forged"]), "column 'kernel_source'"),
    "a huge m": (_gemm(m=pa.array([-(2**62)], pa.int64())), "row 1, column 'm'"),
    "another table's schema": (pa.table({"x": [1]}), "column 'framework' is missing"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_table_is_one_line_and_writes_nothing(case, tmp_path, monkeypatch, capsys):
    table, why = CASES[case]
    path = tmp_path / "data" / GEMM
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)
    out = tmp_path / "out" / "s.parquet"
    code, stdout, err = cli(monkeypatch, capsys, "import", "aiconfigurator", tmp_path, "--out", out)
    assert code == 1 and "Traceback" not in stdout + err
    (line,) = err.splitlines()
    assert line.startswith(f"error: {path}: ") and why in line, line
    assert not out.parent.exists()


def test_a_truncated_parquet_file_is_one_line(tmp_path, monkeypatch, capsys):
    path = tmp_path / "data" / GEMM
    path.parent.mkdir(parents=True)
    pq.write_table(_gemm(), path)
    path.write_bytes(path.read_bytes()[:-40])
    code, _, err = cli(monkeypatch, capsys, "import", "aiconfigurator", tmp_path, "--out", tmp_path / "o.parquet")
    (line,) = err.splitlines()
    assert code == 1 and "not a readable parquet file" in line and not (tmp_path / "o.parquet").exists()
