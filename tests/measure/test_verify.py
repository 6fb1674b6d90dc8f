"""Per-dtype tolerances, mismatch details and poisoning."""

from __future__ import annotations

import numpy as np

from kgpubench.measure.verify import compare, poison, tolerance


def test_tolerances_per_dtype():
    assert tolerance(np.float32) == (1e-4, 1e-5)
    assert tolerance(np.float64) == (1e-10, 1e-12)
    assert tolerance(np.int32) == (0.0, 0.0)


def test_float32_within_and_outside_tolerance():
    ref = np.array([1.0, 100.0, -3.0], dtype=np.float32)
    # scale = 100 -> allowed |err| <= 1e-5 * 100 + 1e-4 * |ref|: 0.0011 at 1.0
    ok, _ = compare(ref + np.float32(0.001), ref)
    assert ok
    got = ref.copy()
    got[2] = -3.01  # error 0.01 > 0.001 + 0.0003
    ok, detail = compare(got, ref, name="out")
    assert not ok
    assert "1 of 3" in detail and "(2,)" in detail and "out" in detail


def test_nan_fails_and_nan_reference_matches_nan():
    ref = np.array([1.0, np.nan])
    ok, detail = compare(np.array([np.nan, np.nan]), ref)
    assert not ok and "(0,)" in detail
    assert compare(np.array([1.0, np.nan]), ref)[0]


def test_integers_exact_and_shape_mismatch():
    assert not compare(np.array([1, 2, 4]), np.array([1, 2, 3]))[0]
    ok, detail = compare(np.zeros(3), np.zeros(4))
    assert not ok and "shape" in detail


def test_poison_values():
    f = np.zeros(3, dtype=np.float32)
    i = np.zeros(2, dtype=np.int32)
    u = np.zeros(2, dtype=np.uint8)
    poison(f), poison(i), poison(u)
    assert np.isnan(f).all() and (i == -1).all() and (u == 255).all()
