"""The AIConfigurator importer (kgpubench.importers.aiconfigurator): the layout, not the staged files; each quirk of
the staged PROVENANCE on purpose; nominal work by hand; the real files' rows."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgpubench.importers.aiconfigurator import (
    import_aiconfigurator,
    import_to_shard,
    packaged_selection,
    table_files,
)
from kgpubench.importers.common import ImportNotice
from kgpubench.store.validation import validate_table

# Staged folders carry their upstream LICENSE (kgpubench.importers.api.require_licence_file).
pytestmark = pytest.mark.usefixtures("_staged_licence")

STAGED = Path(__file__).resolve().parents[3] / "shared" / "external" / "aiconfigurator" / "data"
needs_staged = pytest.mark.skipif(not STAGED.is_dir(), reason="../shared/external/aiconfigurator is not staged here")


def gemm_table(device="NVIDIA H200", framework="TRTLLM", version="1.3.0rc20", rows=None) -> pa.Table:
    rows = rows or [("torch_flow", "bfloat16", 1024, 4096, 4096, 0.125), ("torch_flow", "fp8", 8, 4096, 4096, 0.01)]
    return pa.table({"framework": [framework] * len(rows), "version": [version] * len(rows),
                     "device": [device] * len(rows), "op_name": ["gemm"] * len(rows),
                     "kernel_source": [r[0] for r in rows], "gemm_dtype": [r[1] for r in rows],
                     "m": pa.array([r[2] for r in rows], pa.int64()), "n": pa.array([r[3] for r in rows], pa.int64()),
                     "k": pa.array([r[4] for r in rows], pa.int64()), "latency": [r[5] for r in rows]})


def attention_table(op="context_attention", window=True, rows=None, device="NVIDIA H200") -> pa.Table:
    # (batch, isl, heads, kv heads, head dim, attn dtype, kv dtype, step, latency)
    rows = rows or [(2, 1024, 32, 8, 128, "bfloat16", "bfloat16", 0, 0.5)]
    cols = {"framework": ["VLLM"] * len(rows), "version": ["0.24.0"] * len(rows), "device": [device] * len(rows),
            "op_name": [op] * len(rows), "kernel_source": ["vllm_flash_attn"] * len(rows)}
    for i, name in enumerate(("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim")):
        cols[name] = pa.array([r[i] for r in rows], pa.int64())
    cols["beam_width"] = pa.array([1] * len(rows), pa.int64())
    cols["attn_dtype"] = [r[5] for r in rows]
    cols["kv_cache_dtype"] = [r[6] for r in rows]
    cols["step"] = pa.array([r[7] for r in rows], pa.int64())
    if window:
        cols["window_size"] = pa.array([0] * len(rows), pa.int64())
    cols["latency"] = [r[8] for r in rows]
    return pa.table(cols)


def write(root: Path, rel: str, table: pa.Table, meta: str | None = "provenance: collected\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    if meta is not None:
        (path.parent / "collection_meta.yaml").write_text(f"schema_version: 1\n{meta}")
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    root = tmp_path / "aic" / "data"
    write(root, "h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet", gemm_table())
    write(root, "h200_sxm/attention/vllm/0.24.0/context_attention_perf.parquet", attention_table(),
          meta="provenance: legacy\n")
    gen = attention_table("generation_attention", window=False,
                          rows=[(4, 1, 32, 8, 128, "bfloat16", "fp8", 1023, 0.02)])
    write(root, "h200_sxm/attention/vllm/0.24.0/generation_attention_perf.parquet", gen, meta=None)
    write(root, "h200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet", pa.table({"x": [1]}))
    return tmp_path / "aic"


def test_a_folder_in_the_layout_imports_with_nominal_work_by_hand(folder):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = import_aiconfigurator(folder)
    notes = [str(w.message) for w in caught if issubclass(w.category, ImportNotice)]
    assert len(notes) == 1 and "1 other AIConfigurator table(s)" in notes[0]
    assert validate_table(table, "llm_operators", file="t") == []
    rows = {(r["operator"], r["dtype"]): r for r in table.to_pylist()}
    assert len(rows) == 4
    g = rows[("gemm", "bfloat16")]
    assert g["framework"] == "trtllm" and g["framework_version"] == "1.3.0rc20" and g["system"] == "h200_sxm"
    assert g["gpu_name"] == "NVIDIA H200" and g["time_ms"] == 0.125 and g["compute_dtype"] == "bf16"
    assert g["flops"] == 2 * 1024 * 4096 * 4096
    assert g["bytes_min"] == 1024 * 4096 * 2 + 4096 * 4096 * 2 + 2 * 1024 * 4096
    assert g["upstream_provenance"] == "collected" and g["source_license"] == "Apache-2.0"
    assert g["source_file"] == "h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet"
    assert g["kv_cache_dtype"] is None and g["batch_size"] is None
    f8 = rows[("gemm", "fp8")]
    assert f8["compute_dtype"] == "fp8" and f8["bytes_min"] == 8 * 4096 + 4096 * 4096 + 2 * 8 * 4096
    c = rows[("context_attention", "bfloat16")]
    # B=2, S=1024, H=32, Hkv=8, D=128: 4 B H S S D flops; Q + K,V + O bytes in bf16
    assert c["flops"] == 4 * 2 * 32 * 1024 * 1024 * 128
    assert c["bytes_min"] == 2 * 1024 * 32 * 128 * 2 + 2 * 2 * 8 * 1024 * 128 * 2 + 2 * 2 * 1024 * 32 * 128
    assert c["upstream_provenance"] == "legacy" and c["window_size"] == 0
    gen = rows[("generation_attention", "bfloat16")]
    # attended length = step + 1 = 1024; the KV cache in fp8 (1 byte)
    assert gen["flops"] == 4 * 4 * 32 * 1 * 1024 * 128
    assert gen["bytes_min"] == 4 * 32 * 128 * 2 + 2 * 4 * 8 * 1024 * 128 * 1 + 2 * 4 * 32 * 128
    assert gen["window_size"] is None and gen["upstream_provenance"] == "legacy" and gen["kv_cache_dtype"] == "fp8"


def test_a_new_system_framework_and_gpu_import_without_a_code_edit(folder):
    root = folder / "data"
    write(root, "newbox/gemm/myserve/9.9/gemm_perf.parquet",
          gemm_table(device="NVIDIA Future GPU 9000", framework="MyServe", version="9.9"))
    table = import_aiconfigurator(folder)
    new = [r for r in table.to_pylist() if r["system"] == "newbox"]
    assert len(new) == 2 and {r["framework"] for r in new} == {"myserve"}
    assert {r["gpu_name"] for r in new} == {"NVIDIA Future GPU 9000"} and new[0]["gpu_sm_count"] is None
    assert validate_table(table, "llm_operators", file="t") == []


def test_repeated_points_are_kept_and_numbered(folder):
    root = folder / "data"
    rows = [("torch_flow", "bfloat16", 64, 64, 64, 0.01), ("torch_flow", "bfloat16", 64, 64, 64, 0.011)]
    write(root, "h200_sxm/gemm/sglang/0.5.14/gemm_perf.parquet", gemm_table(framework="SGLang", version="0.5.14",
                                                                            rows=rows))
    table = import_aiconfigurator(folder)
    rep = [r for r in table.to_pylist() if r["framework"] == "sglang"]
    assert sorted((r["occurrence"], r["time_ms"]) for r in rep) == [(0, 0.01), (1, 0.011)]
    assert len({r["row_id"] for r in table.to_pylist()}) == table.num_rows


def test_repeats_are_found_among_the_columns_that_vary_as_among_all():
    """The search for repeated keys leaves out columns with one value in the file (NaN throughout, or one code):
    the same occurrences as pandas' search over every key column, and rows 0, 2, 4 (one key) numbered 0, 1, 2."""
    import pandas as pd

    from kgpubench.importers.aiconfigurator import KEY_WITHIN_FILE, _occurrence

    n = 6
    cols = {c: np.full(n, np.nan) for c in KEY_WITHIN_FILE}  # dimensions of another operator: NaN throughout
    cols["kernel_source"] = np.zeros(n, dtype=np.int64)  # one text code in the whole file
    cols["m"] = np.array([8.0, 16.0, 8.0, 32.0, 8.0, 16.0])
    cols["dtype"] = np.array([0, 0, 0, 0, 0, 1])
    got = _occurrence(cols, n)
    assert got.tolist() == [0, 0, 1, 0, 2, 0]
    frame = pd.DataFrame({c: cols[c] for c in KEY_WITHIN_FILE})
    assert got.tolist() == frame.groupby(list(KEY_WITHIN_FILE), dropna=False, sort=False).cumcount().tolist()
    same = {c: np.zeros(3, dtype=np.int64) for c in KEY_WITHIN_FILE}  # nothing varies: every row one key
    assert _occurrence(same, 3).tolist() == [0, 1, 2]


