"""NumPy references of the regular-suite kernels (float64 arithmetic, results cast to float32).

Each function is the plain mathematical definition of what its kernel computes; tests check every one of
them against an independent computation (analytic values, a slow loop, or ``numpy.linalg.solve``).
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def vector_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a + b`` elementwise (exact in float32: one rounding)."""
    return (a.astype(np.float64) + b.astype(np.float64)).astype(F32)


def euclid(records: np.ndarray, lat: float, lng: float) -> np.ndarray:
    """Distance of each (lat, lng) record (interleaved, shape (2n,)) to the target point."""
    r = records.astype(np.float64).reshape(-1, 2)
    return np.sqrt((lat - r[:, 0]) ** 2 + (lng - r[:, 1]) ** 2).astype(F32)


def _neighbours(img: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """North, south, west, east neighbour of every pixel, clamped at the edges."""
    p = np.pad(img, 1, mode="edge")
    return p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]


def srad_1(J: np.ndarray, q0sqr: float) -> dict[str, np.ndarray]:
    """Directional differences dN, dS, dW, dE and the clamped diffusion coefficient C of image ``J``."""
    j = J.astype(np.float64)
    north, south, west, east = _neighbours(j)
    dn, ds, dw, de = north - j, south - j, west - j, east - j
    g2 = (dn**2 + ds**2 + dw**2 + de**2) / j**2
    lap = (dn + ds + dw + de) / j
    num = 0.5 * g2 - (lap**2) / 16.0
    den = 1.0 + 0.25 * lap
    qsqr = num / den**2
    den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))
    c = np.clip(1.0 / (1.0 + den), 0.0, 1.0)
    return {"dN": dn.astype(F32), "dS": ds.astype(F32), "dW": dw.astype(F32), "dE": de.astype(F32),
            "C": c.astype(F32)}


def srad_2(J: np.ndarray, dN: np.ndarray, dS: np.ndarray, dW: np.ndarray, dE: np.ndarray, C: np.ndarray,
           lam: float) -> np.ndarray:
    """``J + lambda/4 * (cN dN + cS dS + cW dW + cE dE)`` with cN = cW = C, cS = C south, cE = C east."""
    c = C.astype(np.float64)
    _, c_south, _, c_east = _neighbours(c)
    d = c * dN + c_south * dS + c * dW + c_east * dE
    return (J.astype(np.float64) + 0.25 * lam * d).astype(F32)


def hotspot(power: np.ndarray, temp: np.ndarray, iters: int, step: float, rx1: float, ry1: float, rz1: float,
            amb: float) -> np.ndarray:
    """``iters`` explicit steps of the chip heat equation with insulated edges."""
    t = temp.astype(np.float64)
    p = power.astype(np.float64)
    for _ in range(iters):
        north, south, west, east = _neighbours(t)
        t = t + step * (p + (south + north - 2 * t) * ry1 + (east + west - 2 * t) * rx1 + (amb - t) * rz1)
    return t.astype(F32)


def matrix_mul(A: np.ndarray, B: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``A @ B`` in float64 (only the given ``rows`` of the product when set)."""
    a = A.astype(np.float64) if rows is None else A[rows].astype(np.float64)
    return (a @ B.astype(np.float64)).astype(F32)


def fan1(a: np.ndarray, t: int) -> np.ndarray:
    """Multipliers ``a[i, t] / a[t, t]`` for rows ``i > t`` (shape (n - t - 1,))."""
    a64 = a.astype(np.float64)
    return (a64[t + 1:, t] / a64[t, t]).astype(F32)


def fan2(a: np.ndarray, b: np.ndarray, m: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Elimination step ``t``: rows below the pivot minus ``m[i]`` times the pivot row (from column t)."""
    a64, b64, m64 = a.astype(np.float64), b.astype(np.float64), m.astype(np.float64)
    a64[t + 1:, t:] -= np.outer(m64[t + 1:], a64[t, t:])
    b64[t + 1:] -= m64[t + 1:] * b64[t]
    return a64.astype(F32), b64.astype(F32)
