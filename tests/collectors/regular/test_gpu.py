"""On a GPU (``pytest -m gpu``): every regular kernel verifies, and a --quick collection validates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from regular_loader import regular

from kgpubench.measure.timing import StopRule

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[3]
KERNELS = ["vector_add", "euclid", "srad_cuda_1", "srad_cuda_2", "calculate_temp", "matrix_mul", "fan1", "fan2"]


@pytest.fixture(scope="module")
def backend():
    from kgpubench.measure.backends.registry import get_backend

    return get_backend("cupy")


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_verifies_on_gpu(kernel, backend):
    from kgpubench.measure.runner import measure_case

    suite = regular()
    for case in suite.cases(quick=True, kernels=[kernel]):
        out = measure_case(case, suite, backend, rule=StopRule(min_samples=3, min_gpu_ms=0.0, max_round=10))
        assert out.status == "ok", (case.label(), out.detail)
        assert out.columns["time_ms_min"] > 0


def test_largest_sizes_verify_on_gpu(backend):
    """The device-filling end of every sweep (largest size, one launch) also verifies."""
    from kgpubench.measure.runner import measure_case

    suite = regular()
    for kernel in KERNELS:
        cases = list(suite.cases(quick=False, kernels=[kernel]))
        biggest = max(cases, key=lambda c: (c.columns["s"], c.threads_per_block == 256))
        rule = StopRule(min_samples=2, min_gpu_ms=0.0, max_round=10, warmup_samples=0)
        out = measure_case(biggest, suite, backend, rule=rule)
        assert out.status == "ok", (biggest.label(), out.detail)


def test_quick_collection_writes_a_valid_shard(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    res = subprocess.run([sys.executable, "-m", "kgpubench.cli", "collect", "--suite", "regular", "--quick",
                          "--out", str(tmp_path)], capture_output=True, text=True, check=False, cwd=ROOT, env=env,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    from kgpubench.store.checks import validate_paths

    result = validate_paths([tmp_path / "regular"])
    assert result == {str(tmp_path / "regular"): []}
    from kgpubench.store.shards import read_shard

    config, table = read_shard(tmp_path / "regular")
    assert config == "kernels" and table.num_rows == 32
    assert set(table.column("status").to_pylist()) == {"ok"}
    assert set(table.column("source").to_pylist()) == {"measured"}
