"""Submission folders: checked without running (one line per mistake), run as CI runs them (a model in the
sandbox, predictions as given), accepted onto a board only as they were run, kept by the board's prune; the
human summary of a result; ``evaluate`` writes a file and prints the summary."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.board.pull_request import accept, read_submission, run_submission
from kgpubench.board.ranking import cell
from kgpubench.board.summary import board_rank, result_summary
from kgpubench.errors import DataFileNotFoundError, SchemaValidationError, UnknownNameError
from kgpubench.models.evaluation import SubmissionError
from kgpubench.models.submission import score_predictions
from kgpubench.results.result import Result, read_record
from kgpubench.tasks.data import task_data
from kgpubench.testing import MEAN_MODEL_SOURCE

MODEL = MEAN_MODEL_SOURCE
META = """
name: {name}
authors: [Ada Example, Bo Example]
description: The mean of the training targets, for every row.
runs:
  - {{task: autotune-config, scheme: by-gpu}}
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("pr") / "store", autotune_table())


def folder(tmp_path: Path, name: str = "mean-model", *, meta: str | None = None, model: str | None = MODEL) -> Path:
    path = tmp_path / "submissions" / name
    path.mkdir(parents=True)
    (path / "submission.yaml").write_text(textwrap.dedent(meta if meta is not None else META.format(name=name)))
    if model is not None:
        (path / "model.py").write_text(textwrap.dedent(model))
    return path


def test_a_good_folder_reads(tmp_path):
    sub = read_submission(folder(tmp_path))
    assert (sub.name, sub.kind, sub.authors, sub.runs) == ("mean-model", "model", ("Ada Example", "Bo Example"),
                                                           (("autotune-config", "by-gpu"),))


@pytest.mark.parametrize("meta, model, error, text", [
    ("name: mean-model\n", MODEL, SchemaValidationError, r"missing \['authors', 'description', 'runs'\]"),
    (META.format(name="other"), MODEL, SchemaValidationError, "must equal the folder's name"),
    (META.format(name="mean-model") + "extra: 1\n", MODEL, SchemaValidationError, r"unknown key\(s\) \['extra'\]"),
    (META.format(name="mean-model").replace("autotune-config", "autotune-confg"), MODEL, UnknownNameError,
     "autotune-config"),
    (META.format(name="mean-model").replace("by-gpu", "by-kernel"), MODEL, SchemaValidationError,
     "scheme 'by-kernel' is not on the board for autotune-config"),
    (META.format(name="mean-model"), None, SchemaValidationError, "not neither"),
    (META.format(name="mean-model"), "def build(task, seed):\n    return None\n", SubmissionError,
     "no top-level `make_model"),
    (META.format(name="mean-model"), MODEL.replace('("autotune-config",)', '("kernel-time",)'),
     SchemaValidationError, r"runs name task\(s\) \['autotune-config'\]"),
    (META.format(name="mean-model") + "url: 'javascript://x'\n", MODEL, SchemaValidationError,
     "`url` must be an http"),
    (META.format(name="mean-model") + "  - {task: autotune-config, scheme: by-gpu}\n", MODEL,
     SchemaValidationError, "twice"),
])
def test_mistakes_are_one_line_naming_the_file(tmp_path, meta, model, error, text):
    path = folder(tmp_path, meta=meta, model=model)
    with pytest.raises(error, match=text) as err:
        read_submission(path)
    if error is not UnknownNameError:
        assert str(path / "submission.yaml") in str(err.value) or str(path / "model.py") in str(err.value)
    assert "\n" not in str(err.value)


def test_a_baseline_name_is_refused(tmp_path):
    with pytest.raises(SchemaValidationError, match="taken by a baseline"):
        read_submission(folder(tmp_path, "median"))


