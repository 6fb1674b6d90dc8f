"""NumPy reference (float64) of the constant-density acoustic update and its time stepping.

    u^{n+1} = 2 u^n - u^{n-1} + dt^2 v^2 L(u^n)
    L(u)    = sum over the axes a of [c_0 u + sum_{r=1..R} c_r (u_{+r} + u_{-r})] / h_a^2

on the interior points ``i, j, k in [R, n - R)``; the ``R``-wide frame is never written. Arrays are C order
(``k``, the last index, is contiguous). Time stepping keeps two levels and overwrites the older one in place,
exactly as the CUDA kernels do: buffer ``s % 2`` receives step ``s``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .weights import fd_weights_float


def _interior(radius: int, shape: Sequence[int]) -> tuple[slice, slice, slice]:
    return tuple(slice(radius, n - radius) for n in shape)  # type: ignore[return-value]


def laplacian(u: np.ndarray, h: Sequence[float], order: int) -> np.ndarray:
    """The finite-difference Laplacian of ``u`` on the interior points.

    Parameters
    ----------
    u : ndarray, shape (n1, n2, n3)
        Field values (any float dtype; computed in float64).
    h : sequence of 3 floats
        Grid spacings along i, j, k.
    order : int
        Space order (even); the stencil radius is ``order / 2``.

    Returns
    -------
    ndarray, shape (n1 - 2R, n2 - 2R, n3 - 2R), float64
    """
    c = fd_weights_float(order)
    radius = len(c) - 1
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 3 or min(u.shape) <= 2 * radius:
        raise ValueError(f"expected a 3-D field wider than {2 * radius} points per axis, got shape {u.shape}")
    inner = _interior(radius, u.shape)
    lap = np.zeros(tuple(n - 2 * radius for n in u.shape))
    for axis in range(3):
        acc = c[0] * u[inner]
        for r in range(1, radius + 1):
            plus, minus = list(inner), list(inner)
            plus[axis] = slice(radius + r, u.shape[axis] - radius + r)
            minus[axis] = slice(radius - r, u.shape[axis] - radius - r)
            acc = acc + c[r] * (u[tuple(plus)] + u[tuple(minus)])
        lap += acc / (h[axis] ** 2)
    return lap


def step(prev: np.ndarray, cur: np.ndarray, vel: np.ndarray, dt: float, h: Sequence[float],
         order: int) -> np.ndarray:
    """One time step: the new level (a float64 copy of ``prev`` with its interior updated)."""
    radius = order // 2
    out = np.array(prev, dtype=np.float64, copy=True)
    inner = _interior(radius, out.shape)
    v = np.asarray(vel, dtype=np.float64)[inner]
    c = np.asarray(cur, dtype=np.float64)
    out[inner] = 2.0 * c[inner] - out[inner] + (dt * dt) * v * v * laplacian(c, h, order)
    return out


def run(buffers: tuple[np.ndarray, np.ndarray], vel: np.ndarray, dt: float, h: Sequence[float], order: int,
        steps: int, first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Advance two time levels by ``steps`` steps, as the GPU does (float64).

    Parameters
    ----------
    buffers : (ndarray, ndarray)
        Buffer 0 and buffer 1. Step ``s`` (counting from ``first``) reads the current level from buffer
        ``(s + 1) % 2`` and overwrites buffer ``s % 2`` (which holds the previous level) with the next one.
    vel, dt, h, order
        Velocity field, time step, spacings and space order.
    steps : int
        Number of steps.
    first : int
        Index of the first step (its parity picks the buffer written first).

    Returns
    -------
    (ndarray, ndarray)
        The two buffers after the run, float64.
    """
    bufs = [np.array(b, dtype=np.float64, copy=True) for b in buffers]
    for s in range(first, first + steps):
        w = s % 2
        bufs[w] = step(bufs[w], bufs[1 - w], vel, dt, h, order)
    return bufs[0], bufs[1]


def plane_step(prev_plane: np.ndarray, cur_slab: np.ndarray, vel_plane: np.ndarray, dt: float,
               h: Sequence[float], order: int) -> np.ndarray:
    """The new level on one interior ``i`` plane, from the ``2R + 1`` planes of ``u^n`` around it.

    Parameters
    ----------
    prev_plane, vel_plane : ndarray, shape (n2, n3)
        ``u^{n-1}`` and the velocity on plane ``i``.
    cur_slab : ndarray, shape (2R + 1, n2, n3)
        ``u^n`` on planes ``i - R .. i + R``.

    Returns
    -------
    ndarray, shape (n2, n3), float64
        ``prev_plane`` with its interior (``j, k in [R, n - R)``) replaced by the new level.
    """
    radius = order // 2
    # The Laplacian of the slab's middle plane is the only interior plane of the slab.
    lap = laplacian(cur_slab, h, order)[0]
    out = np.array(prev_plane, dtype=np.float64, copy=True)
    inner = (slice(radius, out.shape[0] - radius), slice(radius, out.shape[1] - radius))
    mid = np.asarray(cur_slab[radius], dtype=np.float64)
    v = np.asarray(vel_plane, dtype=np.float64)[inner]
    out[inner] = 2.0 * mid[inner] - out[inner] + (dt * dt) * v * v * lap
    return out


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """``max |got - want| / max |want|`` (NaN anywhere gives inf)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if not np.all(np.isfinite(got)):
        return float("inf")
    scale = float(np.max(np.abs(want))) or 1.0
    return float(np.max(np.abs(got - want))) / scale
