"""The baselines and which tasks each runs on, declared here rather than in the model files.

A baseline's model file is hashed into every result it makes (``model_sha256``), which reuse and ``leaderboard
verify`` compare; a ``TASKS`` list inside the file would make every new task an edit of the file and a re-run of
all its results. So each bundled baseline is one line of :data:`RUNS_ON`: a rule over a task's declared
attributes (its config, target, kind, whether it reads measured counters, the rows its filters keep), and a new
task is planned for every baseline whose rule it meets, with no baseline edited. The TASKS literals the files
once held are recorded in ``baselines/moved_tasks.json`` (:mod:`kgpubench.board.moved_tasks`), so that the
results made before the move still stand for the files.

A plugged-in baseline (entry-point group ``kgpubench.baselines``) names a :class:`BaselineFile` (its path and
rule) or a plain path, whose ``TASKS = (...)`` literal says where it runs (none: every task); so does any model
file outside the registry (a submission).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import DataFileNotFoundError
from kgpubench.models.submission import declared_tasks
from kgpubench.registry import Registry
from kgpubench.resources import bundled_path
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


@dataclass(frozen=True)
class BaselineFile(os.PathLike):
    """A baseline: its model file and the rules of the tasks it runs on (a task meeting any of them). A path
    like any other (``os.fspath``), so a plugin's entry point may name one where it would name a path."""

    path: Path
    runs_on: tuple[On, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if isinstance(self.runs_on, On):
            object.__setattr__(self, "runs_on", (self.runs_on,))
        if not self.runs_on or not all(isinstance(r, On) for r in self.runs_on):
            raise ValueError(f"baseline {self.path.stem!r}: runs_on must be one or more "
                             "kgpubench.board.baselines.On rules, e.g. (On(config='kernels'),)")

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


__all__ = ["ANY", "BASELINES", "RUNS_ON", "BaselineFile", "On", "baseline_files", "planned_tasks", "runs_on"]
