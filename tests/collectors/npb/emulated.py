"""A NumPy emulation of our NPB CUDA kernels (same names, arguments and block partial-sum layout), for
running the GPU apps and the sweep on the CPU. Test-only: its rows carry source ``fake`` and never validate."""

from __future__ import annotations

import numpy as np

MASK46 = np.uint64((1 << 46) - 1)


def _blocks(values: np.ndarray, nb: int, tpb: int, op=np.sum) -> np.ndarray:
    pad = np.zeros(nb * tpb, dtype=values.dtype)
    pad[: len(values)] = values
    return op(pad.reshape(nb, tpb), axis=1)


def _grid(u, n1, n2, n3):
    return u.reshape(int(n3), int(n2), int(n1))


class Emulator:
    """``kernels()`` returns name -> callable(grid, block, args) emulating each kernel."""

    def __init__(self, ref_mg, randlc) -> None:
        self.ref_mg, self.rl = ref_mg, randlc

    # ---- EP
    def ep(self, nb, tpb, seed, mult, a, nchunks, chunk_pairs, partial):
        g = np.arange(int(nchunks))
        starts = np.empty(len(g), dtype=np.uint64)
        starts[0] = seed
        starts[1:] = self.rl.mulmod_array(self.rl.powers(int(mult), len(g) - 1), int(seed))
        offs = self.rl.powers(int(a), 2 * int(chunk_pairs))
        per = np.zeros((len(g), 12))
        for lo in range(0, len(g), 256):
            u = self.rl.mulmod_array(starts[lo:lo + 256, None], offs[None, :]).astype(np.float64) * 2.0**-46
            x, y = 2 * u[:, 0::2] - 1, 2 * u[:, 1::2] - 1
            t = x * x + y * y
            ok = t <= 1
            f = np.sqrt(-2 * np.log(np.where(ok, t, 0.5)) / np.where(ok, t, 0.5))
            gx, gy = np.where(ok, x * f, 0), np.where(ok, y * f, 0)
            per[lo:lo + 256, 0], per[lo:lo + 256, 1] = gx.sum(1), gy.sum(1)
            lvl = np.maximum(np.abs(gx), np.abs(gy)).astype(int)
            for q in range(10):
                per[lo:lo + 256, 2 + q] = ((lvl == q) & ok).sum(1)
        for j in range(12):
            partial[j : nb * 12 : 12] = _blocks(per[:, j], nb, tpb)

    # ---- CG
    def kernel_one(self, nb, tpb, n, x, q, z, r, p):
        q[:n] = 0
        z[:n] = 0
        r[:n] = x[:n]
        p[:n] = x[:n]

    def _dot(self, nb, tpb, a, b, partial):
        partial[:nb] = _blocks(a * b, nb, tpb)

    def kernel_two(self, nb, tpb, n, r, partial):
        self._dot(nb, tpb, r[:n], r[:n], partial)

    kernel_six = kernel_two

    def kernel_three(self, nb, tpb, n, rowptr, colidx, val, p, q):
        q[:n] = np.add.reduceat(val * p[colidx], rowptr[:-1])

    kernel_eight = kernel_three

    def kernel_four(self, nb, tpb, n, p, q, partial):
        self._dot(nb, tpb, p[:n], q[:n], partial)

    def kernel_five(self, nb, tpb, n, alpha, p, q, z, r):
        z[:n] += alpha * p[:n]
        r[:n] -= alpha * q[:n]

    def kernel_seven(self, nb, tpb, n, beta, r, p):
        p[:n] = r[:n] + beta * p[:n]

    def kernel_nine(self, nb, tpb, n, x, r, partial):
        self._dot(nb, tpb, x[:n] - r[:n], x[:n] - r[:n], partial)

    def kernel_ten(self, nb, tpb, n, x, z, partial):
        partial[0 : 2 * nb : 2] = _blocks(x[:n] * z[:n], nb, tpb)
        partial[1 : 2 * nb : 2] = _blocks(z[:n] * z[:n], nb, tpb)

    def kernel_eleven(self, nb, tpb, n, norm, z, x):
        x[:n] = norm * z[:n]

    # ---- MG
    def comm3(self, nb, tpb, u, n1, n2, n3, axis):
        g = _grid(u, n1, n2, n3)
        if axis == 1:
            g[1:-1, 1:-1, 0], g[1:-1, 1:-1, -1] = g[1:-1, 1:-1, -2], g[1:-1, 1:-1, 1]
        elif axis == 2:
            g[1:-1, 0, :], g[1:-1, -1, :] = g[1:-1, -2, :], g[1:-1, 1, :]
        else:
            g[0], g[-1] = g[-2].copy(), g[1].copy()

    def resid(self, nb, tpb, u, v, r, n1, n2, n3, a0, a1, a2, a3):
        gu, gv, gr = _grid(u, n1, n2, n3), _grid(v, n1, n2, n3), _grid(r, n1, n2, n3)
        f, e, c = self.ref_mg._classes(gu)
        gr[1:-1, 1:-1, 1:-1] = gv[1:-1, 1:-1, 1:-1] - a0 * gu[1:-1, 1:-1, 1:-1] - a1 * f - a2 * e - a3 * c

    def psinv(self, nb, tpb, r, u, n1, n2, n3, c0, c1, c2, c3):
        gr, gu = _grid(r, n1, n2, n3), _grid(u, n1, n2, n3)
        f, e, c = self.ref_mg._classes(gr)
        gu[1:-1, 1:-1, 1:-1] += c0 * gr[1:-1, 1:-1, 1:-1] + c1 * f + c2 * e + c3 * c

    def rprj3(self, nb, tpb, r, n1, n2, n3, s, m1, m2, m3):
        gs = _grid(s, m1, m2, m3)
        tmp = gs.copy()
        self.ref_mg.rprj3(_grid(r, n1, n2, n3), tmp)
        gs[1:-1, 1:-1, 1:-1] = tmp[1:-1, 1:-1, 1:-1]

    def interp(self, nb, tpb, z, mm1, mm2, mm3, u, n1, n2, n3):
        self.ref_mg.interp(_grid(z, mm1, mm2, mm3), _grid(u, n1, n2, n3))

    def norm2u3(self, nb, tpb, r, n1, n2, n3, partial):
        inner = _grid(r, n1, n2, n3)[1:-1, 1:-1, 1:-1].ravel()
        partial[0 : 2 * nb : 2] = _blocks(inner * inner, nb, tpb)
        partial[1 : 2 * nb : 2] = _blocks(np.abs(inner), nb, tpb, np.max)

    def zero3(self, nb, tpb, u, total):
        u[:total] = 0

    # ---- FT
    @staticmethod
    def _addr(total, n, st):
        lines = total // n
        t = np.arange(total)
        p, lnum = t // lines, t % lines
        return (lnum % st) + (lnum // st) * st * n + p * st

    def _gather(self, nb, tpb, src, y, total, n, st):
        y[:] = src[self._addr(int(total), int(n), int(st))]

    def _scatter(self, nb, tpb, y, dst, total, n, st):
        dst[self._addr(int(total), int(n), int(st))] = y

    def _stockham(self, nb, tpb, y0, y1, w, n, lines):
        n, lines = int(n), int(lines)
        x, y = y0.reshape(n, lines), y1.reshape(n, lines)
        length, s = n, 1
        while length > 1:
            m = length // 2
            p = np.repeat(np.arange(m), s)
            q = np.tile(np.arange(s), m)
            a, b = x[q + s * p].copy(), x[q + s * (p + m)].copy()
            y[q + s * 2 * p] = a + b
            y[q + s * (2 * p + 1)] = (a - b) * w[p * s][:, None]
            x, y = y, x
            length, s = m, 2 * s

    def checksum(self, nb, tpb, u, nx, ny, nz, partial):
        j = np.arange(1, nb * tpb + 1)
        vals = np.where(j <= 1024, u[(((5 * j) % nz) * ny + (3 * j) % ny) * nx + j % nx], 0)
        partial[0 : 2 * nb : 2] = _blocks(vals.real, nb, tpb)
        partial[1 : 2 * nb : 2] = _blocks(vals.imag, nb, tpb)

    def compute_indexmap(self, nb, tpb, factor, nx, ny, nz, ap):
        def f(n):
            i = np.arange(n)
            return (i + n // 2) % n - n // 2
        k2 = f(nz)[:, None, None] ** 2 + f(ny)[None, :, None] ** 2 + f(nx)[None, None, :] ** 2
        factor[:] = np.exp(ap * k2.astype(float)).ravel()

    def compute_initial_conditions(self, nb, tpb, u, seeds, a, nx, lines):
        offs = self.rl.powers(int(a), 2 * int(nx))
        vals = self.rl.mulmod_array(seeds[:, None], offs[None, :]).astype(np.float64) * 2.0**-46
        u[:] = (vals[:, 0::2] + 1j * vals[:, 1::2]).ravel()

    def evolve(self, nb, tpb, u0, u1, factor, total):
        u0 *= factor
        u1[:] = u0

    def init_ui(self, nb, tpb, u0, u1, factor, total):
        u0[:] = 0
        u1[:] = 0
        factor[:] = 0

    def kernels(self) -> dict:
        names = {"fft%s_1": "_gather", "fft%s_2": "_stockham", "fft%s_3": "_scatter"}
        table = {f"fft{ax}_{i}": getattr(self, names[f"fft%s_{i}"]) for ax in "xyz" for i in (1, 2, 3)}
        for name in dir(self):
            if not name.startswith("_") and name not in ("kernels", "ref_mg", "rl"):
                table[name] = getattr(self, name)

        def wrap(fn):
            return lambda grid, block, args: fn(grid[0], block[0], *args)

        return {k: wrap(v) for k, v in table.items()}
