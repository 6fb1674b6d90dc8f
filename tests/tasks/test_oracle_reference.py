"""The oracle reference is one object (``kgpubench.tasks.reference.ORACLE``): no other module of the package or its
scripts spells the name or compares a name with it, so the board, the jobs, the ranking and the budget curves cannot
disagree on it."""

import ast
from pathlib import Path

from kgpubench.board.leaderboard import plan
from kgpubench.board.ranking import is_reference
from kgpubench.models.evaluation import evaluate
from kgpubench.results.result import Result
from kgpubench.tasks.reference import ORACLE

ROOT = Path(__file__).resolve().parents[2]


def test_only_the_reference_module_spells_the_oracle_name():
    spelled = sorted(str(path.relative_to(ROOT))
                     for folder in ("kgpubench", "scripts") for path in (ROOT / folder).rglob("*.py")
                     for node in ast.walk(ast.parse(path.read_text()))
                     if isinstance(node, ast.Constant) and node.value == "oracle")
    assert spelled == ["kgpubench/tasks/reference.py"]  # once, in the one definition


def _compares_with_oracle(node: ast.AST) -> bool:
    """``x == ORACLE``, ``ORACLE.name != x``, ``x in {ORACLE}``, ...: a comparison with the oracle as an operand."""
    if not isinstance(node, ast.Compare):
        return False
    for operand in (node.left, *node.comparators):
        for sub in ast.walk(operand):
            if isinstance(sub, ast.Name) and sub.id == "ORACLE":
                return True
    return False


def test_every_comparison_with_the_oracle_goes_through_the_reference_object():
    compared = sorted(f"{path.relative_to(ROOT)}:{node.lineno}"
                      for folder in ("kgpubench", "scripts") for path in (ROOT / folder).rglob("*.py")
                      for node in ast.walk(ast.parse(path.read_text())) if _compares_with_oracle(node))
    assert compared == []
    # the check finds what it looks for
    assert _compares_with_oracle(ast.parse("a == ORACLE").body[0].value)
    assert _compares_with_oracle(ast.parse("a not in {ORACLE.name}").body[0].value)
    assert not _compares_with_oracle(ast.parse("ORACLE.is_oracle(a)").body[0].value)


def test_the_reference_object_knows_its_name_its_jobs_and_its_records():
    assert ORACLE.name == str(ORACLE) == "oracle" and ORACLE.kind == "reference"
    assert ORACLE.is_oracle("oracle") and ORACLE.is_oracle(Path("oracle"))
    assert not ORACLE.is_oracle("baselines/oracle.py") and not ORACLE.is_oracle(None) and not ORACLE.is_oracle("lgbm")

    def result(model: str, kind: str) -> Result:
        return Result(status="ok", task="kernel-time", scheme="random10", kind=kind, model=model)
    assert ORACLE.names(result("oracle", "model")) and ORACLE.names(result("x", "reference"))
    assert not ORACLE.names(result("lgbm", "model")) and not ORACLE.names(object())


def test_the_oracle_is_one_job_per_board_scheme_and_never_ranked():
    jobs = plan(models=[], tasks=["kernel-time"])
    assert [j.scheme for j in jobs] == list(jobs[0].task.evaluated_schemes)
    assert all(j.name == ORACLE.name == str(j.model) for j in jobs)
    def result(model: str) -> Result:
        return Result(status="ok", task="kernel-time", scheme="random10", kind="model", model=model)
    assert is_reference(result(ORACLE.name)) and not is_reference(result("lgbm"))
    assert evaluate.__doc__ and f'``"{ORACLE}"``' in evaluate.__doc__
