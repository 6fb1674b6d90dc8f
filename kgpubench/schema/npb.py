"""The `npb` table: NAS Parallel Benchmarks on CUDA, per-kernel threads per block (Scheer et al.).

Two kinds of rows (``row_kind``):

- ``kernel``: one kernel of one benchmark and class at one threads-per-block (``tpb``) value, every other
  kernel at the NPB-GPU default (``assignment = one-kernel``). The timing columns are **per call** of that
  kernel over all its calls in the timed runs (``repeats`` = calls timed); ``calls_per_run`` and
  ``kernel_time_s`` (this kernel's time in one run) allow the offline sum; ``app_time_s`` and
  ``remainder_s`` describe the whole run it was measured in.
- ``run``: a whole application run under a named assignment (``default``, ``max``: every kernel at its
  largest legal TPB, ``warp``: every kernel at 32). Timing columns are **per run** (``repeats`` = runs).

Offline, an assignment's application time is ``sum_k calls_per_run(k) * time_ms_mean(k, tpb_k) / 1000 +
remainder_s(default run)``; the ``max`` and ``warp`` run rows are the measured whole runs that check this
additivity.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import (
    GPU_CATALOGUE_CHANGE,
    MAX_S,
    MISSING_TEXT,
    NAME,
    TIMING_ORDER,
    common_head,
    common_tail,
    measured_columns,
)

KERNEL_ROW = ("row_kind", "kernel")


def _specific() -> list[Column]:
    return [
        Column("row_kind", "string", "`kernel` (one kernel at one TPB, times per call) or `run` (a whole run "
               "under a named assignment, times per run).", nullable=False, values=("kernel", "run"), key=True),
        Column("benchmark", "string", "NPB benchmark.", nullable=False, values=("EP", "CG", "MG", "FT"), key=True),
        Column("npb_class", "string", "NPB problem class.", nullable=False,
               values=("S", "W", "A", "B", "C", "D", "E"), key=True),
        Column("kernel", "string", "Kernel (NPB-GPU role name); `app` on run rows.", nullable=False, key=True,
               pattern=NAME, not_values=MISSING_TEXT),
        Column("tpb", "int32", "Threads per block of this kernel (run rows: the uniform value of `max`/`warp`, "
               "null for `default`).", min=1, max=1024, key=True, required_when=KERNEL_ROW),
        Column("variant", "string", "Implementation: kgpubench's own kernels or a user's NPB-GPU build.",
               nullable=False, values=("kgpubench", "npb-gpu"), key=True),
        Column("assignment", "string", "Threads-per-block assignment of the run: `one-kernel` (this kernel at "
               "`tpb`, the others at the NPB-GPU default), `default`, `max` or `warp`.", nullable=False,
               values=("one-kernel", "default", "max", "warp"), key=True),
        Column("tpb_assignment", "params", "Threads per block of every kernel in the run (name, value)."),
        Column("tpb_effective", "int32", "Block size actually launched (NPB-GPU clamps some kernels).",
               min=1, max=1024),
        Column("calls_per_run", "int64", "Calls of the kernel in one application run (run rows: all launches).",
               min=0),
        Column("kernel_time_s", "float64", "Time of this kernel in one run (run rows: of all kernels), mean "
               "over the timed runs.", unit="s", min=0, max=MAX_S),
        Column("app_time_s", "float64", "Whole-application time of the run (median over the timed runs).",
               unit="s", min=0, min_exclusive=True, max=MAX_S),
        Column("remainder_s", "float64", "Non-kernel remainder of the run: app_time_s minus the summed kernel "
               "time (host work, transfers, launch gaps); may be slightly negative from timer noise.", unit="s",
               min=-MAX_S, max=MAX_S),
        Column("runs", "int32", "Timed whole-application runs behind the row.", min=1),
        Column("verified", "bool", "Whether every timed run passed the official NPB verification."),
        Column("verification_value", "list<float64>", "The verified quantities of the last run: EP [sx, sy], "
               "CG [zeta], MG [L2 norm], FT [re_1, im_1, ..., re_niter, im_niter]."),
        Column("verification_error", "float64", "Worst relative error against the official values.", min=0),
        Column("status_detail", "string", "Why a row is not ok (compile or launch error, failed check)."),
    ]


TABLE = Table(
    name="npb",
    version="1.5.0",
    description="NPB-CUDA kernels (EP, CG, MG, FT): time per call for every threads-per-block choice, "
    "and whole runs under uniform assignments (Scheer et al.).",
    columns=tuple(common_head() + _specific() + common_tail() + measured_columns()),
    ordered=TIMING_ORDER,
    changelog=(
        ("1.0.0", "First declaration."),
        ("1.1.0", "Kernel and run rows (`row_kind`, `assignment`, `tpb_assignment`); `tpb` nullable on run "
                  "rows; `tpb_effective`, `kernel_time_s`, `remainder_s`, `runs`, `verification_value`, "
                  "`verification_error`, `status_detail` for offline additivity and verification checks."),
        ("1.2.0", "Measurement protocol 2 and conditions (schema.common.measured_columns): clocks, "
                  "temperature, throttle reasons, measurement_protocol, timing_method, launches_per_sample, "
                  "l2_policy, time_rse, time_cap_hit, samples_dropped, throttled, clocks_locked, "
                  "pstate_before, kgpubench_commit."),
        ("1.3.0", GPU_CATALOGUE_CHANGE),
        ("1.4.0", ("Validation only (the arrow schema is unchanged): upper bounds of one day on time_ms_*, "
                   "power_window_ms, kernel_time_s, app_time_s, remainder_s; of 3 kW on power_w_avg, power_idle_w "
                   "and energy_j; temperatures between -50 and 150 C; gpu_name, gpu_architecture and kernel must be "
                   "non-empty names without surrounding blanks; these names and run_id may not be the text of a "
                   "missing value (None, null, nan, NA, N/A).")),
        ("1.5.0", ("Validation only (the arrow schema is unchanged): timing_method may be `cupti-drained`, "
                   "the CUPTI cold timer with a wait between the L2 flush and the launch.")),
    ),
)