def test_ci_run_then_accept_puts_the_result_on_a_board(tmp_path, store):
    sub = folder(tmp_path)
    written = run_submission(sub, tmp_path / "ci", data_dir=store.path, timeout_s=120)
    assert written == [tmp_path / "ci/autotune-config/by-gpu/mean-model.json"]
    res = json.loads(written[0].read_text())
    assert res["model"] == "mean-model" and res["kind"] == "model" and sorted(res["folds"]) == ["GPU A", "GPU B",
                                                                                              "GPU C"]
    assert res["submission"]["name"] == "mean-model" and res["submission"]["url"] is None
    board = tmp_path / "board" / "results"
    assert accept(sub, tmp_path / "ci", board=board, data_dir=store.path) == [
        board / "autotune-config/by-gpu/mean-model.json"]
    assert (board / "autotune-config/by-gpu/mean-model.json").read_bytes() == written[0].read_bytes()
    page = (tmp_path / "board" / "task-autotune-config.html").read_text()
    assert "mean-model by Ada Example, Bo Example" in page
    with pytest.raises(SubmissionError, match="already on the board; pass --force"):
        accept(sub, tmp_path / "ci", board=board, data_dir=store.path)
    assert accept(sub, tmp_path / "ci", board=board, force=True, render=False, data_dir=store.path)
    # the model changed after CI ran it: refused
    (sub / "model.py").write_text(MODEL + "\n# changed\n")
    with pytest.raises(SubmissionError, match="re-run the CI job"):
        accept(sub, tmp_path / "ci", board=tmp_path / "other", render=False)
    # a full board run keeps results from submission folders, prunes other stale ones
    stale = board / "autotune-config/by-gpu/gone.json"
    stale.write_text(json.dumps({**res, "model": "gone"}))  # a submission's result: kept
    plain = {k: v for k, v in res.items() if k != "submission"}
    (board / "autotune-config/by-gpu/old.json").write_text(json.dumps({**plain, "model": "old"}))
    removed = lb.prune(board, [])
    assert removed == [board / "autotune-config/by-gpu/old.json"]
    assert (board / "autotune-config/by-gpu/mean-model.json").exists() and stale.exists()


def test_predictions_are_scored_as_given(tmp_path, store):
    meta = META.format(name="guess") + "url: https://example.org/code\n"
    sub = folder(tmp_path, "guess", meta=meta, model=None)
    data = task_data("autotune-config", "by-gpu", store.path)
    df = pd.DataFrame({"row_id": data.rows["row_id"].to_pylist(), "fold": list(data.folds),
                       "prediction": np.asarray(data.y) * 1.5})
    (sub / "predictions").mkdir()
    with pytest.raises(DataFileNotFoundError, match="no autotune-config--by-gpu.parquet"):
        read_submission(sub)
    df.to_parquet(sub / "predictions" / "autotune-config--by-gpu.parquet")
    assert read_submission(sub).kind == "predictions"
    [path] = run_submission(sub, tmp_path / "ci", data_dir=store.path)
    res = json.loads(path.read_text())
    direct = score_predictions(sub / "predictions" / "autotune-config--by-gpu.parquet", "autotune-config",
                               "by-gpu", data_dir=store.path)
    assert res["kind"] == "predictions" and res["model"] == "guess"
    assert res["aggregate"]["male"]["mean"] == pytest.approx(np.log(1.5), rel=1e-5)
    assert res["aggregate"]["top1_regret"]["mean"] == direct.aggregate["top1_regret"].mean == 0.0
    no_url = folder(tmp_path / "b", "guess", meta=META.format(name="guess"), model=None)
    (no_url / "predictions").mkdir()
    with pytest.raises(SchemaValidationError, match="give `url`"):
        read_submission(no_url)


def _result(model, value, task="autotune-config", scheme="by-gpu", **more) -> Result:
    return Result.from_dict({
        "task": task, "scheme": scheme, "model": model, "status": "ok", "wall_time_s": 2.0,
        "folds": {"a": {"scores": {}}, "b": {"scores": {}}},
        "aggregate": {"top1_regret": {"mean": value, "std": 0.01}, "kendall_tau": {"mean": 0.5, "std": 0.1}},
        **more})