def test_the_packaged_selection_keeps_a_problem_on_every_gpu_and_framework(folder):
    root = folder / "data"
    shapes = [("torch_flow", "bfloat16", m, 4096, 4096, 0.1) for m in range(1, 65)]
    for fw, system, dev in (("TRTLLM", "h200_sxm", "NVIDIA H200"), ("SGLang", "b200_sxm", "NVIDIA B200")):
        write(root, f"{system}/gemm/{fw.lower()}/1/gemm_perf.parquet", gemm_table(dev, fw, "1", shapes))
    whole = import_aiconfigurator(folder)
    kept = packaged_selection(folder)
    gemms = [r for r in kept.to_pylist() if r["operator"] == "gemm" and r["framework_version"] == "1"]
    by_m = {}
    for r in gemms:
        by_m.setdefault(r["m"], set()).add(r["gpu_name"])
    assert by_m and all(gpus == {"NVIDIA H200", "NVIDIA B200"} for gpus in by_m.values())
    assert 0 < len(by_m) < 64 and kept.num_rows < whole.num_rows  # about one problem in 16


@pytest.mark.parametrize("break_it,why", [
    (lambda t: t.set_column(9, "latency", pa.array([0.0, 0.01])), "row 1, column 'latency': 0.0 ms"),
    (lambda t: t.set_column(9, "latency", pa.array([0.1, float("nan")])), "row 2, column 'latency': nan ms"),
    (lambda t: t.set_column(9, "latency", pa.array([-1.0, 0.01])), "a time must be a finite number > 0"),
    (lambda t: t.set_column(5, "gemm_dtype", pa.array(["bfloat16", "fp6"])),
     "row 2, column 'gemm_dtype': 'fp6' is not a dtype kgpubench knows"),
    (lambda t: t.drop_columns(["k"]), "column 'k' is missing"),
    (lambda t: t.set_column(2, "device", pa.array(["NVIDIA H200\x1b]0;x\x07", "NVIDIA H200"])),
     "row 1, column 'device'"),
    # the first bad value in row order is named: a null in row 2 before a padded text in row 1's place after it
    (lambda t: pa.concat_tables([t, t.slice(0, 1)]).set_column(2, "device", pa.array(
        ["NVIDIA H200", None, " NVIDIA H200"])), "row 2, column 'device': None"),
    (lambda t: pa.concat_tables([t, t.slice(0, 1)]).set_column(4, "kernel_source", pa.array(
        ["torch_flow", "x" * 201, "\tbad"])), "row 2, column 'kernel_source': 'xxx"),
    (lambda t: t.set_column(0, "framework", pa.array(["VLLM", "VLLM"])), "in the 'trtllm' folder"),
    (lambda t: t.set_column(3, "op_name", pa.array(["gemm", "context_attention"])), "row 2, column 'op_name'"),
    (lambda t: t.set_column(6, "m", pa.array([0, 8], pa.int64())), "row 1, column 'm': 0"),
    (lambda t: t.set_column(6, "m", pa.array([1.5, 8.0])), "column 'm': type double"),
])
def test_bad_values_are_one_line_naming_file_row_and_column(folder, tmp_path, break_it, why):
    from kgpubench.errors import ImportFormatError

    path = write(folder / "data", "h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet", break_it(gemm_table()))
    out = tmp_path / "o.parquet"
    with pytest.raises(ImportFormatError) as err:
        import_to_shard(folder, out)
    assert str(err.value).startswith(f"{path}: ") and why in str(err.value) and "\n" not in str(err.value)
    assert not out.exists()


