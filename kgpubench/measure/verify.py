"""Checking kernel outputs against NumPy references, and poisoning outputs before the check.

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


def to_host(array: Any) -> np.ndarray:
    """A NumPy copy of a CuPy or NumPy array."""
    get = getattr(array, "get", None)
    return np.asarray(get() if callable(get) else array)


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
    """Compare a device or host array with the reference: ``(ok, detail)``.

    ``detail`` names the first mismatching index with both values, or the worst error when all pass.
    """
    got = to_host(actual)
    ref = np.asarray(expected)
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
        scale = float(np.max(np.abs(r[np.isfinite(r)]), initial=0.0))
        with np.errstate(invalid="ignore"):
            err = np.abs(g - r)
            bad = ~(err <= atol * scale + rtol * np.abs(r))
        bad &= ~(np.isnan(r) & np.isnan(g))
    nbad = int(np.count_nonzero(bad))
    if nbad:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        return False, (f"{name}: {nbad} of {ref.size} values differ (rtol={rtol:g}, atol={atol:g}); first at "
                       f"{idx}: got {got[idx]!r}, expected {ref[idx]!r}")
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
