"""Every NumPy reference against an independent computation (analytic values, slow loops, linalg.solve)."""

from __future__ import annotations

import numpy as np
import pytest
from regular_loader import modules

_, ref, _suite = modules()
RNG = np.random.default_rng(7)


def test_vector_add_analytic():
    out = ref.vector_add(np.array([1.0, 2.0], np.float32), np.array([3.0, 4.5], np.float32))
    assert out.tolist() == [4.0, 6.5] and out.dtype == np.float32


def test_euclid_3_4_5():
    rec = np.array([0, 0, 3, 4], np.float32)
    assert ref.euclid(rec, 0.0, 0.0).tolist() == [0.0, 5.0]
    assert ref.euclid(rec, 3.0, 4.0).tolist() == [5.0, 0.0]


def _clamp(i, n):
    return min(max(i, 0), n - 1)


def _srad1_slow(J, q0):
    R, C = J.shape
    out = {k: np.zeros((R, C)) for k in ("dN", "dS", "dW", "dE", "C")}
    for i in range(R):
        for j in range(C):
            jc = float(J[i, j])
            n = float(J[_clamp(i - 1, R), j]) - jc
            s = float(J[_clamp(i + 1, R), j]) - jc
            w = float(J[i, _clamp(j - 1, C)]) - jc
            e = float(J[i, _clamp(j + 1, C)]) - jc
            g2 = (n * n + s * s + w * w + e * e) / (jc * jc)
            lap = (n + s + w + e) / jc
            q = (0.5 * g2 - lap * lap / 16) / (1 + lap / 4) ** 2
            c = 1 / (1 + (q - q0) / (q0 * (1 + q0)))
            for k, v in zip(("dN", "dS", "dW", "dE", "C"), (n, s, w, e, min(max(c, 0.0), 1.0))):
                out[k][i, j] = v
    return out


def test_srad_1_constant_image_and_slow_loop():
    flat = ref.srad_1(np.full((3, 4), 2.0, np.float32), 0.3)
    assert all(np.all(flat[k] == 0) for k in ("dN", "dS", "dW", "dE"))
    assert np.all(flat["C"] == 1.0)  # c = (1 + q0) / q0 > 1, clamped
    J = RNG.uniform(0.5, 1.5, (4, 5)).astype(np.float32)
    fast, slow = ref.srad_1(J, 0.2), _srad1_slow(J, 0.2)
    for k in slow:
        np.testing.assert_allclose(fast[k], slow[k], rtol=1e-6, atol=1e-7)
    assert 0 < fast["C"].min() and fast["C"].max() <= 1


def test_srad_2_slow_loop():
    R, C = 4, 5
    J = RNG.uniform(0.5, 1.5, (R, C)).astype(np.float32)
    d = {k: RNG.uniform(-1, 1, (R, C)).astype(np.float32) for k in ("dN", "dS", "dW", "dE", "C")}
    out = ref.srad_2(J, d["dN"], d["dS"], d["dW"], d["dE"], d["C"], 0.5)
    for i in range(R):
        for j in range(C):
            c = d["C"]
            div = (c[i, j] * d["dN"][i, j] + c[_clamp(i + 1, R), j] * d["dS"][i, j] + c[i, j] * d["dW"][i, j]
                   + c[i, _clamp(j + 1, C)] * d["dE"][i, j])
            assert out[i, j] == pytest.approx(J[i, j] + 0.125 * div, rel=1e-6)


def test_hotspot_equilibrium_and_slow_loop():
    amb = 80.0
    temp = np.full((5, 6), amb, np.float32)
    same = ref.hotspot(np.zeros_like(temp), temp, 3, 0.5, 0.2, 0.2, 0.05, amb)
    assert np.all(same == amb)  # no power, at ambient: nothing moves
    R, C = 5, 6
    p = RNG.uniform(0, 1, (R, C)).astype(np.float32)
    t0 = RNG.uniform(70, 90, (R, C)).astype(np.float32)
    assert np.array_equal(ref.hotspot(p, t0, 0, 0.5, 0.2, 0.2, 0.05, amb), t0)  # zero steps: unchanged
    t = t0.astype(np.float64)
    for _ in range(2):
        new = np.empty_like(t)
        for i in range(R):
            for j in range(C):
                tc = t[i, j]
                nn, ss = t[_clamp(i - 1, R), j], t[_clamp(i + 1, R), j]
                ww, ee = t[i, _clamp(j - 1, C)], t[i, _clamp(j + 1, C)]
                new[i, j] = tc + 0.5 * (p[i, j] + (ss + nn - 2 * tc) * 0.2 + (ee + ww - 2 * tc) * 0.2
                                        + (amb - tc) * 0.05)
        t = new
    np.testing.assert_allclose(ref.hotspot(p, t0, 2, 0.5, 0.2, 0.2, 0.05, amb), t, rtol=1e-6)


def test_matrix_mul_identity_loop_and_rows():
    A = RNG.uniform(-1, 1, (3, 3)).astype(np.float32)
    assert np.array_equal(ref.matrix_mul(A, np.eye(3, dtype=np.float32)), A)
    B = RNG.uniform(-1, 1, (3, 3)).astype(np.float32)
    slow = [[sum(float(A[i, k]) * float(B[k, j]) for k in range(3)) for j in range(3)] for i in range(3)]
    np.testing.assert_allclose(ref.matrix_mul(A, B), slow, rtol=1e-6)
    np.testing.assert_allclose(ref.matrix_mul(A, B, np.array([2, 0])), np.array(slow)[[2, 0]], rtol=1e-6)


def test_fan1_fan2_eliminate_and_solve():
    n = 6
    a0 = RNG.uniform(-1, 1, (n, n)) + n * np.eye(n)
    b0 = RNG.uniform(-1, 1, n)
    a, b = a0.astype(np.float32), b0.astype(np.float32)
    for t in range(n - 1):
        m = np.zeros(n, np.float32)
        m[t + 1:] = ref.fan1(a, t)
        a, b = ref.fan2(a, b, m, t)
    assert np.allclose(np.tril(a, -1), 0, atol=1e-6)  # upper triangular after n - 1 steps
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - a[i, i + 1:] @ x[i + 1:]) / a[i, i]
    np.testing.assert_allclose(x, np.linalg.solve(a0, b0), rtol=1e-4, atol=1e-5)


def test_fan2_touches_only_rows_below_and_columns_from_t():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    b = np.arange(4, dtype=np.float32)
    m = np.ones(4, np.float32)
    a2, b2 = ref.fan2(a, b, m, 1)
    assert np.array_equal(a2[:2], a[:2]) and np.array_equal(a2[:, 0], a[:, 0])
    assert a2[2, 1] == a[2, 1] - a[1, 1] and b2.tolist() == [0, 1, 1, 2]
