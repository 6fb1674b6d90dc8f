"""From a :class:`~.spec.StencilConfig` to a harness :class:`Case`: key, columns, source, launch, sizes.

Also the verification grid of a configuration: the kernels take the grid size at run time, so every
configuration is also run on a small grid (:func:`verification_grid`) whose every axis holds three full tiles
and a partial one, where the NumPy reference of several steps costs milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from kgpubench.measure.suite import Case, KernelSource

from .spec import C_TYPES, KERNELS, StencilConfig

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
SOURCE = KERNEL_DIR / "stencil.cu"
VERIFY_MIN_INTERIOR = 12
VERIFY_STEPS = 3


def defines(cfg: StencilConfig) -> dict[str, int | str]:
    """The ``-D`` compile-time parameters of a configuration (the same for NVRTC and nvcc)."""
    return {
        "KG_REAL": C_TYPES[cfg.dtype],
        "KG_SPACE_ORDER": cfg.space_order,
        "KG_B1": cfg.tile[0],
        "KG_B2": cfg.tile[1],
        "KG_B3": cfg.tile[2],
        "KG_BLOCK": cfg.block_size,
    }


def kernel_source(cfg: StencilConfig) -> KernelSource:
    """The CUDA source and entry of a configuration."""
    return KernelSource(path=SOURCE, kernel=KERNELS[cfg.variant], defines=defines(cfg))


def verification_grid(cfg: StencilConfig) -> tuple[int, int, int]:
    """A small grid for the configuration's tile: per axis ``3 B + ceil(B / 2)`` interior points (three
    full tiles and a partial one), at least :data:`VERIFY_MIN_INTERIOR`, plus the ``2R`` frame."""
    out = []
    for b in cfg.tile:
        interior = max(3 * b + -(-b // 2), VERIFY_MIN_INTERIOR)
        out.append(interior + 2 * cfg.radius)
    return (out[0], out[1], out[2])


def verification_config(cfg: StencilConfig) -> StencilConfig:
    """``cfg`` on its :func:`verification_grid` (same kernel, tile, block size)."""
    return replace(cfg, grid=verification_grid(cfg), steps=VERIFY_STEPS)


def sizes(cfg: StencilConfig) -> dict[str, float]:
    """Named size parameters (the variables of the trip-count expressions)."""
    n1, n2, n3 = cfg.grid
    t1, t2, t3 = cfg.tiles
    return {
        "n1": n1, "n2": n2, "n3": n3, "R": cfg.radius, "B1": cfg.tile[0], "B2": cfg.tile[1],
        "B3": cfg.tile[2], "T1": t1, "T2": t2, "T3": t3, "steps": cfg.steps,
    }


def loop_lines(source: Path = SOURCE) -> dict[str, int]:
    """Source line of each loop of ``stencil.cu``, from its ``// loop:NAME`` marker comment."""
    lines = {}
    for number, text in enumerate(source.read_text().splitlines(), start=1):
        match = re.search(r"//\s*loop:(\w+)", text)
        if match:
            lines[match.group(1)] = number
    return lines


def trip_counts(cfg: StencilConfig) -> dict[str, str]:
    """Mean trip counts of the kernel's loops per entry, as expressions over :func:`sizes` and ``nt``.

    The loops are named ``line:N`` (features API), N being the line of their ``// loop:NAME`` marker; they
    are compiled with ``#pragma unroll 1`` so every build keeps exactly these loops. thread-tile: the i, j,
    k loops of a tile run ``(n - 2R) / T`` times on average (B in full tiles, less in the last one; tiles are
    a Cartesian product, so the mean of the nest is the product of these means). shared-tile: the load loop
    covers the padded box and the compute loop the tile, both strided by the ``nt`` threads of the block.
    """
    at = loop_lines()
    if cfg.variant == "thread-tile":
        return {f"line:{at['tile_i']}": "(n1 - 2*R) / T1", f"line:{at['tile_j']}": "(n2 - 2*R) / T2",
                f"line:{at['tile_k']}": "(n3 - 2*R) / T3"}
    return {
        f"line:{at['load']}": "((n1 - 2*R) / T1 + 2*R) * ((n2 - 2*R) / T2 + 2*R) * ((n3 - 2*R) / T3 + 2*R) / nt",
        f"line:{at['compute']}": "((n1 - 2*R) / T1) * ((n2 - 2*R) / T2) * ((n3 - 2*R) / T3) / nt",
    }


def make_case(cfg: StencilConfig) -> Case:
    """The harness case of a configuration (times are divided by ``steps``: they are per time step)."""
    vcfg = verification_config(cfg)
    return Case(
        key={
            "grid_nx": cfg.grid[0], "grid_ny": cfg.grid[1], "grid_nz": cfg.grid[2], "dtype": cfg.dtype,
            "space_order": cfg.space_order, "tile_b1": cfg.tile[0], "tile_b2": cfg.tile[1],
            "tile_b3": cfg.tile[2], "variant": cfg.variant, "block_size": cfg.block_size,
        },
        columns={
            "steps": cfg.steps, "sweep_group": cfg.group, "tile_count": cfg.tile_count,
            "smem_dynamic_bytes": cfg.shared_mem_bytes,
        },
        source=kernel_source(cfg),
        grid=cfg.launch_grid,
        block=(cfg.block_size, 1, 1),
        shared_mem_bytes=cfg.shared_mem_bytes,
        sizes=sizes(cfg),
        trip_counts=trip_counts(cfg),
        memory_bytes=cfg.memory_bytes + vcfg.memory_bytes,
        time_divisor=cfg.steps,
    )

