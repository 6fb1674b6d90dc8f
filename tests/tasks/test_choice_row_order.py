"""A choice task's row order inside a problem says nothing about which row is fastest.

MIOpen's find-db lists a problem's solvers fastest first. Kept in that order, a constant model that picks the
first row of each problem won conv-solver by position alone (top-1 regret 0.003). The importer now orders a
line's rows by row id; these tests check the shipped rows, and that the check itself catches the leak.
"""

import numpy as np
import pytest

from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import get_task, list_tasks, task_rows


def best_position_rates(keys: list[tuple], y: np.ndarray) -> tuple[float, float, float, int]:
    """Over the problems with two or more rows: the share whose first row is the fastest, the share whose last
    row is, the share expected if the order were random (mean of 1 / rows), and the number of problems."""
    groups: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    first = last = expected = 0.0
    n = 0
    for index in groups.values():
        if len(index) < 2:
            continue
        values = y[index]
        first += values[0] == values.min()
        last += values[-1] == values.min()
        expected += 1.0 / len(index)
        n += 1
    return first / n, last / n, expected / n, n


def test_the_check_flags_a_fastest_first_order_and_passes_a_shuffled_one():
    rng = np.random.default_rng(0)
    keys, times = [], []
    for problem in range(2000):
        for t in sorted(rng.uniform(1, 10, size=rng.integers(2, 6))):  # fastest first, as MIOpen lists them
            keys.append((problem,))
            times.append(t)
    y = np.asarray(times)
    first, last, expected, n = best_position_rates(keys, y)
    assert n == 2000 and first == 1.0 and last == 0.0 and 0.2 < expected < 0.5
    order = rng.permutation(len(y))  # the same rows shuffled inside the whole table keep their problem
    shuffled = best_position_rates([keys[i] for i in order], y[order])
    assert abs(shuffled[0] - shuffled[2]) < 0.03 and abs(shuffled[1] - shuffled[2]) < 0.03


CHOICE_TASKS = [t.name for t in list_tasks() if t.completeness == "choice"]


def test_choice_tasks_are_declared():
    assert "conv-solver" in CHOICE_TASKS


@pytest.mark.slow
@pytest.mark.parametrize("name", CHOICE_TASKS)
def test_shipped_rows_of_a_choice_task_do_not_list_the_fastest_first_or_last(name):
    """The task's rows in the order every model gets them (``task_data`` adds columns and folds to these, never
    reorders them; its features and hashes are not needed here)."""
    task = get_task(name)
    rows = task_rows(task, Store(default_data_dir()).read(task.config))
    keys = list(zip(*(rows[c].to_pylist() for c in task.problem_columns)))
    first, last, expected, n = best_position_rates(keys, rows[task.target].to_numpy(zero_copy_only=False))
    assert n > 10_000  # enough problems that a leak of a few points shows (binomial sd about 0.0015)
    assert abs(first - expected) < 0.02, (name, first, expected)
    assert abs(last - expected) < 0.02, (name, last, expected)
