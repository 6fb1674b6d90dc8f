"""The baselines: which tasks each runs on and what each sees, declared here rather than in the model files.

A baseline's model file is hashed into every result it makes (``model_sha256``), which reuse and ``leaderboard
verify`` compare; a ``TASKS`` list inside the file would make every new task an edit of the file and a re-run of
all its results. So each bundled baseline is one line of :data:`RUNS_ON`: a rule over a task's declared
attributes (its config, target, kind, whether it reads measured counters, the rows its filters keep), and a new
task is planned for every baseline whose rule it meets, with no baseline edited. The TASKS literals the files
once held are recorded in ``baselines/moved_tasks.json`` (:mod:`kgpubench.board.moved_tasks`), so that the
results made before the move still stand for the files.

A plugged-in baseline (entry-point group ``kgpubench.baselines``) names a :class:`BaselineFile` (its path, rule
and, optionally, its line of what it sees) or a plain path, whose ``TASKS = (...)`` literal says where it runs
(none: every task); so does any model file outside the registry (a submission).

What each bundled baseline sees is one line of :data:`SEES` here too, for the same reason (editing a model file's
docstring would force its results to be re-run): the inputs its fit and predict read, written by reading its code;
where a baseline's docstring already says what it sees, the line says the same (``tests/board/test_sees.py``
checks both). A baseline that uses every feature column the task declares says so ("the task's features"). The
board shows the line of every baseline that has a result on it (:func:`kgpubench.board.render.sees_blocks`, the
site's overview and task pages). A plugged-in :class:`BaselineFile` may give its own line (``sees``), shown
beside its results when they were made from that very file (:func:`baseline_name`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import DataFileNotFoundError
from kgpubench.models.submission import declared_tasks
from kgpubench.registry import Registry
from kgpubench.resources import bundled_path
from kgpubench.results.result import Record, Result, model_label
from kgpubench.store.store import sha256_file
from kgpubench.tasks import Task, list_tasks


@dataclass(frozen=True)
class On:
    """The tasks a baseline runs on: every attribute given here must match the task's (one left empty matches
    any task).

    Parameters
    ----------
    config : str or tuple of str
        The task's config is one of these.
    target : str or tuple of str
        The task's target column is one of these.
    kind : {"regression", "recommendation"}, optional
        The task's kind.
    counters : bool, optional
        The task's ``measured_inputs`` (False: only tasks that see no measured counters).
    rows : tuple of (column, values)
        For each column, the task keeps only rows whose value is among ``values`` (a filter on that column whose
        values are all among them).
    """

    config: str | tuple[str, ...] = ()
    target: str | tuple[str, ...] = ()
    kind: str | None = None
    counters: bool | None = None
    rows: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        for name in ("config", "target"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
        if self.kind not in (None, "regression", "recommendation"):
            raise ValueError(f"On(kind={self.kind!r}): expected 'regression', 'recommendation' or None")

    def __call__(self, task: Task) -> bool:
        filters = dict(task.filters)
        return ((not self.config or task.config in self.config)
                and (not self.target or task.target in self.target)
                and (self.kind is None or task.kind == self.kind)
                and (self.counters is None or task.measured_inputs == self.counters)
                and all(col in filters and set(filters[col]) <= set(values) for col, values in self.rows))


ANY = On()
KERNEL_TIME = On(config="kernels", target="time_ms_median")
KERNEL_POWER = On(config="kernels", target="power_w_avg")
PRE_RUN_PROFILES = On(config="profiles", counters=False)  # rodinia-time, not the -counters task

# Bundled baseline (its file's stem) -> the rules of the tasks it runs on (a task meeting any of them).
RUNS_ON: dict[str, tuple[On, ...]] = {
    "c45": (On(config="stencil", kind="recommendation"),),
    "config_blend": (On(config="autotune", kind="recommendation"),),
    "config_consensus": (On(config="autotune", kind="recommendation"),),
    "elm": (On(config=("kernels", "autotune")), PRE_RUN_PROFILES),
    "gemm_waves": (On(config="llm_operators", rows=(("operator", ("gemm",)),)),),
    "kernel_scaling": (PRE_RUN_PROFILES,),
    # not on autotune: a k-d tree over its 40-odd columns costs more than every other baseline together
    "knn": (KERNEL_TIME, On(config="stencil"), PRE_RUN_PROFILES),
    "launch_transfer": (PRE_RUN_PROFILES,),
    "lgbm": (On(config=("kernels", "stencil", "autotune", "programs", "operators", "profiles")),),
    "lgbm_ranker": (On(config=("npb", "stencil", "autotune"), kind="recommendation"),),
    "median": (ANY,),
    "mlp": (On(config="kernels"), PRE_RUN_PROFILES),
    "nearest_gpu": (PRE_RUN_PROFILES,),
    "neusight_wave": (On(config="operators"),),
    "npb_exhausting": (On(config="npb"),),
    "npb_max": (On(config="npb"),),
    "npb_profiling": (On(config="npb"),),
    "npb_qlearning": (On(config="npb"),),
    "npb_warp": (On(config="npb"),),
    "operator_roofline": (On(config="operators"),),
    "operator_pairs": (On(config="operators"),),
    "operator_transfer": (On(config="operators"),),
    "power_nonlinear": (KERNEL_POWER,),
    "program_floor": (On(config="programs"),),
    "program_transfer": (On(config="programs"),),
    "random_forest": (On(config=("kernels", "stencil", "autotune", "profiles")),),
    "regression_tree": (KERNEL_TIME, On(config=("stencil", "autotune", "profiles"))),
    # only kernels has per-thread instruction counts (lc, lmr, ...); profiles has the profiler's, not a feature
    "roofline": (KERNEL_TIME,),
    "roofline_gbdt": (On(config=("llm_operators", "convolutions")),),
    "roofline_transfer": (On(config=("llm_operators", "convolutions")),),
    "roofline_util": (On(config="profiles"),),
    "solver_consensus": (On(config="convolutions", kind="recommendation"),),
    "solver_ranker": (On(config="convolutions", kind="recommendation"),),
    # not on profiles: at 10,000 training rows one fold took 60-110 s (the task's budget is about 12 s a fold)
    "svr": (On(config="kernels"),),
    "tensor_roofline": (On(config=("llm_operators", "convolutions")),),
    "transfer": (On(kind="recommendation"),),
    "wavelet_nn": (KERNEL_POWER,),
    "xgb": (On(config=("kernels", "stencil", "autotune", "profiles")),),
    "xgb_ranker": (On(config=("npb", "stencil", "autotune"), kind="recommendation"),),
}


# ----- what each baseline sees --------------------------------------------------------------------------------
# The longest line, in characters: one table row on the board, one sentence.
MAX_CHARS = 110
# Folder of the baseline model files, as results record them in ``model_file`` ("baselines/lgbm.py").
BASELINES_FOLDER = "baselines"

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
    "launch_transfer": ("The launch, GPU architecture and catalogue figures, and the training GPUs' times of the "
                        "same launch"),
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
    "operator_pairs": ("The operator, its shape and nominal work, the GPUs' catalogue figures, training GPUs' times "
                       "of the same shape"),
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


@dataclass(frozen=True)
class BaselineFile(os.PathLike):
    """A baseline: its model file and the rules of the tasks it runs on (a task meeting any of them). A path
    like any other (``os.fspath``), so a plugin's entry point may name one where it would name a path."""

    path: Path
    runs_on: tuple[On, ...]
    # What the baseline's fit and predict read, one line of at most MAX_CHARS characters (a plugged-in baseline's
    # own; the bundled ones' lines are SEES's); None: the board shows no line for it.
    sees: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if isinstance(self.runs_on, On):
            object.__setattr__(self, "runs_on", (self.runs_on,))
        if not self.runs_on or not all(isinstance(r, On) for r in self.runs_on):
            raise ValueError(f"baseline {self.path.stem!r}: runs_on must be one or more "
                             "kgpubench.board.baselines.On rules, e.g. (On(config='kernels'),)")
        if self.sees is not None and (not isinstance(self.sees, str) or not self.sees.strip()
                                      or "\n" in self.sees or len(self.sees) > MAX_CHARS):
            raise ValueError(f"baseline {self.path.stem!r}: sees must be one non-empty line of at most {MAX_CHARS} "
                             f"characters saying what its fit and predict read (got {self.sees!r:.60})")

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def applies(self, task: Task) -> bool:
        """Whether the baseline runs on ``task``."""
        return any(rule(task) for rule in self.runs_on)


