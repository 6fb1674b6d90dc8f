"""NumPy reference of NPB FT: the heat equation solved spectrally with 3-D FFTs.

The initial field ``u[k, j, i]`` (``i`` fastest) takes its real and imaginary parts from consecutive draws
of the NPB generator (seed 314159265) in storage order. After a forward 3-D FFT, step ``t`` multiplies by
``exp(-4 alpha pi^2 (i'^2 + j'^2 + k'^2))`` (``i'`` the signed frequency), inverts, and the checksum is the
sum over ``j = 1..1024`` of ``u[5j mod nz, 3j mod ny, j mod nx]`` divided by ``nx ny nz`` (NPB's unnormalised
transforms; NumPy's normalised inverse gives the same value).
"""

from __future__ import annotations

import numpy as np

from .randlc import uniforms
from .spec import FT_ALPHA, FT_CHECKSUMS, FT_CLASSES, FT_EPSILON, FT_SEED, check_class


def initial_conditions(nx: int, ny: int, nz: int) -> np.ndarray:
    """The random initial field, shape (nz, ny, nx), complex128."""
    r = uniforms(FT_SEED, 2 * nx * ny * nz)
    return (r[0::2] + 1j * r[1::2]).reshape(nz, ny, nx)


def evolution_factors(nx: int, ny: int, nz: int) -> np.ndarray:
    """``exp(-4 alpha pi^2 |k|^2)`` per spectral element, shape (nz, ny, nx) (NPB ``compute_indexmap``)."""
    def freq(n: int) -> np.ndarray:
        i = np.arange(n)
        return (i + n // 2) % n - n // 2

    k2 = freq(nz)[:, None, None] ** 2 + freq(ny)[None, :, None] ** 2 + freq(nx)[None, None, :] ** 2
    return np.exp(-4.0 * FT_ALPHA * np.pi**2 * k2.astype(np.float64))


def checksum_indices(nx: int, ny: int, nz: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, j, i) of the 1024 checksum elements."""
    j = np.arange(1, 1025)
    return (5 * j) % nz, (3 * j) % ny, j % nx


def ft_reference(npb_class: str = "S") -> list[complex]:
    """Run FT of ``npb_class``; returns the checksum of every step."""
    (nx, ny, nz), niter = FT_CLASSES[check_class(npb_class)]
    spec = np.fft.fftn(initial_conditions(nx, ny, nz))
    factors = evolution_factors(nx, ny, nz)
    idx = checksum_indices(nx, ny, nz)
    sums = []
    for _ in range(niter):
        spec *= factors
        u = np.fft.ifftn(spec)
        sums.append(complex(u[idx].sum()))
    return sums


def ft_verify(npb_class: str, checksums: list[complex]) -> tuple[bool, float]:
    """Official check: every step's checksum within relative error 1e-12 (complex modulus).

    Returns (passed, worst relative error); a wrong number of steps fails with an infinite error.
    """
    ref = [complex(re, im) for re, im in FT_CHECKSUMS[check_class(npb_class)]]
    if len(checksums) != len(ref):
        return False, float("inf")
    err = max(abs((c - r) / r) for c, r in zip(checksums, ref))
    return bool(err <= FT_EPSILON), float(err)
