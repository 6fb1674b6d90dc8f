"""The four NPB applications on the GPU, built from our kernels (one launch per NPB-GPU kernel role).

Each app does its host setup in NumPy (CG's ``makea``, MG's right-hand side, FT's line seeds and FFT
twiddles) and allocates device arrays with ``xp`` (CuPy) in :meth:`setup`; :meth:`run` is NPB's timed
region, launching through a :class:`~.launcher.Launcher` and returning the verified quantities; scalar
reductions are block partial sums that the host adds (as NPB-GPU does).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from . import ref_cg, ref_ep, ref_ft, ref_mg
from .launcher import Launcher
from .randlc import A, mulmod_array, powers, powmod
from .spec import (
    CG_CGITMAX,
    CG_CLASSES,
    EP_CLASSES,
    EP_NQ,
    EP_SEED,
    FT_ALPHA,
    FT_CLASSES,
    FT_SEED,
    MG_A,
    MG_CLASSES,
    check_class,
    mg_smoother,
)

EP_CHUNK_LOG2 = 10  # pairs per GPU thread: 2^10 (finer than NPB's 2^16 batches, same stream)

i32, i64, u64, f64 = np.int32, np.int64, np.uint64, np.float64


def to_host(xp: Any, arr: Any) -> np.ndarray:
    """A NumPy copy of a device array (a no-op for NumPy arrays)."""
    return arr.get() if hasattr(arr, "get") and xp is not np else np.asarray(arr)


class NpbApp:
    """Base: a benchmark at a class on a device namespace ``xp``; subclasses set ``benchmark``."""

    benchmark = ""

    def __init__(self, npb_class: str, xp: Any) -> None:
        self.npb_class = check_class(npb_class)
        self.xp = xp

    def setup(self) -> None:
        """Host setup and device allocation (not timed)."""

    def reset(self) -> None:
        """Restore the state before NPB's timer starts (not timed); called before every run."""

    def run(self, k: Launcher) -> list[float]:  # pragma: no cover - abstract
        """The timed region; returns the verified quantities."""
        raise NotImplementedError

    def verify(self, values: list[float]) -> tuple[bool, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _sum(self, k: Launcher, name: str, work: int, args: tuple, buf: Any, width: int = 1) -> np.ndarray:
        """Launch a partial-sum kernel whose last argument is ``buf``; return the column sums on the host."""
        nb = k(name, work, args + (buf,))
        return to_host(self.xp, buf[: nb * width]).reshape(nb, width).sum(axis=0)


class EpApp(NpbApp):
    benchmark = "EP"

    def setup(self) -> None:
        m = EP_CLASSES[self.npb_class][0]
        self.chunk_pairs = 1 << EP_CHUNK_LOG2
        self.nchunks = (1 << m) // self.chunk_pairs
        self.multiplier = powmod(A, 2 * self.chunk_pairs)
        self.partial = self.xp.zeros(self.nchunks * (EP_NQ + 2), dtype=np.float64)

    def run(self, k: Launcher) -> list[float]:
        args = (u64(EP_SEED), u64(self.multiplier), u64(A), i64(self.nchunks), i32(self.chunk_pairs))
        sums = self._sum(k, "ep", self.nchunks, args, self.partial, EP_NQ + 2)
        return [float(sums[0]), float(sums[1])]

    def verify(self, values: list[float]) -> tuple[bool, float]:
        return ref_ep.ep_verify(self.npb_class, values[0], values[1])


@lru_cache(maxsize=2)
def _cg_matrix(npb_class: str) -> ref_cg.CsrMatrix:
    return ref_cg.makea(npb_class)


class CgApp(NpbApp):
    benchmark = "CG"

    def setup(self) -> None:
        xp = self.xp
        self.n, _, self.niter, self.shift, _ = CG_CLASSES[self.npb_class]
        a = _cg_matrix(self.npb_class)
        self.rowptr, self.colidx = xp.asarray(a.rowptr), xp.asarray(a.colidx)
        self.val = xp.asarray(a.values)
        self.x, self.z, self.p, self.q, self.r = (xp.zeros(self.n) for _ in range(5))
        self.partial = xp.zeros(2 * self.n)

    def reset(self) -> None:
        self.x.fill(1.0)

    def _conj_grad(self, k: Launcher) -> float:
        n, mat = i32(self.n), (self.rowptr, self.colidx, self.val)
        k("kernel_one", self.n, (n, self.x, self.q, self.z, self.r, self.p))
        rho = float(self._sum(k, "kernel_two", self.n, (n, self.r), self.partial)[0])
        for _ in range(CG_CGITMAX):
            k("kernel_three", self.n, (n, *mat, self.p, self.q))
            d = float(self._sum(k, "kernel_four", self.n, (n, self.p, self.q), self.partial)[0])
            alpha = rho / d
            k("kernel_five", self.n, (n, f64(alpha), self.p, self.q, self.z, self.r))
            rho0, rho = rho, float(self._sum(k, "kernel_six", self.n, (n, self.r), self.partial)[0])
            k("kernel_seven", self.n, (n, f64(rho / rho0), self.r, self.p))
        k("kernel_eight", self.n, (n, *mat, self.z, self.r))
        return float(np.sqrt(self._sum(k, "kernel_nine", self.n, (n, self.x, self.r), self.partial)[0]))

    def run(self, k: Launcher) -> list[float]:
        zeta = 0.0
        for _ in range(self.niter):
            self._conj_grad(k)
            xz, zz = self._sum(k, "kernel_ten", self.n, (i32(self.n), self.x, self.z), self.partial, 2)
            zeta = self.shift + 1.0 / float(xz)
            k("kernel_eleven", self.n, (i32(self.n), f64(1.0 / np.sqrt(zz)), self.z, self.x))
        return [zeta]

    def verify(self, values: list[float]) -> tuple[bool, float]:
        return ref_cg.cg_verify(self.npb_class, values[0])


class MgApp(NpbApp):
    benchmark = "MG"

    def setup(self) -> None:
        xp = self.xp
        self.n, self.nit, _ = MG_CLASSES[self.npb_class]
        self.lt = self.n.bit_length() - 1
        self.c = mg_smoother(self.npb_class)
        self.dims = [0] + [2**lv + 2 for lv in range(1, self.lt + 1)]
        self.u = [None] + [xp.zeros(d**3) for d in self.dims[1:]]
        self.r = [None] + [xp.zeros(d**3) for d in self.dims[1:]]
        self.v = xp.asarray(ref_mg.zran3(self.n).ravel())
        self.partial = xp.zeros(2 * self.dims[-1] ** 3)

    def reset(self) -> None:
        for lv in range(1, self.lt + 1):
            self.u[lv].fill(0.0)
            self.r[lv].fill(0.0)

    def _comm3(self, k: Launcher, arr: Any, d: int) -> None:
        dd = i32(d)
        for axis, work in ((1, (d - 2) ** 2), (2, d * (d - 2)), (3, d * d)):
            k("comm3", work, (arr, dd, dd, dd, i32(axis)))

    def _resid(self, k: Launcher, lv: int, v: Any) -> None:
        d = self.dims[lv]
        k("resid", (d - 2) ** 3, (self.u[lv], v, self.r[lv], i32(d), i32(d), i32(d), *map(f64, MG_A)))
        self._comm3(k, self.r[lv], d)

    def _psinv(self, k: Launcher, lv: int) -> None:
        d = self.dims[lv]
        k("psinv", (d - 2) ** 3, (self.r[lv], self.u[lv], i32(d), i32(d), i32(d), *map(f64, self.c)))
        self._comm3(k, self.u[lv], d)

    def _zero3(self, k: Launcher, lv: int) -> None:
        k("zero3", self.dims[lv] ** 3, (self.u[lv], i64(self.dims[lv] ** 3)))

    def _interp(self, k: Launcher, lv: int) -> None:
        m, d = i32(self.dims[lv - 1]), i32(self.dims[lv])
        k("interp", (self.dims[lv - 1] - 1) ** 3, (self.u[lv - 1], m, m, m, self.u[lv], d, d, d))

    def _mg3p(self, k: Launcher) -> None:
        for lv in range(self.lt, 1, -1):
            d, m = i32(self.dims[lv]), i32(self.dims[lv - 1])
            k("rprj3", (self.dims[lv - 1] - 2) ** 3, (self.r[lv], d, d, d, self.r[lv - 1], m, m, m))
            self._comm3(k, self.r[lv - 1], self.dims[lv - 1])
        self._zero3(k, 1)
        self._psinv(k, 1)
        for lv in range(2, self.lt):
            self._zero3(k, lv)
            self._interp(k, lv)
            self._resid(k, lv, self.r[lv])
            self._psinv(k, lv)
        self._interp(k, self.lt)
        self._resid(k, self.lt, self.v)
        self._psinv(k, self.lt)

    def _norm(self, k: Launcher) -> float:
        d = i32(self.dims[self.lt])
        nb = k("norm2u3", (self.n) ** 3, (self.r[self.lt], d, d, d, self.partial))
        parts = to_host(self.xp, self.partial[: 2 * nb]).reshape(nb, 2)
        return float(np.sqrt(parts[:, 0].sum() / self.n**3))

    def run(self, k: Launcher) -> list[float]:
        self._resid(k, self.lt, self.v)
        self._norm(k)
        for _ in range(self.nit):
            self._mg3p(k)
            self._resid(k, self.lt, self.v)
        return [self._norm(k)]

    def verify(self, values: list[float]) -> tuple[bool, float]:
        return ref_mg.mg_verify(self.npb_class, values[0])


class FtApp(NpbApp):
    benchmark = "FT"

    def setup(self) -> None:
        xp = self.xp
        (self.nx, self.ny, self.nz), self.niter = FT_CLASSES[self.npb_class]
        self.total = self.nx * self.ny * self.nz
        lines = self.ny * self.nz
        starts = np.empty(lines, dtype=np.uint64)  # x line l starts after 2 nx l draws
        starts[0] = FT_SEED
        starts[1:] = mulmod_array(powers(powmod(A, 2 * self.nx), lines - 1), FT_SEED)
        self.seeds = xp.asarray(starts)
        self.u0, self.u1, self.u2, self.y0, self.y1 = (xp.zeros(self.total, dtype=np.complex128)
                                                       for _ in range(5))
        self.factor = xp.zeros(self.total)
        self.partial = xp.zeros(2 * 1024)
        self.w = {}
        for n in {self.nx, self.ny, self.nz}:
            for sign in (-1, 1):
                self.w[n, sign] = xp.asarray(np.exp(sign * 2j * np.pi * np.arange(n // 2) / n))

    def _fft(self, k: Launcher, src: Any, dst: Any, sign: int) -> None:
        total = i64(self.total)
        for axis, n, st in (("x", self.nx, 1), ("y", self.ny, self.nx), ("z", self.nz, self.nx * self.ny)):
            lines = self.total // n
            k(f"fft{axis}_1", self.total, (src, self.y0, total, i32(n), i64(st)))
            k(f"fft{axis}_2", lines, (self.y0, self.y1, self.w[n, sign], i32(n), i64(lines)))
            result = self.y0 if (n.bit_length() - 1) % 2 == 0 else self.y1
            k(f"fft{axis}_3", self.total, (result, dst, total, i32(n), i64(st)))
            src = dst

    def run(self, k: Launcher) -> list[float]:
        total = i64(self.total)
        k("init_ui", self.total, (self.u0, self.u1, self.factor, total))
        k("compute_indexmap", self.total, (self.factor, i32(self.nx), i32(self.ny), i32(self.nz),
                                           f64(-4.0 * FT_ALPHA * np.pi**2)))
        k("compute_initial_conditions", self.ny * self.nz, (self.u1, self.seeds, u64(A), i32(self.nx),
                                                            i64(self.ny * self.nz)))
        self._fft(k, self.u1, self.u0, -1)
        out: list[float] = []
        for _ in range(self.niter):
            k("evolve", self.total, (self.u0, self.u1, self.factor, total))
            self._fft(k, self.u1, self.u2, 1)
            s = self._sum(k, "checksum", 1024, (self.u2, i32(self.nx), i32(self.ny), i32(self.nz)),
                          self.partial, 2)
            out += [float(s[0]) / self.total, float(s[1]) / self.total]
        return out

    def verify(self, values: list[float]) -> tuple[bool, float]:
        sums = [complex(values[i], values[i + 1]) for i in range(0, len(values), 2)]
        return ref_ft.ft_verify(self.npb_class, sums)


APPS = {"EP": EpApp, "CG": CgApp, "MG": MgApp, "FT": FtApp}
