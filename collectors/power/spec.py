"""What the power suite measures (seed 002 tables 2 and 3): kernels, problem sizes, launches, trip counts.

Every kernel walks its work with a grid-stride loop, so the problem size is fixed while the number of blocks
``nb`` is swept. The block counts are fractions of the device's SM count (read at collection time) times a
number of blocks per SM:

- ``SATURATIONS`` at one block per SM: ``nb = round(f * sm_count)``, ``f = 0.1, 0.2 ... 1.0``;
- ``OVERSUBSCRIPTION`` at full saturation: ``nb = k * sm_count`` for ``k = 2, 4`` (more resident blocks per
  SM, same set of active SMs).

SM saturation (seed 002 ``Sa``) is active SMs over all SMs; the block scheduler hands the first blocks to
distinct SMs, so a launch of ``nb`` blocks keeps ``min(nb, sm_count)`` SMs busy: ``Sa = min(nb, sm) / sm``
(the nominal value; the hardware may pack blocks differently). Every configuration gets a power window.

Problem sizes move roughly 0.3 GB and 1 GB through device memory per launch (less for the compute-bound
binomial tree), so one launch at full saturation lasts about 0.1 ms or more even on an H100 and the harness's
500 ms power window is made of back-to-back launches of a busy GPU.

Trip counts (``loops``) are given for the loops left in the PTX, in source order: every loop whose trip count
is a compile-time constant is fully unrolled in the source (``#pragma unroll``), and every other loop is kept
rolled (``#pragma unroll 1``), so the PTX loop nest mirrors the source. Each expression is the mean number of
iterations per entry of the loop for one thread (per-thread shares differ by at most one iteration), over the
size names and the launch names ``nb``, ``nt``, ``grid_x``... ``block_z``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kgpubench.errors import unknown_name

Dim3 = tuple[int, int, int]
Sizes = Mapping[str, int]

SATURATIONS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
OVERSUBSCRIPTION = (2, 4)
QUICK_SATURATIONS = (0.5, 1.0)
FLAT_BLOCKS: tuple[Dim3, ...] = ((128, 1, 1), (256, 1, 1), (512, 1, 1))


@dataclass(frozen=True)
class GridChoice:
    """One block count of the sweep: ``nb`` blocks, from ``fraction * sm_count * blocks_per_sm``."""

    nb: int
    fraction: float
    blocks_per_sm: int
    saturation: float


def _round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


def grid_choices(sm_count: int, *, quick: bool = False) -> list[GridChoice]:
    """The block counts swept on a device with ``sm_count`` SMs (duplicates of ``nb`` dropped, first kept).

    Parameters
    ----------
    sm_count : int
        Streaming multiprocessors of the device.
    quick : bool
        Only ``QUICK_SATURATIONS`` at one block per SM.

    Returns
    -------
    list of GridChoice
        In sweep order: the saturation levels at one block per SM, then the oversubscribed launches.
    """
    if int(sm_count) < 1:
        raise ValueError(f"sm_count must be a positive number of SMs, got {sm_count!r}")
    levels = [(f, 1) for f in (QUICK_SATURATIONS if quick else SATURATIONS)]
    if not quick:
        levels += [(1.0, k) for k in OVERSUBSCRIPTION]
    seen: set[int] = set()
    out = []
    for fraction, per_sm in levels:
        nb = max(1, _round_half_up(fraction * sm_count * per_sm))
        if nb in seen:
            continue
        seen.add(nb)
        out.append(GridChoice(nb=nb, fraction=fraction, blocks_per_sm=per_sm,
                              saturation=sm_saturation(nb, sm_count)))
    return out


def sm_saturation(nb: int, sm_count: int) -> float:
    """Seed 002 ``Sa``: active SMs over SMs, ``min(nb, sm_count) / sm_count``."""
    return min(int(nb), int(sm_count)) / int(sm_count)


@dataclass(frozen=True)
class PowerKernel:
    """One kernel (and variant) of the suite.

    Attributes
    ----------
    kernel : str
        ``extern "C"`` entry point, also the ``kernel`` column.
    program, variant, bound : str
        Row columns (``variant`` empty when the kernel has one).
    source : str
        File name under ``kernels/``.
    sizes : tuple of mapping
        Problem sizes of the full sweep; ``--quick`` takes the first.
    blocks : tuple of Dim3
        Block shapes swept; ``--quick`` takes the middle one.
    defines : callable
        ``(sizes, block) -> {NAME: value}`` compile-time parameters.
    derived : callable
        ``sizes -> {"n", "s", "cpx"}`` (seed 000 features; ``cpx`` counts the kernel's multiply-adds or
        element operations).
    loops : tuple of str
        Trip-count expressions of the PTX loops in source order (see the module doc).
    memory : callable
        ``(sizes, nb) -> bytes`` of device memory the inputs and outputs take.
    """

    kernel: str
    program: str
    variant: str
    bound: str
    source: str
    sizes: tuple[Sizes, ...]
    blocks: tuple[Dim3, ...]
    defines: Callable[[Sizes, Dim3], dict] = field(repr=False)
    derived: Callable[[Sizes], dict] = field(repr=False)
    loops: tuple[str, ...]
    memory: Callable[[Sizes, int], int] = field(repr=False)

    @property
    def name(self) -> str:
        """``kernel`` or ``kernel/variant``: unique within the suite."""
        return f"{self.kernel}/{self.variant}" if self.variant else self.kernel


def _nsc(n: float, s: float, cpx: float) -> dict:
    return {"n": float(n), "s": float(s), "cpx": float(cpx)}


def _block_size(_sizes: Sizes, block: Dim3) -> dict:
    return {"BLOCK_SIZE": block[0] * block[1] * block[2]}


def _madd(variant: str, itemsize: int) -> PowerKernel:
    return PowerKernel(
        kernel="madd", program="madd", variant=variant, bound="memory", source="madd.cu",
        sizes=({"side": 4096}, {"side": 8192}), blocks=FLAT_BLOCKS,
        defines=lambda z, b: {"FP64": int(itemsize == 8)},
        derived=lambda z: _nsc(z["side"], z["side"] ** 2, z["side"] ** 2),
        loops=("side * side / (nb * nt)",),
        memory=lambda z, nb: 4 * itemsize * z["side"] ** 2,
    )


KERNELS: tuple[PowerKernel, ...] = (
    PowerKernel(
        kernel="dotp", program="dotp", variant="", bound="memory", source="dotp.cu",
        sizes=({"n": 2 ** 25}, {"n": 2 ** 27}), blocks=FLAT_BLOCKS, defines=_block_size,
        derived=lambda z: _nsc(z["n"], z["n"], z["n"]),
        loops=("n / (nb * nt)",),
        memory=lambda z, nb: 8 * z["n"] + 4 * nb,
    ),
    _madd("fp32", 4),
    _madd("fp64", 8),
    PowerKernel(
        kernel="mtrans", program="mtrans", variant="", bound="memory", source="mtrans.cu",
        sizes=({"side": 8192}, {"side": 12288}), blocks=((32, 8, 1), (32, 16, 1), (32, 32, 1)),
        defines=lambda z, b: {"BLOCK_ROWS": b[1]},
        derived=lambda z: _nsc(z["side"], z["side"] ** 2, z["side"] ** 2),
        loops=("ceil(side / 32) ** 2 / nb",),
        memory=lambda z, nb: 8 * z["side"] ** 2,
    ),
    PowerKernel(
        kernel="scalar_prod", program="scalar_prod", variant="", bound="memory", source="scalar_prod.cu",
        sizes=({"nvec": 8192, "len": 4096}, {"nvec": 32768, "len": 4096}), blocks=FLAT_BLOCKS,
        defines=_block_size,
        derived=lambda z: _nsc(z["nvec"] * z["len"], z["nvec"] * z["len"], z["nvec"] * z["len"]),
        loops=("nvec / nb", "len / nt"),
        memory=lambda z, nb: 8 * z["nvec"] * z["len"] + 4 * z["nvec"],
    ),
    PowerKernel(
        kernel="fwt_batch", program="fwt", variant="", bound="memory", source="fwt.cu",
        sizes=({"nvec": 32768, "log2_len": 10}, {"nvec": 32768, "log2_len": 12}), blocks=FLAT_BLOCKS,
        defines=lambda z, b: {"LOG2_LEN": z["log2_len"], "BLOCK_SIZE": b[0] * b[1] * b[2]},
        derived=lambda z: _nsc(z["nvec"] * 2 ** z["log2_len"], z["nvec"] * 2 ** z["log2_len"],
                               z["nvec"] * 2 ** z["log2_len"] * z["log2_len"]),
        loops=("nvec / nb", "log2_len"),
        memory=lambda z, nb: 8 * z["nvec"] * 2 ** z["log2_len"],
    ),
    PowerKernel(
        kernel="scan_rows", program="scan", variant="", bound="memory", source="scan.cu",
        sizes=({"nrows": 32768, "row_len": 1024}, {"nrows": 32768, "row_len": 4096}), blocks=FLAT_BLOCKS,
        defines=lambda z, b: {"ROW_LEN": z["row_len"], "BLOCK_SIZE": b[0] * b[1] * b[2]},
        derived=lambda z: _nsc(z["nrows"] * z["row_len"], z["nrows"] * z["row_len"], z["nrows"] * z["row_len"]),
        loops=("nrows / nb",),
        memory=lambda z, nb: 8 * z["nrows"] * z["row_len"],
    ),
    PowerKernel(
        kernel="histogram256", program="histogram256", variant="", bound="memory", source="histogram256.cu",
        sizes=({"nwords": 2 ** 25}, {"nwords": 2 ** 27}), blocks=FLAT_BLOCKS, defines=_block_size,
        derived=lambda z: _nsc(4 * z["nwords"], 4 * z["nwords"], 4 * z["nwords"]),
        loops=("nwords / (nb * nt)",),
        memory=lambda z, nb: 4 * z["nwords"] + 4 * 256 * nb,
    ),
    PowerKernel(
        kernel="dct8x8", program="dct8x8", variant="", bound="memory", source="dct8x8.cu",
        sizes=({"side": 4096}, {"side": 8192}), blocks=((8, 8, 2), (8, 8, 4), (8, 8, 8)),
        defines=lambda z, b: {"TILES_PER_BLOCK": b[2]},
        derived=lambda z: _nsc(z["side"], z["side"] ** 2, 16 * z["side"] ** 2),
        loops=("ceil(side * side / 64 / block_z) / nb",),
        memory=lambda z, nb: 8 * z["side"] ** 2,
    ),
    PowerKernel(
        kernel="black_scholes", program="black_scholes", variant="", bound="memory", source="black_scholes.cu",
        sizes=({"nopt": 2 ** 23}, {"nopt": 2 ** 25}), blocks=FLAT_BLOCKS, defines=lambda z, b: {},
        derived=lambda z: _nsc(z["nopt"], z["nopt"], z["nopt"]),
        loops=("nopt / (nb * nt)",),
        memory=lambda z, nb: 20 * z["nopt"],
    ),
    PowerKernel(
        kernel="binomial_options", program="binomial_options", variant="", bound="compute",
        source="binomial_options.cu",
        sizes=({"nopt": 1024, "steps": 1024}, {"nopt": 1024, "steps": 2048}), blocks=FLAT_BLOCKS,
        defines=lambda z, b: {"NUM_STEPS": z["steps"]},
        derived=lambda z: _nsc(z["nopt"], z["nopt"] * z["steps"], z["nopt"] * z["steps"] * (z["steps"] + 1) / 2),
        loops=("nopt / nb", "(steps + 1) / nt", "steps", "(steps + 1) / (2 * nt)"),
        memory=lambda z, nb: 16 * z["nopt"],
    ),
)


def kernel_names() -> list[str]:
    """The ``--kernel`` names: each kernel once (``madd`` selects both of its variants)."""
    return list(dict.fromkeys(k.kernel for k in KERNELS))


def select(kernels: list[str] | tuple[str, ...] | None) -> list[PowerKernel]:
    """The kernel declarations named in ``kernels`` (a kernel name, or ``kernel/variant``); all when ``None``."""
    if not kernels:
        return list(KERNELS)
    known = kernel_names() + [k.name for k in KERNELS if k.variant]
    for name in kernels:
        if name not in known:
            raise unknown_name("power-suite kernel", name, known)
    wanted = set(kernels)
    return [k for k in KERNELS if k.kernel in wanted or k.name in wanted]
