"""NumPy reference of NPB MG: V-cycle multigrid for the periodic 3-D Poisson problem.

Grids are stored with one ghost layer per side, as ``u[i3, i2, i1]`` (``i1`` fastest, NPB's Fortran order);
level ``k`` has ``2^k`` interior points per axis. The right-hand side ``v`` is zero except +1 at the ten
largest and -1 at the ten smallest of ``n^3`` uniforms drawn in storage order from seed 314159265 (NPB
``zran3``). The timed part: ``r = v - A u``, then ``nit`` times (V-cycle ``mg3P``, ``r = v - A u``), then the
L2 norm of ``r``.
"""

from __future__ import annotations

import numpy as np

from .randlc import uniforms
from .spec import MG_A, MG_CLASSES, MG_EPSILON, MG_SEED, check_class, mg_smoother

_IN = slice(1, -1)


def comm3(u: np.ndarray) -> None:
    """Periodic ghost cells, axis 1 then 2 then 3 (as NPB does: later axes copy earlier ghosts too)."""
    u[:, :, 0], u[:, :, -1] = u[:, :, -2], u[:, :, 1]
    u[:, 0, :], u[:, -1, :] = u[:, -2, :], u[:, 1, :]
    u[0, :, :], u[-1, :, :] = u[-2, :, :], u[1, :, :]


def _shift(u: np.ndarray, d3: int, d2: int, d1: int) -> np.ndarray:
    """The interior of ``u`` shifted by (d3, d2, d1)."""
    n3, n2, n1 = u.shape
    return u[1 + d3 : n3 - 1 + d3, 1 + d2 : n2 - 1 + d2, 1 + d1 : n1 - 1 + d1]


def _classes(u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums of the 6 face, 12 edge and 8 corner neighbours of every interior point."""
    face = np.zeros(tuple(s - 2 for s in u.shape))
    edge = np.zeros_like(face)
    corner = np.zeros_like(face)
    for d3 in (-1, 0, 1):
        for d2 in (-1, 0, 1):
            for d1 in (-1, 0, 1):
                dist = abs(d3) + abs(d2) + abs(d1)
                if dist:
                    (face, edge, corner)[dist - 1][...] += _shift(u, d3, d2, d1)
    return face, edge, corner


def resid(u: np.ndarray, v: np.ndarray, r: np.ndarray, a=MG_A) -> None:
    """``r = v - A u`` on the interior (27-point operator ``a``), then ghost cells."""
    face, edge, corner = _classes(u)
    r[_IN, _IN, _IN] = v[_IN, _IN, _IN] - a[0] * u[_IN, _IN, _IN] - a[1] * face - a[2] * edge - a[3] * corner
    comm3(r)


def psinv(r: np.ndarray, u: np.ndarray, c) -> None:
    """Smoother ``u += S r`` (27-point ``c``), then ghost cells."""
    face, edge, corner = _classes(r)
    u[_IN, _IN, _IN] += c[0] * r[_IN, _IN, _IN] + c[1] * face + c[2] * edge + c[3] * corner
    comm3(u)


def rprj3(r: np.ndarray, s: np.ndarray) -> None:
    """Full-weighting restriction of fine ``r`` onto coarse ``s``: coarse point j sits on fine point 2j."""
    nc = s.shape[0] - 2

    def fine(d3: int, d2: int, d1: int) -> np.ndarray:
        return r[2 + d3 : 2 * nc + 1 + d3 : 2, 2 + d2 : 2 * nc + 1 + d2 : 2, 2 + d1 : 2 * nc + 1 + d1 : 2]

    acc = np.zeros((nc, nc, nc))
    for d3 in (-1, 0, 1):
        for d2 in (-1, 0, 1):
            for d1 in (-1, 0, 1):
                acc += 0.5 ** (1 + abs(d3) + abs(d2) + abs(d1)) * fine(d3, d2, d1)
    s[_IN, _IN, _IN] = acc
    comm3(s)


def interp(z: np.ndarray, u: np.ndarray) -> None:
    """Trilinear prolongation, added to ``u`` (ghosts included): fine ``2i`` = coarse ``i``, ``2i+1`` = mean."""
    m = z.shape[0] - 1  # coarse points 0 .. m-1 and their +1 neighbours
    for o3 in (0, 1):
        for o2 in (0, 1):
            for o1 in (0, 1):
                acc = np.zeros((m, m, m))
                for e3 in range(o3 + 1):
                    for e2 in range(o2 + 1):
                        for e1 in range(o1 + 1):
                            acc += z[e3 : e3 + m, e2 : e2 + m, e1 : e1 + m]
                u[o3 : 2 * m : 2, o2 : 2 * m : 2, o1 : 2 * m : 2] += acc * 0.5 ** (o3 + o2 + o1)


def norm2u3(r: np.ndarray) -> tuple[float, float]:
    """L2 norm ``sqrt(sum r^2 / n^3)`` and max norm of the interior."""
    inner = r[_IN, _IN, _IN]
    return float(np.sqrt(np.sum(inner * inner) / inner.size)), float(np.max(np.abs(inner)))


def zran3(n: int) -> np.ndarray:
    """The right-hand side: +1 at the 10 largest, -1 at the 10 smallest of the ``n^3`` uniforms."""
    z = uniforms(MG_SEED, n**3)
    order = np.argsort(z, kind="stable")
    v = np.zeros((n + 2, n + 2, n + 2))
    inner = np.zeros(n**3)
    inner[order[:10]] = -1.0
    inner[order[-10:]] = 1.0
    v[_IN, _IN, _IN] = inner.reshape(n, n, n)
    comm3(v)
    return v


def mg3p(us: list[np.ndarray], rs: list[np.ndarray], v: np.ndarray, c) -> None:
    """One V-cycle; ``us[k]``/``rs[k]`` are level ``k`` (index 0 unused, the finest is last)."""
    lt = len(us) - 1
    for k in range(lt, 1, -1):
        rprj3(rs[k], rs[k - 1])
    us[1][...] = 0.0
    psinv(rs[1], us[1], c)
    for k in range(2, lt):
        us[k][...] = 0.0
        interp(us[k - 1], us[k])
        resid(us[k], rs[k], rs[k])
        psinv(rs[k], us[k], c)
    interp(us[lt - 1], us[lt])
    resid(us[lt], v, rs[lt])
    psinv(rs[lt], us[lt], c)


def mg_reference(npb_class: str = "S") -> float:
    """Run MG of ``npb_class``; returns the final L2 norm of the residual."""
    n, nit, _ = MG_CLASSES[check_class(npb_class)]
    lt = n.bit_length() - 1
    us = [np.zeros(0)] + [np.zeros((2**k + 2,) * 3) for k in range(1, lt + 1)]
    rs = [np.zeros(0)] + [np.zeros((2**k + 2,) * 3) for k in range(1, lt + 1)]
    c = mg_smoother(npb_class)
    v = zran3(n)
    resid(us[lt], v, rs[lt])
    for _ in range(nit):
        mg3p(us, rs, v, c)
        resid(us[lt], v, rs[lt])
    return norm2u3(rs[lt])[0]


def mg_verify(npb_class: str, l2: float) -> tuple[bool, float]:
    """Official check: relative error of the L2 norm within 1e-8. Returns (passed, relative error)."""
    ref = MG_CLASSES[check_class(npb_class)][2]
    err = abs((l2 - ref) / ref)
    return bool(err <= MG_EPSILON), float(err)
