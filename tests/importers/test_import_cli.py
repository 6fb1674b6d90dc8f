"""The `kgpubench import kernel-tuner` and `kgpubench export t4` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from kgpubench.cli import app
from kgpubench.store.shards import read_shard

DATA = Path(__file__).parent / "data"


def test_import_then_export(tmp_path):
    runner = CliRunner()
    shard = tmp_path / "mi.parquet"
    result = runner.invoke(app, ["import", "kernel-tuner", str(DATA / "dedispersion_MI250X_excerpt.json.gz"),
                                 "--gpu", "MI250X", "--out", str(shard)])
    assert result.exit_code == 0, result.output
    assert "wrote 3 autotune rows (ok 3)" in result.output
    config, table = read_shard(shard)
    assert config == "autotune" and table.num_rows == 3
    result = runner.invoke(app, ["merge", str(shard), "--into", str(tmp_path / "store")])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["export", "t4", "--config", "autotune", "--data", str(tmp_path / "store"),
                                 "--where", "gpu_name=AMD Instinct MI250X", "--out", str(tmp_path / "t4")])
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / "t4").iterdir()
    assert len(json.loads(path.read_text())["results"]) == 3


def test_missing_gpu_is_one_red_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    proc = subprocess.run([sys.executable, "-m", "kgpubench", "import", "kernel-tuner",
                           str(DATA / "dedispersion_MI250X_excerpt.json.gz"), "--out", str(tmp_path / "x.parquet")],
                          check=False, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "device_name is empty" in proc.stderr and "--gpu" in proc.stderr
    assert not (tmp_path / "x.parquet").exists()
