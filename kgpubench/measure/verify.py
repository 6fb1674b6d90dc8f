"""Checking kernel outputs against references, and poisoning outputs before the check.

The checks are array-module generic: given CuPy arrays they run on the GPU and copy only scalars (counts, the
first bad values) to the host, so suites keep references on the device and verify there.

Tolerance per dtype: ``|actual - expected| <= atol * scale + rtol * |expected|`` elementwise, where
``scale = max(|expected|)`` (so sums of many terms are judged relative to the output's magnitude) and NaN or
infinity where the reference is finite fails. Integers and booleans must match exactly.

=========  ======  ======
dtype      rtol    atol
=========  ======  ======
float16    1e-2    1e-2
float32    1e-4    1e-5
float64    1e-10   1e-12
=========  ======  ======

Suites pass looser values for kernels whose results legitimately differ more (long reductions, special
functions) and say why next to the number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-10, 1e-12),
}


def array_module(*arrays: Any) -> Any:
    """``cupy`` when any of ``arrays`` is a CuPy array, else ``numpy`` (CuPy is imported only then)."""
    for a in arrays:
        if type(a).__module__.split(".")[0] == "cupy":
            import cupy

            return cupy
    return np


def to_host(array: Any) -> np.ndarray:
    """A NumPy copy of a CuPy or NumPy array."""
    get = getattr(array, "get", None)
    return np.asarray(get() if callable(get) else array)


def scalar(value: Any) -> Any:
    """One element (a NumPy scalar, or a 0-d CuPy array) as a NumPy scalar, copying only that element."""
    get = getattr(value, "get", None)
    return np.asarray(get() if callable(get) else value)[()]


def count_nonfinite(array: Any) -> int:
    """How many elements are NaN or infinite, counted where the array lives (one scalar crosses to the host)."""
    xp = array_module(array)
    return int(xp.count_nonzero(~xp.isfinite(array)))


def tolerance(dtype: Any) -> tuple[float, float]:
    """(rtol, atol) for ``dtype``; (0, 0) for integer and boolean types."""
    name = np.dtype(dtype).name
    if name in TOLERANCES:
        return TOLERANCES[name]
    if np.issubdtype(np.dtype(dtype), np.floating):
        return TOLERANCES["float64"]
    return (0.0, 0.0)


def compare(actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None,
            name: str = "output") -> tuple[bool, str]:
    """Compare an array with the reference: ``(ok, detail)``.

    Both may be NumPy or CuPy arrays. When either is on the device the comparison runs there (the other is
    copied over): only the mismatch count, the scale and the first bad pair of values cross to the host.
    ``detail`` names the first mismatching index (C order) with both values, or the count of matching values.
    """
    xp = array_module(actual, expected)
    got, ref = xp.asarray(actual), xp.asarray(expected)
    if got.shape != ref.shape:
        return False, f"{name}: shape {got.shape} != reference {ref.shape}"
    d_rtol, d_atol = tolerance(ref.dtype)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    if ref.size == 0:
        return True, f"{name}: empty"
    if rtol == 0 and atol == 0:
        bad = got != ref
    else:
        g, r = got.astype(np.float64), ref.astype(np.float64)
        scale = float(xp.max(xp.where(xp.isfinite(r), xp.abs(r), 0.0)))
        with np.errstate(invalid="ignore"):
            err = xp.abs(g - r)
            bad = ~(err <= atol * scale + rtol * xp.abs(r))
        bad &= ~(xp.isnan(r) & xp.isnan(g))
    nbad = int(xp.count_nonzero(bad))
    if nbad:
        first = int(xp.argmax(bad.ravel()))
        idx = tuple(int(i) for i in np.unravel_index(first, bad.shape))
        return False, (f"{name}: {nbad} of {ref.size} values differ (rtol={rtol:g}, atol={atol:g}); first at "
                       f"{idx}: got {scalar(got[idx])!r}, expected {scalar(ref[idx])!r}")
    return True, f"{name}: {ref.size} values match"


def poison(array: Any) -> None:
    """Fill an output in place with NaN (floats) or all-ones bytes (integers), which correct kernels overwrite."""
    dtype = np.dtype(array.dtype)
    if np.issubdtype(dtype, np.floating):
        array.fill(np.nan)
    elif np.issubdtype(dtype, np.signedinteger):
        array.fill(-1)
    elif np.issubdtype(dtype, np.unsignedinteger):
        array.fill(np.iinfo(dtype).max)
    else:
        array.fill(True)
