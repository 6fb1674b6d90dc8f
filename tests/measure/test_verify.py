"""Per-dtype tolerances, mismatch details and poisoning."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from kgpubench.measure.backends.fake import FakeDeviceArray, fake_device_module
from kgpubench.measure.verify import array_module, compare, count_nonfinite, poison, to_host, tolerance


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


# -- the same checks on the device (a NumPy stand-in for CuPy that records host copies) -------------------------
@pytest.fixture
def device(monkeypatch):
    mod = fake_device_module()
    monkeypatch.setitem(sys.modules, "cupy", mod)
    FakeDeviceArray.host_copies.clear()
    return mod


def test_device_compare_finds_hand_made_mismatches_without_copying_arrays(device):
    ref = np.linspace(-1.0, 1.0, 3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    got = ref.copy()
    got[1, 2, 3] += np.float32(0.5)
    got[2, 0, 1] = np.nan
    got[0, 3, 4] -= np.float32(1e-6)  # within tolerance
    ok, detail = compare(device.asarray(got), device.asarray(ref), name="u")
    assert device.asarray(got).__class__.__module__ == "cupy" and array_module(device.asarray(got)) is device
    assert not ok
    assert detail == (f"u: 2 of 60 values differ (rtol=0.0001, atol=1e-05); first at (1, 2, 3): "
                      f"got {got[1, 2, 3]!r}, expected {ref[1, 2, 3]!r}")
    assert compare(got, ref, name="u") == (ok, detail)  # the same detail as on the host
    assert FakeDeviceArray.host_copies == []  # only scalars crossed


def test_device_compare_integers_nan_reference_and_host_expected(device):
    ref = np.arange(10, dtype=np.uint32)
    got = ref.copy()
    got[7] = 0xFFFFFFFF
    ok, detail = compare(device.asarray(got), ref, name="scan")  # expected on the host: moved to the device
    assert not ok and "1 of 10" in detail and "first at (7,)" in detail and "4294967295" in detail
    both = np.array([1.0, np.nan, 3.0])
    assert compare(device.asarray(both), device.asarray(both))[0]
    assert not compare(device.asarray(np.array([1.0, 2.0, np.nan])), device.asarray(both))[0]
    ok, detail = compare(device.asarray(np.zeros(3)), device.asarray(np.zeros((3, 1))))
    assert not ok and "shape (3,) != reference (3, 1)" in detail
    assert FakeDeviceArray.host_copies == []


def test_count_nonfinite_on_host_and_device(device):
    a = np.array([1.0, np.nan, np.inf, -np.inf, 0.0], dtype=np.float32)
    assert count_nonfinite(a) == 3 and count_nonfinite(device.asarray(a)) == 3
    assert FakeDeviceArray.host_copies == []
    assert to_host(device.asarray(a)).shape == (5,) and FakeDeviceArray.host_copies == [5]
