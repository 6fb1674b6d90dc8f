"""The benchmark's tasks (one per seed study, plus the imported auto-tuning data)."""

from __future__ import annotations

from kgpubench.tasks._core import Task

# Hardware columns every table carries (kgpubench.schema.common.gpu_columns), usable as features.
GPU_FEATURES = (
    "gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
    "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops",
)
# Seed 000, table 4: static features (source, PTX, ptxas) and launch configuration.
SEED000_FEATURES = (
    "n", "s", "cpx", "nb", "nt", "w", "alpha", "l", "lc", "lmr", "lmw", "lshr", "lshw", "ls", "ldpu", "lsfu",
    "dpc", "shmem_words", "nreg",
)
LAUNCH_FEATURES = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
REGRESSION_METRICS = ("mape", "max_ape", "rmse_log", "spearman")
ALL_SCHEMES = ("random10", "holdout80", "by-kernel", "by-gpu")
OK_REGULAR = (("suite", ("regular",)),)

_KERNEL_TIME = dict(
    config="kernels", target="time_ms_median", features=SEED000_FEATURES + LAUNCH_FEATURES + GPU_FEATURES,
    kind="regression", metrics=REGRESSION_METRICS, schemes=ALL_SCHEMES, seed="000",
)

ALL_TASKS: tuple[Task, ...] = (
    Task(name="kernel-time", filters=OK_REGULAR, **_KERNEL_TIME,
         description="Predict the median run time of a regular CUDA kernel from its static features "
         "(source, PTX, ptxas), its launch configuration and the GPU's hardware figures (seed 000)."),
    Task(name="kernel-time-compute", filters=OK_REGULAR + (("bound", ("compute",)),), **_KERNEL_TIME,
         description="kernel-time on the compute-bound kernels only (seed 000's first data set)."),
    Task(name="kernel-time-memory", filters=OK_REGULAR + (("bound", ("memory",)),), **_KERNEL_TIME,
         description="kernel-time on the memory-bound kernels only (seed 000's second data set)."),
    Task(
        name="kernel-power", config="kernels", target="power_w_avg", seed="002", kind="regression",
        features=("compute_density", "sm_saturation", "source_lines", *GPU_FEATURES),
        metrics=("mape", "max_ape", "rmse"), schemes=ALL_SCHEMES, filters=(("suite", ("power",)),),
        description="Predict a kernel's average board power (W) from its power-weighted compute density, "
        "SM saturation, lines of code and the GPU (seed 002)."),
    Task(
        name="npb-tpb", config="npb", target="time_ms_mean", seed="001", kind="recommendation",
        filters=(("row_kind", ("kernel",)), ("assignment", ("one-kernel",))),
        features=("benchmark", "npb_class", "kernel", "tpb", "calls_per_run", *GPU_FEATURES),
        problem_columns=("gpu_name", "benchmark", "npb_class", "variant"), choice_columns=("kernel",),
        metrics=("app_time_ratio", "mape"), schemes=("random10", "by-gpu"),
        description="Choose the threads per block of every kernel of an NPB application; scored by the "
        "application time the choice gives (sum over kernels of calls x mean time per call, plus the "
        "non-kernel remainder_s of the problem's default run) relative to the best possible (seed 001). "
        "Profiling and Exhausting measure the test problem instead of learning: `measurements` is the mean "
        "number of distinct assignments they measured per problem (0 for every other model)."),
    Task(
        name="stencil-tile", config="stencil", target="time_ms_median", seed="003", kind="recommendation",
        features=("gpu_sm_count", "gpu_cores", "gpu_memory_bandwidth_gbs", "gpu_smem_per_sm_bytes",
                  "gpu_l2_bytes", "grid_nx", "grid_ny", "grid_nz", "dtype", "space_order", "variant",
                  "block_size", "tile_b1", "tile_b2", "tile_b3"),
        problem_columns=("gpu_name", "grid_nx", "grid_ny", "grid_nz", "dtype", "space_order"),
        metrics=("improvement_coefficient", "pct_improved", "regret", "mape"),
        schemes=("random10", "by-gpu"),
        description="Choose the tile (and variant, block size) of the 3-D acoustic wave stencil per GPU, "
        "grid, dtype and space order; scored against the untiled (1,1,1) baseline and the best "
        "measured tile (seed 003)."),
    Task(
        name="autotune-config", config="autotune", target="time_ms_median", seed="-", kind="recommendation",
        features=("kernel", "problem_size", "params", "params_text", *GPU_FEATURES),
        problem_columns=("gpu_name", "kernel", "problem_size"),
        metrics=("top1_regret", "top5_regret", "kendall_tau", "mape"),
        schemes=("random10", "holdout80", "by-kernel", "by-gpu"), board_schemes=("random10", "by-gpu"),
        max_train_rows=8_000,
        description="Rank the configurations of an auto-tuning search space (imported Kernel Tuner data) "
        "and pick the best per kernel, problem size and GPU; also scored as regression of time."),
)

# The task whose split files `load_dataset(config, scheme=...)` uses unless told otherwise.
CONFIG_MAIN_TASK = {"kernels": "kernel-time", "npb": "npb-tpb", "stencil": "stencil-tile",
                    "autotune": "autotune-config"}
