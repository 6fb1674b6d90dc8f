"""Every user of the training subsample goes through :func:`kgpubench.tasks.data.train_subsample`: the board's
folds (run_folds), the tuning-budget plans, the few-shot plans, and predict's model; a task that subsamples whole
problems (``subsample_by``) keeps them whole in each; the few-shot plan and the board say which unit."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
from task_fixtures import autotune_table

from kgpubench.board import budget, fewshot
from kgpubench.board.render import _task_notes
from kgpubench.models.evaluation import run_folds
from kgpubench.resources import source_checkout
from kgpubench.tasks import get_task, problem_keys
from kgpubench.tasks.data import task_data, train_subsample
from kgpubench.tasks.splits import EXCLUDED

ROOT = source_checkout()


def _data(cap: int, by_problem: bool):
    base = get_task("autotune-config")
    task = dataclasses.replace(base, max_train_rows=cap, subsample_by=base.problem_columns if by_problem else ())
    return task_data(task, "by-gpu", table=autotune_table())


def _whole(data, idx: np.ndarray, pool: np.ndarray) -> bool:
    """Whether every problem with a row in ``idx`` has all its rows of ``pool`` there."""
    keys = problem_keys(data.task, data.rows)
    kept = set(keys[idx])
    return sum(keys[i] in kept for i in pool) == idx.size


def test_the_board_budget_and_fewshot_plans_take_the_same_whole_problems():
    for by_problem in (True, False):
        data = _data(20, by_problem)
        board = run_folds(data, None, oracle=True)[0]
        budget_plans = {p.fold: p.train for p in budget.plan_folds(data)}
        fewshot_plans = {p.fold: p.train(0) for p in fewshot.plan_folds(data, (0,), min_test_rows=1)[0]}
        assert set(board) == set(budget_plans) == set(fewshot_plans) and len(board) == 3
        for fold in board:
            pool = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))
            assert pool.size > 20  # the cap bites
            expected = train_subsample(data.task, data.rows, pool)
            assert np.array_equal(budget_plans[fold], expected) and np.array_equal(fewshot_plans[fold], expected)
            assert board[fold]["n_train"] == expected.size <= 20
            if by_problem:  # whole problems do not fill this cap: a row rule would have given 20
                assert _whole(data, expected, pool) and expected.size < 20
            else:
                assert expected.size == 20 and not _whole(data, expected, pool)  # rows split problems


def test_the_fewshot_plan_names_the_unit_and_the_committed_plans_still_match():
    data = _data(20, True)
    plans, skipped = fewshot.plan_folds(data, (0,), min_test_rows=1)
    rec = fewshot.plan_record(data, plans, skipped, (0,), max_train_rows=None, max_test_rows=None)
    assert "gpu_name, kernel, problem_size" in rec["train_rule"]["order"]
    for path in sorted((ROOT / "leaderboard" / "results").glob("*/fewshot.json")):
        task = get_task(path.parent.name)
        if task.subsample_by:
            continue
        order = json.loads(path.read_text())["plan"]["train_rule"]["order"]
        assert order == fewshot.train_order(task), path  # unchanged for a task that subsamples rows


def test_the_board_note_says_whole_problems_only_where_the_task_keeps_them():
    conv = get_task("conv-solver")
    assert conv.subsample_by == conv.problem_columns
    note = [n for n in _task_notes(conv, []) if "subsampled" in n]
    assert note == ["Training rows are subsampled to a fixed hashed subset of whole problems (all the rows of one "
                    "kept or dropped together), at most 150,000 rows per fold; every test row is scored."]
    assert "whole problems" in conv.description
    rodinia = [n for n in _task_notes(get_task("rodinia-time"), []) if "subsampled" in n]
    assert rodinia == ["Training rows are subsampled to a fixed hashed subset of at most 10,000 rows per fold; "
                       "every test row is scored."]
