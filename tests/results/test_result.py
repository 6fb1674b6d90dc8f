"""The typed records: a result built once per kind, a skipped scheme, each serialised once and read back by the
board and verify; the task resolved once, at the entry point."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from task_fixtures import autotune_table, make_store

import kgpubench
from kgpubench.board import leaderboard as lb
from kgpubench.errors import SchemaValidationError
from kgpubench.models.evaluation import evaluate, failure_record
from kgpubench.models.submission import score_predictions
from kgpubench.results.result import ABSENT, Result, Skipped, read_record, result_json
from kgpubench.tasks import get_task
from kgpubench.tasks.data import task_data

COMMITTED = sorted(lb.results_dir().glob("*/*/*.json")) if lb.results_dir().exists() else []
SKIPPED = [p for p in COMMITTED if p.name == lb.STATUS_FILE and json.loads(p.read_text())["status"] == "skipped"]
COMMON = {"format", "status", "kind", "task", "scheme", "model", "model_file", "model_sha256", "dataset",
          "split_sha256", "folds", "aggregate", "samples", "seed", "packages", "date", "wall_time_s"}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("result") / "store", autotune_table())


@pytest.mark.skipif(not COMMITTED, reason="no committed results in this checkout")
def test_every_committed_result_reads_and_writes_back_byte_for_byte():
    for path in COMMITTED:
        text = path.read_text()
        record = read_record(json.loads(text), where=str(path))
        assert isinstance(record, Skipped if path.name == lb.STATUS_FILE else Result), path
        assert record.to_json() == text, path


@pytest.mark.skipif(not SKIPPED, reason="no committed skipped scheme in this checkout")
def test_a_committed_skipped_scheme_round_trips_as_a_typed_skipped_record():
    path = next((p for p in SKIPPED if p.parent.name == "by-gpu" and p.parent.parent.name == "kernel-power"),
                SKIPPED[0])
    raw = path.read_bytes()
    skipped = read_record(json.loads(raw), where=str(path))
    assert type(skipped) is Skipped and skipped.status == "skipped"
    assert (skipped.task, skipped.scheme) == (path.parent.parent.name, path.parent.name)
    if path.parent.parent.name == "kernel-power":
        assert skipped.reason == ("every row has one GPU (NVIDIA H100 80GB HBM3), so leave-one-GPU-out has no "
                                  "training fold; it needs rows of at least two GPUs")
        assert skipped.dataset.rows == 297 and skipped.extra == {}
    assert skipped.to_json().encode() == raw  # Skipped -> JSON: the committed bytes
    again = Skipped.from_dict(json.loads(skipped.to_json()))  # JSON -> Skipped: the same record, reason included
    assert again == skipped and again.reason == skipped.reason
    with pytest.raises(SchemaValidationError, match="a skipped scheme"):
        Result.from_dict(json.loads(raw), where=str(path))
    made = Skipped(task="t", scheme="s", reason="why", dataset={})
    assert json.loads(made.to_json()) == {"status": "skipped", "task": "t", "scheme": "s", "reason": "why",
                                          "dataset": {}}
    with pytest.raises(SchemaValidationError, match="missing \\['reason'\\]"):
        read_record({"status": "skipped", "task": "t", "scheme": "s"}, where="x.json")


def _refuse_name_lookups(monkeypatch) -> list[str]:
    """Make ``get_task`` raise wherever a kgpubench module holds it; returns the names asked for."""
    asked: list[str] = []

    def refuse(name):
        asked.append(name)
        raise AssertionError(f"get_task({name!r}) called below the entry point")

    for name, module in list(sys.modules.items()):
        if name.startswith("kgpubench") and getattr(module, "get_task", None) is get_task:
            monkeypatch.setattr(module, "get_task", refuse)
    assert kgpubench.tasks.get_task is refuse
    return asked


def test_evaluate_and_score_given_a_task_never_look_its_name_up(store, tmp_path, monkeypatch):
    task = get_task("autotune-config")
    by_name = evaluate("oracle", "autotune-config", "by-gpu", data_dir=store.path)
    data = task_data(task, "by-gpu", store.path)
    preds = tmp_path / "p.parquet"
    pd.DataFrame({"row_id": data.rows["row_id"].to_pylist(), "fold": list(data.folds),
                  "prediction": data.y}).to_parquet(preds)
    asked = _refuse_name_lookups(monkeypatch)
    with pytest.raises(AssertionError, match="below the entry point"):
        evaluate("oracle", "autotune-config", "by-gpu", data_dir=store.path)  # the guard works
    asked.clear()
    res = evaluate("oracle", task, "by-gpu", data_dir=store.path)  # store read, selection, splits, scoring
    assert isinstance(res, Result) and res.task == "autotune-config" and res.kind == "reference"
    assert res.folds == by_name.folds and res.dataset == by_name.dataset
    assert evaluate("oracle", task, data=data).scheme == task.schemes[0]
    scored = score_predictions(preds, task, "by-gpu", data_dir=store.path)
    assert isinstance(scored, Result) and scored.folds.keys() == res.folds.keys()
    skipped = lb.run_job(lb.Job("oracle", get_task("kernel-time"), "random10"), store.path)
    assert isinstance(skipped, Skipped) and "has no rows" in skipped.reason
    assert asked == []


def test_each_kind_keeps_exactly_the_keys_its_files_have(store, tmp_path):
    data = task_data("autotune-config", "by-gpu", store.path)
    oracle = evaluate("oracle", "autotune-config", "by-gpu", data=data)
    assert set(oracle.to_dict()) == COMMON | {"predictions_sha256", "train_subsample", "limits", "cpu_time_s"}
    assert (oracle.kind, oracle.model_sha256, oracle.format) == ("reference", None, 2)
    failed = failure_record(tmp_path / "gone.py", data.task, "by-gpu", "boom\nsecond line", data=data)
    assert set(failed.to_dict()) == COMMON | {"limits", "message"}
    assert (failed.status, failed.message, failed.model_file) == ("failed", "boom", "gone.py")
    preds = tmp_path / "p.parquet"
    pd.DataFrame({"row_id": data.rows["row_id"].to_pylist(), "fold": list(data.folds),
                  "prediction": data.y}).to_parquet(preds)
    scored = score_predictions(preds, "autotune-config", "by-gpu", data_dir=store.path)
    assert set(scored.to_dict()) == COMMON | {"predictions_sha256", "train_subsample"}
    assert scored.kind == "predictions" and scored.seed is None
    skipped = lb.run_job(lb.Job(Path("baselines/median.py"), "kernel-time", "random10"), store.path)
    assert isinstance(skipped, Skipped)  # no kernels rows in this store
    assert set(skipped.to_dict()) == {"status", "task", "scheme", "reason", "dataset"}
    assert skipped.status == "skipped" and "has no rows" in skipped.reason


def test_absent_fields_are_left_out_and_unknown_keys_kept():
    r = Result.from_dict({"task": "t", "scheme": "s", "model": "m", "note": "kept"})
    assert r.status == "ok" and r.kind is ABSENT and not r.seed and r.extra == {"note": "kept"}
    assert r.to_dict() == {"status": "ok", "task": "t", "scheme": "s", "model": "m", "note": "kept"}
    assert result_json(r) == result_json(r.to_dict()) == r.to_json()
    assert json.loads(Result(status="ok", task="t", scheme="s", wall_time_s=1.23456789).to_json()) == {
        "status": "ok", "task": "t", "scheme": "s", "wall_time_s": 1.23457}


@pytest.mark.parametrize("record, what", [({"scheme": "s"}, "missing \\['task'\\]"),
                                          ({"task": "t", "scheme": "s", "status": "done"}, "status 'done'"),
                                          ([1, 2], "not list")])
def test_a_broken_record_is_one_line_naming_the_file(record, what):
    with pytest.raises(SchemaValidationError, match=f"^results/x.json: .*{what}"):
        Result.from_dict(record, where="results/x.json")


def test_compare_reports_hashes_scores_and_status():
    base = {"task": "t", "scheme": "s", "model": "m", "model_sha256": "a" * 64, "dataset": {"rows_sha256": "r"},
            "folds": {"f": {"scores": {"male": 0.5}}}}
    moved = {**base, "dataset": {"rows_sha256": "q"}, "folds": {"f": {"scores": {"male": 0.6}}}}
    want = ["t/s/m: task rows sha256 is q..., the result was made with r...", "t/s/m: fold f male = 0.6, committed 0.5"]
    assert lb.compare(Result.from_dict(base), Result.from_dict(moved)) == want
    assert lb.compare(Result.from_dict(base), Result.from_dict({**base, "status": "failed", "message": "x"})) == [
        "t/s/m: status is failed (x), the result says ok"]
