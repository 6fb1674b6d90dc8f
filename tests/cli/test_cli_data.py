import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from unittest import mock

import pytest
from typer.testing import CliRunner

from kgpubench.cli import app, main
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.testing import valid_row

runner = CliRunner()


def run_process(*args):
    """Run the real entry point in a subprocess (one red line, exit code, no traceback)."""
    env = dict(os.environ, COLUMNS="200")
    env.pop("KGPUBENCH_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "kgpubench", *args], capture_output=True, text=True, env=env)


def run_cli(*args):
    """Run the entry point (:func:`kgpubench.cli.main`, what ``python -m kgpubench`` runs) in this process, as
    :func:`run_process` runs it: its exit code, stdout and stderr (one red line, no traceback)."""
    out, err = io.StringIO(), io.StringIO()
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    with mock.patch.dict(os.environ, dict(env, COLUMNS="200"), clear=True), \
            mock.patch.object(sys, "argv", ["kgpubench", *args]), redirect_stdout(out), redirect_stderr(err):
        try:
            main()
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return subprocess.CompletedProcess(["kgpubench", *args], code, out.getvalue(), err.getvalue())


def test_info_json_counts_rows_and_gpus(tmp_path):
    rows = [valid_row("npb", tpb=32), valid_row("npb", tpb=64, gpu_name="Other GPU", status="infeasible",
                                                time_ms_median=None, time_ms_min=None, time_ms_mean=None,
                                                time_ms_std=None, repeats=None)]
    shard = write_shard(get_table("npb").from_rows(rows), tmp_path / "s.parquet")
    store = tmp_path / "store"
    assert runner.invoke(app, ["merge", str(shard), "--into", str(store)]).exit_code == 0
    result = runner.invoke(app, ["info", "--data", str(store), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["dataset_version"] == "0.1.0"
    assert info["configs"]["npb"]["rows"] == 2
    assert info["configs"]["npb"]["gpus"] == ["Other GPU", "Test GPU"]
    assert info["configs"]["npb"]["status"] == {"infeasible": 1, "ok": 1}
    assert info["configs"]["stencil"]["rows"] == 0


@pytest.mark.slow
def test_info_table_shows_every_config():
    result = run_cli("info")
    assert result.returncode == 0, result.stderr
    for config in ("kernels", "npb", "stencil", "autotune"):
        assert config in result.stdout


def test_validate_lists_every_violation_and_exits_1(tmp_path):
    rows = [valid_row("stencil", tile_b1=b, status="bad" if b > 1 else "ok") for b in (1, 2, 4)]
    shard = write_shard(get_table("stencil").from_rows(rows), tmp_path / "s.parquet")
    result = run_cli("validate", str(shard))
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    assert all("column 'status'" in line and "'bad'" in line and "s.parquet" in line for line in lines)
    assert "row 1" in lines[0] and "row 2" in lines[1]


def test_validate_good_shard_exits_0(tmp_path):
    shard = write_shard(get_table("stencil").from_rows([valid_row("stencil")]), tmp_path / "s.parquet")
    result = run_cli("validate", str(shard))
    assert result.returncode == 0 and result.stdout == ""


def test_user_errors_are_one_red_line_without_traceback(tmp_path):
    cases = ((run_process, ["validate", str(tmp_path / "missing.parquet")]),  # once through a real process
             (run_cli, ["merge", str(tmp_path / "nope")]), (run_cli, ["info", "--data", str(tmp_path / "nowhere")]))
    for run, args in cases:
        result = run(*args)
        assert result.returncode == 1, args
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert result.stderr.startswith("error:")


def test_bad_parquet_file_is_named(tmp_path):
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    result = run_cli("validate", str(junk))
    assert result.returncode == 1 and "junk.parquet: not a readable parquet file" in result.stderr


def test_merge_refuses_bad_shard_and_reports_violation(tmp_path):
    shard = write_shard(get_table("npb").from_rows([valid_row("npb", source="fake")]), tmp_path / "s.parquet")
    result = run_cli("merge", str(shard), "--into", str(tmp_path / "store"))
    assert result.returncode == 1 and "refused: 1 schema violation" in result.stderr
    assert not (tmp_path / "store" / "manifest.json").exists()


@pytest.mark.slow
def test_packaged_card_and_readme_are_up_to_date():
    result = runner.invoke(app, ["card", "--check"])
    assert result.exit_code == 0, result.output + " — run `kgpubench card` and commit"


def test_debug_env_shows_traceback(tmp_path):
    env = dict(os.environ, KGPUBENCH_DEBUG="1")
    result = subprocess.run([sys.executable, "-m", "kgpubench", "validate", str(tmp_path / "x.parquet")],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 1 and "Traceback" in result.stderr
