"""Forged scores (issue 40 item 4): a result's task, model, seed and data hashes are computable from public
inputs, so `leaderboard run --reuse --from DIR` copied a forged median.json (male 1e-6) and ranked it first, and
`submission accept` copied a CI result with forged scores. Now a result carries its predictions (a file beside
it, its sha256 in the result) and every fold's scores are recomputed from them and the data before a copied
result is trusted: a forged score is refused in one line (and, for reuse, the job runs again)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.board import leaderboard as lb
from kgpubench.board import site
from kgpubench.board.pull_request import accept, run_submission
from kgpubench.models.evaluation import SubmissionError, predictions_path, rescore_problem
from kgpubench.results.result import Result
from kgpubench.tasks.data import task_data
from kgpubench.testing import MEAN_MODEL_SOURCE

pytestmark = [pytest.mark.slow, pytest.mark.integration]  # a small board is run in the sandbox first

MEDIAN = [p for p in lb.baseline_files() if p.stem == "median"]
TASK, SCHEME = "autotune-config", "by-gpu"


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("forged")
    store = make_store(root / "store", autotune_table())
    out = root / "ci" / "results"
    lb.run(data_dir=store.path, out_dir=out, models=MEDIAN, tasks=[TASK], render=False)
    return store, out


def _touched(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    return path


def _forge(path: Path, metric: str = "male", change=lambda v: v * 1e-6) -> None:
    res = json.loads(path.read_text())
    for fold in res["folds"].values():
        fold["scores"][metric] = change(fold["scores"][metric])
    path.write_text(json.dumps(res))


def test_a_run_writes_the_predictions_beside_the_result_and_they_rescore(made):
    store, out = made
    path = out / TASK / SCHEME / "median.json"
    res = Result.from_dict(json.loads(path.read_text()))
    assert res.extra["predictions_file"]["name"] == "median.predictions.npz" and predictions_path(path).is_file()
    assert predictions_path(path).stat().st_size < 64 << 10  # compact
    assert rescore_problem(res, path, task_data(TASK, SCHEME, store.path)) is None
    assert not predictions_path(out / TASK / SCHEME / "oracle.json").exists()  # the oracle rescores from targets


@pytest.mark.parametrize("attack, why", [
    ("forged score", "male is recorded as"),
    ("no predictions file", "predictions file"),
    ("predictions replaced", "does not have the sha256"),
    ("forged oracle", "kendall_tau is recorded as"),
])
def test_a_forged_result_is_not_reused_and_runs_again(made, tmp_path, attack, why):
    store, out = made
    source = tmp_path / "from" / "results"
    shutil.copytree(out.parent, source.parent)
    target = source / TASK / SCHEME / ("oracle.json" if attack == "forged oracle" else "median.json")
    sidecar = predictions_path(target)
    if attack == "forged oracle":  # the oracle's male is 0: its rank correlation drops instead
        _forge(target, "kendall_tau", lambda v: v - 0.5)
    elif attack == "forged score":
        _forge(target)
    elif attack == "no predictions file":
        _forge(target)
        sidecar.unlink()
    else:  # predictions that score perfectly, without the sha256 the result records
        data = task_data(TASK, SCHEME, store.path)
        folds = list(json.loads(target.read_text())["folds"])
        np.savez_compressed(sidecar, folds=np.array(folds), **{f"f{i}": data.y[data.folds == f]
                                                                for i, f in enumerate(folds)})
    warned = []
    mine = tmp_path / "mine" / "results"
    written = lb.run(data_dir=store.path, out_dir=mine, models=MEDIAN, tasks=[TASK], reuse=True,
                     reuse_from=source, warn=warned.append, render=False)
    name = target.name
    lines = [w for w in warned if str(target) in w]
    assert len(lines) == 1 and why in lines[0] and "\n" not in lines[0], warned
    assert mine / TASK / SCHEME / name in written  # run again, not copied
    assert json.loads((mine / TASK / SCHEME / name).read_text())["folds"] == json.loads(
        (out / TASK / SCHEME / name).read_text())["folds"]


META = """
name: mean-model
authors: [Ada Example]
description: The mean of the training targets, for every row.
runs:
  - {task: autotune-config, scheme: by-gpu}
