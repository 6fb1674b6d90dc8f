"""Fixtures of the sandbox tests: a small real task table as a store and as features (helpers live in
``sandbox_helpers``)."""

from __future__ import annotations

import pytest
from task_fixtures import autotune_table, make_store


@pytest.fixture(scope="session")
def store(tmp_path_factory):
    """The autotune fixture table (72 rows, 3 GPUs) as a store."""
    return make_store(tmp_path_factory.mktemp("sandbox") / "store", autotune_table())


@pytest.fixture(scope="session")
def small():
    """Features and target of 12 autotune rows, for sessions fed by hand."""
    from kgpubench.tasks import feature_frame, get_task, task_rows
    from kgpubench.tasks.scoring import with_scoring_columns

    task = get_task("autotune-config")
    table = autotune_table(gpus=("GPU A",))
    rows = with_scoring_columns(task, table, task_rows(task, table))
    X = feature_frame(task, rows)
    return X.iloc[:12].reset_index(drop=True), rows["time_ms_median"].to_numpy()[:12]
