"""The task registry: every benchmark task as a frozen declaration.

>>> from kgpubench.tasks import get_task
>>> get_task("autotune-config").config
'autotune'
"""

from __future__ import annotations

from kgpubench.errors import DuplicateTaskError, unknown_name
from kgpubench.schema import get_table
from kgpubench.tasks._core import (
    PARAMS_PREFIX,
    Task,
    check_features,
    feature_frame,
    forbidden_features,
    group_codes,
    problem_keys,
    task_forbidden_features,
)
from kgpubench.tasks.definitions import ALL_TASKS, CONFIG_MAIN_TASK
from kgpubench.tasks.extras import EXTRAS
from kgpubench.tasks.scoring import oracle_of, scorer_of
from kgpubench.tasks.selection import Selection, select, task_rows


class TaskRegistry:
    """Name -> :class:`Task`; refuses duplicates, answers unknown names with suggestions."""

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}

    def register(self, task: Task) -> Task:
        """Add ``task``; a second task of the same name raises :class:`DuplicateTaskError`, an unknown
        ``scorer`` or ``oracle`` :class:`~kgpubench.errors.UnknownNameError`."""
        if not isinstance(task, Task):
            raise TypeError(f"register() takes a Task, got {type(task).__name__}")
        check_features(task)
        unknown = [e for e in task.extras if e not in EXTRAS]
        if unknown:
            raise unknown_name(f"extra of task {task.name!r}", unknown[0], EXTRAS)
        scorer_of(task)
        oracle_of(task)
        if task.name in self._tasks:
            raise DuplicateTaskError(
                f"task {task.name!r} is already registered (config {self._tasks[task.name].config!r}); "
                "give the new task another name.")
        self._tasks[task.name] = task
        return task

    def get(self, name: str) -> Task:
        try:
            return self._tasks[name]
        except KeyError:
            raise unknown_name("task", name, self._tasks) from None

    def names(self) -> list[str]:
        return list(self._tasks)

    def __iter__(self):
        return iter(self._tasks.values())

    def __len__(self) -> int:
        return len(self._tasks)


REGISTRY = TaskRegistry()
for _task in ALL_TASKS:
    REGISTRY.register(_task)


def get_task(name: str) -> Task:
    """The registered task called ``name`` (:class:`~kgpubench.errors.UnknownNameError` with suggestions)."""
    return REGISTRY.get(name)


def as_task(task: Task | str) -> Task:
    """``task`` itself, or the registered task it names (:func:`get_task`): what a public entry point calls once,
    so that everything below it receives the :class:`Task`."""
    return task if isinstance(task, Task) else get_task(task)


def list_tasks() -> list[Task]:
    """All registered tasks, in declaration order."""
    return list(REGISTRY)


def main_task(config: str) -> Task:
    """The task whose split files ``load_dataset(config, scheme=...)`` uses by default."""
    get_table(config)
    return get_task(CONFIG_MAIN_TASK[config])


__all__ = [
    "CONFIG_MAIN_TASK",
    "PARAMS_PREFIX",
    "REGISTRY",
    "DuplicateTaskError",
    "Task",
    "TaskRegistry",
    "as_task",
    "check_features",
    "Selection",
    "feature_frame",
    "group_codes",
    "select",
    "forbidden_features",
    "get_task",
    "list_tasks",
    "main_task",
    "problem_keys",
    "task_forbidden_features",
    "task_rows",
]