"""


@pytest.fixture(scope="module")
def ci(made, tmp_path_factory):
    store, _ = made
    root = tmp_path_factory.mktemp("ci")
    sub = root / "submissions" / "mean-model"
    sub.mkdir(parents=True)
    (sub / "submission.yaml").write_text(textwrap.dedent(META))
    (sub / "model.py").write_text(textwrap.dedent(MEAN_MODEL_SOURCE))
    run_submission(sub, root / "ci", data_dir=store.path, timeout_s=120)
    return sub, root / "ci"


@pytest.mark.parametrize("attack, why", [
    (None, None),
    ("forged score", "refused, its scores are not trusted: fold GPU A: male is recorded as"),
    ("no predictions file", "refused, its scores are not trusted: its predictions file"),
    ("forged submission record", "its submission record is not the one"),
])
def test_accept_recomputes_the_scores_and_checks_the_submission_record(made, ci, tmp_path, attack, why):
    store, _ = made
    sub, results = ci
    copy = tmp_path / "ci"
    shutil.copytree(results, copy)
    path = copy / TASK / SCHEME / "mean-model.json"
    if attack in ("forged score", "no predictions file"):
        _forge(path)
    if attack == "no predictions file":
        predictions_path(path).unlink()
    if attack == "forged submission record":
        res = json.loads(path.read_text())
        res["submission"]["authors"] = ["Someone Else"]
        path.write_text(json.dumps(res))
    board = tmp_path / "board" / "results"
    if attack is None:
        assert accept(sub, copy, board=board, data_dir=store.path, render=False) == [
            board / TASK / SCHEME / "mean-model.json"]
        assert predictions_path(board / TASK / SCHEME / "mean-model.json").is_file()
        return
    with pytest.raises(SubmissionError) as err:
        accept(sub, copy, board=board, data_dir=store.path, render=False)
    assert why in str(err.value) and "\n" not in str(err.value), str(err.value)
    assert not board.exists()


def test_the_committed_board_gets_no_predictions(made, tmp_path, monkeypatch):
    """A full board's predictions would add over 100 MB to the repository: a run into the committed results
    folder writes none (its results are trusted as that folder), and `--from` it skips the rescoring."""
    store, out = made
    committed = tmp_path / "leaderboard" / "results"
    monkeypatch.setattr(lb, "results_dir", lambda: committed)
    lb.run(data_dir=store.path, out_dir=committed, models=MEDIAN, tasks=[TASK], render=False)
    assert (committed / TASK / SCHEME / "median.json").is_file()
    assert list(committed.rglob("*.predictions.npz")) == []
    mine = tmp_path / "mine" / "results"
    warned = []
    assert lb.run(data_dir=store.path, out_dir=mine, models=MEDIAN, tasks=[TASK], reuse=True, reuse_from=committed,
                  warn=warned.append, render=False) == []  # every result copied, none run again
    assert warned == [] and (mine / TASK / SCHEME / "median.json").is_file()


def test_render_refuses_a_forged_score_outside_the_committed_board(made, tmp_path, monkeypatch, capsys):
    from cli_helpers import cli

    store, out = made
    copy = tmp_path / "board" / "results"
    shutil.copytree(out, copy)
    with monkeypatch.context() as m:  # the plots (9 s of matplotlib) say nothing of trust: an empty file each
        m.setattr(site, "draw", lambda spec, board_dir: _touched(Path(board_dir) / spec.name))
        code, _, err = cli(monkeypatch, capsys, "leaderboard", "render", "--results", copy, "--data", store.path)
    assert code in (0, None), err
    assert (copy.parent / "index.html").is_file() and list((copy.parent / "plots").glob("*.svg"))
    target = copy / TASK / SCHEME / "median.json"
    _forge(target)
    code, _, err = cli(monkeypatch, capsys, "leaderboard", "render", "--results", copy, "--data", store.path,
                       "--force")
    (line,) = err.splitlines()
    assert code == 1 and f"{target}: refused, its scores are not trusted: fold" in line, line
