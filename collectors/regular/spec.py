"""What the regular suite measures (seed 000, table 7): kernels, sizes, launches, n/s/cpx, trip counts.

Sweeps (full run):

=================  ======================================  =================================================
kernel             sizes                                   launches
=================  ======================================  =================================================
vector_add         n = 2^12 .. 2^26 (15)                   nt = 32..1024; nb = ceil(n/nt) and 64/512/4096 if
euclid             n = 2^12 .. 2^26 (15)                   smaller (grid-stride loop)
srad_cuda_1, _2    rows = cols = 128 .. 8192 (10)          27 two-D blocks, nt = 32..1024
calculate_temp     rows = cols = 256 .. 8192 (9), iters    two-D blocks with both sides > 2 iters
                   1 and 2
matrix_mul         n = 128 .. 4096 (10), tk = 16           27 two-D blocks
fan1               n = 128 .. 8192 (9), t = 0, n/4, n/2, 3n/4     nt = 32..1024, nb as for vector_add
fan2               n = 128 .. 8192 (9), t = 0 and n/2      27 two-D blocks
=================  ======================================  =================================================

n / s / cpx (seed 000 table 4): n is the input size, s the problem size, cpx the order of the work:
vector_add and euclid n = s = cpx = elements; SRAD n = s = cpx = pixels; Hotspot n = s = cells, cpx = cells x
iters; matrix_mul n = side, s = n^2, cpx = n^3; fan1 n = side, s = cpx = n - t - 1 rows; fan2 n = side,
s = cpx = (n - t - 1)(n - t) updated elements.

Trip counts are per thread and average over the threads of the launch (``n / (nb * nt)`` for a grid-stride
loop); loops are named ``line:N`` after the ``// loop:<name>`` marker on their ``for`` line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
BLOCKS_1D = (32, 64, 128, 256, 512, 1024)
CAPPED_GRIDS = (64, 512, 4096)
BLOCK_X_2D = (8, 16, 32, 64, 128)
QUICK_1D = (128, 256)
QUICK_2D = ((16, 16), (32, 8))

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class Launch:
    """Grid, block and dynamic shared memory (bytes) of one configuration."""

    grid: Dim3
    block: Dim3
    shared_mem: int = 0


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of the suite.

    ``launches(sizes, quick)`` lists its configurations for a size; ``measures(sizes)`` gives (n, s, cpx);
    ``trips(sizes)`` the trip-count expressions (marker name -> expression over sizes and launch variables);
    ``memory(sizes)`` the device bytes its arrays take.
    """

    kernel: str
    program: str
    file: str
    bound: str
    sizes: tuple[dict[str, int], ...]
    quick_sizes: tuple[dict[str, int], ...]
    launches: Callable[[dict[str, int], bool], list[Launch]]
    measures: Callable[[dict[str, int]], tuple[float, float, float]]
    trips: Callable[[dict[str, int]], dict[str, str]]
    memory: Callable[[dict[str, int]], int]

    @property
    def path(self) -> Path:
        return KERNEL_DIR / self.file


