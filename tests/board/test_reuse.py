"""``leaderboard run --reuse`` (make demo): keep what nothing changed, copy what another results folder holds
(``--from``), rerun only the stale jobs. The reuse key is the data identity (task declaration, task rows,
split), the model file, seed and threads, never the library code."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import replace

import pytest
from task_fixtures import GPUS, autotune_table, make_store, programs_table

from kgpubench.board import leaderboard as lb
from kgpubench.results.result import read_record, read_result_json
from kgpubench.schema import get_table
from kgpubench.store.store import Store
from kgpubench.tasks import data as D
from kgpubench.tasks import get_task
from kgpubench.tasks.data import files_sha256, inputs_sha256, task_sha256
from kgpubench.tasks.splits import split_path
from kgpubench.testing import valid_row

pytestmark = pytest.mark.slow  # one board is run in the sandbox first

MEDIAN = [p for p in lb.baseline_files() if p.stem == "median"]
TASK = "autotune-config"
FOUR = ["autotune-config/by-gpu/median.json", "autotune-config/by-gpu/oracle.json",
        "autotune-config/random10/median.json", "autotune-config/random10/oracle.json"]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A store and the board of median and the oracle on autotune-config, run once for the module."""
    root = tmp_path_factory.mktemp("reuse")
    store = make_store(root / "store", autotune_table())
    out = root / "board" / "results"
    first = lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=[TASK], render=False)
    return store, out, first


@pytest.fixture()
def board(made, tmp_path):
    """A copy of the module's board (results and splits) that a test may change."""
    store, out, first = made
    shutil.copytree(out.parent, tmp_path / "board")
    return store, tmp_path / "board" / "results", first


def _rel(out, paths):
    return sorted(p.relative_to(out).as_posix() for p in paths)


def _stamp(out):
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in out.glob("*/*/*.json")}


def _run(store, out, **kw):
    return lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=[TASK], reuse=True, **kw)


def test_the_dataset_block_records_the_data_identity_apart_from_the_code(made):
    store, out, first = made
    assert _rel(out, first) == FOUR
    task = get_task(TASK)
    res = json.loads((out / "autotune-config/by-gpu/median.json").read_text())
    ds = res["dataset"]
    assert ds["task_sha256"] == task_sha256(task) and len(ds["task_sha256"]) == 64
    assert ds["files_sha256"] == files_sha256(task, store)
    assert ds["inputs_sha256"] == inputs_sha256(task, "by-gpu", store)  # kept, for provenance
    # the declaration's text only (not what decides a score) leaves the task hash alone; a metric moves it
    assert task_sha256(replace(task, description="other words", relative_cost=9.0)) == ds["task_sha256"]
    assert task_sha256(replace(task, metrics=tuple(reversed(task.metrics)))) != ds["task_sha256"]


def test_a_second_run_with_nothing_changed_keeps_every_result_and_the_board(board):
    store, out, _ = board
    assert _run(store, out) == []
    assert (out.parent / "README.md").exists()  # no board yet: drawn although every result was kept
    before, readme = _stamp(out), (out.parent / "README.md").stat().st_mtime_ns
    said = []
    assert _run(store, out, progress=said.append) == [] and _stamp(out) == before
    assert (out.parent / "README.md").stat().st_mtime_ns == readme
    assert said[0].startswith("reused 4 of 4 results (same task declaration and rows, split, model file, seed and "
                              "threads; --reuse): 4 already in ")
    assert said[1:3] == ["reused per task: autotune-config 4", "running 0 again"]


def test_a_kept_failed_result_is_named(board):
    store, out, _ = board
    path = out / "autotune-config/by-gpu/median.json"
    res = json.loads(path.read_text())
    res.update(status="failed", message="ModuleNotFoundError: No module named 'kgpubench'")
    path.write_text(json.dumps(res))
    said = []
    assert _run(store, out, render=False, progress=said.append) == []
    assert said[2] == ("of them 1 failed (kept: the same inputs fail the same way; a failure that came from the "
                       "environment runs again without --reuse (--only MODEL --task TASK) or once its file is "
                       "deleted): "
                       "autotune-config/by-gpu/median")
    assert said[3] == "running 0 again"


def test_a_code_change_does_not_make_a_result_stale(board, monkeypatch):
    store, out, _ = board
    task = get_task(TASK)
    before = inputs_sha256(task, "by-gpu", store)
    monkeypatch.setattr(D, "code_sha256", lambda: "another commit")
    assert inputs_sha256(task, "by-gpu", store) != before
    assert lb.reusable(out, lb.Job(MEDIAN[0], TASK, "by-gpu"), seed=0, threads=1, store=store)


