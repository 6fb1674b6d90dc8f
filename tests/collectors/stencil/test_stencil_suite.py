"""The suite under the harness with the CPU fake backend: plumbing of launch, time steps and verification.

The fake runs a NumPy stand-in of the kernels (whole interior at once, in the kernel's dtype). These are logic
tests of the suite: argument order, buffer parity, per-step times, what verification catches. Fake rows carry
``source = "fake"`` and never validate as data.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.runner import measure_case
from kgpubench.measure.suites import load_suite

SUITE = load_suite("stencil")
spec = importlib.import_module("kgpubench_collectors.stencil.spec")
cases = importlib.import_module("kgpubench_collectors.stencil.cases")


def numpy_kernel(skip_last_k: bool = False):
    """A stand-in of stencil_*_tile: ``args = (cur, nxt, vel, coef, dt2, n1, n2, n3)``."""

    def run(grid, block, args, shared_mem):
        cur, nxt, vel, coef, dt2, n1, n2, n3 = args
        r = len(coef) // 3 - 1
        c = coef.reshape(3, r + 1)
        hi = (int(n1) - r, int(n2) - r, int(n3) - r - (1 if skip_last_k else 0))
        inner = tuple(slice(r, h) for h in hi)
        lap = (c[0, 0] + c[1, 0] + c[2, 0]) * cur[inner]
        for q in range(1, r + 1):
            for a in range(3):
                plus, minus = list(inner), list(inner)
                plus[a] = slice(r + q, hi[a] + q)
                minus[a] = slice(r - q, hi[a] - q)
                lap = lap + c[a, q] * (cur[tuple(plus)] + cur[tuple(minus)])
        nxt[inner] = cur.dtype.type(2) * cur[inner] - nxt[inner] + dt2 * vel[inner] * vel[inner] * lap

    return run


def _backend(**kw):
    impl = kw.pop("impl", numpy_kernel())
    return FakeBackend(implementations={"stencil_thread_tile": impl, "stencil_shared_tile": impl}, **kw)


def _case(grid=24, dtype="float64", order=4, tile=(2, 1, 4), variant="thread-tile"):
    return cases.make_case(spec.StencilConfig((grid,) * 3, dtype, order, tile, variant, steps=5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("variant", ["thread-tile", "shared-tile"])
def test_a_correct_kernel_verifies_and_times_are_per_step(dtype, variant):
    backend = _backend(time_ms=2.0)
    out = measure_case(_case(dtype=dtype, variant=variant), SUITE, backend)
    assert out.status == "ok", out.detail
    # Each kernel launch takes 2 ms in the fake; a timed unit is 5 launches; per step: 2 ms.
    assert out.columns["time_ms_median"] == pytest.approx(2.0)
    # The verified launch: 5 steps, then 3 steps on the small grid and 1 check step on the real grid.
    names = {n for n, *_ in backend.launches}
    assert names == {"stencil_thread_tile" if variant == "thread-tile" else "stencil_shared_tile"}


def test_a_kernel_that_misses_points_fails_verification():
    out = measure_case(_case(), SUITE, _backend(impl=numpy_kernel(skip_last_k=True)))
    assert out.status == "verification_failed"
    assert "differ" in out.detail


def test_a_kernel_that_does_nothing_fails_verification():
    out = measure_case(_case(), SUITE, FakeBackend())
    assert out.status == "verification_failed"


def test_launch_runs_steps_with_alternating_buffers():
    case = _case(grid=16, order=2, tile=(1, 1, 1))
    backend = _backend()
    kernel = backend.compile(case.source)
    run = SUITE.prepare(case, kernel, np, np.random.default_rng(0))
    b0, b1 = (b.copy() for b in run.main.buffers)
    run.launch()
    assert len(backend.launches) == 5 and run.main.step_index == 5
    assert backend.launches[0][1:3] == (case.grid, case.block)
    # Step 0 overwrote buffer 0 (odd steps buffer 1): after 5 steps both differ from the start.
    assert not np.array_equal(run.main.buffers[0], b0) and not np.array_equal(run.main.buffers[1], b1)
    # The frame (R = 1) is never written.
    np.testing.assert_array_equal(run.main.buffers[0][0], 0.0)
    ok, detail = run.verify()
    assert ok, detail
    run.release()


def test_large_grids_are_filled_from_a_pool_of_planes(monkeypatch):
    prepared = importlib.import_module("kgpubench_collectors.stencil.prepare")
    monkeypatch.setattr(prepared, "FULL_RANDOM_POINTS", 1000)
    u0, _u1, vel = prepared.device_fields(np, np.random.default_rng(1), (20, 12, 12), 2, "float32")
    assert u0.dtype == np.float32 and u0.shape == (20, 12, 12)
    # Planes repeat every POOL_PLANES (8) planes; the frame is zero.
    np.testing.assert_array_equal(u0[3], u0[11])
    assert not np.array_equal(u0[3], u0[4])
    assert np.all(u0[:2] == 0) and np.all(u0[-2:] == 0) and np.all(u0[:, :, :2] == 0)
    assert u0[5, 5, 5] != 0 and 1500 <= vel.min() and vel.max() <= 3500
