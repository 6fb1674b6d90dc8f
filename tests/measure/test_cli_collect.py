"""``kgpubench collect`` on a machine without a GPU: one line and exit 2; ``--dry-run`` plans; light imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgpubench.measure.backends.cupy_backend import cupy_available

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "kgpubench.cli", *args], capture_output=True, text=True,
                          check=False, cwd=ROOT, env=env, timeout=120)


@pytest.mark.skipif(cupy_available()[0], reason="a GPU is present: collect would measure")
def test_collect_without_gpu_is_one_line_and_exit_2(tmp_path):
    res = _run("collect", "--suite", "regular", "--quick", "--out", str(tmp_path))
    assert res.returncode == 2
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "CuPy" in lines[0] and "kgpubench[gpu]" in lines[0]
    assert res.stdout == "" and not any(tmp_path.iterdir())


def test_dry_run_plan_json():
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--json")
    assert res.returncode == 0, res.stderr
    plan = json.loads(res.stdout)["regular"]
    # 8 kernels x 2 quick sizes x 2 launches
    assert plan["cases"] == 32 and plan["table"] == "kernels" and len(plan["kernels"]) == 8
    res = _run("collect", "--suite", "regular", "--kernel", "fan2", "--dry-run", "--json")
    assert json.loads(res.stdout)["regular"]["kernels"] == {"fan2": 486}


def test_unknown_suite_is_exit_1():
    res = _run("collect", "--suite", "regulr", "--dry-run")
    assert res.returncode == 1 and "Did you mean 'regular'" in res.stderr


def test_collect_path_imports_no_heavy_ml_packages():
    code = ("import sys\nsys.argv = ['kgpubench', 'collect', '--suite', 'regular', '--quick', '--dry-run']\n"
            "from kgpubench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('HEAVY', sorted(m for m in ('datasets', 'lightgbm', 'xgboost') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "HEAVY []" in res.stdout, res.stdout + res.stderr


def test_reading_the_store_for_the_skip_imports_neither_pandas_nor_yaml():
    """What the store holds is read from its manifest and five columns of each part: not through the card's modules
    (pandas, PyYAML), which a GPU machine need not have."""
    code = ("import sys\nsys.argv = ['kgpubench', 'collect', '--suite', 'npb', '--dry-run', '--gpu-name', "
            "'NVIDIA H200']\nfrom kgpubench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('HEAVY', sorted(m for m in ('pandas', 'yaml', 'kgpubench.store.store') if m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "for NVIDIA H200: the store " in res.stdout and "HEAVY []" in res.stdout, res.stdout + res.stderr


def test_kernel_filter_across_suites():
    res = _run("collect", "--suite", "regular", "--suite", "stencil", "--kernel", "fan1", "--dry-run", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout).keys() == {"regular"}  # stencil has no fan1: skipped
    res = _run("collect", "--suite", "regular", "--suite", "stencil", "--kernel", "fan1", "--kernel", "fann1",
               "--dry-run")
    assert res.returncode == 1 and "unknown kernel 'fann1'" in res.stderr


def test_run_one_with_fake_backend_writes_and_summarises(tmp_path, capsys):
    sys.path.insert(0, str(Path(__file__).parent))
    from measure_fakes import DoubleSuite, double_impl

    from kgpubench.cli.collect import _run_one
    from kgpubench.measure.backends.registry import get_backend

    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=20.0)
    summary = _run_one(DoubleSuite(), backend, None, False, tmp_path, None)
    assert summary["written"] == 4 and summary["statuses"] == {"ok": 4} and summary["out"] == str(tmp_path / "regular")
    assert len(list((tmp_path / "regular").glob("*.parquet"))) == 1  # compacted on close
    again = _run_one(DoubleSuite(), backend, None, False, tmp_path, None)
    assert (again["written"], again["skipped"]) == (0, 4)
    assert "4 already there" in capsys.readouterr().err


def test_bad_lock_and_l2_options_are_one_line():
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--lock-clocks", "fast")
    assert res.returncode == 1 and "--lock-clocks 'fast'" in res.stderr and "Traceback" not in res.stderr
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--l2", "cold")
    assert res.returncode == 1 and "unknown L2 policy 'cold'" in res.stderr
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--cold-timer", "nsys")
    assert res.returncode == 1
    assert "unknown cold timer 'nsys' (--cold-timer); use one of events, cupti, cupti-drained" in res.stderr
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--ray", "auto", "--cold-timer", "cupti")
    assert res.returncode == 1 and "--cold-timer cupti is not available with --ray yet" in res.stderr
    assert "Traceback" not in res.stderr and len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--ray", "auto", "--cold-timer",
               "cupti-drained")
    assert res.returncode == 1 and "--cold-timer cupti-drained is not available with --ray yet" in res.stderr


def test_the_drained_cupti_timer_is_a_cold_timer_collect_accepts():
    res = _run("collect", "--suite", "regular", "--quick", "--dry-run", "--cold-timer", "cupti-drained")
    assert res.returncode == 0, res.stderr  # refused before the plan if it were not a cold timer
    assert "regular" in res.stdout and "cold timer" not in res.stderr


def test_run_one_passes_lock_state_and_l2_policy(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from measure_fakes import DoubleSuite, double_impl

    from kgpubench.cli.collect import _run_one
    from kgpubench.measure.backends.registry import get_backend
    from kgpubench.measure.output import ShardWriter

    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=2.0)
    _run_one(DoubleSuite(sizes=(16,), blocks=(32,)), backend, None, False, tmp_path, None, clocks_locked=True,
             l2="flushed")
    (row,) = ShardWriter(tmp_path / "regular", "kernels").rows()
    assert row["clocks_locked"] is True and row["l2_policy"] == "flushed" and row["timing_method"] == "cold"
