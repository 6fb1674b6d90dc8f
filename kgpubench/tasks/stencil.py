"""The stencil sweep's configuration sets, as the ``stencil-tile`` task needs them to tell a complete problem.

Mirrors ``collectors/stencil/spec.py`` (a test keeps the two equal) so that nothing here imports the
collector: training grids use every tile (B1, B2, B3) with B in {1, 2, 4, ..., 64} and B1 B2 B3 <= 512
(thread-tile), and of those the tiles with at least 128 points whose padded box (B + 2R per axis, R = space
order / 2) fits 96 KiB (shared-tile); evaluation grids 200..1100 (step 50) use the thread-tile tiles with at
most 16 points plus the four tiles quoted in seed 003.
"""

from __future__ import annotations

import itertools

TILE_VALUES = (1, 2, 4, 8, 16, 32, 64)
TILE_CAP = 512
TRAIN_GRIDS = (256, 512, 1024)
EVAL_GRIDS = tuple(range(200, 1101, 50))
SHARED_MIN_POINTS = 128
SHARED_MAX_BYTES = 96 * 1024
SEED_TILES = ((8, 1, 4), (64, 2, 1), (2, 16, 4), (16, 2, 1))
EVAL_TILE_CAP = 16
DTYPE_BYTES = {"float32": 4, "float64": 8}

Tile = tuple[int, int, int]


def train_tiles() -> list[Tile]:
    """Tiles of the training grids (thread-tile), in lexicographic order."""
    return [t for t in itertools.product(TILE_VALUES, repeat=3) if t[0] * t[1] * t[2] <= TILE_CAP]


def shared_tiles(space_order: int, dtype: str) -> list[Tile]:
    """Tiles the shared-tile variant is measured with on the training grids."""
    r = space_order // 2
    nbytes = DTYPE_BYTES[dtype]
    return [t for t in train_tiles() if t[0] * t[1] * t[2] >= SHARED_MIN_POINTS
            and (t[0] + 2 * r) * (t[1] + 2 * r) * (t[2] + 2 * r) * nbytes <= SHARED_MAX_BYTES]


def eval_tiles() -> list[Tile]:
    """Tiles of the evaluation grids (thread-tile only)."""
    small = [t for t in train_tiles() if t[0] * t[1] * t[2] <= EVAL_TILE_CAP]
    return small + [t for t in SEED_TILES if t not in small]


def expected_tiles(*, grid_nx: int, grid_ny: int, grid_nz: int, space_order: int, dtype: str,
                   variant: str) -> list[Tile] | None:
    """The tiles the sweep measures for one problem and variant; None when the sweep declares none (a grid
    outside the sweep, an unknown variant or dtype)."""
    if not (grid_nx == grid_ny == grid_nz) or dtype not in DTYPE_BYTES:
        return None
    if grid_nx in TRAIN_GRIDS:
        if variant == "thread-tile":
            return train_tiles()
        if variant == "shared-tile":
            return shared_tiles(int(space_order), dtype)
        return None
    if grid_nx in EVAL_GRIDS and variant == "thread-tile":
        return eval_tiles()
    return None
