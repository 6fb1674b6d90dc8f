"""`kgpubench import neusight`: primary files by layout, hand-checked rows, counts, and hostile input."""

from __future__ import annotations

import csv
import gzip
import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from kgpubench.cli import app
from kgpubench.errors import ImportFormatError
from kgpubench.importers.neusight import import_neusight, import_to_shard, primary_files
from kgpubench.schema import get_table, row_ids
from kgpubench.store.shards import read_shard

pytestmark = pytest.mark.usefixtures("_staged_licence")  # staged folders carry their LICENSE

STAGED = Path(__file__).resolve().parents[3] / "shared" / "external" / "neusight"
needs_staged = pytest.mark.skipif(not (STAGED / "data").is_dir(),
                                  reason="../shared/external/neusight is not beside this checkout")

NV_HEADER = ["OPName", "Latency", "Device", "Torch Version", "CUDNN Version", "Kernel Name", "Warps per SM",
             "Blocks per SM", "Grid x", "Grid y", "Grid z", "Block x", "Block y", "Block z", "CUDA Version"]


def _nv_row(op: str, latency, device: str, *shape) -> list:
    return [op, latency, device, "p2.1.0", "8902", "k", "1.0", "0.5", 1, 1, 1, 128, 1, 1, "cu121", *shape]


