"""The packaged `autotune` config: all of benchmark_hub, loadable three ways, with known upstream values."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

import kgpubench
from kgpubench.cli import app

GPUS = ["AMD Instinct MI250X", "AMD Radeon PRO W6600", "AMD Radeon PRO W7800", "NVIDIA A100-PCIE-40GB",
        "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 3060 Laptop GPU", "NVIDIA GeForce RTX 3090",
        "NVIDIA RTX A4000"]


def test_packaged_rows_gpus_and_statuses():
    table = kgpubench.load_dataset("autotune", format="arrow")
    assert table.num_rows == 155952  # PROVENANCE.md: about 156,000 configurations
    assert sorted(pc.unique(table["gpu_name"]).to_pylist()) == GPUS
    counts = {d["values"]: d["counts"] for d in pc.value_counts(table["status"]).to_pylist()}
    # `zcat */*.json.gz | grep -o "\"time\": \"CompilationFailedConfig\"" | wc -l` gives 4406; Runtime...: 1634
    assert counts == {"ok": 149912, "compile_error": 4406, "launch_error": 1634}
    assert pc.count_distinct(table["row_id"]).as_py() == 155952


@pytest.mark.slow
def test_packaged_value_matches_upstream_record():
    # kernel_tuner/pnpoly_RTX_3090.json.gz, cache key "0,32,1,0": time 43.55386238098144, timestamp below
    df = kgpubench.load_dataset("autotune", format="pandas")
    sel = df[(df.kernel == "cn_pnpoly") & (df.gpu_name == "NVIDIA GeForce RTX 3090")]
    want = [("between_method", 0.0), ("block_size_x", 32.0), ("tile_size", 1.0), ("use_method", 0.0)]
    row = sel[sel.params.apply(lambda ps: [(p["name"], p["value"]) for p in ps] == want)].iloc[0]
    assert row.time_ms_reported == 43.55386238098144 and row.repeats == 10
    assert row.collected_at.to_pydatetime() == dt.datetime(2023, 1, 26, 1, 5, 9, 730633, tzinfo=dt.timezone.utc)
    assert row.source_file == "kernel_tuner/pnpoly_RTX_3090.json.gz"


@pytest.mark.slow
def test_info_lists_the_gpus():
    result = CliRunner().invoke(app, ["info", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)["configs"]["autotune"]
    assert info["rows"] == 155952 and info["gpus"] == GPUS
