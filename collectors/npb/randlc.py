"""The NPB linear congruential generator, exact: ``x_{k+1} = a x_k mod 2^46``, uniform ``x_k / 2^46``.

NPB's ``randlc(x, a)`` advances ``x`` by one step and returns the new ``x / 2^46``; ``vranlc(n, x, a, y)``
fills ``y`` with the next ``n`` values. Here the state is an exact integer below ``2^46``: Python ints for
scalars, and ``uint64`` NumPy arrays for vectors: an unsigned 64-bit product wraps modulo ``2^64``, and since
``2^46`` divides ``2^64`` its low 46 bits are exactly ``a x mod 2^46`` (the CUDA kernels use the same fact).
"""

from __future__ import annotations

import numpy as np

A = 5**13  # 1220703125, the multiplier of every NPB benchmark
MOD_BITS = 46
MOD = 1 << MOD_BITS
MASK46 = MOD - 1
R46 = 2.0**-46


def mulmod(a: int, b: int) -> int:
    """``a * b mod 2^46`` for Python ints."""
    return (a * b) & MASK46


def powmod(a: int, n: int) -> int:
    """``a ** n mod 2^46`` (NPB's ``ipow46``/``power``), ``n >= 0``."""
    return pow(a, n, MOD)


def mulmod_array(x: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Element-wise ``x * b mod 2^46`` for values below ``2^46`` (``uint64`` in, ``uint64`` out)."""
    x = np.asarray(x, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    return (x * b) & np.uint64(MASK46)


def powers(a: int, n: int) -> np.ndarray:
    """``[a^1, a^2, ..., a^n] mod 2^46`` as ``uint64`` (by doubling: ``log2(n)`` vector steps)."""
    out = np.empty(n, dtype=np.uint64)
    if n == 0:
        return out
    out[0] = a % MOD
    m = 1
    while m < n:
        k = min(m, n - m)
        out[m : m + k] = mulmod_array(out[:k], int(out[m - 1]))
        m += k
    return out


def stream(seed: int, n: int, a: int = A) -> np.ndarray:
    """The next ``n`` states after ``seed``: ``seed * a^k mod 2^46`` for ``k = 1..n`` (``uint64``)."""
    return mulmod_array(powers(a, n), seed % MOD)


def uniforms(seed: int, n: int, a: int = A) -> np.ndarray:
    """What ``vranlc(n, seed, a, y)`` writes to ``y``: the next ``n`` uniforms in (0, 1)."""
    return stream(seed, n, a).astype(np.float64) * R46


class Randlc:
    """A scalar generator with NPB ``randlc`` semantics (state advanced in place).

    Draws are served from blocks computed vectorised, so long sequential runs (CG's ``makea``) stay fast.
    """

    def __init__(self, seed: int, a: int = A, block: int = 1 << 16) -> None:
        self.a = a
        self.state = seed % MOD
        self._block = block
        self._buf: list[float] = []
        self._pos = 0
        self._states = np.empty(0, dtype=np.uint64)

    def _refill(self) -> None:
        states = stream(self.state, self._block, self.a)
        self._buf = (states.astype(np.float64) * R46).tolist()
        self._states = states
        self._pos = 0

    def __call__(self) -> float:
        """Advance one step and return the new uniform (``randlc(x, a)``)."""
        if self._pos >= len(self._buf):
            self._refill()
        value = self._buf[self._pos]
        self.state = int(self._states[self._pos])
        self._pos += 1
        return value
