"""The `kernels` table: regular (Riahi et al. 2024) and power (Wang and Chen 2013) suites.

One row per GPU x kernel x problem size x launch configuration (x collection run).
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import (
    GPU_CATALOGUE_CHANGE,
    MAX_W,
    MISSING_TEXT,
    NAME,
    TIMING_ORDER,
    common_head,
    common_tail,
    measured_columns,
    static_feature_columns,
)


def _specific() -> list[Column]:
    return [
        Column("suite", "string", "Collector suite.", nullable=False, values=("regular", "power"), key=True),
        Column("program", "string", "Program the kernel belongs to (e.g. srad_v2, matrix_mul).", nullable=False,
               pattern=NAME, not_values=MISSING_TEXT),
        Column("kernel", "string", "Kernel name.", nullable=False, key=True, pattern=NAME, not_values=MISSING_TEXT),
        Column("variant", "string", "Kernel variant (e.g. fp32, fp64); empty when there is one.",
               nullable=False, key=True),
        Column("bound", "string", "Compute- or memory-bound label from the suite spec (Riahi et al. 2024).",
               values=("compute", "memory")),
        Column("size_params", "params", "Problem-size parameters of the configuration.", key=True),
        Column("grid_x", "int64", "Blocks in x.", nullable=False, min=1, key=True),
        Column("grid_y", "int64", "Blocks in y.", nullable=False, min=1, key=True),
        Column("grid_z", "int64", "Blocks in z.", nullable=False, min=1, key=True),
        Column("block_x", "int32", "Threads per block in x.", nullable=False, min=1, key=True),
        Column("block_y", "int32", "Threads per block in y.", nullable=False, min=1, key=True),
        Column("block_z", "int32", "Threads per block in z.", nullable=False, min=1, key=True),
        # The features of Riahi et al. 2024 (its table 4).
        Column("n", "float64", "Input size (Riahi et al. 2024: n).", min=0),
        Column("s", "float64", "Problem size (Riahi et al. 2024: s).", min=0),
        Column("cpx", "float64", "Computational complexity order (Riahi et al. 2024: cpx).", min=0),
        Column("nb", "int64", "Blocks in the grid.", min=1),
        Column("nt", "int32", "Threads per block.", min=1),
        Column("w", "int32", "Warps per block.", min=1),
        Column("sm_saturation", "float64", "Active SMs / SMs for the launch (Wang and Chen 2013: Sa).", min=0, max=1),
    ] + static_feature_columns()


def _measurement_extras() -> list[Column]:
    """Harness columns beyond the common ones: CV flag, status detail, power window, dynamic shared memory."""
    return [
        Column("status_detail", "string", "Why a row is not ok (error code, limit exceeded, mismatch)."),
        Column("time_cv_high", "bool", "Coefficient of variation above the harness threshold (0.05)."),
        Column("power_method", "string", "How the power window was read.",
               values=("energy_counter", "sampling")),
        Column("power_launches", "int64", "Launches looped inside the power window.", min=1),
        Column("power_windows", "int32", "Power windows behind power_w_avg (protocol 2: repeated windows of "
               "at least 1 s each).", min=1),
        Column("power_w_std", "float64", "Standard deviation of the average power across the windows.",
               unit="W", min=0, max=MAX_W),
        Column("smem_dynamic_bytes", "int32", "Dynamic (extern) shared memory per block of the launch.",
               unit="B", min=0),
    ]


TABLE = Table(
    name="kernels",
    description="Regular CUDA kernels (Riahi et al. 2024) and the power suite (Wang and Chen 2013): time, power "
    "and static features per GPU x kernel x size x launch configuration.",
    version="1.6.0",
    columns=tuple(common_head() + _specific() + common_tail() + _measurement_extras() + measured_columns()),
    ordered=TIMING_ORDER,
    changelog=(
        ("1.0.0", "First declaration."),
        ("1.1.0", ("Nullable harness columns: status_detail, time_cv_high, power_method, power_launches, "
                  "SM/memory clocks, temperature and throttle reasons before and after the power window.")),
        ("1.2.0", ("Static features shared with `stencil` (schema.common.static_feature_columns): adds "
                   "branch_statements, static_instructions, shmem_bytes, stack_bytes, spill_store_bytes, "
                   "spill_load_bytes, blocks_per_sm, occupancy, branch_density, global_bytes_read, "
                   "global_bytes_written, flops, flops_fp64, arithmetic_intensity and the instruction mix "
                   "mix_<class>.")),
        ("1.3.0", ("Measurement protocol 2 (schema.common.protocol_columns): measurement_protocol, "
                   "timing_method, launches_per_sample, l2_policy, time_rse, time_cap_hit, samples_dropped, "
                   "throttled, clocks_locked, pstate_before, kgpubench_commit; clocks, temperature and "
                   "throttle reasons now describe every measurement, not only power windows; power_windows, "
                   "power_w_std; smem_dynamic_bytes.")),
        ("1.4.0", GPU_CATALOGUE_CHANGE),
        ("1.5.0", ("Validation only (the arrow schema is unchanged): upper bounds of one day on time_ms_*, "
                   "power_window_ms; of 3 kW on power_w_avg, power_idle_w, power_w_std and energy_j; temperatures "
                   "between -50 and 150 C; gpu_name, gpu_architecture, program and kernel must be non-empty names "
                   "without surrounding blanks; these names and run_id may not be the text of a missing value (None, "
                   "null, nan, NA, N/A).")),
        ("1.6.0", ("Validation only (the arrow schema is unchanged): timing_method may be `cupti-drained`, "
                   "the CUPTI cold timer with a wait between the L2 flush and the launch.")),
    ),
)