def test_summary_by_hand():
    board = [_result("a", 0.1), _result("b", 0.3), _result("c", 0.05, scheme="random10"),
             _result("oracle", 0.0, kind="reference")]
    assert board_rank(_result("mine", 0.2), board) == (2, 3)
    assert board_rank(_result("mine", 0.01), board) == (1, 3)
    text = result_summary(_result("mine", 0.2), board=board, path="r.json")
    assert text.splitlines() == [
        "mine on autotune-config / by-gpu: 2 fold(s), 2.0 s",
        "  top1_regret  0.2  top-1 regret per problem (0 within noise) (ranks the task); lower is better",
        "  kendall_tau  0.5  Kendall tau-b per problem, averaged; higher is better",
        "  on the board it would rank 2 of 3 by top1_regret",
        "  result: r.json"]
    failed = result_summary(_result("mine", 0.2, status="failed", message="boom"))
    assert failed.splitlines()[1] == "  failed: boom"


def _scored(model, per_fold, task="autotune-config", scheme="by-gpu") -> Result:
    folds = {f: {"scores": {"top1_regret": v}} for f, v in per_fold.items()}
    mean = sum(per_fold.values()) / len(per_fold)
    return Result.from_dict({"task": task, "scheme": scheme, "model": model, "status": "ok", "wall_time_s": 1.0,
                             "folds": folds, "aggregate": {"top1_regret": {"mean": mean, "std": 0.0}}})


def test_a_one_fold_result_is_ranked_against_the_same_fold_of_each_board_model():
    # a: good on average, bad on fold x; b: bad on average, good on fold x
    board = [_scored("a", {"x": 0.30, "y": 0.00, "z": 0.00}), _scored("b", {"x": 0.05, "y": 0.50, "z": 0.50})]
    mine = _scored("mine", {"x": 0.10})
    # against the board's means (0.10 and 0.35) it would read 1st of 3; on fold x (0.30, 0.05) it is 2nd
    assert board_rank(mine, board) == (2, 3)
    text = result_summary(mine, board=board)
    assert "on the board it would rank 2 of 3 by top1_regret on the same fold(s) (x)" in text
    assert board_rank(_scored("all", {"x": 0.2, "y": 0.2, "z": 0.2}), board) == (2, 3)  # means: 0.2 vs 0.1, 0.35
    unscored = [_result("a", 0.1), _result("b", 0.3)]  # folds a, b without per-fold scores
    one = _result("mine", 0.2, folds={"a": {"scores": {}}})
    assert board_rank(one, unscored) is None
    assert "no rank: the board's models have no score on these fold(s)" in result_summary(one, board=unscored)


def test_cli_evaluate_writes_the_file_and_prints_a_summary(tmp_path, store, monkeypatch):
    from typer.testing import CliRunner

    from kgpubench.cli import app

    model = tmp_path / "mine.py"
    model.write_text(textwrap.dedent(MODEL))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["evaluate", str(model), "--task", "autotune-config", "--scheme", "by-gpu",
                                 "--data", str(store.path)])
    assert r.exit_code == 0, r.output
    written = tmp_path / "mine--autotune-config--by-gpu.json"
    res = json.loads(written.read_text())
    assert r.output.startswith("mine on autotune-config / by-gpu: 3 fold(s)")
    # the mean over the 3 folds and its 95 % bootstrap interval, as the board shows it
    assert f"  top1_regret  {cell(read_record(res), 'top1_regret')}  top-1 regret" in r.output
    assert f"  top1_regret  {res['aggregate']['top1_regret']['mean']:.4g} [" in r.output
    assert "result: mine--autotune-config--by-gpu.json" in r.output and len(r.output) < 1000
    r = CliRunner().invoke(app, ["evaluate", str(model), "--task", "autotune-config", "--scheme", "by-gpu",
                                 "--fold", "GPU A", "--data", str(store.path), "--out", "-"])
    assert r.exit_code == 0 and list(json.loads(r.output)["folds"]) == ["GPU A"]
