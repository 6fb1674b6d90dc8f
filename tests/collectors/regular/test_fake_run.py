"""The regular suite through the harness on the fake backend (NumPy stand-ins for the CUDA kernels).

This checks the suite's argument order, poisoning and verification plumbing, not the CUDA code (the GPU
tests do that); rows come out with ``source = "fake"``.
"""

from __future__ import annotations

import numpy as np
import pytest
from regular_loader import modules, regular

from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, collect_suite
from kgpubench.measure.timing import StopRule

_, ref, _ = modules()


def _vector_add(grid, block, args, smem):
    a, b, c, n = args
    c[:n] = a[:n] + b[:n]


def _fan2(grid, block, args, smem):
    a, b, m, _n, t = args
    a_new, b_new = ref.fan2(a, b, m, int(t))
    a[...], b[...] = a_new, b_new


def _fan1_wrong_row(grid, block, args, smem):
    a, m, n, t = args
    m[t + 1:] = ref.fan1(a, int(t))
    m[n - 1] += 1.0  # one wrong multiplier


def _collect(tmp_path, impls, kernels, features=None):
    backend = get_backend("fake", implementations=impls, time_ms=0.5)
    writer = ShardWriter(tmp_path / "regular", "kernels")
    opts = CollectOptions(quick=True, kernels=kernels, rule=StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10))
    kwargs = {"features": features} if features else {}
    summary = collect_suite(regular(), backend, writer, opts, **kwargs)
    writer.close()
    return summary, list(ShardWriter(tmp_path / "regular", "kernels").rows())


@pytest.mark.slow
def test_vector_add_and_fan2_verify_and_get_features(tmp_path):
    pytest.importorskip("kgpubench.features")
    import shutil

    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    summary, rows = _collect(tmp_path, {"vector_add": _vector_add, "fan2": _fan2}, ["vector_add", "fan2"])
    assert summary.statuses == {"ok": 8}
    va = [r for r in rows if r["kernel"] == "vector_add"]
    assert {r["program"] for r in va} == {"vector_add"} and {r["bound"] for r in va} == {"memory"}
    assert sorted({r["n"] for r in va}) == [65536.0, 4194304.0]
    assert all(r["l"] and r["nreg"] and r["lmw"] == 1.0 for r in va)  # features attached per row
    fan2 = [r for r in rows if r["kernel"] == "fan2"]
    assert {r["bound"] for r in fan2} == {"compute"} and all(r["block_y"] > 1 for r in fan2)


def test_unwritten_and_wrong_outputs_fail(tmp_path):
    summary, rows = _collect(tmp_path, {"fan1": _fan1_wrong_row}, ["fan1", "euclid"],
                             features=lambda case, dev: {})
    by_kernel = {r["kernel"]: r for r in rows}
    assert summary.statuses == {"verification_failed": 8}
    assert "1 of" in by_kernel["fan1"]["status_detail"]  # exactly the one wrong multiplier
    assert "distances" in by_kernel["euclid"]["status_detail"]  # never written: still NaN


def test_in_place_fan2_reset_between_checks():
    suite = regular()
    case = next(iter(suite.cases(quick=True, kernels=["fan2"])))
    backend = get_backend("fake", implementations={"fan2": _fan2})
    prepared = suite.prepare(case, backend.compile(case.source), np, np.random.default_rng(0))
    for _ in range(2):  # a second check after more launches still starts from the inputs
        prepared.poison()
        prepared.launch()
        assert prepared.verify()[0]
        prepared.launch()
