"""The `profiles` table: single nvprof-profiled launches of third-party kernels (gpuperfpredict, Rodinia).

One row = one launch of one CUDA kernel on one GPU, profiled once by nvprof (not a statistic over repeats):
its launch configuration, the static facts of the binary (registers, static shared memory), its duration from
the GPU trace and the profiler's events and metrics for that launch.

Why a table of its own and not `kernels`: `kernels` rows are medians of repeated kgpubench measurements with
static features from kgpubench's own analysis of the source and PTX. These rows are single launches of code
kgpubench does not have, timed once by a profiler, with the profiler's counters beside the time; mixing the two
would give one column two meanings.

The ``prof_*`` columns are the upstream nvprof events and metrics, named after the upstream (R-mangled) column in
snake case; each column's doc gives the nvprof event or metric id, the upstream column and the unit. They are
declared ``measured``: they were read on the target GPU during the very launch whose time is the label, so no
task may use them as inputs unless it says so in its name.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import MAX_MS, MISSING_TEXT, NAME, common_head, provenance_columns

# The Rodinia applications whose kernels the table holds (and those of the upstream kernel-id list that no staged
# file has yet: gaussian, hotspot3D, lavaMD, nw).
APPLICATIONS = ("backprop", "gaussian", "heartwall", "hotspot", "hotspot3D", "lavaMD", "lud", "nw")
TIMED_UNITS = ("kernel-launch",)

# (upstream column, snake-case name without the prof_ prefix, nvprof event/metric id, unit, kind).
# ``kind`` is ``event`` (hardware counter) or ``metric`` (nvprof's derived metric). Units are nvprof's: counts
# are per launch, summed over the GPU's SMs; throughputs are GB/s (nvprof's unit suffix stripped upstream);
# efficiencies and utilisations are percentages; the three *_utilization metrics are nvprof's 0-10 level.
PROFILER_COUNTERS: tuple[tuple[str, str, str, str, str], ...] = (
    ("elapsed_cycles_sm", "elapsed_cycles_sm", "elapsed_cycles_sm", "cycles", "event"),
    ("gld_inst_32bit", "gld_inst_32bit", "gld_inst_32bit", "instructions", "event"),
    ("gst_inst_32bit", "gst_inst_32bit", "gst_inst_32bit", "instructions", "event"),
    ("warps_launched", "warps_launched", "warps_launched", "warps", "event"),
    ("inst_executed", "inst_executed", "inst_executed", "warp instructions", "event"),
    ("inst_issued1", "inst_issued1", "inst_issued1", "warp instructions", "event"),
    ("shared_load", "shared_load", "shared_load", "instructions", "event"),
    ("shared_store", "shared_store", "shared_store", "instructions", "event"),
    ("gld_request", "gld_request", "gld_request (global_load on CC 5.x)", "requests", "event"),
    ("gst_request", "gst_request", "gst_request (global_store on CC 5.x)", "requests", "event"),
    ("active_cycles", "active_cycles", "active_cycles", "cycles", "event"),
    ("active_warps", "active_warps", "active_warps", "warps x cycles", "event"),
    ("executed_ipc", "executed_ipc", "ipc", "instructions/cycle", "metric"),
    ("achieved_occupancy", "achieved_occupancy", "achieved_occupancy", "fraction 0-1", "metric"),
    ("requested_global_load_throughput", "requested_global_load_throughput", "gld_requested_throughput", "GB/s",
     "metric"),
    ("requested_global_store_throughput", "requested_global_store_throughput", "gst_requested_throughput", "GB/s",
     "metric"),
    ("device_memory_read_throughput", "device_memory_read_throughput", "dram_read_throughput", "GB/s", "metric"),
    ("device_memory_write_throughput", "device_memory_write_throughput", "dram_write_throughput", "GB/s", "metric"),
    ("global_store_throughput", "global_store_throughput", "gst_throughput", "GB/s", "metric"),
    ("global_load_throughput", "global_load_throughput", "gld_throughput", "GB/s", "metric"),
    ("shared_memory_efficiency", "shared_memory_efficiency", "shared_efficiency", "%", "metric"),
    ("global_memory_load_efficiency", "global_memory_load_efficiency", "gld_efficiency", "%", "metric"),
    ("global_memory_store_efficiency", "global_memory_store_efficiency", "gst_efficiency", "%", "metric"),
    ("issued_ipc", "issued_ipc", "issued_ipc", "instructions/cycle", "metric"),
    ("instructions_per_warp", "instructions_per_warp", "inst_per_warp", "instructions/warp", "metric"),
    ("issue_slot_utilization", "issue_slot_utilization", "issue_slot_utilization", "%", "metric"),
    ("shared_memory_load_transactions_per_request", "shared_memory_load_transactions_per_request",
     "shared_load_transactions_per_request", "transactions/request", "metric"),
    ("shared_memory_store_transactions_per_request", "shared_memory_store_transactions_per_request",
     "shared_store_transactions_per_request", "transactions/request", "metric"),
    ("global_load_transactions_per_request", "global_load_transactions_per_request", "gld_transactions_per_request",
     "transactions/request", "metric"),
    ("global_store_transactions_per_request", "global_store_transactions_per_request",
     "gst_transactions_per_request", "transactions/request", "metric"),
    ("shared_load_transactions", "shared_load_transactions", "shared_load_transactions", "transactions", "metric"),
    ("shared_store_transactions", "shared_store_transactions", "shared_store_transactions", "transactions",
     "metric"),
    ("global_load_transactions", "global_load_transactions", "gld_transactions", "transactions", "metric"),
    ("global_store_transactions", "global_store_transactions", "gst_transactions", "transactions", "metric"),
    ("device_memory_read_transactions", "device_memory_read_transactions", "dram_read_transactions",
     "transactions", "metric"),
    ("l2_read_transactions", "l2_read_transactions", "l2_read_transactions", "transactions", "metric"),
    ("l2_write_transactions", "l2_write_transactions", "l2_write_transactions", "transactions", "metric"),
    ("shared_memory_load_throughput", "shared_memory_load_throughput", "shared_load_throughput", "GB/s", "metric"),
    ("shared_memory_store_throughput", "shared_memory_store_throughput", "shared_store_throughput", "GB/s",
     "metric"),
    ("l2_throughput_.reads.", "l2_throughput_reads", "l2_read_throughput", "GB/s", "metric"),
    ("l2_throughput_.writes.", "l2_throughput_writes", "l2_write_throughput", "GB/s", "metric"),
    ("issued_control.flow_instructions", "issued_control_flow_instructions", "cf_issued", "warp instructions",
     "metric"),
    ("executed_control.flow_instructions", "executed_control_flow_instructions", "cf_executed",
     "warp instructions", "metric"),
    ("issued_load.store_instructions", "issued_load_store_instructions", "ldst_issued", "warp instructions",
     "metric"),
    ("executed_load.store_instructions", "executed_load_store_instructions", "ldst_executed", "warp instructions",
     "metric"),
    ("floating_point_operations.single_precision.", "floating_point_operations_single_precision", "flop_count_sp",
     "flop", "metric"),
    ("floating_point_operations.single_precision_add.", "floating_point_operations_single_precision_add",
     "flop_count_sp_add", "flop", "metric"),
    # Upstream spells this one in the singular; the snake-case name follows its siblings.
    ("floating_point_operation.single_precision_mul.", "floating_point_operations_single_precision_mul",
     "flop_count_sp_mul", "flop", "metric"),
    ("floating_point_operations.single_precision_fma.", "floating_point_operations_single_precision_fma",
     "flop_count_sp_fma", "flop", "metric"),
    ("floating_point_operations.double_precision.", "floating_point_operations_double_precision", "flop_count_dp",
     "flop", "metric"),
    ("floating_point_operations.double_precision_add.", "floating_point_operations_double_precision_add",
     "flop_count_dp_add", "flop", "metric"),
    ("floating_point_operations.double_precision_mul.", "floating_point_operations_double_precision_mul",
     "flop_count_dp_mul", "flop", "metric"),
    ("floating_point_operations.single_precision_special.", "floating_point_operations_single_precision_special",
     "flop_count_sp_special", "flop", "metric"),
    ("l1.shared_memory_utilization", "l1_shared_memory_utilization", "shared_utilization", "level 0-10", "metric"),
    ("device_memory_utilization", "device_memory_utilization", "dram_utilization", "level 0-10", "metric"),
    ("control.flow_function_unit_utilization", "control_flow_function_unit_utilization", "cf_fu_utilization",
     "level 0-10", "metric"),
    ("issue_slots", "issue_slots", "issue_slots", "issue slots", "metric"),
    ("fp_instructions.single.", "fp_instructions_single", "inst_fp_32", "thread instructions", "metric"),
    ("fp_instructions.double.", "fp_instructions_double", "inst_fp_64", "thread instructions", "metric"),
    ("integer_instructions", "integer_instructions", "inst_integer", "thread instructions", "metric"),
    ("control.flow_instructions", "control_flow_instructions", "inst_control", "thread instructions", "metric"),
    ("load.store_instructions", "load_store_instructions", "inst_compute_ld_st", "thread instructions", "metric"),
    ("misc_instructions", "misc_instructions", "inst_misc", "thread instructions", "metric"),
    ("flop_efficiency.peak_single.", "flop_efficiency_peak_single", "flop_sp_efficiency", "%", "metric"),
    ("flop_efficiency.peak_double.", "flop_efficiency_peak_double", "flop_dp_efficiency", "%", "metric"),
    ("eligible_warps_per_active_cycle", "eligible_warps_per_active_cycle", "eligible_warps_per_cycle",
     "warps/cycle", "metric"),
)
PROF_PREFIX = "prof_"


def profiler_columns() -> list[Column]:
    """One optional float64 column per nvprof event or metric (:data:`PROFILER_COUNTERS`), all ``measured``."""
    cols = []
    for upstream, snake, nvprof, unit, kind in PROFILER_COUNTERS:
        what = "event" if kind == "event" else "metric"
        cols.append(Column(f"{PROF_PREFIX}{snake}", "float64",
                           f"nvprof {what} `{nvprof}` of this launch (upstream column `{upstream}`), in {unit}.",
                           unit=unit, min=0, measured=True))
    return cols


def _specific() -> list[Column]:
    return [
        Column("application", "string", "Rodinia application the kernel belongs to.", nullable=False,
               values=APPLICATIONS),
        Column("kernel", "string", "Kernel function name (upstream `name`; heartwall's kernel is called `kernel`).",
               nullable=False, key=True, pattern=NAME, not_values=MISSING_TEXT),
        Column("input_size_1", "int64", "The application's first input parameter (upstream `input.size.1`: "
               "backprop input-layer units, hotspot grid side, heartwall frames, lud matrix order).",
               nullable=False, min=0, key=True),
        Column("input_size_2", "int64", "The application's second input parameter (upstream `input.size.2`: "
               "hotspot total iterations); 0 when unused.", nullable=False, min=0, key=True),
        Column("launch_index", "int32", "Position of the launch among the launches of its (GPU, kernel, "
               "input_size_1, input_size_2) group, in upstream file order, from 0 (upstream leaves it implicit).",
               nullable=False, min=0, key=True),
        Column("grid_x", "int64", "Blocks in x.", nullable=False, min=1),
        Column("grid_y", "int64", "Blocks in y.", nullable=False, min=1),
        Column("grid_z", "int64", "Blocks in z (1: upstream has no z column and these kernels use none).",
               nullable=False, min=1),
        Column("block_x", "int32", "Threads per block in x.", nullable=False, min=1),
        Column("block_y", "int32", "Threads per block in y.", nullable=False, min=1),
        Column("block_z", "int32", "Threads per block in z (1: upstream has no z column).", nullable=False, min=1),
        Column("registers_per_thread", "int32", "Registers per thread of the binary run on that GPU (differs "
               "between GPU generations).", nullable=False, min=0),
        Column("static_smem_bytes", "int64", "Static shared memory per block (upstream `static.smem`, KiB in the "
               "GTX-980 and Tesla-P100 files and bytes in the others, converted to bytes).", unit="B",
               nullable=False, min=0),
        Column("upstream_gpu_id", "int32", "Upstream GPU id (`device`, = `gpu_id` of deviceInfo.csv; not "
               "contiguous).", min=1),
        Column("upstream_kernel_id", "int32", "Upstream kernel id (`kernel`: 1 bpnn_layerforward_CUDA ... 13 "
               "needle_cuda_shared_2).", min=1, max=13),
        Column("time_ms", "float64", "Duration of this one launch from nvprof's GPU trace (upstream `duration`, "
               "seconds, x 1000). Resolution: the GTX-980 and Tesla-P100 files are quantised to 1 us (0.001 ms); "
               "the others carry about five significant digits.", unit="ms", min=0, min_exclusive=True,
               max=MAX_MS, required_when=("status", "ok")),
        Column("timed_unit", "string", "What `time_ms` times: one kernel launch.", nullable=False,
               values=TIMED_UNITS),
        Column("repeats", "int32", "Timed repeats behind `time_ms`: 1 (each launch was profiled once).",
               nullable=False, min=1, max=1),
    ]


TABLE = Table(
    name="profiles",
    version="1.0.0",
    description="Single nvprof-profiled launches of third-party Rodinia kernels on several GPUs (imported: "
    "gpuperfpredict): one row per launch, profiled once, with the profiler's counters. Not `kernels`: those "
    "rows are medians of repeated kgpubench measurements with static features from kgpubench's own "
    "source/PTX analysis, whereas these are single launches of code kgpubench does not have.",
    columns=tuple(common_head() + _specific() + profiler_columns() + provenance_columns()),
    changelog=(("1.0.0", "First declaration (issue 27: gpuperfpredict's Rodinia profiles)."),),
)