def _built_in_baselines():
    """The bundled ``baselines/*.py`` not starting with ``_``, by name, each with its line of :data:`RUNS_ON`."""
    files = {p.stem: p for p in sorted(bundled_path("baselines").glob("*.py")) if not p.name.startswith("_")}
    missing = sorted(set(RUNS_ON) - set(files))
    if missing:
        raise DataFileNotFoundError(f"kgpubench/board/baselines.py RUNS_ON declares {missing}, which have no file "
                                    f"in {bundled_path('baselines')}; add the model file or drop the line.")
    for name, path in files.items():
        if name not in RUNS_ON:
            raise DataFileNotFoundError(f"{path}: this baseline has no line in RUNS_ON (kgpubench/board/"
                                        f"baselines.py); add one saying which tasks it runs on, e.g. "
                                        f"{name!r}: (On(config='kernels'),).")
        yield name, BaselineFile(path, RUNS_ON[name])


def _check_baseline(name: str, path: str | os.PathLike) -> None:
    if Path(path).suffix != ".py" or not Path(path).is_file():
        raise DataFileNotFoundError(f"baseline {name!r}: {os.fspath(path)} is no model file; give the path of an "
                                    "existing .py file (absolute, e.g. from importlib.resources).")


# name -> model file: the bundled baselines (each a BaselineFile with its rule), then model files plugged in through
# the entry-point group ``kgpubench.baselines`` (an entry point naming a BaselineFile or a path, or a function
# returning one; its name is the file's stem).
BASELINES: Registry[str | os.PathLike] = Registry("baseline", "kgpubench.baselines", (str, os.PathLike),
                                                  builtins=_built_in_baselines, check=_check_baseline,
                                                  name_of=lambda p: Path(p).stem)