def test_another_tables_schema_and_a_truncated_file_are_refused(folder, tmp_path):
    from kgpubench.errors import ImportFormatError

    path = write(folder / "data", "h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet", attention_table())
    with pytest.raises(ImportFormatError, match="column 'gemm_dtype' is missing .* not a table of another schema"):
        import_aiconfigurator(folder)
    write(folder / "data", "h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet", gemm_table())
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ImportFormatError, match="not a readable parquet file"):
        import_aiconfigurator(folder)
    (folder / "data" / "h200_sxm" / "gemm" / "trtllm" / "1.3.0rc20" / "collection_meta.yaml").write_text(
        "provenance: guessed\n")
    path.write_bytes(raw)
    with pytest.raises(ImportFormatError, match="provenance 'guessed'; expected `collected` or `legacy`"):
        import_aiconfigurator(folder)
    with pytest.raises(ImportFormatError, match="holds none of AIConfigurator's operator tables"):
        import_aiconfigurator(tmp_path / "aic" / "data" / "h200_sxm" / "moe")


def test_a_symlink_out_of_the_folder_is_not_followed(folder, tmp_path):
    outside = tmp_path / "outside.parquet"
    pq.write_table(gemm_table(device="NVIDIA B200"), outside)
    link = folder / "data" / "b200_sxm" / "gemm" / "trtllm" / "1" / "gemm_perf.parquet"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    files, _ = table_files(folder)
    assert all("b200" not in tf.source_file for tf in files)


