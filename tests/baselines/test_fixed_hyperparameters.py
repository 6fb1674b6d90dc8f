"""No baseline is tuned on a test fold: every hyper-parameter is fixed in its file, and none searches over them
(sklearn's *SearchCV, cross-validation scorers, optuna, hyperopt). A model sees only the training rows in ``fit``
(``tests/sandbox/test_one_sandbox.py::test_no_row_of_the_held_out_gpu_reaches_training``), so a baseline that
tunes later must do it on inner folds of those rows; this test then needs its exception, named here."""

from __future__ import annotations

import ast

import pytest

from kgpubench.board.leaderboard import baseline_files

pytestmark = pytest.mark.unit

SEARCH_NAMES = {"GridSearchCV", "RandomizedSearchCV", "HalvingGridSearchCV", "HalvingRandomSearchCV",
                "cross_val_score", "cross_validate", "cross_val_predict", "validation_curve", "learning_curve"}
SEARCH_MODULES = ("optuna", "hyperopt", "skopt", "ray.tune", "sklearn.model_selection")


def searches(source: str) -> list[str]:
    """The hyper-parameter searches a model file's source imports or names."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(SEARCH_MODULES):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name in SEARCH_NAMES
                      or not (node.module or "").startswith("sklearn.model_selection")]
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith(SEARCH_MODULES)]
        elif isinstance(node, ast.Name | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in SEARCH_NAMES:
                found.append(name)
    return sorted(set(found))


def test_no_baseline_searches_its_hyperparameters():
    files = baseline_files()
    assert len(files) >= 20
    assert {p.stem: searches(p.read_text()) for p in files} == {p.stem: [] for p in files}


@pytest.mark.parametrize("source, found", [
    ("from sklearn.model_selection import GridSearchCV\n", ["sklearn.model_selection.GridSearchCV"]),
    ("import optuna\n", ["optuna"]),
    ("import sklearn\nm = sklearn.model_selection.RandomizedSearchCV(None, {})\n", ["RandomizedSearchCV"]),
    ("from sklearn.model_selection import KFold\n", []),  # folds alone tune nothing
])
def test_the_search_finder_finds_searches(source, found):
    assert searches(source) == found