def test_a_selection_change_on_the_same_files_makes_the_results_stale(board, monkeypatch):
    """The same store files and task declaration, but a selection rule that now leaves one more row out (as when
    rule 2 came to drop repeated configurations): the results were made from rows the task no longer reads, so
    none is reused and each is stale. On the old fast path (same files: kept) this failed."""
    store, out, _ = board
    task = get_task(TASK)
    job = lb.Job(MEDIAN[0], TASK, "by-gpu")
    assert lb.reusable(out, job, seed=0, threads=1, store=store)
    record = read_record(read_result_json(out / TASK / "by-gpu" / "median.json"))
    assert not lb.is_stale(record.dataset, task, store)
    real = D.select

    def one_row_fewer(task, table):
        chosen = real(task, table)
        return replace(chosen, rows=chosen.rows.slice(0, chosen.rows.num_rows - 1))

    monkeypatch.setattr(D, "select", one_row_fewer)
    monkeypatch.setattr(D, "code_sha256", lambda: "the library with the new rule")  # what an edit of the rule does
    monkeypatch.setattr(D, "_ROWS", {})
    monkeypatch.setattr(D, "_USABLE", {})
    assert files_sha256(task, store) == record.dataset.files_sha256  # nothing in the store changed
    assert not lb.reusable(out, job, seed=0, threads=1, store=store)
    assert lb.is_stale(record.dataset, task, store)
    written = lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=[TASK], reuse=True, render=False)
    assert _rel(out, written) == FOUR


def test_only_the_stale_jobs_run_again(board, tmp_path):
    store, out, _ = board
    # another seed: every job is stale
    said = []
    assert _rel(out, _run(store, out, seed=1, render=False, progress=said.append)) == FOUR
    assert "running 4 again: autotune-config/random10/median" in said[1]
    # a changed model file: its jobs rerun, the oracle's are kept
    changed = tmp_path / "models" / "median.py"
    changed.parent.mkdir()
    shutil.copy(MEDIAN[0], changed)
    changed.write_text(changed.read_text() + "\n# changed\n")
    written = lb.run(data_dir=store.path, out_dir=out, models=[changed], tasks=[TASK], reuse=True, seed=1,
                     render=False)
    assert _rel(out, written) == ["autotune-config/by-gpu/median.json", "autotune-config/random10/median.json"]


def test_other_files_with_the_same_task_rows_keep_the_results(board, tmp_path):
    store, out, _ = board
    task = get_task(TASK)
    # one more row that the task leaves out (it failed to compile): other files, the very same task rows
    params = [{"name": "block_size_x", "value": 256.0}, {"name": "tile", "value": 1.0}]
    failed = valid_row("autotune", gpu_name="GPU A", **GPUS["GPU A"], kernel="gemm", problem_size="1024x1024",
                       params=params, status="compile_error", time_ms_median=None, time_ms_min=None,
                       time_ms_mean=None, time_ms_std=None, repeats=None, time_cv=None)
    other = make_store(tmp_path / "other", autotune_table(), get_table("autotune").from_rows([failed]))
    assert files_sha256(task, other) != files_sha256(task, store)
    assert D.current_rows_sha256(task, other.path) == D.current_rows_sha256(task, store.path)
    assert lb.reusable(out, lb.Job(MEDIAN[0], TASK, "by-gpu"), seed=0, threads=1, store=other)


def test_other_task_rows_make_every_result_of_the_task_stale(board, tmp_path):
    store, out, _ = board
    task = get_task(TASK)
    other = make_store(tmp_path / "other", autotune_table().slice(0, 48))
    assert D.current_rows_sha256(task, other.path) != D.current_rows_sha256(task, store.path)
    assert not lb.reusable(out, lb.Job(MEDIAN[0], TASK, "by-gpu"), seed=0, threads=1, store=other)
    assert lb.reusable(out, lb.Job(MEDIAN[0], TASK, "by-gpu"), seed=0, threads=1, store=Store(store.path))
    written = lb.run(data_dir=other.path, out_dir=out, models=MEDIAN, tasks=[TASK], reuse=True, render=False)
    assert _rel(out, written) == FOUR


def test_a_task_without_data_is_skipped_once_then_kept(tmp_path):
    store = make_store(tmp_path / "store", programs_table())  # no autotune rows at all
    out = tmp_path / "board" / "results"
    first = _run(store, out, render=False)
    assert _rel(out, first) == ["autotune-config/by-gpu/_status.json", "autotune-config/random10/_status.json"]
    status = json.loads((out / "autotune-config/by-gpu/_status.json").read_text())
    assert status["dataset"]["files_sha256"] == files_sha256(get_task(TASK), store)
    assert _run(store, out, render=False) == []