@needs_staged
@pytest.mark.slow
def test_the_staged_files_quirks(tmp_path):
    """A100 vLLM context attention: 5,457 rows of which 408 repeat a key (kept, numbered); no window_size column in
    the A100 SGLang tables; B60's 0.20.0 folder holds a 0.20.1 dev build; B200's first GEMM reads 86.49 ms."""
    root = tmp_path / "data"
    for rel in ("a100_sxm/attention/vllm/0.14.0", "a100_sxm/attention/sglang/0.5.10", "b60/gemm/vllm/0.20.0"):
        shutil.copytree(STAGED / rel, root / rel)
    table = import_aiconfigurator(tmp_path)
    assert validate_table(table, "llm_operators", file="staged") == []
    rows = table.to_pandas()
    ctx = rows[(rows.system == "a100_sxm") & (rows.framework == "vllm") & (rows.operator == "context_attention")]
    assert len(ctx) == 5457 and int((ctx.occurrence > 0).sum()) == 408
    sgl = rows[(rows.system == "a100_sxm") & (rows.framework == "sglang")]
    assert len(sgl) == 5627 + 5093 and sgl.window_size.isna().all()
    b60 = rows[rows.system == "b60"]
    assert len(b60) == 22176 and set(b60.framework_version) == {"0.20.1.dev3+g20dc1caee.d20260430"}
    assert set(b60.gpu_name) == {"Intel(R) Arc(TM) Pro B60 Graphics"}
    assert table.num_rows == len(set(table["row_id"].to_pylist()))
    one = pq.read_table(STAGED / "b200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet").slice(0, 1).to_pylist()[0]
    assert np.isclose(one["latency"], 86.487773) and (one["m"], one["n"], one["k"]) == (16384, 65536, 51200)
