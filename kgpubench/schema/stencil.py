"""The `stencil` table: 3-D acoustic wave stencil with tile sizes (da Silva et al.).

One row = one GPU x grid x dtype x space order x tile x variant x block size (x collection run). Times are per
time step (a timed run of ``steps`` steps divided by ``steps``). The GPU hardware features of table 2 of da Silva
et al. (SM count, CUDA cores, memory bandwidth, shared memory, L2 size) are the common ``gpu_*`` columns.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import (
    GPU_CATALOGUE_CHANGE,
    TIMING_ORDER,
    common_head,
    common_tail,
    measured_columns,
    static_feature_columns,
)


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


def _collector_extras() -> list[Column]:
    """Schema 1.1.0: sweep part, launch shape, static features, harness flags."""
    return [
        Column("sweep_group", "string",
               "Part of the sweep: training grids, the evaluation grids of da Silva et al., quick.",
               values=("train", "eval", "quick")),
        Column("tile_count", "int64", "Tiles covering the interior: threads (thread-tile) or blocks "
               "(shared-tile) of the launch.", min=1),
        Column("smem_dynamic_bytes", "int32", "Dynamic shared memory per block (shared-tile: padded tile).",
               unit="B", min=0),
        Column("nb", "int64", "Blocks in the grid.", min=1),
        Column("status_detail", "string", "Why a row is not ok (error code, limit exceeded, mismatch)."),
        Column("time_cv_high", "bool", "Coefficient of variation above the harness threshold (0.05)."),
    ] + static_feature_columns()


TABLE = Table(
    name="stencil",
    version="1.6.0",
    description="Simwave-style 3-D acoustic wave stencil: time per step for tile sizes (da Silva et al.).",
    columns=tuple(common_head() + _specific() + common_tail() + _collector_extras() + measured_columns()),
    ordered=TIMING_ORDER,
    changelog=(
        ("1.0.0", "First declaration."),
        ("1.1.0", ("Nullable columns: sweep_group, tile_count, smem_dynamic_bytes, nb, the static features "
                   "(l, lc, lmr, lmw, lshr, lshw, ls, ldpu, lsfu, dpc, alpha, shmem_words, nreg, "
                   "source_lines) and the harness columns status_detail, time_cv_high.")),
        ("1.2.0", ("The full static-feature group shared with `kernels` (schema.common.static_feature_columns): "
                   "adds branch_statements, static_instructions, shmem_bytes, stack_bytes, spill bytes, "
                   "blocks_per_sm, occupancy, compute_density, branch_density, global bytes, flops, "
                   "arithmetic_intensity and the instruction mix mix_<class>.")),
        ("1.3.0", ("Measurement protocol 2 and conditions (schema.common.measured_columns): clocks, "
                   "temperature, throttle reasons, measurement_protocol, timing_method, launches_per_sample, "
                   "l2_policy, time_rse, time_cap_hit, samples_dropped, throttled, clocks_locked, "
                   "pstate_before, kgpubench_commit.")),
        ("1.4.0", GPU_CATALOGUE_CHANGE),
        ("1.5.0", ("Validation only (the arrow schema is unchanged): upper bounds of one day on time_ms_*, "
                   "power_window_ms; of 3 kW on power_w_avg, power_idle_w and energy_j; temperatures between -50 and "
                   "150 C; gpu_name and gpu_architecture must be non-empty names without surrounding blanks; these "
                   "names and run_id may not be the text of a missing value (None, null, nan, NA, N/A).")),
        ("1.6.0", ("Validation only (the arrow schema is unchanged): timing_method may be `cupti-drained`, "
                   "the CUPTI cold timer with a wait between the L2 flush and the launch.")),
    ),
)
