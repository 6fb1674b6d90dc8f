"""NumPy references of the power-suite kernels (seed 002 tables 2 and 3).

Each function computes, on the host and in float64 unless the output is an integer, what the CUDA kernel of
the same name writes. They are vectorised so that references of device-filling inputs take well under a
second or two; the tests check each against an independent computation on small inputs.
"""

from __future__ import annotations

import numpy as np

DCT_SIZE = 8
HISTOGRAM_CHUNK = 1 << 22


def dotp(a: np.ndarray, b: np.ndarray) -> float:
    """Dot product ``sum_i a[i] * b[i]`` (float64)."""
    return float(np.dot(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))


def madd(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Element-wise multiply-add ``a * b + c`` (float64)."""
    a64, b64, c64 = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    return a64 * b64 + c64


def mtrans(x: np.ndarray) -> np.ndarray:
    """Transpose of a ``rows x cols`` matrix, as a contiguous ``cols x rows`` array."""
    return np.ascontiguousarray(np.asarray(x).T)


def scalar_prod(a: np.ndarray, b: np.ndarray, nvec: int, length: int) -> np.ndarray:
    """Scalar products of ``nvec`` vector pairs of ``length`` elements stored one after another (float64)."""
    a2 = np.asarray(a, dtype=np.float64).reshape(nvec, length)
    b2 = np.asarray(b, dtype=np.float64).reshape(nvec, length)
    return np.einsum("ij,ij->i", a2, b2)


def fwt(x: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh-Hadamard transform (natural order) of each row of ``x`` (shape ``(nvec, 2**k)``).

    Equals ``x @ H`` with ``H`` the Sylvester Hadamard matrix of order ``2**k`` (``H`` is symmetric).
    """
    y = np.array(x, dtype=np.float64, copy=True)
    nvec, length = y.shape
    if length & (length - 1):
        raise ValueError(f"fwt needs rows whose length is a power of two, got {length}")
    h = 1
    while h < length:
        v = y.reshape(nvec, length // (2 * h), 2, h)
        lo = v[:, :, 0, :].copy()
        hi = v[:, :, 1, :]
        v[:, :, 0, :] += hi
        v[:, :, 1, :] = lo - hi
        h *= 2
    return y


def scan_exclusive(x: np.ndarray) -> np.ndarray:
    """Exclusive prefix sum of each row of a ``(nrows, length)`` unsigned array, modulo 2**32 (uint32)."""
    x64 = np.asarray(x, dtype=np.uint64)
    inclusive = np.cumsum(x64, axis=1)
    return ((inclusive - x64) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def histogram256(words: np.ndarray) -> np.ndarray:
    """Counts of the 256 byte values in an array of 32-bit words (four bytes per word), as int64."""
    w = np.asarray(words, dtype=np.uint32).ravel()
    counts = np.zeros(256, dtype=np.int64)
    for start in range(0, w.size, HISTOGRAM_CHUNK):  # chunks bound the temporary index arrays
        chunk = w[start:start + HISTOGRAM_CHUNK]
        for shift in (0, 8, 16, 24):
            counts += np.bincount(((chunk >> np.uint32(shift)) & np.uint32(0xFF)).astype(np.intp), minlength=256)
    return counts


def dct_matrix(n: int = DCT_SIZE) -> np.ndarray:
    """Orthonormal DCT-II matrix ``C[u, x] = a(u) cos((2x + 1) u pi / (2n))``."""
    u = np.arange(n)[:, None]
    x = np.arange(n)[None, :]
    c = np.cos((2 * x + 1) * u * np.pi / (2 * n))
    scale = np.full((n, 1), np.sqrt(2.0 / n))
    scale[0, 0] = np.sqrt(1.0 / n)
    return scale * c


def dct8x8(image: np.ndarray) -> np.ndarray:
    """2-D orthonormal DCT-II of every 8 x 8 tile of a ``height x width`` image, stored in place of the tile."""
    img = np.asarray(image, dtype=np.float64)
    height, width = img.shape
    if height % DCT_SIZE or width % DCT_SIZE:
        raise ValueError(f"dct8x8 needs sides that are multiples of 8, got {img.shape}")
    c = dct_matrix()
    tiles = img.reshape(height // 8, 8, width // 8, 8)  # (ty, y, tx, x)
    rows = np.tensordot(tiles, c, axes=([3], [1]))  # (ty, y, tx, u) = sum_x X[y, x] C[u, x]
    coef = np.tensordot(c, rows, axes=([1], [1]))  # (v, ty, tx, u) = sum_y C[v, y] rows[y, u]
    return np.ascontiguousarray(coef.transpose(1, 0, 2, 3)).reshape(height, width)


def _norm_cdf(x: np.ndarray) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(x)


def black_scholes(s: np.ndarray, k: np.ndarray, t: np.ndarray, r: float, v: float) -> tuple[np.ndarray, np.ndarray]:
    """European call and put prices under Black-Scholes (float64).

    Parameters
    ----------
    s, k, t : ndarray
        Spot price, strike and time to expiry (years) per option.
    r, v : float
        Risk-free rate and volatility (per year).
    """
    s64, k64, t64 = (np.asarray(x, dtype=np.float64) for x in (s, k, t))
    sqrt_t = np.sqrt(t64)
    d1 = (np.log(s64 / k64) + (r + 0.5 * v * v) * t64) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    disc = k64 * np.exp(-r * t64)
    call = s64 * _norm_cdf(d1) - disc * _norm_cdf(d2)
    put = disc * _norm_cdf(-d2) - s64 * _norm_cdf(-d1)
    return call, put


def binomial_options(s: np.ndarray, k: np.ndarray, t: np.ndarray, r: float, v: float, steps: int) -> np.ndarray:
    """European call prices on a Cox-Ross-Rubinstein tree with ``steps`` steps (float64), one per option.

    ``u = exp(v sqrt(dt))``, ``d = 1/u``, ``p = (exp(r dt) - d) / (u - d)``; leaves ``max(S u^(2i - N) - K, 0)``
    rolled back with discount ``exp(-r dt)``.
    """
    s64, k64, t64 = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (s, k, t))
    dt = t64 / steps
    vdt = v * np.sqrt(dt)
    up = np.exp(vdt)
    down = 1.0 / up
    growth = np.exp(r * dt)
    pu = (growth - down) / (up - down)
    pu_disc = (pu / growth)[:, None]
    pd_disc = ((1.0 - pu) / growth)[:, None]
    i = np.arange(steps + 1)[None, :]
    values = np.maximum(s64[:, None] * np.exp(vdt[:, None] * (2 * i - steps)) - k64[:, None], 0.0)
    for step in range(steps, 0, -1):
        values = pu_disc * values[:, 1:step + 1] + pd_disc * values[:, :step]
    return values[:, 0]
