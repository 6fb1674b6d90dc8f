"""A task's goals are declared on the task (``Task.goals``): read through ``goals_of`` by task or name, built in or
plugged in, checked at registration, left out of the task's hash, and what the committed goals files hold."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from kgpubench.errors import OptionError
from kgpubench.tasks import REGISTRY, Goal, TaskRegistry, get_task, goals_of, list_tasks
from kgpubench.tasks.data import task_sha256
from kgpubench.tasks.goals import IDEAL_TRANSFER, goal_from_fields, goal_rows, grouped_rows

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "leaderboard" / "results"
WITH_GOALS = [t.name for t in list_tasks() if t.goals]


def _mine(**changes):
    """program-time under another name, as a plugin package would declare a task of its own."""
    goal = Goal("leave-one-GPU-out: median APE on GPU A", "by-gpu", 12.5, groups=("GPU A",), scaling="median")
    return dataclasses.replace(get_task("program-time"), name="program-time-mine", goals=(goal,), **changes)


def test_goals_of_is_the_tasks_declaration_by_task_or_by_name():
    assert WITH_GOALS  # the shipped tasks declare goals
    for task in list_tasks():
        assert goals_of(task.name) is task.goals and goals_of(task) is task.goals
        # a task with goals shows them (the goals extra), and only such a task names that extra
        assert bool(task.goals) == ("goals" in task.extras), task.name
        for goal in task.goals:
            assert goal.scheme in task.schemes and goal.metric in task.metrics, (task.name, goal.label)
    assert goals_of("kernel-time") == ()


def test_a_plugged_in_task_declares_its_goals_the_same_way():
    task = _mine()
    assert TaskRegistry().register(task.name, task) is task  # a registry's checks pass a declared goal
    assert goals_of(task) == task.goals
    with REGISTRY.added(task.name, task):  # as an entry point registers it: by name, through the registry
        (goal,) = goals_of("program-time-mine")
    assert (goal.label, goal.scheme, goal.target_pct, goal.groups) == (
        "leave-one-GPU-out: median APE on GPU A", "by-gpu", 12.5, ("GPU A",))
    assert "program-time-mine" not in REGISTRY  # the block's entry is gone


@pytest.mark.parametrize(("goal", "match"), [
    (Goal("g", "neusight", 10.0), "scheme 'neusight' is not one of the task's schemes"),
    (Goal("g", "by-gpu", 10.0, metric="top1_regret"), "metric 'top1_regret' is not one of the task's metrics"),
])
def test_registration_refuses_a_goal_on_another_scheme_or_metric(goal, match):
    task = _mine()
    task = dataclasses.replace(task, goals=(goal,))
    with pytest.raises(OptionError, match=match) as err:
        TaskRegistry().register(task.name, task)
    assert "program-time-mine" in str(err.value) and "'g'" in str(err.value)


def test_registration_refuses_goals_that_the_board_would_not_show_or_a_goals_table_without_goals():
    task = _mine()
    unshown = dataclasses.replace(task, extras=tuple(e for e in task.extras if e != "goals"))
    with pytest.raises(OptionError, match="declares 1 goal and does not name the 'goals' extra"):
        TaskRegistry().register(unshown.name, unshown)
    empty = dataclasses.replace(task, goals=())
    with pytest.raises(OptionError, match="declares 0 goals and names the 'goals' extra"):
        TaskRegistry().register(empty.name, empty)


@pytest.mark.parametrize(("fields", "match"), [
    ({"source": "guess"}, "source 'guess'"),
    ({"over": "mean"}, "over 'mean'"),
    ({"target_pct": None}, "no target_pct and nothing it beats"),
    ({"target_pct": None, "beats": "transfer", "over": "median"}, "over='median' needs a target_pct"),
    ({"beats": IDEAL_TRANSFER}, "needs source='predict'"),
])
def test_a_goal_refuses_fields_the_board_cannot_judge(fields, match):
    with pytest.raises(ValueError, match=match):
        Goal(**{"label": "g", "scheme": "by-gpu", "target_pct": 10.0, **fields})


def test_goals_are_presentation_and_leave_the_tasks_hash_and_its_committed_results_alone():
    for name in WITH_GOALS:
        task = get_task(name)
        assert task_sha256(dataclasses.replace(task, goals=())) == task_sha256(task)
        committed = sorted((RESULTS / name).glob("*/*.json"))[0]
        assert json.loads(committed.read_text())["dataset"]["task_sha256"] == task_sha256(task), committed
    # a field that decides a score still moves it (the hash is not blind)
    task = get_task(WITH_GOALS[0])
    assert task_sha256(dataclasses.replace(task, max_train_rows=7)) != task_sha256(task)


def test_a_goal_survives_the_json_the_sandbox_sends():
    (small,) = [g for g in goals_of("program-time") if g.target_range == (0.0, 0.1)]
    (large,) = [g for g in goals_of("program-time") if g.target_range is not None and g.target_range[1] == math.inf]
    (where,) = [g for g in goals_of("operator-latency") if g.where]
    for goal in (small, large, where):
        again = goal_from_fields(json.loads(json.dumps(dataclasses.asdict(goal))))
        assert again == goal and hash(again) == hash(goal)


def test_which_rows_a_goal_scores_by_hand():
    rows = pa.table({"gpu_name": ["A", "A", "B", "B", "C"], "operator": ["bmm", "linear", "bmm", "bmm", "bmm"]})
    y = np.array([0.05, 0.5, 0.2, 0.01, 3.0])
    goal = Goal("g", "by-gpu", 15.0, source="predict", groups=("A", "B"), where=(("operator", ("bmm",)),),
                target_range=(0.02, 1.0))
    # kept: bmm rows whose label lies in [0.02, 1.0): rows 0 (A) and 2 (B); row 3 is below, row 4 is C and above
    assert goal_rows(rows, y, goal).tolist() == [True, False, True, False, False]
    assert grouped_rows(rows, y, goal) == {"A": 1, "B": 1}
    assert grouped_rows(rows, y, goal, keep=np.array([False, True, True, True, True])) == {"A": 0, "B": 1}


@pytest.mark.parametrize("name", WITH_GOALS)
def test_each_committed_goals_file_holds_the_declared_goals_in_order(name):
    doc = json.loads((RESULTS / name / "goals.json").read_text())
    assert doc["task"] == name
    declared = [(g.label, g.scheme, g.target_pct) for g in goals_of(name)]
    assert [(r["goal"], r["scheme"], r["target_pct"]) for r in doc["goals"]] == declared
    for rec, goal in zip(doc["goals"], goals_of(name)):
        assert rec.get("scaling_model", "") == goal.scaling and rec.get("why", "") == goal.why, goal.label
        assert rec.get("beats", "") == goal.beats
