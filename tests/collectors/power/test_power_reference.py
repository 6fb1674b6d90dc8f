"""Each NumPy reference of the power suite against an independent computation on small inputs."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import scipy.fft
import scipy.linalg

from kgpubench.measure.suites import load_suite

load_suite("power")
ref = importlib.import_module("kgpubench_collectors.power.reference")

RNG = np.random.default_rng(2024)


def test_dotp_equals_a_python_loop():
    a, b = RNG.random(37, dtype=np.float32), RNG.random(37, dtype=np.float32)
    total = 0.0
    for x, y in zip(a.tolist(), b.tolist()):
        total += x * y
    assert ref.dotp(a, b) == pytest.approx(total, rel=1e-12)
    assert ref.dotp(np.array([1, 2, 3], np.float32), np.array([4, -5, 6], np.float32)) == 12.0


def test_madd_equals_a_python_loop():
    a, b, c = (RNG.uniform(-1, 1, 12) for _ in range(3))
    expected = [x * y + z for x, y, z in zip(a, b, c)]
    np.testing.assert_allclose(ref.madd(a, b, c), expected, rtol=1e-15)
    np.testing.assert_array_equal(ref.madd([2.0], [3.0], [-1.0]), [5.0])


def test_mtrans_equals_a_python_loop():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = ref.mtrans(x)
    assert t.shape == (4, 3) and t.flags.c_contiguous
    for i in range(3):
        for j in range(4):
            assert t[j, i] == x[i, j]
    assert t[3, 2] == 11.0 and t[0, 1] == 4.0


def test_scalar_prod_equals_per_vector_loops():
    nvec, length = 5, 7
    a, b = RNG.uniform(-1, 1, nvec * length), RNG.uniform(-1, 1, nvec * length)
    expected = [sum(a[v * length + i] * b[v * length + i] for i in range(length)) for v in range(nvec)]
    np.testing.assert_allclose(ref.scalar_prod(a, b, nvec, length), expected, rtol=1e-12)


def test_fwt_by_hand():
    # H4 rows: (1 1 1 1), (1 -1 1 -1), (1 1 -1 -1), (1 -1 -1 1).
    np.testing.assert_array_equal(ref.fwt(np.array([[1.0, 2.0, 3.0, 4.0]])), [[10.0, -2.0, -4.0, 0.0]])
    np.testing.assert_array_equal(ref.fwt(np.array([[1.0, 0.0, 0.0, 0.0]])), [[1.0, 1.0, 1.0, 1.0]])


@pytest.mark.parametrize("length", [2, 8, 64, 256])
def test_fwt_is_the_hadamard_matrix_product(length):
    x = RNG.uniform(-1, 1, (3, length))
    np.testing.assert_allclose(ref.fwt(x), x @ scipy.linalg.hadamard(length), rtol=1e-12, atol=1e-12)


def test_fwt_rejects_lengths_that_are_not_powers_of_two():
    with pytest.raises(ValueError, match="power of two"):
        ref.fwt(np.zeros((1, 6)))


def test_scan_is_an_exclusive_prefix_sum_modulo_2_32():
    x = RNG.integers(0, 1024, (3, 10), dtype=np.uint32)
    for r in range(3):
        run = 0
        for i in range(10):
            assert ref.scan_exclusive(x)[r, i] == run
            run += int(x[r, i])
    wrapped = ref.scan_exclusive(np.array([[2**31, 2**31, 5, 1]], dtype=np.uint32))
    assert wrapped.dtype == np.uint32
    np.testing.assert_array_equal(wrapped, [[0, 2**31, 0, 5]])


def test_histogram256_counts_the_four_bytes_of_each_word():
    # 0x01020304 -> bytes 4, 3, 2, 1 once each; 0xFFFFFFFF -> 255 four times; 0 -> 0 four times.
    counts = ref.histogram256(np.array([0x01020304, 0xFFFFFFFF, 0], dtype=np.uint32))
    assert counts.sum() == 12
    assert counts[255] == 4 and counts[0] == 4
    assert counts[1] == counts[2] == counts[3] == counts[4] == 1
    words = RNG.integers(0, 2**32, 1000, dtype=np.uint32)
    np.testing.assert_array_equal(ref.histogram256(words), np.bincount(words.view(np.uint8), minlength=256))


def test_dct_matrix_is_orthonormal_and_matches_the_closed_form():
    c = ref.dct_matrix()
    np.testing.assert_allclose(c @ c.T, np.eye(8), atol=1e-14)
    assert c[0, 5] == pytest.approx(1 / math.sqrt(8))
    assert c[1, 0] == pytest.approx(0.5 * math.cos(math.pi / 16))


def test_dct8x8_equals_scipy_per_tile():
    img = RNG.uniform(0, 255, (16, 24))
    out = ref.dct8x8(img)
    for ty in range(2):
        for tx in range(3):
            tile = img[ty * 8:(ty + 1) * 8, tx * 8:(tx + 1) * 8]
            want = scipy.fft.dctn(tile, type=2, norm="ortho")
            np.testing.assert_allclose(out[ty * 8:(ty + 1) * 8, tx * 8:(tx + 1) * 8], want, atol=1e-10)


def test_dct8x8_of_a_flat_tile_is_its_dc_term():
    out = ref.dct8x8(np.full((8, 8), 3.0))
    assert out[0, 0] == pytest.approx(24.0)  # 8 * 3 for the orthonormal 2-D DCT
    assert np.abs(out).sum() == pytest.approx(24.0)


def test_black_scholes_by_hand():
    # S = K = 100, T = 1, r = 5 %, v = 20 %: d1 = 0.35, d2 = 0.15, C = 10.4506, P = 5.5735 (textbook value).
    call, put = ref.black_scholes(np.array([100.0]), np.array([100.0]), np.array([1.0]), 0.05, 0.2)
    assert call[0] == pytest.approx(10.4506, abs=5e-5)
    assert put[0] == pytest.approx(5.5735, abs=5e-5)


def test_black_scholes_satisfies_put_call_parity():
    s, k, t = RNG.uniform(5, 30, 50), RNG.uniform(1, 100, 50), RNG.uniform(0.25, 10, 50)
    call, put = ref.black_scholes(s, k, t, 0.02, 0.3)
    np.testing.assert_allclose(call - put, s - k * np.exp(-0.02 * t), atol=1e-9)
    assert (call >= np.maximum(s - k * np.exp(-0.02 * t), 0) - 1e-12).all() and (call <= s).all()


def test_binomial_one_step_trees_by_hand():
    # u = 1.1, d = 1/1.1. r = 0: p = (1 - d)/(u - d) = 10/21, price = p * 10 = 100/21.
    v = math.log(1.1)
    price = ref.binomial_options([100.0], [100.0], [1.0], 0.0, v, 1)
    assert price[0] == pytest.approx(100 / 21, rel=1e-12)
    # growth 1.05: p = (1.05 - 10/11)/(1.1 - 10/11) = 1.55/2.1, price = p * 10 / 1.05.
    price = ref.binomial_options([100.0], [100.0], [1.0], math.log(1.05), v, 1)
    assert price[0] == pytest.approx(1.55 / 2.1 * 10 / 1.05, rel=1e-12)


def test_binomial_two_step_tree_by_hand():
    # T = 2, r = 0, u = 2, d = 1/2 per step (v = ln 2): p = (1 - 1/2)/(2 - 1/2) = 1/3. Leaves S u^(2i-2):
    # 25, 100, 400 -> payoffs (K = 100) 0, 0, 300; price = p^2 * 300 = 300/9.
    price = ref.binomial_options([100.0], [100.0], [2.0], 0.0, math.log(2.0), 2)
    assert price[0] == pytest.approx(300 / 9, rel=1e-12)


def test_binomial_converges_to_black_scholes():
    s, k, t = np.array([100.0, 12.0, 25.0]), np.array([100.0, 40.0, 20.0]), np.array([1.0, 5.0, 0.5])
    bs, _ = ref.black_scholes(s, k, t, 0.02, 0.3)
    coarse = ref.binomial_options(s, k, t, 0.02, 0.3, 16)
    fine = ref.binomial_options(s, k, t, 0.02, 0.3, 2048)
    np.testing.assert_allclose(fine, bs, atol=0.01)
    assert np.abs(fine - bs).max() < np.abs(coarse - bs).max()
