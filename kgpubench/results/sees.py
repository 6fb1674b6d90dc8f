"""What each baseline sees: one line per model file in ``baselines/`` naming the inputs its fit and predict read.

The lines live here, not in the model files: a baseline's sha256 is recorded in every result it made, so editing
its docstring would force the whole board to be re-run. Each line was written by reading the baseline's code (the
columns and rows its ``fit``/``predict`` use); where a baseline's docstring already says what it sees, the line
says the same (``tests/results/test_sees.py`` checks both). A baseline that uses every feature column the task
declares says so ("the task's features"): what that means per task is the task's feature list
(``kgpubench tasks``). The board shows the line of every baseline that has a result on it
(:func:`kgpubench.board.render.sees_blocks`, the site's overview and task pages).
"""

from __future__ import annotations

from collections.abc import Iterable

from kgpubench.results.result import Record, Result

# The longest line, in characters: one table row on the board, one sentence.
MAX_CHARS = 110
# Folder of the baseline model files, as results record them in ``model_file`` ("baselines/lgbm.py").
BASELINES = "baselines"

_TABULAR = ("The task's features of each row (on rodinia-time: launch, binary, inputs, GPU figures; no profiler "
            "counters)")
# The tree ensembles also run on rodinia-time-counters, where the task adds the launch's own profiler counters.
_TREES = "The task's features of each row (rodinia-time: launch, binary, inputs, GPU figures; -counters adds prof_*)"
_RANKER = "The task's features of each row; in training, each problem's configurations ranked by time (same GPU)"

# Baseline name (its file's stem) -> what it sees, one line of at most MAX_CHARS characters.
SEES: dict[str, str] = {
    "c45": "The problem's features (all but the configuration's) and each training problem's fastest configuration",
    "config_blend": ("The problem (kernel, problem size), each row's configuration, GPU catalogue figures; training "
                     "GPUs' times"),
    "config_consensus": ("The problem (kernel, problem size) and each row's configuration; training GPUs' times of "
                         "that problem"),
    "elm": _TABULAR,
    "kernel_scaling": ("Launch (kernel, inputs, grid, block, registers, smem), GPU architecture and catalogue figures; "
                       "nothing else"),
    "knn": _TABULAR,
    "gemm_waves": ("The GEMM's m, n, k, compute dtype, nominal bytes; the GPU's SMs, tensor peak of the dtype, "
                   "bandwidth"),
    "lgbm": _TREES,
    "lgbm_ranker": _RANKER,
    "median": "Nothing but the training target (its median): no feature of any row",
    "mlp": _TABULAR,
    "nearest_gpu": ("Nearest training GPU's time of the same kernel, inputs, launch_index (by gpu_architecture, "
                    "catalogue figures)"),
    "neusight_wave": ("The operator, its shape and nominal work, and the GPU's catalogue figures (SMs, peak fp32, "
                      "bandwidth, ...)"),
    "npb_exhausting": ("The test problem's own measured times, for every TPB combination of its hot kernels; no "
                       "training"),
    "npb_max": "Only each row's tpb (it picks the largest): no times, no GPU figures",
    "npb_profiling": "The test problem's own measured times, one kernel's TPBs at a time; no training",
    "npb_qlearning": ("The task's features (benchmark, class, kernel, tpb, calls, GPU figures) through an MLP time "
                      "model"),
    "npb_warp": "Only each row's tpb (it picks 32, the warp size): no times, no GPU figures",
    "operator_roofline": "The operator's nominal flops and bytes and the GPU's peak fp32 and memory bandwidth",
    "operator_transfer": ("The operator, its shape and nominal work, the GPUs' catalogue figures; training GPUs' "
                          "times of that shape"),
    "power_nonlinear": ("SM saturation, compute density, fp64 share; one fit per GPU, told apart by SMs, peak fp32, "
                        "bandwidth"),
    "program_floor": ("The program's identity and compile mode, the GPU figures (bandwidth, fp32 peak) and training "
                      "GPUs' times of it"),
    "program_transfer": ("The program's identity (set, level, file, compile mode), the GPU figures and training GPUs' "
                         "times of it"),
    "random_forest": _TREES,
    "regression_tree": _TREES,
    "roofline": ("Per-thread instruction counts (lc, ldpu, lsfu, lmr, lmw), nb, nt and the GPU's peak fp32 and "
                 "bandwidth"),
    "roofline_gbdt": ("The task's features (shape, dtypes, stack or solver, nominal work, GPU figures, tensor peak) "
                      "and ln t_roof"),
    "roofline_transfer": ("Every non-GPU feature of the call, its nominal work, GPU figures, tensor peak; training "
                          "GPUs' times"),
    "roofline_util": ("Roofline of the launch's work (learnt from training GPUs, or counted by prof_*), GPU figures, "
                      "launch"),
    "solver_consensus": ("The problem's id, each row's solver, direction and dtype; training GPUs' times of that "
                         "problem"),
    "solver_ranker": _RANKER,
    "svr": "The task's features of each row (static kernel features, launch, GPU figures; no profiler counters)",
    "tensor_roofline": ("The call's nominal flops and bytes, operator and compute dtype, the GPU's tensor peak and "
                        "bandwidth"),
    "transfer": "The training GPUs' relative times of the same problem; the source is the nearest GPU by figures",
    "wavelet_nn": "SM saturation, compute density, source lines, fp64 share and the GPU's peak fp32: nothing else",
    "xgb": _TREES,
    "xgb_ranker": _RANKER,
}


def sees(model: str) -> str | None:
    """What the baseline ``model`` (a file stem in ``baselines/``) sees; None for a model that is not a baseline."""
    return SEES.get(model)


def baseline_name(result: Record) -> str | None:
    """The baseline a result record comes from: its model name when its model file is ``baselines/<model>.py``;
    None for a submission, the oracle or a skipped scheme's record."""
    if not isinstance(result, Result):
        return None
    model = result.model
    return model if model and result.model_file == f"{BASELINES}/{model}.py" else None


def seen_rows(results: Iterable[Record]) -> list[tuple[str, str]]:
    """``(baseline, what it sees)`` for every baseline with a scored result among ``results``, by name; a
    baseline that has no line here is left out (a test keeps every file of ``baselines/`` in :data:`SEES`)."""
    names = {baseline_name(r) for r in results if r.status == "ok"}
    return [(n, SEES[n]) for n in sorted(n for n in names if n in SEES)]
