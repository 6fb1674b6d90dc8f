"""The typed result record: built once per kind, serialised once, read back by the board and verify."""

import json
from pathlib import Path

import pandas as pd
import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.board.evaluation import evaluate, failure_record, task_data
from kgpubench.board.result import ABSENT, Result, result_json
from kgpubench.board.submission import score_predictions
from kgpubench.errors import SchemaValidationError

COMMITTED = sorted(lb.results_dir().glob("*/*/*.json")) if lb.results_dir().exists() else []
COMMON = {"format", "status", "kind", "task", "scheme", "model", "model_file", "model_sha256", "dataset",
          "split_sha256", "folds", "aggregate", "samples", "seed", "packages", "date", "wall_time_s"}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("result") / "store", autotune_table())


@pytest.mark.skipif(not COMMITTED, reason="no committed results in this checkout")
def test_every_committed_result_reads_and_writes_back_byte_for_byte():
    for path in COMMITTED:
        text = path.read_text()
        assert Result.from_dict(json.loads(text), where=str(path)).to_json() == text, path


def test_each_kind_keeps_exactly_the_keys_its_files_have(store, tmp_path):
    data = task_data("autotune-config", "by-gpu", store.path)
    oracle = evaluate("oracle", "autotune-config", "by-gpu", data=data)
    assert set(oracle) == COMMON | {"predictions_sha256", "train_subsample", "limits", "cpu_time_s"}
    assert (oracle["kind"], oracle["model_sha256"], oracle["format"]) == ("reference", None, 2)
    failed = failure_record(tmp_path / "gone.py", "autotune-config", "by-gpu", "boom\nsecond line", data=data)
    assert set(failed) == COMMON | {"limits", "message"}
    assert (failed["status"], failed["message"], failed["model_file"]) == ("failed", "boom", "gone.py")
    preds = tmp_path / "p.parquet"
    pd.DataFrame({"row_id": data.rows["row_id"].to_pylist(), "fold": list(data.folds),
                  "prediction": data.y}).to_parquet(preds)
    scored = score_predictions(preds, "autotune-config", "by-gpu", data_dir=store.path)
    assert set(scored) == COMMON | {"predictions_sha256", "train_subsample"}
    assert scored["kind"] == "predictions" and scored["seed"] is None
    skipped = lb.run_job(lb.Job(Path("baselines/median.py"), "kernel-time", "random10"), store.path)
    assert set(skipped) == {"status", "task", "scheme", "reason", "dataset"}  # no kernels rows in this store
    assert skipped["status"] == "skipped" and "has no rows" in skipped["reason"]


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


def test_compare_reads_dicts_and_results_alike():
    base = {"task": "t", "scheme": "s", "model": "m", "model_sha256": "a" * 64, "dataset": {"rows_sha256": "r"},
            "folds": {"f": {"scores": {"male": 0.5}}}}
    moved = {**base, "dataset": {"rows_sha256": "q"}, "folds": {"f": {"scores": {"male": 0.6}}}}
    want = ["t/s/m: task rows sha256 is q..., the result was made with r...", "t/s/m: fold f male = 0.6, committed 0.5"]
    assert lb.compare(base, moved) == want
    assert lb.compare(Result.from_dict(base), Result.from_dict(moved)) == want
    assert lb.compare(base, {**base, "status": "failed", "message": "x"}) == [
        "t/s/m: status is failed (x), the result says ok"]
