"""A task's data live in ``kgpubench.tasks.data``: on the shipped data, the scheme a one-GPU task cannot be
evaluated under is an :class:`Unusable` with the reason and rows its committed ``_status.json`` records, which the
board writes as that very record (:meth:`Skipped.of`); a usable scheme is the :class:`TaskData` the models layer runs
on, kept once per (task, scheme)."""

from __future__ import annotations

import json

import pytest

from kgpubench.board.leaderboard import STATUS_FILE, results_dir
from kgpubench.results.result import Skipped
from kgpubench.tasks import get_task
from kgpubench.tasks.data import TaskData, Unusable, rows_sha256, task_sha256, usable_task_data

TASK = "kernel-time"  # the H100 only: leave-one-GPU-out has no training fold


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads((results_dir() / TASK / "by-gpu" / STATUS_FILE).read_text())


def test_a_scheme_without_a_training_fold_is_unusable_as_its_committed_status_says(committed):
    got = usable_task_data(TASK, "by-gpu")
    assert isinstance(got, Unusable) and (got.task, got.scheme) == (TASK, "by-gpu")
    assert got.reason == committed["reason"] and got.reason.startswith("every row has one GPU (NVIDIA H100")
    assert got.dataset["task_sha256"] == committed["dataset"]["task_sha256"] == task_sha256(get_task(TASK))
    assert got.dataset["rows_sha256"] == committed["dataset"]["rows_sha256"]
    record = Skipped.of(got)
    # the record the board writes: the committed one, but for where the rows were read from (the store's manifest and
    # files, which data merged since into the config's other rows change: reuse then compares the rows' hash)
    where = {"files_sha256", "manifest_sha256", "version", "inputs_sha256"}
    mine, theirs = record.to_dict(), dict(committed)
    mine["dataset"] = {k: v for k, v in mine["dataset"].items() if k not in where}
    theirs["dataset"] = {k: v for k, v in theirs["dataset"].items() if k not in where}
    assert mine == theirs and set(mine["dataset"]) >= {"rows", "rows_sha256", "selection", "task_sha256"}


def test_a_usable_scheme_is_task_data_kept_once_per_task_and_scheme():
    data = usable_task_data(TASK, "random10")
    assert isinstance(data, TaskData) and data.rows.num_rows == data.dataset["rows"] == len(data.y) > 1000
    assert usable_task_data(TASK, "random10") is data and len(data.fold_names) == 10
    # the rows and split a committed result of the scheme was made on (what `leaderboard run --reuse` compares)
    result = json.loads((results_dir() / TASK / "random10" / "median.json").read_text())
    assert rows_sha256(data.task, data.rows) == result["dataset"]["rows_sha256"]
    assert data.split_sha256 == result["split_sha256"]