def blocks_2d() -> list[tuple[int, int]]:
    """Two-D block shapes (x, y) with x in 8..128 and x*y a power of two in 32..1024 (27 shapes)."""
    return [(bx, nt // bx) for nt in BLOCKS_1D for bx in BLOCK_X_2D if bx <= nt]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def launches_1d(work: int, quick: bool) -> list[Launch]:
    """Grid-stride launches: every block size with the covering grid and smaller capped grids."""
    out = []
    for nt in QUICK_1D if quick else BLOCKS_1D:
        full = max(1, _cdiv(work, nt))
        grids = [full] if quick else [full] + [g for g in CAPPED_GRIDS if g < full]
        out += [Launch((g, 1, 1), (nt, 1, 1)) for g in grids]
    return out


def launches_2d(nx: int, ny: int, quick: bool, *, tile: Callable[[int, int], tuple[int, int]] | None = None,
                shared: Callable[[int, int], int] | None = None,
                allowed: Callable[[int, int], bool] | None = None) -> list[Launch]:
    """Two-D launches covering nx x ny; ``tile(bx, by)`` is the output extent of a block (default the block)."""
    out = []
    for bx, by in QUICK_2D if quick else blocks_2d():
        if allowed and not allowed(bx, by):
            continue
        ox, oy = tile(bx, by) if tile else (bx, by)
        grid = (max(1, _cdiv(nx, ox)), max(1, _cdiv(ny, oy)), 1)
        out.append(Launch(grid, (bx, by, 1), shared(bx, by) if shared else 0))
    return out


@cache
def loop_lines(file: str) -> dict[str, str]:
    """Marker name -> ``line:N`` for every ``// loop:<name>`` comment of a kernel source."""
    out = {}
    for i, text in enumerate((KERNEL_DIR / file).read_text().splitlines(), start=1):
        m = re.search(r"//\s*loop:(\w+)", text)
        if m:
            out[m.group(1)] = f"line:{i}"
    return out


def _pow2(lo: int, hi: int) -> tuple[dict[str, int], ...]:
    return tuple({"n": 2**k} for k in range(lo, hi + 1))


_SIDES_SRAD = (128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
_SIDES_HOT = (256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192)
_SIDES_MM = (128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
_SIDES_GAUSS = (128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192)
F4 = 4


def _hot_launches(sz: dict[str, int], quick: bool) -> list[Launch]:
    it = sz["iters"]
    return launches_2d(sz["cols"], sz["rows"], quick, tile=lambda bx, by: (bx - 2 * it, by - 2 * it),
                       shared=lambda bx, by: 3 * bx * by * F4, allowed=lambda bx, by: min(bx, by) > 2 * it)


def _mm_launches(sz: dict[str, int], quick: bool) -> list[Launch]:
    return launches_2d(sz["n"], sz["n"], quick, shared=lambda bx, by: (bx + by) * sz["tk"] * F4)


def _gauss_rows(sz: dict[str, int]) -> int:
    return sz["n"] - sz["t"] - 1


SPECS: tuple[KernelSpec, ...] = (
    KernelSpec(
        "vector_add", "vector_add", "vector_add.cu", "memory", _pow2(12, 26), ({"n": 2**16}, {"n": 2**22}),
        launches=lambda sz, q: launches_1d(sz["n"], q),
        measures=lambda sz: (sz["n"], sz["n"], sz["n"]),
        trips=lambda sz: {"grid_stride": "n / (nb * nt)"},
        memory=lambda sz: 3 * sz["n"] * F4),
    KernelSpec(
        "euclid", "nn", "nn_euclid.cu", "memory", _pow2(12, 26), ({"n": 2**16}, {"n": 2**22}),
        launches=lambda sz, q: launches_1d(sz["n"], q),
        measures=lambda sz: (sz["n"], sz["n"], sz["n"]),
        trips=lambda sz: {"grid_stride": "n / (nb * nt)"},
        memory=lambda sz: 3 * sz["n"] * F4),
    KernelSpec(
        "srad_cuda_1", "srad_v2", "srad.cu", "memory", tuple({"rows": s, "cols": s} for s in _SIDES_SRAD),
        ({"rows": 512, "cols": 512}, {"rows": 2048, "cols": 2048}),
        launches=lambda sz, q: launches_2d(sz["cols"], sz["rows"], q),
        measures=lambda sz: (sz["rows"] * sz["cols"],) * 3,
        trips=lambda sz: {},
        memory=lambda sz: 6 * sz["rows"] * sz["cols"] * F4),
    KernelSpec(
        "srad_cuda_2", "srad_v2", "srad.cu", "memory", tuple({"rows": s, "cols": s} for s in _SIDES_SRAD),
        ({"rows": 512, "cols": 512}, {"rows": 2048, "cols": 2048}),
        launches=lambda sz, q: launches_2d(sz["cols"], sz["rows"], q),
        measures=lambda sz: (sz["rows"] * sz["cols"],) * 3,
        trips=lambda sz: {},
        memory=lambda sz: 7 * sz["rows"] * sz["cols"] * F4),
    KernelSpec(
        "calculate_temp", "hotspot", "hotspot.cu", "compute",
        tuple({"rows": s, "cols": s, "iters": it} for s in _SIDES_HOT for it in (1, 2)),
        ({"rows": 512, "cols": 512, "iters": 2}, {"rows": 2048, "cols": 2048, "iters": 2}),
        launches=_hot_launches,
        measures=lambda sz: (sz["rows"] * sz["cols"], sz["rows"] * sz["cols"],
                             sz["rows"] * sz["cols"] * sz["iters"]),
        trips=lambda sz: {"steps": "iters"},
        memory=lambda sz: 3 * sz["rows"] * sz["cols"] * F4),
    KernelSpec(
        "matrix_mul", "matrix_mul", "matrix_mul.cu", "compute", tuple({"n": s, "tk": 16} for s in _SIDES_MM),
        ({"n": 256, "tk": 16}, {"n": 1024, "tk": 16}),
        launches=_mm_launches,
        measures=lambda sz: (sz["n"], sz["n"] ** 2, sz["n"] ** 3),
        trips=lambda sz: {"tiles": "ceil(n / tk)", "load_a": "tk / block_x", "load_b": "tk / block_y",
                          "dot": "tk"},
        memory=lambda sz: 3 * sz["n"] ** 2 * F4),
    KernelSpec(
        "fan1", "gaussian", "gaussian.cu", "compute",
        tuple({"n": s, "t": t} for s in _SIDES_GAUSS for t in (0, s // 4, s // 2, 3 * s // 4)),
        ({"n": 512, "t": 0}, {"n": 2048, "t": 0}),
        launches=lambda sz, q: launches_1d(_gauss_rows(sz), q),
        measures=lambda sz: (sz["n"], _gauss_rows(sz), _gauss_rows(sz)),
        trips=lambda sz: {"grid_stride": "(n - t - 1) / (nb * nt)"},
        memory=lambda sz: (sz["n"] ** 2 + sz["n"]) * F4),
    KernelSpec(
        "fan2", "gaussian", "gaussian.cu", "compute",
        tuple({"n": s, "t": t} for s in _SIDES_GAUSS for t in (0, s // 2)),
        ({"n": 512, "t": 0}, {"n": 2048, "t": 0}),
        launches=lambda sz, q: launches_2d(sz["n"] - sz["t"], _gauss_rows(sz), q),
        measures=lambda sz: (sz["n"], _gauss_rows(sz) * (sz["n"] - sz["t"]),
                             _gauss_rows(sz) * (sz["n"] - sz["t"])),
        trips=lambda sz: {},
        memory=lambda sz: (sz["n"] ** 2 + 2 * sz["n"]) * F4),
)

SPEC_BY_KERNEL: dict[str, KernelSpec] = {s.kernel: s for s in SPECS}


def trip_counts(spec: KernelSpec, sizes: dict[str, int]) -> dict[str, Any]:
    """Trip counts keyed by the features API's loop names (``line:N``)."""
    lines = loop_lines(spec.file)
    return {lines[name]: expr for name, expr in spec.trips(sizes).items()}


def quick_launch_count(spec: KernelSpec) -> int:
    """Configurations of a kernel in a --quick run (for tests and plans)."""
    return sum(len(spec.launches(sz, True)) for sz in spec.quick_sizes)


def full_launch_count(spec: KernelSpec) -> int:
    """Configurations of a kernel in a full run."""
    return sum(len(spec.launches(sz, False)) for sz in spec.sizes)

