"""The one training-subsample rule (:func:`kgpubench.tasks.data.train_subsample`): row units as the board always
had them, problem units (``Task.subsample_by``) kept or dropped whole; and the task hash that the new field
leaves unchanged for every task that does not set it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from kgpubench.tasks import Task, get_task, list_tasks
from kgpubench.tasks.data import LATER_FIELDS, hashed_order, subsample_rank, task_data, task_sha256, train_subsample
from kgpubench.tasks.splits import EXCLUDED

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "leaderboard" / "results"


def _task(*, subsample_by=("gpu_name", "problem_id"), cap=10) -> Task:
    return Task(name="toy-solver", config="convolutions", target="time_ms", features=("solver",),
                kind="recommendation", metrics=("top1_regret",), schemes=("by-gpu",), description="-", seed="-",
                problem_columns=("gpu_name", "problem_id"), max_train_rows=cap, subsample_by=subsample_by)


def _rows(sizes: list[int], gpu: str = "A", seed: int = 0) -> pa.Table:
    """``len(sizes)`` problems on ``gpu``, problem i with ``sizes[i]`` solvers s0, s1, ... timed at random."""
    rng = np.random.default_rng(seed)
    problem = [f"p{i}" for i, n in enumerate(sizes) for _ in range(n)]
    solver = [f"s{j}" for n in sizes for j in range(n)]
    return pa.table({"row_id": [f"{gpu}-{p}-{s}" for p, s in zip(problem, solver)], "gpu_name": [gpu] * len(problem),
                     "problem_id": problem, "solver": solver, "time_ms": rng.uniform(1, 10, len(problem))})


def _problems(rows: pa.Table, idx: np.ndarray) -> list[str]:
    return [rows["problem_id"][int(i)].as_py() for i in idx]


def test_row_units_select_exactly_what_the_board_selected_before_on_rodinia_time():
    task = get_task("rodinia-time")
    assert task.max_train_rows and not task.subsample_by
    data = task_data(task, "by-gpu")
    fold = data.fold_names[0]
    train = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))
    assert train.size > task.max_train_rows  # the cap bites
    rank = hashed_order(data.rows["row_id"].to_pylist(), task.name)  # the rule as run_folds wrote it out before
    before = np.sort(train[np.argsort(rank[train], kind="mergesort")[: task.max_train_rows]])
    after = train_subsample(task, data.rows, train)
    assert np.array_equal(after, before) and after.size == task.max_train_rows
    # a rank computed once for all folds gives the same
    assert np.array_equal(train_subsample(task, data.rows, train, rank=subsample_rank(task, data.rows)), before)


def test_no_cap_or_fewer_rows_than_the_cap_keeps_every_training_row():
    rows = _rows([3, 4, 2])
    train = np.arange(rows.num_rows)
    assert np.array_equal(train_subsample(_task(cap=9), rows, train), train)  # 9 rows, cap 9
    assert np.array_equal(train_subsample(_task(cap=4), rows, train, cap=0), train)  # cap 0: none


def test_problem_units_keep_whole_problems_under_the_cap_in_hashed_order():
    sizes = [3, 5, 1, 4, 2, 6, 2, 3, 1, 4, 5, 2]
    rows = _rows(sizes)
    task = _task(cap=17)
    train = np.arange(rows.num_rows)
    kept = train_subsample(task, rows, train)
    assert kept.size <= 17 and np.array_equal(kept, np.sort(kept))
    kept_problems = set(_problems(rows, kept))
    for p in kept_problems:  # no problem split: every solver of a kept problem is kept
        assert _problems(rows, kept).count(p) == sizes[int(p[1:])]
    # by hand: units in order of sha256(task name + '["A","p<i>"]'); whole units while the total stays <= 17,
    # stopping at the first that does not fit
    keys = [json.dumps(["A", f"p{i}"], separators=(",", ":")) for i in range(len(sizes))]
    order = np.argsort(hashed_order(keys, task.name))
    total, expected = 0, set()
    for i in order:
        if total + sizes[i] > 17:
            break
        total += sizes[i]
        expected.add(f"p{i}")
    assert kept_problems == expected and kept.size == total


def test_the_first_unit_that_does_not_fit_ends_the_subsample():
    sizes = [4, 4, 4, 1, 1, 1]
    rows = _rows(sizes)
    keys = [json.dumps(["A", f"p{i}"], separators=(",", ":")) for i in range(len(sizes))]
    order = [int(i) for i in np.argsort(hashed_order(keys, "toy-solver"))]
    skip_differs = False
    for cap in range(1, sum(sizes)):
        kept = set(_problems(rows, train_subsample(_task(cap=cap), rows, np.arange(rows.num_rows))))
        stop, skip, total_stop, total_skip, stopped = set(), set(), 0, 0, False
        for i in order:
            stopped = stopped or total_stop + sizes[i] > cap
            if not stopped:
                stop.add(f"p{i}")
                total_stop += sizes[i]
            if total_skip + sizes[i] <= cap:  # the rule not chosen: skip a unit too big, try the next ones
                skip.add(f"p{i}")
                total_skip += sizes[i]
        assert kept == stop, cap
        skip_differs = skip_differs or skip != stop
    assert skip_differs  # the caps tried tell the two rules apart


def test_the_subsample_is_deterministic_and_independent_of_row_order():
    rows = _rows([3, 5, 1, 4, 2, 6, 2, 3, 1, 4, 5, 2] * 5, seed=1)
    task = _task(cap=50)
    train = np.arange(rows.num_rows)[::2].copy()  # a training set that holds part of some problems
    kept = rows["row_id"].take(pa.array(train_subsample(task, rows, train))).to_pylist()
    assert rows["row_id"].take(pa.array(train_subsample(task, rows, train))).to_pylist() == kept
    perm = np.random.default_rng(7).permutation(rows.num_rows)
    shuffled = rows.take(pa.array(perm))
    inverse = np.argsort(perm)
    kept_shuffled = train_subsample(task, shuffled, np.sort(inverse[train]))
    assert sorted(shuffled["row_id"].take(pa.array(kept_shuffled)).to_pylist()) == sorted(kept)


def _transfer_regret(rows: pa.Table, train: np.ndarray, target: pa.Table) -> float:
    """A transfer-like pick: per target problem, the solver fastest on the source GPU among the training rows of
    that problem (none seen: the first solver); the mean regret of the picks on the target."""
    src = {}
    for i in train:
        p, s, t = (rows[c][int(i)].as_py() for c in ("problem_id", "solver", "time_ms"))
        if p not in src or t < src[p][1]:
            src[p] = (s, t)
    times: dict[str, dict[str, float]] = {}
    for p, s, t in zip(*(target[c].to_pylist() for c in ("problem_id", "solver", "time_ms"))):
        times.setdefault(p, {})[s] = t
    regrets = [tt[src[p][0] if p in src else "s0"] / min(tt.values()) - 1 for p, tt in times.items() if p in src]
    return float(np.mean(regrets)) if regrets else 0.0


def test_a_transfer_like_pick_keeps_the_best_solver_of_every_kept_problem():
    sizes = [6] * 40
    source = _rows(sizes, gpu="A", seed=2)
    # the target GPU ranks the solvers as the source does (times scaled): picking the source's fastest is exact
    target = source.set_column(1, "gpu_name", pa.array(["B"] * source.num_rows)).set_column(
        4, "time_ms", pa.compute.multiply(source["time_ms"], 2.0))
    train = np.arange(source.num_rows)
    by_problem = train_subsample(_task(cap=120), source, train)
    by_row = train_subsample(_task(subsample_by=(), cap=120), source, train)
    assert by_problem.size <= 120 and by_row.size == 120
    assert _transfer_regret(source, by_problem, target) == 0.0  # every kept problem kept its fastest solver
    assert _transfer_regret(source, by_row, target) > 0.0  # rows: some problems lost theirs


def test_subsample_by_needs_a_cap():
    with pytest.raises(ValueError, match="max_train_rows is not set"):
        _task(cap=None)


# ----- the task hash --------------------------------------------------------------------------------------------


def _recorded_hashes() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in RESULTS.glob("*/*/*.json"):
        doc = json.loads(path.read_text())
        sha = (doc.get("dataset") or {}).get("task_sha256") if isinstance(doc, dict) else None
        if sha:
            out.setdefault(doc["task"], set()).add(sha)
    return out


def test_a_field_added_later_leaves_every_task_at_its_default_with_the_hash_its_results_recorded():
    recorded = _recorded_hashes()
    tasks = {t.name: t for t in list_tasks()}
    assert len(recorded) >= 14 and set(recorded) <= set(tasks)
    for name, shas in recorded.items():
        assert shas == {task_sha256(tasks[name])}, name  # every committed result still matches
    setting = {t.name for t in tasks.values() if any(getattr(t, f) != () for f in LATER_FIELDS)}
    assert setting == {"conv-solver"}
    conv = tasks["conv-solver"]
    assert task_sha256(dataclasses.replace(conv, subsample_by=())) != task_sha256(conv)  # its hash moved


def test_a_later_field_at_its_default_is_hashed_as_if_it_did_not_exist():
    conv = get_task("conv-solver")
    default = dataclasses.replace(conv, subsample_by=())
    other = dataclasses.replace(conv, subsample_by=("gpu_name",))
    assert len({task_sha256(default), task_sha256(conv), task_sha256(other)}) == 3
    assert task_sha256(default) == task_sha256(dataclasses.replace(default, description="changed"))
