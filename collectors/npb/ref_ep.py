"""NumPy reference of NPB EP: Gaussian deviates by the acceptance-rejection (polar) method.

``2^M`` pairs of uniforms are drawn from the NPB generator (seed 271828183) in ``2^(M - 16)`` batches of
``2^16`` pairs; batch ``k`` starts at ``seed * (a^(2^17))^k``. A pair ``(x, y)`` in (-1, 1)^2 is accepted when
``t = x^2 + y^2 <= 1`` and becomes ``X = x sqrt(-2 ln t / t)``, ``Y = y sqrt(-2 ln t / t)``; ``sx``, ``sy`` sum
them and ``q[l]`` counts the pairs with ``floor(max(|X|, |Y|)) = l``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .randlc import R46, A, mulmod_array, powers, powmod
from .spec import EP_CLASSES, EP_EPSILON, EP_MK, EP_NQ, EP_SEED, check_class


@dataclass(frozen=True)
class EpResult:
    """What EP reports: the sums, the annulus counts and the number of accepted pairs."""

    sx: float
    sy: float
    q: tuple[int, ...]

    @property
    def gaussian_pairs(self) -> int:
        return int(sum(self.q))


def batch_seeds(m: int, seed: int = EP_SEED, mk: int = EP_MK) -> np.ndarray:
    """Start state of every batch (``uint64``): ``seed * an^k`` with ``an = a^(2^(mk+1))``."""
    nn = 1 << (m - mk)
    an = powmod(A, 1 << (mk + 1))
    seeds = np.empty(nn, dtype=np.uint64)
    seeds[0] = seed
    if nn > 1:
        seeds[1:] = mulmod_array(powers(an, nn - 1), seed)
    return seeds


def _tally(u: np.ndarray) -> tuple[float, float, np.ndarray]:
    x = 2.0 * u[..., 0::2] - 1.0
    y = 2.0 * u[..., 1::2] - 1.0
    t = x * x + y * y
    ok = t <= 1.0
    x, y, t = x[ok], y[ok], t[ok]
    f = np.sqrt(-2.0 * np.log(t) / t)
    gx, gy = x * f, y * f
    lvl = np.maximum(np.abs(gx), np.abs(gy)).astype(np.int64)
    return float(gx.sum()), float(gy.sum()), np.bincount(lvl, minlength=EP_NQ)[:EP_NQ]


def ep_reference(npb_class: str = "S", *, batches_per_chunk: int = 8) -> EpResult:
    """Run EP of ``npb_class`` on the CPU (class S draws 2^25 uniforms: about two seconds).

    Parameters
    ----------
    npb_class : str
        NPB class (S, W, A, B, C); A and beyond take minutes.
    batches_per_chunk : int
        Batches generated at once (memory: ``batches_per_chunk * 2^17 * 8`` bytes per array).
    """
    m = EP_CLASSES[check_class(npb_class)][0]
    seeds = batch_seeds(m)
    offsets = powers(A, 2 << EP_MK)  # a^1 .. a^(2 nk): the draws of one batch relative to its start
    sx = sy = 0.0
    q = np.zeros(EP_NQ, dtype=np.int64)
    for lo in range(0, len(seeds), batches_per_chunk):
        states = mulmod_array(seeds[lo : lo + batches_per_chunk, None], offsets[None, :])
        bx, by, bq = _tally(states.astype(np.float64) * R46)
        sx += bx
        sy += by
        q += bq
    return EpResult(sx, sy, tuple(int(v) for v in q))


def ep_verify(npb_class: str, sx: float, sy: float) -> tuple[bool, float]:
    """Official check: relative errors of sx and sy within 1e-8. Returns (passed, worst relative error)."""
    _, rx, ry = EP_CLASSES[check_class(npb_class)]
    err = max(abs((sx - rx) / rx), abs((sy - ry) / ry))
    return bool(err <= EP_EPSILON), float(err)