def test_a_result_without_the_task_hash_or_unreadable_is_never_kept(board):
    store, out, _ = board
    job = lb.Job(MEDIAN[0], TASK, "by-gpu")
    path = out / "autotune-config/by-gpu/median.json"
    res = json.loads(path.read_text())
    del res["dataset"]["task_sha256"]  # a committed result made before the hash existed
    path.write_text(json.dumps(res))
    assert not lb.reusable(out, job, seed=0, threads=1, store=store)
    path.write_text("{not json")
    assert not lb.reusable(out, job, seed=0, threads=1, store=store)


def test_results_are_copied_from_another_folder_with_their_splits_and_nothing_runs(made, tmp_path):
    store, source, _ = made
    before = {p: p.read_bytes() for p in source.parent.rglob("*") if p.is_file()}
    out = tmp_path / "demo" / "results"
    said = []
    written = _run(store, out, reuse_from=source, progress=said.append)
    assert written == []  # nothing ran
    assert said[0].endswith(f"0 already in {out}, 4 copied from {source}")
    for rel in FOUR:  # byte for byte
        assert (out / rel).read_bytes() == (source / rel).read_bytes()
    for scheme in get_task(TASK).schemes:  # the split files came along, their sha256 the results'
        copy = split_path(TASK, scheme, out.parent / "splits")
        assert copy.read_bytes() == split_path(TASK, scheme, source.parent / "splits").read_bytes()
    res = json.loads((out / "autotune-config/by-gpu/median.json").read_text())
    assert hashlib.sha256(split_path(TASK, "by-gpu", out.parent / "splits").read_bytes()).hexdigest() == \
        res["split_sha256"]
    assert (out.parent / "README.md").exists()
    assert {p: p.read_bytes() for p in source.parent.rglob("*") if p.is_file()} == before  # never modified


def test_a_corrupted_foreign_or_linked_file_in_the_from_folder_is_named_and_rerun(made, tmp_path):
    store, source, _ = made
    hostile = tmp_path / "hostile" / "results"
    shutil.copytree(source.parent, hostile.parent)
    (hostile / "autotune-config/by-gpu/median.json").write_text("{not json")
    foreign = hostile / "autotune-config/random10/median.json"  # another job's result under this name
    foreign.write_bytes((source / "autotune-config/by-gpu/oracle.json").read_bytes())
    linked = hostile / "autotune-config/random10/oracle.json"
    linked.unlink()
    os.symlink(source / "autotune-config/random10/oracle.json", linked)
    out = tmp_path / "demo" / "results"
    warned = []
    written = _run(store, out, reuse_from=hostile, warn=warned.append, render=False)
    assert _rel(out, written) == ["autotune-config/by-gpu/median.json", "autotune-config/random10/median.json",
                                  "autotune-config/random10/oracle.json"]
    assert (out / "autotune-config/by-gpu/oracle.json").read_bytes() == \
        (source / "autotune-config/by-gpu/oracle.json").read_bytes()  # the one good file was copied
    assert len(warned) == 3
    assert any(str(hostile / "autotune-config/by-gpu/median.json") in w for w in warned)
    assert any(str(foreign) in w and "autotune-config/by-gpu, not autotune-config/random10" in w for w in warned)
    assert any(str(linked) in w and "is a link" in w for w in warned)


def test_verify_re_runs_only_the_tasks_asked(made):
    store, out, _ = made
    said = []
    assert lb.verify(root=out, tasks=[TASK], data_dir=store.path, progress=said.append) == 4
    assert sorted(m for m in said if m.startswith(TASK)) == sorted(
        f"{TASK} / {s} / {m}" for s in ("random10", "by-gpu") for m in ("median", "oracle"))
    with pytest.raises(lb.VerifyError, match=r"no committed result for task\(s\) \['kernel-time'\] under "):
        lb.verify(root=out, tasks=["kernel-time"], data_dir=store.path)


def test_the_cli_copies_from_a_folder_names_a_bad_file_and_refuses_from_without_reuse(made, tmp_path):
    from typer.testing import CliRunner

    from kgpubench.cli import app

    store, source, _ = made
    hostile = tmp_path / "hostile" / "results"
    shutil.copytree(source.parent, hostile.parent)
    (hostile / "autotune-config/by-gpu/oracle.json").write_text("[1, 2]")
    out = tmp_path / "demo" / "results"
    args = ["leaderboard", "run", "--task", TASK, "--only", "median", "--only", "oracle", "--data", str(store.path),
            "--out", str(out), "--from", str(hostile)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2 and "--from needs --reuse" in r.output and not out.exists()
    r = CliRunner().invoke(app, [*args, "--reuse"])
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert f"warning: not reused: {hostile / 'autotune-config/by-gpu/oracle.json'}" in said
    assert "3 copied from" in said and "running 1 again: autotune-config/by-gpu/oracle" in said
    rerun = json.loads((out / "autotune-config/by-gpu/oracle.json").read_text())
    assert rerun["aggregate"] == json.loads((source / "autotune-config/by-gpu/oracle.json").read_text())["aggregate"]
