"""The task registry: every benchmark task as a frozen declaration.

>>> from kgpubench.tasks import get_task
>>> get_task("autotune-config").config
'autotune'
"""

from __future__ import annotations

import re

from kgpubench.errors import DuplicateNameError, DuplicateTaskError, OptionError, unknown_name
from kgpubench.registry import Registry
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
from kgpubench.tasks.goals import Goal
from kgpubench.tasks.metrics import METRICS
from kgpubench.tasks.scoring import oracle_of, scorer_of
from kgpubench.tasks.selection import Selection, select, task_rows

#: The entry-point group a package plugs its tasks into (see :mod:`kgpubench.registry`).
ENTRY_POINT_GROUP = "kgpubench.tasks"
# A task's name names folders (leaderboard/results/<task>/, splits/<task>/): never a path.
TASK_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


def check_task(name: str, task: Task) -> None:
    """What registration asks of every task, built in or plugged in: a name fit for a folder, real, pre-run
    features (the leakage guard), known metrics, extras, scorer and oracle
    (:class:`~kgpubench.errors.UnknownNameError` with suggestions)."""
    if not TASK_NAME.fullmatch(name):
        raise OptionError(f"task name {name!r}: a task's name is a folder name of results and splits; use lower-case "
                          "letters, digits, '-' and '_' (starting with a letter or digit).")
    check_features(task)
    for kind, names, known in (("metric", task.metrics, METRICS), ("extra", task.extras, EXTRAS)):
        unknown = [n for n in names if n not in known]
        if unknown:
            raise unknown_name(f"{kind} of task {name!r}", unknown[0], known)
    scorer_of(task)
    oracle_of(task)
    check_goals(name, task)


def check_goals(name: str, task: Task) -> None:
    """A task's goals are on its own schemes and metrics, and shown: a task with goals names the ``goals`` extra
    (the table ``scripts/fewshot_curves.py --goals-out`` writes), and one that names it declares goals."""
    for goal in task.goals:
        if goal.scheme not in task.schemes:
            raise OptionError(f"task {name!r}, goal {goal.label!r}: scheme {goal.scheme!r} is not one of the task's "
                              f"schemes ({', '.join(task.schemes)}); declare the goal on one of them.")
        if goal.metric not in task.metrics:
            raise OptionError(f"task {name!r}, goal {goal.label!r}: metric {goal.metric!r} is not one of the task's "
                              f"metrics ({', '.join(task.metrics)}); add it to the task's metrics or pick one.")
    if bool(task.goals) != ("goals" in task.extras):
        raise OptionError(f"task {name!r}: it declares {len(task.goals)} goal{'' if len(task.goals) == 1 else 's'} and "
                          f"{'names' if 'goals' in task.extras else 'does not name'} the 'goals' extra; a task with "
                          "goals names the extra 'goals' (the board's goals table), and only such a task does.")


class TaskRegistry(Registry[Task]):
    """Name -> :class:`Task` (a :class:`~kgpubench.registry.Registry` whose entries pass :func:`check_task`);
    refuses duplicates, answers unknown names with suggestions. ``TaskRegistry()`` is an empty one, for tests."""

    def __init__(self, builtins=None, group: str | None = None) -> None:
        super().__init__("task", group, Task, builtins=builtins, check=check_task, name_of=lambda t: t.name)


# The built-in tasks are checked on the first look-up, then the plugged-in ones are read.
REGISTRY = TaskRegistry(builtins=lambda: ((t.name, t) for t in ALL_TASKS), group=ENTRY_POINT_GROUP)


def get_task(name: str) -> Task:
    """The registered task called ``name`` (:class:`~kgpubench.errors.UnknownNameError` with suggestions)."""
    return REGISTRY[name]


def as_task(task: Task | str) -> Task:
    """``task`` itself, or the registered task it names (:func:`get_task`): what a public entry point calls once,
    so that everything below it receives the :class:`Task`."""
    return task if isinstance(task, Task) else get_task(task)


def goals_of(task: Task | str) -> tuple[Goal, ...]:
    """The goals declared on ``task`` (a :class:`Task` or the name of a registered one, built in or plugged in)."""
    return as_task(task).goals


def list_tasks() -> list[Task]:
    """All registered tasks: the built-in ones in declaration order, then the plugged-in ones by name."""
    return list(REGISTRY.values())


def main_task(config: str) -> Task:
    """The task whose split files ``load_dataset(config, scheme=...)`` uses by default."""
    get_table(config)
    return get_task(CONFIG_MAIN_TASK[config])


__all__ = [
    "CONFIG_MAIN_TASK",
    "ENTRY_POINT_GROUP",
    "Goal",
    "PARAMS_PREFIX",
    "REGISTRY",
    "DuplicateNameError",
    "DuplicateTaskError",
    "Task",
    "TaskRegistry",
    "as_task",
    "check_features",
    "check_task",
    "Selection",
    "feature_frame",
    "group_codes",
    "select",
    "forbidden_features",
    "get_task",
    "goals_of",
    "list_tasks",
    "main_task",
    "problem_keys",
    "task_forbidden_features",
    "task_rows",
]
