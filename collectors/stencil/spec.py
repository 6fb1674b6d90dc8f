"""The stencil sweep: which (grid, dtype, space order, tile, variant) configurations are measured.

Everything here is pure Python (no GPU): the suite turns each :class:`StencilConfig` into a harness case.

Full sweep (``quick=False``)
----------------------------
* Training grids 256^3, 512^3 and 1024^3 (a 1024^3 grid needs 3 arrays: 12.9 GB in float32, 25.8 GB in
  float64; where the device lacks the memory the harness records the case as ``infeasible``), float32 and
  float64, space orders 2, 8 and 16:

  - ``thread-tile``: every tile (B1, B2, B3) with B1, B2, B3 in {1, 2, 4, 8, 16, 32, 64} and
    B1 B2 B3 <= :data:`TILE_CAP` (= 512 points per thread): 190 tiles, (1, 1, 1) being the baseline;
  - ``shared-tile``: the tiles of that set with at least :data:`SHARED_MIN_POINTS` points (one per thread of
    the block) whose padded box (B1 + 2R)(B2 + 2R)(B3 + 2R) fits in :data:`SHARED_MAX_BYTES`.

* Evaluation grids 200^3 .. 1100^3 in steps of 50 (seed 003), the same dtypes and orders, ``thread-tile``
  only, with the smaller tile set :data:`EVAL_TILES`: the 35 tiles with B1 B2 B3 <= 16 plus the four best
  tiles quoted in seed 003 table 1.

:func:`sweep_counts` computes the number of configurations; ``FULL_SWEEP_CONFIGS`` in the README and the
tests assert it.

Quick sweep (``quick=True``): one 64^3 grid, both dtypes, order 8, four thread tiles and one shared tile.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

TILE_VALUES = (1, 2, 4, 8, 16, 32, 64)
TILE_CAP = 512
TRAIN_GRIDS = (256, 512, 1024)
EVAL_GRIDS = tuple(range(200, 1101, 50))
DTYPES = ("float32", "float64")
SPACE_ORDERS = (2, 8, 16)
VARIANTS = ("thread-tile", "shared-tile")
BLOCK_SIZE = 128
# One time step per timed unit: protocol 2 puts as many units in a sample as its length needs (a CUDA graph).
STEPS = 1
SHARED_MIN_POINTS = BLOCK_SIZE
SHARED_MAX_BYTES = 96 * 1024
# Best tiles quoted in seed 003 table 1.
SEED_TILES = ((8, 1, 4), (64, 2, 1), (2, 16, 4), (16, 2, 1))
EVAL_TILE_CAP = 16
QUICK_GRID = 64
QUICK_ORDERS = (8,)
QUICK_THREAD_TILES = ((1, 1, 1), (1, 1, 4), (8, 1, 4), (2, 16, 4))
QUICK_SHARED_TILES = ((4, 4, 8),)
QUICK_STEPS = 1
BASELINE = (1, 1, 1)

DTYPE_BYTES = {"float32": 4, "float64": 8}
C_TYPES = {"float32": "float", "float64": "double"}
KERNELS = {"thread-tile": "stencil_thread_tile", "shared-tile": "stencil_shared_tile"}

Tile = tuple[int, int, int]


@dataclass(frozen=True)
class StencilConfig:
    """One configuration of the sweep.

    Attributes
    ----------
    grid : (int, int, int)
        Grid points along i, j, k (k contiguous), frame included.
    dtype : str
        ``float32`` or ``float64``.
    space_order : int
        Even space order; the stencil radius is ``space_order // 2``.
    tile : (int, int, int)
        Tile extents (B1, B2, B3) along i, j, k.
    variant : str
        ``thread-tile`` (one tile per thread) or ``shared-tile`` (one tile per block, through shared memory).
    block_size : int
        Threads per block.
    steps : int
        Time steps in one timed run.
    group : str
        ``train``, ``eval`` or ``quick`` (which part of the sweep it belongs to).
    """

    grid: tuple[int, int, int]
    dtype: str
    space_order: int
    tile: Tile
    variant: str = "thread-tile"
    block_size: int = BLOCK_SIZE
    steps: int = STEPS
    group: str = "train"

    @property
    def radius(self) -> int:
        return self.space_order // 2

    @property
    def tiles(self) -> tuple[int, int, int]:
        """Number of tiles along each axis (the last one may be partial)."""
        return tuple(-(-(n - 2 * self.radius) // b) for n, b in zip(self.grid, self.tile))  # type: ignore

    @property
    def tile_count(self) -> int:
        t = self.tiles
        return t[0] * t[1] * t[2]

    @property
    def launch_grid(self) -> tuple[int, int, int]:
        """Blocks of the launch: one thread per tile (thread-tile) or one block per tile (shared-tile)."""
        if self.variant == "shared-tile":
            return (self.tile_count, 1, 1)
        return (-(-self.tile_count // self.block_size), 1, 1)

    @property
    def shared_mem_bytes(self) -> int:
        """Dynamic shared memory per block (0 for thread-tile)."""
        if self.variant != "shared-tile":
            return 0
        return shared_box_bytes(self.tile, self.space_order, self.dtype)

    @property
    def memory_bytes(self) -> int:
        """Device memory of the timed problem: two time levels and the velocity."""
        n1, n2, n3 = self.grid
        return 3 * n1 * n2 * n3 * DTYPE_BYTES[self.dtype]


def shared_box_bytes(tile: Sequence[int], space_order: int, dtype: str) -> int:
    """Bytes of the padded box (B1 + 2R)(B2 + 2R)(B3 + 2R) of the shared-tile variant."""
    r = space_order // 2
    return (tile[0] + 2 * r) * (tile[1] + 2 * r) * (tile[2] + 2 * r) * DTYPE_BYTES[dtype]


def train_tiles() -> list[Tile]:
    """All tiles from ``TILE_VALUES``^3 with at most ``TILE_CAP`` points, in lexicographic order."""
    return [t for t in itertools.product(TILE_VALUES, repeat=3) if t[0] * t[1] * t[2] <= TILE_CAP]


def shared_tiles(space_order: int, dtype: str) -> list[Tile]:
    """Tiles of :func:`train_tiles` the shared-tile variant is measured with for this order and dtype."""
    return [t for t in train_tiles() if t[0] * t[1] * t[2] >= SHARED_MIN_POINTS
            and shared_box_bytes(t, space_order, dtype) <= SHARED_MAX_BYTES]


def eval_tiles() -> list[Tile]:
    """The evaluation grids' tile set: tiles with at most ``EVAL_TILE_CAP`` points plus the seed's tiles."""
    small = [t for t in train_tiles() if t[0] * t[1] * t[2] <= EVAL_TILE_CAP]
    return small + [t for t in SEED_TILES if t not in small]


def _cube(n: int) -> tuple[int, int, int]:
    return (n, n, n)


def sweep(quick: bool = False, variants: Sequence[str] | None = None) -> Iterator[StencilConfig]:
    """Yield the configurations of the sweep (training grids first, then the evaluation grids).

    Parameters
    ----------
    quick : bool
        The quick sweep (one small grid, a handful of tiles).
    variants : sequence of str, optional
        Only these variants (default: all of :data:`VARIANTS`).
    """
    keep = set(VARIANTS if variants is None else variants)
    if quick:
        for dtype, order in itertools.product(DTYPES, QUICK_ORDERS):
            for variant, tiles in (("thread-tile", QUICK_THREAD_TILES), ("shared-tile", QUICK_SHARED_TILES)):
                if variant in keep:
                    for tile in tiles:
                        yield StencilConfig(_cube(QUICK_GRID), dtype, order, tile, variant, steps=QUICK_STEPS,
                                            group="quick")
        return
    for n, dtype, order in itertools.product(TRAIN_GRIDS, DTYPES, SPACE_ORDERS):
        if "thread-tile" in keep:
            for tile in train_tiles():
                yield StencilConfig(_cube(n), dtype, order, tile, "thread-tile")
        if "shared-tile" in keep:
            for tile in shared_tiles(order, dtype):
                yield StencilConfig(_cube(n), dtype, order, tile, "shared-tile")
    if "thread-tile" in keep:
        for n, dtype, order in itertools.product(EVAL_GRIDS, DTYPES, SPACE_ORDERS):
            for tile in eval_tiles():
                yield StencilConfig(_cube(n), dtype, order, tile, "thread-tile", group="eval")


def sweep_counts(quick: bool = False) -> dict[str, int]:
    """Number of configurations per (group, variant) and in total (key ``"total"``)."""
    counts: dict[str, int] = {}
    for cfg in sweep(quick):
        name = f"{cfg.group}/{cfg.variant}"
        counts[name] = counts.get(name, 0) + 1
    counts["total"] = sum(counts.values())
    return counts
