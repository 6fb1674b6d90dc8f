"""``leaderboard run --reuse`` (make demo's second run): keep what nothing changed, rerun only the stale jobs."""

from __future__ import annotations

import json
import shutil

import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.board.evaluation import inputs_sha256
from kgpubench.store.store import Store
from kgpubench.tasks import get_task

pytestmark = pytest.mark.slow  # each test runs a board in the sandbox first

MEDIAN = [p for p in lb.baseline_files() if p.stem == "median"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A store and the first board run on it, made once: each test gets its own copy (:func:`board`)."""
    root = tmp_path_factory.mktemp("reuse")
    store = make_store(root / "store", autotune_table())
    out = root / "board" / "results"
    first = lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=["autotune-config"], render=False)
    return root, [p.relative_to(root) for p in first]


@pytest.fixture()
def board(built, tmp_path):
    """A copy of :func:`built` (file times kept, ``shutil.copy2``): the store, the results folder, what the first
    run wrote."""
    root, first = built
    for part in ("store", "board"):
        shutil.copytree(root / part, tmp_path / part)
    return Store(tmp_path / "store"), tmp_path / "board" / "results", [tmp_path / p for p in first]


def _stamp(out):
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in out.glob("*/*/*.json")}


def test_a_second_run_with_nothing_changed_keeps_every_result_and_the_board(board):
    store, out, first = board
    assert len(first) == 4  # median and the oracle on random10 and by-gpu
    assert lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=["autotune-config"], reuse=True) == []
    assert (out.parent / "README.md").exists()  # no board yet: drawn although every result was kept
    before, readme = _stamp(out), (out.parent / "README.md").stat().st_mtime_ns
    said = []
    again = lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=["autotune-config"], reuse=True,
                   progress=said.append)
    assert again == [] and _stamp(out) == before
    assert (out.parent / "README.md").stat().st_mtime_ns == readme
    assert "kept 4 of 4 results: same inputs, model and seed (--reuse)" in said
    res = json.loads((out / "autotune-config/by-gpu/median.json").read_text())
    assert res["dataset"]["inputs_sha256"] == inputs_sha256(get_task("autotune-config"), "by-gpu", store)


def test_only_the_stale_jobs_run_again(board, tmp_path):
    store, out, _ = board
    # another seed: every job is stale
    assert len(lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=["autotune-config"], reuse=True,
                      seed=1, render=False)) == 4
    # a changed model file: its jobs rerun, the oracle's are kept
    changed = tmp_path / "models" / "median.py"
    changed.parent.mkdir()
    shutil.copy(MEDIAN[0], changed)
    changed.write_text(changed.read_text() + "\n# changed\n")
    written = lb.run(data_dir=store.path, out_dir=out, models=[changed], tasks=["autotune-config"], reuse=True,
                     seed=1, render=False)
    assert sorted(p.relative_to(out).as_posix() for p in written) == [
        "autotune-config/by-gpu/median.json", "autotune-config/random10/median.json"]


def test_other_data_files_make_every_result_of_their_config_stale(board, tmp_path):
    store, out, _ = board
    task = get_task("autotune-config")
    other = make_store(tmp_path / "other", autotune_table().slice(0, 48))
    assert inputs_sha256(task, "by-gpu", other) != inputs_sha256(task, "by-gpu", store)
    assert not lb.reusable(out, lb.Job(MEDIAN[0], task.name, "by-gpu"), seed=0, threads=1, store=other)
    assert lb.reusable(out, lb.Job(MEDIAN[0], task.name, "by-gpu"), seed=0, threads=1, store=Store(store.path))


def test_a_result_without_the_inputs_hash_or_unreadable_is_never_kept(board):
    store, out, _ = board
    job = lb.Job(MEDIAN[0], "autotune-config", "by-gpu")
    path = out / "autotune-config/by-gpu/median.json"
    res = json.loads(path.read_text())
    del res["dataset"]["inputs_sha256"]  # a committed result made before the hash existed
    path.write_text(json.dumps(res))
    assert not lb.reusable(out, job, seed=0, threads=1, store=store)
    path.write_text("{not json")
    assert not lb.reusable(out, job, seed=0, threads=1, store=store)
