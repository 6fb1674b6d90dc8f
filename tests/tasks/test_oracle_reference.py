"""The oracle reference is named in one place (``kgpubench.tasks.reference.ORACLE``): no other module of the package
or its scripts spells the name, so the board, the jobs, the ranking and the budget curves cannot disagree on it."""

import ast
from pathlib import Path

from kgpubench.board.leaderboard import plan
from kgpubench.board.ranking import is_reference
from kgpubench.models.evaluation import evaluate
from kgpubench.results.result import Result
from kgpubench.tasks.reference import ORACLE

ROOT = Path(__file__).resolve().parents[2]


def test_only_the_reference_module_spells_the_oracle_name():
    spelled = sorted(f"{path.relative_to(ROOT)}:{node.lineno}"
                     for folder in ("kgpubench", "scripts") for path in (ROOT / folder).rglob("*.py")
                     for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, ast.Constant) and node.value == "oracle")
    assert spelled == ["kgpubench/tasks/reference.py:15"]


def test_the_oracle_is_one_job_per_board_scheme_and_never_ranked():
    jobs = plan(models=[], tasks=["kernel-time"])
    assert [j.scheme for j in jobs] == list(jobs[0].task.evaluated_schemes)
    assert all(j.name == ORACLE and str(j.model) == ORACLE for j in jobs)
    def result(model: str) -> Result:
        return Result(status="ok", task="kernel-time", scheme="random10", kind="model", model=model)
    assert is_reference(result(ORACLE)) and not is_reference(result("lgbm"))
    assert evaluate.__doc__ and f'``"{ORACLE}"``' in evaluate.__doc__
