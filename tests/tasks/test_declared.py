"""Tasks declare what they do (scorer, problem records, measurement oracle); no code branches on their names."""

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from task_fixtures import npb_crafted_table, stencil_table

from kgpubench.errors import OptionError, UnknownNameError
from kgpubench.models.evaluation import fit_predict
from kgpubench.tasks import TASK_NAME, TaskRegistry, get_task, list_tasks, task_rows
from kgpubench.tasks.scoring import SCORERS, oracle_of, problem_choices, score_fold, scorer_of, with_scoring_columns

ROOT = Path(__file__).resolve().parents[2]


def _renamed(name: str, **changes):
    return dataclasses.replace(get_task(name), name="my-" + name, **changes)


def test_a_renamed_copy_scores_exactly_like_the_original():
    rows = stencil_table().slice(0, 5)  # one problem; tiles 111, 222, 444, 148, 888
    y = np.array([10.0, 8.0, 5.0, 6.0, 4.0])
    p = np.array([9.0, 1.0, 7.0, 8.0, 9.0])  # picks (2, 2, 2): 8.0
    copy = _renamed("stencil-tile")
    s = score_fold(copy, rows, y, p)
    assert s == score_fold(get_task("stencil-tile"), rows, y, p)
    assert s["regret"] == pytest.approx(8.0 / 4.0 - 1) and s["improvement_coefficient"] == pytest.approx(10 / 8)
    assert problem_choices(copy, rows, y, p) == {next(iter(problem_choices(copy, rows, y, p))): {
        "chosen": 8.0, "best": 4.0, "baseline": 10.0}}


def test_the_declared_scorer_decides_not_the_name():
    rows = stencil_table().slice(0, 5)
    y = np.array([10.0, 8.0, 5.0, 6.0, 4.0])
    p = np.array([9.0, 1.0, 7.0, 8.0, 9.0])
    generic = dataclasses.replace(get_task("stencil-tile"), scorer="choice")  # same name, other declaration
    s = score_fold(generic, rows, y, p)
    assert s["regret"] is None and s["improvement_coefficient"] is None and s["pct_improved"] is None
    assert s["male"] == pytest.approx(np.mean(np.abs(np.log(p) - np.log(y))))


def test_npb_columns_and_oracle_come_from_the_declaration():
    table = npb_crafted_table()
    copy = _renamed("npb-tpb")
    assert copy.measures and scorer_of(copy) is SCORERS["npb-app"]
    rows = with_scoring_columns(copy, table, task_rows(copy, table))
    assert rows.column_names == with_scoring_columns(get_task("npb-tpb"), table,
                                                     task_rows(get_task("npb-tpb"), table)).column_names
    y = np.asarray(rows["time_ms_mean"].to_pylist(), dtype=float)
    problems = oracle_of(copy)(copy, rows, y)
    assert len(problems) == 2  # GPU A and GPU B

    class MeasureTwice:
        uses_measurements = True
        predicts_target = False

        def fit(self, X, y):
            return self

        def predict(self, X, problems=None):
            for pr in problems:  # the default (psinv 1024), psinv at 128, the default again: 2 distinct
                pr.measure()
                pr.measure({"psinv": 128})
                pr.measure({"psinv": 1024})
            return np.zeros(len(X))

    out = fit_predict(lambda task, seed: MeasureTwice(), copy, rows.to_pandas(), y, rows.to_pandas(),
                      problems=problems)
    assert out.measurements == [2, 2]
    plain = dataclasses.replace(copy, oracle=None)
    assert not plain.measures and oracle_of(plain) is None
    with pytest.raises(Exception, match="has no measurement oracle \\(tasks with one: npb-tpb\\)"):
        fit_predict(lambda task, seed: MeasureTwice(), plain, rows.to_pandas(), y, rows.to_pandas())


def test_an_unknown_scorer_or_oracle_is_refused_at_registration():
    with pytest.raises(UnknownNameError, match="unknown scorer 'tile'. Did you mean 'tiles'"):
        TaskRegistry().register("my-stencil-tile", _renamed("stencil-tile", scorer="tile"))
    with pytest.raises(UnknownNameError, match="unknown measurement oracle 'nbp'"):
        TaskRegistry().register("my-npb-tpb", _renamed("npb-tpb", oracle="nbp"))


def test_an_unknown_metric_or_a_name_that_is_no_folder_name_is_refused_at_registration():
    with pytest.raises(UnknownNameError, match="unknown metric of task 'my-stencil-tile' 'mape_'. Did you mean 'mape'"):
        TaskRegistry().register("my-stencil-tile", _renamed("stencil-tile", metrics=("mape_",), seed_metrics=()))
    for name in ("../kernel-time", "Kernel-Time", "kernel time", "-kernel"):
        task = dataclasses.replace(get_task("kernel-time"), name=name)
        with pytest.raises(OptionError, match="a task's name is a folder name"):
            TaskRegistry().register(name, task)
    assert all(TASK_NAME.fullmatch(t.name) for t in list_tasks())


def test_every_task_declares_a_known_scorer_and_its_seed_metrics():
    declared = {t.name: (t.scorer, t.record_problems, t.oracle) for t in list_tasks()}
    assert declared["npb-tpb"] == ("npb-app", True, "npb")
    assert declared["stencil-tile"] == ("tiles", True, None)
    assert declared["autotune-config"] == ("choice", False, None)
    for task in list_tasks():
        assert scorer_of(task).name == task.scorer
        assert task.seed_metrics and set(task.seed_metrics) <= set(task.metrics) or task.seed == "-"


@pytest.mark.parametrize("path", ["kgpubench/tasks/scoring.py", "kgpubench/tasks/data.py",
                                  "kgpubench/models/evaluation.py", "kgpubench/models/submission.py",
                                  "kgpubench/sandbox/session.py",
                                  "kgpubench/tasks/npb.py", "kgpubench/tasks/selection.py"])
def test_no_behaviour_branches_on_a_task_name(path):
    names = {t.name for t in list_tasks()}
    tree = ast.parse((ROOT / path).read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = [(n.lineno, n.value) for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and n.value in names and id(n) not in docstrings]
    assert found == []
