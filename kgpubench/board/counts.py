"""How many problems each recommendation task has on a store and how its schemes spread them over test folds: what
the board's table captions state beside the folds the results record (:func:`kgpubench.board.ranking.folds_note`).

The result records do not carry these counts (a fold records its problems only when the task records per-problem
choices), so the board's writer (:func:`kgpubench.board.site.render_all`) counts them on the store the results were
scored on (default: the packaged data), with the row selection and fold files the evaluation uses. Nothing here is
rendered; a caption uses a count only when the store's rows are the rows the results record.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import KgpubenchError
from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import Task, problem_keys, select
from kgpubench.tasks.splits import evaluated_folds, fold_column


@dataclass(frozen=True)
class SchemeProblems:
    """One recommendation task under one scheme on one store.

    ``rows``: the task's rows (count); ``columns``: the columns naming a problem; ``problems``: distinct problems;
    ``per_fold``: test fold -> problems in it (folds without a problem are absent).
    """

    rows: int
    columns: tuple[str, ...]
    problems: int
    per_fold: dict[str, int]


def scheme_problems(task: Task, store: Store) -> dict[str, SchemeProblems]:
    """``scheme -> SchemeProblems`` for every scheme of ``task`` (empty for a task without problem columns or
    without rows on ``store``)."""
    if not task.problem_columns:
        return {}
    rows = select(task, store.read(task.config)).rows
    if rows.num_rows == 0:
        return {}
    keys = problem_keys(task, rows)
    out = {}
    for scheme in task.schemes:
        folds = fold_column(task, rows, scheme)
        tested = set(evaluated_folds(scheme, folds))
        pairs = set(zip(keys, (str(f) for f in folds)))  # a problem's rows share one fold
        per_fold = Counter(f for _, f in pairs if f in tested)
        out[scheme] = SchemeProblems(int(rows.num_rows), tuple(task.problem_columns), len(set(keys)),
                                     {f: per_fold[f] for f in evaluated_folds(scheme, per_fold)})
    return out


def problem_counts(tasks: list[Task], data_dir: Path | str | None = None) -> dict[str, dict[str, SchemeProblems]]:
    """``task name -> scheme -> SchemeProblems`` on the store at ``data_dir`` (default: the packaged data) for every
    task with problem columns; a task whose config the store cannot give is left out (its captions then state
    only what the results record)."""
    store = Store(data_dir or default_data_dir())
    out = {}
    for task in tasks:
        try:
            counts = scheme_problems(task, store)
        except (KgpubenchError, OSError):
            continue
        if counts:
            out[task.name] = counts
    return out


__all__ = ["SchemeProblems", "problem_counts", "scheme_problems"]
