"""The regular suite draws inputs and computes each reference once per problem (kernel, sizes), keeps them on
the device for the problem's launch configurations, and verifies on the device."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from regular_loader import modules, regular

from kgpubench.measure.backends.fake import FakeDeviceArray, fake_device_module
from kgpubench.measure.backends.registry import get_backend

_, ref, prepare_mod = modules()


def _vector_add(grid, block, args, smem):
    a, b, c, n = args
    c[:n] = a[:n] + b[:n]


def _matrix_mul(grid, block, args, smem):
    a, b, c, n, _tk = args
    c[...] = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def _fan2(grid, block, args, smem):
    a, b, m, _n, t = args
    a_new, b_new = ref.fan2(np.asarray(a), np.asarray(b), np.asarray(m), int(t))
    a[...], b[...] = a_new, b_new


IMPLS = {"vector_add": _vector_add, "matrix_mul": _matrix_mul, "fan2": _fan2}


@pytest.fixture
def counted(monkeypatch):
    calls = []
    real = prepare_mod.MAKERS["vector_add"]

    def maker(sizes, rng):
        calls.append(dict(sizes))
        return real(sizes, rng)

    monkeypatch.setitem(prepare_mod.MAKERS, "vector_add", maker)
    return calls


def test_reference_once_per_problem_for_all_its_launches(counted):
    suite = regular()
    cases = [c for c in suite.cases(quick=False, kernels=["vector_add"]) if c.sizes["n"] <= 2**13]
    per_problem = {n: sum(c.sizes["n"] == n for c in cases) for n in (2**12, 2**13)}
    # Covering grid for 6 block sizes, plus capped grids smaller than it: 64 for nt=32 (n=4096: 128 blocks), and
    # for nt=32 and 64 at n=8192 (256 and 128 blocks).
    assert per_problem == {4096: 7, 8192: 8}
    backend = get_backend("fake", implementations=IMPLS)
    firsts = []
    for i, case in enumerate(cases):
        p = suite.prepare(case, backend.compile(case.source), np, np.random.default_rng(i))
        firsts.append(float(p.args[0][0]))
        assert p.args[0] is not suite._problems.value["a"]  # the case's own copy of the input
        p.poison()
        p.launch()
        assert p.verify()[0]
        p.release()
        if i == 6:  # the last case of the first problem frees it
            assert suite._problems.key is None
    assert counted == [{"n": 4096}, {"n": 8192}]
    assert len(set(firsts[:7])) == 1 and firsts[7] != firsts[0]  # same inputs within a problem
    assert suite._problems.key is None and suite._problems.builds >= 2


def test_collection_builds_each_problem_once(counted, tmp_path):
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, collect_suite
    from kgpubench.measure.timing import StopRule

    backend = get_backend("fake", implementations=IMPLS, time_ms=0.5)
    writer = ShardWriter(tmp_path / "regular", "kernels")
    rule = StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10)
    opts = CollectOptions(quick=True, kernels=["vector_add"], rule=rule)
    summary = collect_suite(regular(), backend, writer, opts, features=lambda case, dev: {})
    assert summary.statuses == {"ok": 4} and counted == [{"n": 2**16}, {"n": 2**22}]


@pytest.mark.parametrize("kernel", ["vector_add", "matrix_mul", "fan2"])
def test_verification_on_the_device_copies_no_array(kernel, monkeypatch):
    xp = fake_device_module()
    monkeypatch.setitem(sys.modules, "cupy", xp)
    FakeDeviceArray.host_copies.clear()
    suite = regular()
    case = next(iter(suite.cases(quick=True, kernels=[kernel])))
    backend = get_backend("fake", implementations=IMPLS)
    p = suite.prepare(case, backend.compile(case.source), xp, np.random.default_rng(0))
    assert all(type(a) is FakeDeviceArray for a in p.args if isinstance(a, np.ndarray))
    p.poison()
    p.launch()
    ok, detail = p.verify()
    assert ok, detail
    name, out, _expected, sel = p.check.outputs[0]
    if sel is None:
        out.reshape(-1)[0] += 1.0  # one wrong value in the part that is checked
    else:
        out[int(sel[0]), 0] += 1.0
    ok, detail = p.verify()
    assert not ok and f"{name}: 1 of" in detail
    assert FakeDeviceArray.host_copies == []
    p.release()
    suite.drop_caches()
