"""The NumPy reference: exact Laplacian of polynomials, several steps against a direct triple loop."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from kgpubench.measure.suites import load_suite

load_suite("stencil")
reference = importlib.import_module("kgpubench_collectors.stencil.reference")
weights = importlib.import_module("kgpubench_collectors.stencil.weights")


def _coords(shape, h):
    return np.meshgrid(*(np.arange(n) * hh for n, hh in zip(shape, h)), indexing="ij")


@pytest.mark.parametrize("order", [2, 4, 8, 16])
def test_quadratic_field_has_the_exact_laplacian(order):
    h = (0.5, 0.25, 2.0)
    x, y, z = _coords((20, 21, 22), h)
    u = x**2 + 2 * y**2 + 3 * z**2 + x * y - 4 * y * z + 7 * x + 1
    # Laplacian: 2 + 4 + 6 (cross and linear terms vanish) = 12 everywhere.
    lap = reference.laplacian(u, h, order)
    r = order // 2
    assert lap.shape == (20 - 2 * r, 21 - 2 * r, 22 - 2 * r)
    np.testing.assert_allclose(lap, 12.0, rtol=0, atol=1e-8)


def test_quartic_field_shows_the_order_2_truncation_error():
    # (x+h)^4 + (x-h)^4 - 2 x^4 = 12 x^2 h^2 + 2 h^4, so order 2 gives 12 x^2 + 2 h^2; order 4 is exact.
    h = (0.5, 1.0, 1.0)
    x, _, _ = _coords((12, 5, 5), h)
    u = x**4
    lap2 = reference.laplacian(u, h, 2)
    np.testing.assert_allclose(lap2, 12 * x[1:-1, 1:-1, 1:-1] ** 2 + 2 * 0.25, rtol=1e-12)
    lap4 = reference.laplacian(u, h, 4)
    np.testing.assert_allclose(lap4, 12 * x[2:-2, 2:-2, 2:-2] ** 2, rtol=1e-11, atol=1e-9)


def _loop_run(b0, b1, vel, dt, h, order, steps):
    """The update written as the seed's plain loops, point by point."""
    c = [float(w) for w in weights.fd_weights(order)]
    r = order // 2
    bufs = [b0.astype(float).copy(), b1.astype(float).copy()]
    n1, n2, n3 = b0.shape
    for s in range(steps):
        nxt, cur = bufs[s % 2], bufs[(s + 1) % 2]
        new = nxt.copy()
        for i in range(r, n1 - r):
            for j in range(r, n2 - r):
                for k in range(r, n3 - r):
                    lap = 0.0
                    for a, (di, dj, dk) in enumerate(((1, 0, 0), (0, 1, 0), (0, 0, 1))):
                        acc = c[0] * cur[i, j, k]
                        for q in range(1, r + 1):
                            acc += c[q] * (cur[i + q * di, j + q * dj, k + q * dk]
                                           + cur[i - q * di, j - q * dj, k - q * dk])
                        lap += acc / h[a] ** 2
                    new[i, j, k] = 2 * cur[i, j, k] - nxt[i, j, k] + dt * dt * vel[i, j, k] ** 2 * lap
        bufs[s % 2] = new
    return bufs


def test_several_steps_match_a_direct_triple_loop():
    rng = np.random.default_rng(7)
    shape, order, h = (9, 10, 11), 4, (10.0, 12.0, 15.0)
    b0, b1 = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
    vel = rng.uniform(1500, 3000, shape)
    dt = 0.5 * weights.stable_dt(order, h, 3000.0)
    got = reference.run((b0, b1), vel, dt, h, order, steps=3)
    want = _loop_run(b0, b1, vel, dt, h, order, steps=3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    # The frame is never written and three steps change the interior of both buffers.
    np.testing.assert_array_equal(got[0][:2], b0[:2])
    assert np.abs(got[1][2:-2, 2:-2, 2:-2] - b1[2:-2, 2:-2, 2:-2]).max() > 0.1


def test_one_step_of_a_constant_velocity_plane_wave_by_hand():
    # u^n = 0 except 1 at the centre, u^{n-1} = 0, order 2, h = 1, dt^2 v^2 = 0.01:
    # the centre becomes 2 + 0.01 * (-6) = 1.94, each of its 6 neighbours 0.01.
    cur = np.zeros((5, 5, 5))
    cur[2, 2, 2] = 1.0
    new = reference.step(np.zeros_like(cur), cur, np.full(cur.shape, 0.1), 1.0, (1.0, 1.0, 1.0), 2)
    assert new[2, 2, 2] == pytest.approx(1.94)
    assert new[1, 2, 2] == new[2, 3, 2] == new[2, 2, 1] == pytest.approx(0.01)
    assert new[1, 1, 2] == 0.0
    assert np.count_nonzero(new) == 7


def test_plane_step_equals_the_full_step_on_that_plane():
    rng = np.random.default_rng(3)
    shape, order, h, dt = (14, 12, 13), 8, (10.0, 10.0, 10.0), 1e-3
    prev, cur = rng.uniform(-1, 1, shape), rng.uniform(-1, 1, shape)
    vel = rng.uniform(1500, 3500, shape)
    full = reference.step(prev, cur, vel, dt, h, order)
    for i in (4, 7, 9):
        plane = reference.plane_step(prev[i], cur[i - 4:i + 5], vel[i], dt, h, order)
        np.testing.assert_allclose(plane, full[i], rtol=1e-13, atol=1e-13)