def _write(path: Path, header: list[str], rows: list[list], *, gz: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ",".join(header) + "\n" + "".join(",".join(str(v) for v in r) + "\n" for r in rows)
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


def _ln_file(root: Path, device: str = "Tesla T4", rows=None) -> Path:
    rows = rows if rows is not None else [_nv_row("ln", 0.05, device, 60, 272), _nv_row("ln", 0.07, device, 8, 512)]
    return _write(root / "data" / "dataset" / "train" / "collect" / "ln" / "p2.1.0" / f"{device}.csv.gz",
                  [*NV_HEADER, "B", "H"], rows)


def _refused(root: Path, tmp_path: Path, *needles: str) -> str:
    out = tmp_path / "out.parquet"
    with pytest.raises(ImportFormatError) as info:
        import_to_shard(root, out)
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message
    assert not out.exists()
    return message


# ----- layout: which files are primary ------------------------------------------------------------------------
@needs_staged
def test_staged_primary_files_follow_the_layout_and_match_the_manifest():
    files = primary_files(STAGED)
    names = {f.source_file for f in files}
    assert len(files) == 80 + 5 + 26 + 4
    assert "data/dataset/test/bmm.csv.gz" in names and "data/dataset/test/elem.csv.gz" in names
    # derived: concatenations, filtered training sets, copies
    for derived in ("data/dataset/train/collect/add.csv.gz", "data/dataset/train/ln.csv.gz",
                    "data/dataset/test/vec.csv.gz", "data/dataset/test/habitat.csv.gz",
                    "data/dataset_amd/train/vec.csv.gz"):
        assert derived not in names
    with open(STAGED / "MANIFEST.csv", newline="") as fh:
        manifest = {r["path"]: r for r in csv.DictReader(fh)}
    assert names == {p for p, r in manifest.items() if r["role"] == "operator_measurements"}
    assert sum(int(manifest[n]["rows"]) for n in names) == 335_399


def _subset(tmp_path: Path) -> Path:
    """A folder in the upstream layout linking a few staged files (primary and derived)."""
    root = tmp_path / "asplos"
    for rel in ("data/dataset/test/ln.csv.gz", "data/dataset/test/softmax.csv.gz", "data/dataset/test/vec.csv.gz",
                "data/dataset/train/collect/ln/p2.1.0/Tesla T4.csv.gz", "data/dataset/train/collect/ln.csv.gz",
                "data/dataset/train/ln.csv.gz", "data/dataset/train/collect/bmm/p2.1.0/Tesla P4.csv.gz",
                "data/dataset_amd/test/collect/bmm/p2.4.1/AMD Instinct MI100.csv.gz",
                "data/dataset/dims/train_ln.csv.gz"):
        link = root / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(STAGED / rel)
    return root


@needs_staged
def test_staged_subset_counts_and_hand_checked_rows(tmp_path):
    table = import_neusight(_subset(tmp_path))
    rows = table.to_pandas()
    # primary rows only: test ln 533 + softmax 533, T4 ln 1,400, P4 bmm 17,779, MI100 test bmm 2,236
    assert len(rows) == 533 + 533 + 1400 + 17_779 + 2236
    counts = rows.groupby(["gpu_name", "operator", "shape_set"]).size()
    assert counts[("Tesla T4", "layernorm", "train")] == 1400
    assert counts[("Tesla T4", "layernorm", "test")] == 75
    assert counts[("NVIDIA L4", "softmax", "test")] == 77
    assert counts[("AMD Instinct MI100", "bmm", "test")] == 2236
    assert rows["row_id"].is_unique
    # PROVENANCE quirk 5: 3 repeated keys in a ln training file, all kept
    t4ln = rows[(rows.gpu_name == "Tesla T4") & (rows.operator == "layernorm") & (rows.shape_set == "train")]
    assert (t4ln.occurrence == 1).sum() == 3
    # first row of train/collect/ln/p2.1.0/Tesla T4.csv: 0.05036799982190132 ms at B=60, H=272
    r = t4ln[(t4ln.dim_b == 60) & (t4ln.dim_h == 272)].iloc[0]
    assert r.time_ms == pytest.approx(0.05036799982190132, rel=1e-15)
    assert r.flops == 8 * 60 * 272 and r.bytes_min == 4 * (2 * 60 * 272 + 2 * 272)
    assert (r.grid_x, r.block_x, r.block_y, r.warps_per_sm) == (60, 32, 4, 6.0)
    assert (r.cuda_version, r.framework_version, r.cudnn_version) == ("12.1", "2.1.0", "8902")
    assert list(r.kernels) == ["void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
                               "(int, float, float const*, float const*, float const*, float*, float*, float*)"]
    assert (r.calls_timed, r.calls_kept, r.time_statistic, r.operator_class) == (
        25, 5, "mean-of-5-fastest-of-25", "layernorm")
    assert r.source_file == "data/dataset/train/collect/ln/p2.1.0/Tesla T4.csv.gz"
    assert r.gpu_peak_fp32_gflops > 8000 and r.gpu_catalogue_name == "Tesla T4"
    assert str(r.collected_at)[:10] == "2024-11-08" and r.source == "imported:neusight"
    # first row of bmm/p2.1.0/Tesla P4.csv: B=13, M=27, N=15 (reduction), K=29
    b = rows[(rows.gpu_name == "Tesla P4") & (rows.dim_b == 13) & (rows.dim_m == 27) & (rows.dim_n == 15)
             & (rows.dim_k == 29)].iloc[0]
    assert b.time_ms == pytest.approx(0.03233066697915395)
    assert b.flops == 2 * 13 * 27 * 15 * 29 and b.bytes_min == 4 * 13 * (27 * 15 + 15 * 29 + 27 * 29)
    assert list(b.kernels) == ["maxwell_sgemm_128x64_nn"] and b.warps_per_sm == 2.6
    # AMD rows: no version or per-SM columns; the framework version comes from the p2.4.1 folder
    amd = rows[rows.gpu_name == "AMD Instinct MI100"].iloc[0]
    assert amd.framework_version == "2.4.1" and pd.isna(amd.cuda_version) and math.isnan(amd.warps_per_sm)
    assert amd.gpu_vendor == "amd"
    # the vectorised row ids are the schema's
    some = table.slice(0, 300).to_pylist() + table.slice(3000, 300).to_pylist()
    assert row_ids(get_table("operators"), some) == [x["row_id"] for x in some]


def test_the_shared_row_ids_of_typed_operator_keys_equal_the_schema_rule():
    """The importer computes row ids with kgpubench.schema.arrow_row_ids on its typed key columns (ints with
    nulls for absent dimensions, strings): they equal row_ids of the same rows."""
    import numpy as np
    import pyarrow as pa

    from kgpubench.schema import arrow_row_ids

    decl = get_table("operators")
    rows = [{"gpu_name": "Tesla T4", "operator": "bmm", "shape_set": "train", "occurrence": 0, "dim_b": 13,
             "dim_m": 27, "dim_n": 15, "dim_k": 29},
            {"gpu_name": 'odd "name"', "operator": "conv2d", "shape_set": "test", "occurrence": 2, "dim_b": 1,
             "in_channels": 3, "out_channels": 64, "kernel_size": 3, "input_size": 224, "stride": 1, "padding": 0}]
    keys = {}
    for k in decl.key_columns:
        vals = [r.get(k) for r in rows]
        keys[k] = (np.asarray([np.nan if v is None else v for v in vals], dtype=np.float64)
                   if k not in ("gpu_name", "operator", "shape_set") else np.asarray(vals, dtype=object))
    ints = {k for k in decl.key_columns if k not in ("gpu_name", "operator", "shape_set")}
    typed = pa.table({k: pa.array(np.nan_to_num(v).astype(np.int64), pa.int64(), mask=np.isnan(v)) if k in ints
                      else pa.array(v.tolist(), pa.string()) for k, v in keys.items()})
    assert arrow_row_ids(decl, typed) == row_ids(decl, rows)


def test_synthetic_folder_writes_a_valid_shard_via_the_cli(tmp_path):
    root = tmp_path / "asplos"
    _ln_file(root)
    _write(root / "data" / "dataset" / "test" / "softmax.csv", [*NV_HEADER, "B", "H", "large"],
           [_nv_row("softmax", 1.5, "NVIDIA L4", 8192, 1024) + ["True"]], gz=False)
    _write(root / "data" / "dataset" / "train" / "collect" / "ln.csv.gz", [*NV_HEADER, "B", "H"],
           [_nv_row("ln", 9.0, "Tesla T4", 60, 272)])  # derived: ignored
    out = tmp_path / "ops.parquet"
    result = CliRunner().invoke(app, ["import", "neusight", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 3 operators rows on 2 GPU(s)" in result.output
    config, table = read_shard(out)
    assert config == "operators"
    assert sorted(table["time_ms"].to_pylist()) == [0.05, 0.07, 1.5]
    assert set(table["shape_set"].to_pylist()) == {"train", "test"}
    again = CliRunner().invoke(app, ["import", "neusight", str(root), "--out", str(out)])
    assert again.exit_code == 1 and "--force" in str(again.exception)


# ----- hostile input: one line naming file, row and column; nothing written -----------------------------------
def test_truncated_gzip_is_refused(tmp_path):
    path = _ln_file(tmp_path / "a")
    path.write_bytes(path.read_bytes()[:-12])
    _refused(tmp_path / "a", tmp_path, "Tesla T4.csv.gz", "truncated")


def test_missing_column_is_refused(tmp_path):
    root = tmp_path / "a"
    _write(root / "data" / "dataset" / "test" / "ln.csv.gz", ["OPName", "Device", "B", "H"],
           [["ln", "Tesla T4", 8, 8]])
    _refused(root, tmp_path, "ln.csv.gz", "row 0 (line 1)", "column 'Latency'", "missing")


def test_missing_shape_column_is_refused(tmp_path):
    root = tmp_path / "a"
    _write(root / "data" / "dataset" / "test" / "bmm.csv.gz", [*NV_HEADER, "B", "M", "N"],
           [_nv_row("bmm", 0.1, "Tesla T4", 1, 2, 3)])
    _refused(root, tmp_path, "bmm.csv.gz", "column 'K'", "missing")


def test_unknown_gpu_imports_with_its_name_and_null_figures(tmp_path):
    root = tmp_path / "a"
    _ln_file(root, device="NVIDIA Fancy 9000")
    with pytest.warns(UserWarning, match="GPU 'NVIDIA Fancy 9000' is not in the GPU alias table"):
        _, table = import_to_shard(root, tmp_path / "out.parquet")
    assert table["gpu_name"].to_pylist() == ["NVIDIA Fancy 9000"] * 2
    assert table["gpu_sm_count"].null_count == 2 and table["time_ms"].to_pylist() == [0.05, 0.07]


def test_a_gpu_name_that_is_not_one_printable_line_is_refused(tmp_path):
    root = tmp_path / "a"
    _ln_file(root, device="NVIDIA\tFancy 9000")
    _refused(root, tmp_path, "row 1 (line 2)", "column 'Device'", "'NVIDIA\\tFancy 9000'",
             "not one line of printable text")


@pytest.mark.parametrize("bad", ["-0.5", "nan", "inf", "0", "fast"])
def test_bad_latency_is_refused(tmp_path, bad):
    root = tmp_path / "a"
    _ln_file(root, rows=[_nv_row("ln", 0.05, "Tesla T4", 60, 272), _nv_row("ln", bad, "Tesla T4", 8, 512)])
    _refused(root, tmp_path, "Tesla T4.csv.gz", "row 2 (line 3)", "column 'Latency'")


def test_fractional_shape_is_refused(tmp_path):
    root = tmp_path / "a"
    _ln_file(root, rows=[_nv_row("ln", 0.05, "Tesla T4", 60.5, 272)])
    _refused(root, tmp_path, "row 1 (line 2)", "column 'B'", "whole number")


def test_wrong_operator_or_device_for_the_file_is_refused(tmp_path):
    root = tmp_path / "a"
    _ln_file(root, rows=[_nv_row("softmax", 0.05, "Tesla T4", 60, 272)])
    _refused(root, tmp_path, "row 1 (line 2)", "column 'OPName'", "'softmax'")
    root = tmp_path / "b"
    path = _ln_file(root, rows=[_nv_row("ln", 0.05, "Tesla P4", 60, 272)])
    path.rename(path.with_name("Tesla T4.csv.gz"))
    _refused(root, tmp_path, "column 'Device'", "'Tesla P4'")


def test_folder_without_primary_files_is_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused(empty, tmp_path, "none of NeuSight's primary operator files")
    derived_only = tmp_path / "derived"
    _write(derived_only / "data" / "dataset" / "train" / "ln.csv.gz", [*NV_HEADER, "B", "H"],
           [_nv_row("ln", 0.05, "Tesla T4", 60, 272)])
    _refused(derived_only, tmp_path, "none of NeuSight's primary operator files")
    _refused(tmp_path / "absent", tmp_path, "not a folder")


def test_amd_test_flat_files_are_derived_when_collect_exists(tmp_path):
    root = tmp_path / "a"
    amd = ["OPName", "Latency", "Device", "Kernel Name", "Grid x", "Grid y", "Grid z", "Block x", "Block y",
           "Block z", "Kernels", "B", "M", "N", "K"]
    row = ["bmm", 0.4, "AMD Instinct MI210", "Cijk_MT16x8x32", 1664, 12, 192, 128, 1, 1, ";cijk_mt16x8x32", 1, 2, 3, 4]
    _write(root / "data" / "dataset_amd" / "test" / "collect" / "bmm" / "p2.4.1" / "AMD Instinct MI210.csv.gz",
           amd, [row])
    _write(root / "data" / "dataset_amd" / "test" / "bmm.csv.gz", amd, [row])
    table = import_neusight(root)
    assert table.num_rows == 1
    assert table["kernels"].to_pylist() == [["cijk_mt16x8x32"]]
    assert table["framework_version"].to_pylist() == ["2.4.1"]


@pytest.mark.integration
def test_cli_refusal_is_one_red_line_and_writes_nothing(tmp_path):
    import os
    import subprocess
    import sys

    root = tmp_path / "a"
    _ln_file(root, device="NVIDIA\tFancy 9000")
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    out = tmp_path / "x.parquet"
    proc = subprocess.run([sys.executable, "-m", "kgpubench", "import", "neusight", str(root), "--out", str(out)],
                          check=False, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert len([line for line in proc.stderr.splitlines() if line.strip()]) == 1
    assert "column 'Device'" in proc.stderr and "printable" in proc.stderr
    assert not out.exists()