def baseline_files() -> list[Path]:
    """Every baseline model file (:data:`BASELINES`): the bundled ones by name, then the plugged-in ones by name."""
    return [Path(p) for p in BASELINES.values()]


def runs_on(path: str | os.PathLike) -> Callable[[Task], bool]:
    """Whether the model file at ``path`` runs on a task: the rule of its :data:`BASELINES` entry when that
    entry is a :class:`BaselineFile` of this very file, else the ``TASKS = (...)`` literal in the file, read
    without running it (none: every task)."""
    path = Path(path)
    entry = BASELINES.get(path.stem)
    if isinstance(entry, BaselineFile) and _same_file(entry.path, path):
        return entry.applies
    declared = declared_tasks(path)
    return (lambda task: task.name in declared) if declared else (lambda task: True)


def planned_tasks(path: str | os.PathLike) -> tuple[Task, ...]:
    """The registered tasks the model file at ``path`` runs on (:func:`runs_on`), in registry order."""
    applies = runs_on(path)
    return tuple(task for task in list_tasks() if applies(task))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _plugged(model: str) -> BaselineFile | None:
    """The plugged-in :class:`BaselineFile` registered as ``model``, if any (a bundled name is SEES's)."""
    if model in SEES:
        return None
    entry = BASELINES.get(model)
    return entry if isinstance(entry, BaselineFile) else None


def sees(model: str) -> str | None:
    """What the baseline ``model`` sees: its line of :data:`SEES` (a file stem in ``baselines/``), else the
    ``sees`` of the plugged-in :class:`BaselineFile` registered under that name; None for any other model."""
    if model in SEES:
        return SEES[model]
    entry = _plugged(model)
    return entry.sees if entry is not None else None


def baseline_name(result: Record) -> str | None:
    """The baseline a result record comes from: its model name when its model file is ``baselines/<model>.py``,
    or when it is the very file of the plugged-in :class:`BaselineFile` of that name (its label and sha256: a
    submission that only shares the name is not it); None for a submission, the oracle or a skipped scheme's
    record."""
    if not isinstance(result, Result) or not result.model:
        return None
    model = result.model
    if result.model_file == f"{BASELINES_FOLDER}/{model}.py":
        return model
    entry = _plugged(model)
    if entry is None or not entry.path.is_file() or result.model_file != model_label(entry.path):
        return None
    return model if result.model_sha256 == sha256_file(entry.path) else None


def seen_rows(results: Iterable[Record]) -> list[tuple[str, str]]:
    """``(baseline, what it sees)`` for every baseline with a scored result among ``results`` and a line
    (:func:`sees`), by name; a baseline without one is left out (a test keeps every file of ``baselines/`` in
    :data:`SEES`)."""
    lines = {n: sees(n) for n in {baseline_name(r) for r in results if r.status == "ok"} if n is not None}
    return [(n, line) for n, line in sorted(lines.items()) if line is not None]

__all__ = ["ANY", "BASELINES", "MAX_CHARS", "RUNS_ON", "SEES", "BaselineFile", "On", "baseline_files", "baseline_name",
           "planned_tasks", "runs_on", "seen_rows", "sees"]
