"""The `stencil` table: 3-D acoustic wave stencil with tile sizes (seed 003)."""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import TIMING_ORDER, common_head, common_tail


def _specific() -> list[Column]:
    return [
        Column("grid_nx", "int32", "Grid points along i (slowest axis).", nullable=False, min=1, key=True),
        Column("grid_ny", "int32", "Grid points along j.", nullable=False, min=1, key=True),
        Column("grid_nz", "int32", "Grid points along k (contiguous axis).", nullable=False, min=1, key=True),
        Column("dtype", "string", "Floating-point type.", nullable=False, values=("float32", "float64"), key=True),
        Column("space_order", "int32", "Spatial discretisation order.", nullable=False, min=2, max=64, key=True),
        Column("tile_b1", "int32", "Tile extent along i.", nullable=False, min=1, key=True),
        Column("tile_b2", "int32", "Tile extent along j.", nullable=False, min=1, key=True),
        Column("tile_b3", "int32", "Tile extent along k.", nullable=False, min=1, key=True),
        Column("variant", "string", "Kernel variant.", nullable=False, values=("thread-tile", "shared-tile"),
               key=True),
        Column("block_size", "int32", "Threads per block.", nullable=False, min=1, max=1024, key=True),
        Column("steps", "int32", "Time steps in one timed run (times are per step).", min=1),
    ]


TABLE = Table(
    name="stencil",
    version="1.0.0",
    description="Simwave-style 3-D acoustic wave stencil: time per step for tile sizes (seed 003).",
    columns=tuple(common_head() + _specific() + common_tail()),
    ordered=TIMING_ORDER,
    changelog=(("1.0.0", "First declaration."),),
)
