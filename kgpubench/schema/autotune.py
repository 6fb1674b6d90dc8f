"""The `autotune` table: imported public auto-tuning measurements (Kernel Tuner caches, T4).

Tunable parameters live in two key columns: ``params`` holds every parameter whose value is a finite number
(as float64; integers are exact up to 2**53), ``params_text`` every other one (strings, booleans, null) as the
JSON text of the value, so ``"float"`` stays ``"\\"float\\""`` and ``True`` stays ``"true"``. Both are lists of
(name, value) sorted by name; together they restore the source's configuration exactly.
"""

from __future__ import annotations

from kgpubench.schema._core import Column, Table
from kgpubench.schema.common import (
    GPU_CATALOGUE_CHANGE,
    MAX_MS,
    MISSING_TEXT,
    NAME,
    TIMING_ORDER,
    common_head,
    common_tail,
)

# Kernel Tuner failure markers, then T4 `invalidity` values other than "correct".
FAILURES = ("CompilationFailedConfig", "RuntimeFailedConfig", "InvalidConfig", "compile", "runtime", "correctness",
            "constraints", "timeout")
SOURCE_FORMATS = ("kernel-tuner-cache", "t4")


def _phase(name: str, what: str) -> Column:
    return Column(name, "float64", f"Time the tuner spent on {what} of this configuration (source figure).",
                  unit="ms", min=0, max=MAX_MS)


def _specific() -> list[Column]:
    return [
        Column("kernel", "string", "Kernel name as tuned.", nullable=False, key=True, pattern=NAME,
               not_values=MISSING_TEXT),
        Column("problem_size", "string", "Problem size, dimensions joined by 'x'.", nullable=False, key=True,
               pattern=NAME, not_values=MISSING_TEXT),
        Column("params", "params", "Numeric tuning parameters of the configuration (name, value) sorted by name.",
               nullable=False, key=True),
        Column("params_text", "params_text", "Non-numeric tuning parameters (name, JSON text of the value) sorted "
               "by name; empty when every parameter is a number.", key=True),
        Column("time_ms_reported", "float64", "The `time` the source file reports for the configuration.",
               unit="ms", min=0, min_exclusive=True, max=MAX_MS),
        Column("failure", "string", "The source's failure marker (Kernel Tuner string or T4 invalidity); null when ok.",
               values=FAILURES),
        Column("objective", "string", "The tuning objective the source file names (e.g. `time`)."),
        Column("gflops_reported", "float64", "The `GFLOP/s` the source reports for the configuration.",
               unit="GFLOP/s", min=0),
        Column("gbs_reported", "float64", "The `GB/s` the source reports for the configuration.", unit="GB/s",
               min=0),
        _phase("compile_time_ms", "compiling"),
        _phase("benchmark_time_ms", "benchmarking (all repeats)"),
        _phase("verification_time_ms", "verifying the output"),
        _phase("framework_time_ms", "framework overhead"),
        _phase("strategy_time_ms", "the search strategy"),
        Column("search_space_size", "int64", "Configurations the source file holds for this kernel, problem "
               "size and GPU (the measured search space).", min=1),
        Column("source_format", "string", "Format of the imported file.", values=SOURCE_FORMATS),
    ]


TABLE = Table(
    name="autotune",
    version="1.3.0",
    description="Brute-forced auto-tuning search spaces measured by others (Kernel Tuner cache files, T4).",
    columns=tuple(common_head() + _specific() + common_tail()),
    ordered=TIMING_ORDER,
    changelog=(
        ("1.0.0", "First declaration."),
        ("1.1.0", ("Added params_text (non-numeric parameters, key), failure, objective, gflops_reported, "
                  "gbs_reported, the tuner's per-phase times (compile/benchmark/verification/framework/strategy "
                  "_time_ms), search_space_size and source_format. All new columns are nullable.")),
        ("1.2.0", GPU_CATALOGUE_CHANGE),
        ("1.3.0", ("Validation only (the arrow schema is unchanged): upper bounds of one day on time_ms_*, "
                   "power_window_ms, time_ms_reported and the tuner phase times; of 3 kW on power_w_avg, "
                   "power_idle_w and energy_j; gpu_name, gpu_architecture, kernel and problem_size must be non-empty "
                   "names without surrounding blanks; these names and run_id may not be the text of a missing value "
                   "(None, null, nan, NA, N/A).")),
    ),
)
