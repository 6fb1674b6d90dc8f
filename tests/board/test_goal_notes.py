"""Each goal line shows a scaling-aware model's figure beside its target, and a goal out of reach says why."""

import json
import re
import statistics
from pathlib import Path

import pytest

from kgpubench.board.baselines import planned_tasks
from kgpubench.board.fewshot import board_goal, judge
from kgpubench.tasks import Goal, get_task, list_tasks
from kgpubench.tasks.definitions import LABEL_FLOOR_WHY
from kgpubench.tasks.extras import goals

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "leaderboard" / "results"
BASELINES = ROOT / "baselines"
# every declared goal with its task's name
GOALS = [(task.name, goal) for task in list_tasks() for goal in task.goals]
BOARD_TASKS = sorted({name for name, goal in GOALS if goal.source == "board"})


def test_judge_records_the_declared_scaling_model_and_evidence():
    goal = Goal("label", "by-gpu", 10.0, scaling="slow", why="labels disagree by 20 %")
    rec = judge(goal, {"fast": {"A": 5.0, "B": 9.0}, "slow": {"A": 12.0, "B": 30.0}})
    assert rec["best_model"] == "fast" and rec["met"]
    assert rec["scaling_model"] == "slow" and rec["why"] == "labels disagree by 20 %"
    assert "why" not in judge(Goal("label", "by-gpu", 10.0), {"fast": {"A": 5.0}})


def test_the_goals_table_puts_the_scaling_models_figures_and_the_evidence_beside_the_target():
    doc = {"goals": [judge(Goal("label", "by-gpu", 10.0, scaling="slow", why="labels disagree"),
                           {"fast": {"A": 11.0, "B": 9.0, "C": 8.0}, "slow": {"A": 12.0, "B": 30.0, "C": 7.0}})]}
    table = goals(doc)
    header, row = table.header, table.rows[0]
    assert row[header.index("scaling-aware model")] == "slow: median 12.0, 1 of 3 within 10.0 %"
    assert row[header.index("met")] == "not met: labels disagree"


def test_every_goal_names_a_scaling_aware_baseline_that_exists_and_runs_on_its_task():
    assert GOALS
    for task, goal in GOALS:
        assert goal.scaling, goal.label
        path = BASELINES / f"{goal.scaling}.py"
        assert path.is_file(), goal.scaling
        assert task in {t.name for t in planned_tasks(path)}, (goal.scaling, task)


def _card_block(name: str) -> str:
    card = (ROOT / "DATASET_CARD.md").read_text()
    return card.split(f"<!-- BEGIN kgpubench:{name} -->")[1].split("<!-- END")[0]


def test_the_label_floor_quoted_as_evidence_is_the_cards_figure_of_the_shipped_data():
    block = _card_block("figures:label_floor")
    overall = re.search(r"median max/min time ([0-9.]+)", block).group(1)
    assert f"median max/min of {float(overall):.2f}" in LABEL_FLOOR_WHY
    for dtype, fmt in (("bfloat16", "bf16 {:.2f}"), ("fp8", "fp8 {:.2f}"), ("fp8_block", "fp8_block {:.1f}"),
                       ("nvfp4", "nvfp4 {:.2f}")):
        ratio = re.search(rf"\| NVIDIA B200 \| {dtype} \| [0-9,]+ \| ([0-9.]+) \|", block).group(1)
        assert fmt.format(float(ratio)) in LABEL_FLOOR_WHY, dtype


@pytest.mark.parametrize("task", BOARD_TASKS)
def test_the_shipped_goal_rows_show_the_scaling_models_board_figures(task):
    doc = json.loads((RESULTS / task / "goals.json").read_text())
    table = goals(doc)
    col = table.header.index("scaling-aware model")
    for goal_rec, row in zip(doc["goals"], table.rows):
        goal = next(g for g in get_task(task).goals if g.label == goal_rec["goal"])
        if goal.source != "board":
            continue
        result = json.loads((RESULTS / task / goal.scheme / f"{goal.scaling}.json").read_text())
        figs = [s["scores"][goal.metric] * goal.percent for f, s in result["folds"].items()
                if s.get("scores", {}).get(goal.metric) is not None and (not goal.groups or f in goal.groups)]
        assert row[col].startswith(f"{goal.scaling}: median {statistics.median(figs):.1f}, "), row[col]
        if not goal_rec["met"] and goal.why:
            assert row[-1] == "not met: " + goal.why


@pytest.mark.parametrize("task", BOARD_TASKS)
def test_each_committed_board_goal_is_what_the_committed_results_give_now(task):
    """A goal read from the board is a pure function of the committed results: a result added or re-run after the
    goals file was written (as config_blend once was) makes the file stale, and this test names it."""
    doc = json.loads((RESULTS / task / "goals.json").read_text())
    committed = {rec["goal"]: rec for rec in doc["goals"]}
    for goal in (g for g in get_task(task).goals if g.source == "board"):
        fresh = json.loads(json.dumps(board_goal(get_task(task), goal, RESULTS)))  # the same JSON types as the file
        assert committed[goal.label] == fresh, (
            f"{task}/goals.json is stale for {goal.label!r}: rerun the goals command of docs/FEWSHOT.md")
