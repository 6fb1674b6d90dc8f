"""What each task asks and what it has: config, target, features by group, schemes, rows, problems and folds.

``kgpubench tasks`` prints it (a table, or ``--json``); the numbers are counted on a store (default: the
packaged data) with the same row selection and fold rules the board uses, so a user sees before training how
many rows, problems and folds a scheme gives.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa

from kgpubench.resources import default_data_dir
from kgpubench.schema import get_table
from kgpubench.schema.common import gpu_columns, static_feature_columns
from kgpubench.store.store import Store
from kgpubench.tasks import Task, get_task, list_tasks, problem_keys, select
from kgpubench.tasks.splits import assign_folds, evaluated_folds, get_scheme

GROUPS = ("GPU figures", "static code features", "launch configuration", "problem and configuration")
_GPU = {c.name for c in gpu_columns()}
_STATIC = {c.name for c in static_feature_columns()}
# Launch configuration: the grid and block shape, threads per block (npb), the stencil's block size.
_LAUNCH = {"grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "block_size", "tpb"}


def feature_groups(task: Task) -> dict[str, list[str]]:
    """The task's features by group (:data:`GROUPS`), each in declaration order; empty groups left out."""
    out: dict[str, list[str]] = {g: [] for g in GROUPS}
    decl = get_table(task.config)
    for name in task.features:
        col = decl.column(name)
        if name in _GPU:
            group = GROUPS[0]
        elif name in _STATIC or name in ("nreg", "nb", "nt", "w", "shmem_words"):
            group = GROUPS[1]
        elif name in _LAUNCH:
            group = GROUPS[2]
        else:
            group = GROUPS[3]
        out[group].append(f"{name} (params: one param.<name> column each)" if col.type.startswith("params")
                          else name)
    return {g: names for g, names in out.items() if names}


@dataclass(frozen=True)
class SchemeCount:
    """One scheme of a task on a store: whether the board evaluates it, and its test folds."""

    scheme: str
    on_board: bool
    folds: int
    fold_names: list[str]


@dataclass(frozen=True)
class TaskOverview:
    """One task on one store (see the module doc)."""

    name: str
    config: str
    target: str
    kind: str
    ranked_by: str
    metrics: list[str]
    features: dict[str, list[str]]
    rows: int
    problems: int | None
    schemes: list[SchemeCount]
    sources: list[str]
    description: str

    def to_dict(self) -> dict:
        return asdict(self)


def overview(task: Task, store, table: pa.Table | None = None) -> TaskOverview:
    """``task`` counted on ``store`` (a :class:`kgpubench.store.store.Store`); ``table``: its config's rows,
    already read from it."""
    table = store.read(task.config) if table is None else table
    rows = select(task, table).rows
    problems = int(len(set(problem_keys(task, rows)))) if task.problem_columns and rows.num_rows else (
        0 if task.problem_columns else None)
    schemes = []
    for scheme in task.schemes:
        folds = evaluated_folds(scheme, assign_folds(task, rows, scheme)) if rows.num_rows else []
        schemes.append(SchemeCount(scheme, scheme in task.evaluated_schemes, len(folds), list(folds)))
    return TaskOverview(task.name, task.config, task.target, task.kind, task.primary_metric, list(task.metrics),
                        feature_groups(task), int(rows.num_rows), problems, schemes, task.source_citations(),
                        task.description)


def overviews(data_dir: Path | str | None = None, names: list[str] | None = None) -> list[TaskOverview]:
    """Every task (or those named) counted on a store (default: the packaged data)."""
    store = Store(data_dir or default_data_dir())
    tasks = [get_task(n) for n in names] if names else list_tasks()
    found: dict[str, TaskOverview] = {}
    for config in dict.fromkeys(t.config for t in tasks):  # a config is read once, for all of its tasks
        table = store.read(config)
        found.update((t.name, overview(t, store, table)) for t in tasks if t.config == config)
    return [found[t.name] for t in tasks]


def fold_summary(s: SchemeCount) -> str:
    """``random10: 9 of 10 folds (1 hash bucket holds no problem) [0, 2, ...]``-style text for the table."""
    sch = get_scheme(s.scheme)
    shown = ", ".join(s.fold_names[:4]) + (", ..." if len(s.fold_names) > 4 else "")
    text = f"{s.scheme}{'' if s.on_board else ' (not on the board)'}: {s.folds}"
    if sch.kind == "hash" and s.folds < sch.n_folds:
        empty = sch.n_folds - s.folds
        text += f" of {sch.n_folds} folds ({empty} hash bucket{'s' if empty > 1 else ''} drew no row or problem)"
    else:
        text += " fold" if s.folds == 1 else " folds"
    return f"{text} [{shown}]"


__all__ = ["GROUPS", "SchemeCount", "TaskOverview", "feature_groups", "fold_summary", "overview", "overviews"]
