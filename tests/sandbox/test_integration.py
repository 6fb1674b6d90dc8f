"""The sandbox behind evaluate, submit, score and verify: baselines give the in-process scores, forged or
escaping submissions are refused, bad options and files are one-line errors."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from sandbox_helpers import needs_isolation, render
from task_fixtures import make_store, npb_crafted_table

from kgpubench.board import leaderboard as lb
from kgpubench.errors import SchemaValidationError
from kgpubench.models.evaluation import SubmissionError, evaluate, load_model_module, model_factory, run_folds
from kgpubench.models.submission import declared_tasks, model_file_in, read_predictions, submit
from kgpubench.tasks.data import task_data

BASELINES = {p.stem: p for p in lb.baseline_files()}


def _in_process(path, data):
    """Fold scores and the predictions hash of the pre-sandbox, in-process evaluation (trusted code only)."""
    digest, fold = hashlib.sha256(), [0]
    factory = model_factory(load_model_module(path), path)

    class Recording:
        def __init__(self, model):
            self.model = model
            self.uses_measurements = getattr(model, "uses_measurements", False)
            self.predicts_target = getattr(model, "predicts_target", True)

        def fit(self, X, y):
            self.model.fit(X, y)
            return self

        def predict(self, X, **kw):
            pred = self.model.predict(X, **kw).astype("<f8")
            digest.update(f"{fold[0]}:{len(X)}:".encode() + pred.tobytes())
            fold[0] += 1
            return pred

    records, _ = run_folds(data, lambda task, seed: Recording(factory(task=task, seed=seed)))
    return {f: r["scores"] for f, r in records.items()}, digest.hexdigest()


@needs_isolation
@pytest.mark.parametrize("name", ["median", "lgbm"])
def test_baselines_score_exactly_as_in_process(name, store):
    data = task_data("autotune-config", "by-gpu", store.path)
    scores, digest = _in_process(BASELINES[name], data)
    res = evaluate(BASELINES[name], "autotune-config", "by-gpu", data=data)
    assert {f: r.scores for f, r in res.folds.items()} == scores
    assert res.predictions_sha256 == digest
    assert res.model_sha256 == hashlib.sha256(BASELINES[name].read_bytes()).hexdigest()
    assert sorted(res.folds) == ["GPU A", "GPU B", "GPU C"]


@needs_isolation
def test_a_measuring_model_is_served_and_counted_by_the_parent(tmp_path):
    npb = make_store(tmp_path / "npb", npb_crafted_table())
    data = task_data("npb-tpb", "by-gpu", npb.path)
    scores, _ = _in_process(BASELINES["npb_profiling"], data)
    res = evaluate(BASELINES["npb_profiling"], "npb-tpb", "by-gpu", data=data)
    assert {f: r.scores for f, r in res.folds.items()} == scores
    assert [r.score("measurements") for r in res.folds.values()] == [7.0, 7.0]  # 1 + 2 + 2 + 2, by hand
    assert [r.score("app_time_ratio") for r in res.folds.values()] == pytest.approx([1.0, 1.0])


@needs_isolation
def test_submit_writes_the_parents_result_whatever_the_model_forges(tmp_path, store):
    out = tmp_path / "result.json"
    path = render("forge", tmp_path, mode="atexit", target=str(out))  # writes at import and again at exit
    assert submit(path, "autotune-config", "by-gpu", data_dir=store.path, out=out, timeout_s=60) == out
    res = json.loads(out.read_text())
    assert "forged" not in res and res["model_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert res["aggregate"]["male"]["mean"] > 0.01  # the mean of the training targets, not a perfect forgery
    assert len(res["predictions_sha256"]) == 64


def _cli(*args):
    env = {k: v for k, v in os.environ.items() if k != "KGPUBENCH_DEBUG"}
    return subprocess.run([sys.executable, "-m", "kgpubench", *args], capture_output=True, text=True,
                          env={**env, "COLUMNS": "300"})


@pytest.mark.parametrize("option, value", [("--memory-gb", "nan"), ("--memory-gb", "-1"), ("--timeout", "inf")])
def test_submit_refuses_bad_limits_in_one_line(tmp_path, option, value):
    path = render("forge", tmp_path, mode="none", target="unused")
    result = _cli("submit", str(path), "--task", "autotune-config", option, value)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option}: got ") and "greater than 0" in lines[0]


def test_score_refuses_unreadable_and_non_numeric_predictions(tmp_path):
    garbage = tmp_path / "p.parquet"
    garbage.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(SchemaValidationError, match=r"p.parquet: cannot be read as parquet \(ArrowInvalid: ") as err:
        read_predictions(garbage)
    assert "\n" not in str(err.value)
    words = tmp_path / "p.csv"
    words.write_text("row_id,fold,prediction\na,GPU A,1.5\nb,GPU A,fast\n")
    with pytest.raises(SchemaValidationError, match=r"column prediction holds .* values \(e.g. 'fast'\)"):
        read_predictions(words)
    result = _cli("score", str(garbage), "--task", "autotune-config", "--scheme", "by-gpu")
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "cannot be read as parquet" in result.stderr


def test_tasks_are_read_without_running_the_model(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "m.py"
    path.write_text(f"open({str(marker)!r}, 'w').close()\nTASKS = ('autotune-config',)\n"
                    "def make_model(task, seed):\n    return None\n")
    assert declared_tasks(path) == ("autotune-config",)
    jobs = lb.plan(models=[path], references=False)
    assert [(j.task.name, j.scheme) for j in jobs] == [("autotune-config", s) for s in ("random10", "by-gpu")]
    assert not marker.exists()
    path.write_text("TASKS = tuple(['kernel-time'])\n")
    with pytest.raises(SubmissionError, match=r"TASKS \(line 1\) must be a literal tuple of task names"):
        declared_tasks(path)
    path.write_text("def make_model(task, seed):\n    return None\n")
    assert declared_tasks(path) == ()


@pytest.mark.parametrize("label, why", [("../outside.py", "it climbs out with '..'"),
                                        ("/tmp/model.py", "it is an absolute path"),
                                        ("leaderboard/link.py", "a symbolic link leads outside the project")])
def test_model_files_outside_the_project_are_refused(tmp_path, label, why):
    root = tmp_path / "project"
    (root / "leaderboard").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("x = 1\n")
    (root / "leaderboard" / "link.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(SubmissionError, match=f"refused, {why}"):
        model_file_in(root, label)
    (root / "leaderboard" / "ok.py").write_text("x = 1\n")
    assert model_file_in(root, "leaderboard/ok.py") == root / "leaderboard" / "ok.py"


@needs_isolation
def test_verify_neither_runs_outside_files_nor_believes_a_model_that_exits(tmp_path, store, monkeypatch):
    project = tmp_path / "project"
    (project / "leaderboard" / "submissions").mkdir(parents=True)
    model = render("forge", project / "leaderboard" / "submissions", mode="sys-exit", target="unused")
    marker = tmp_path / "outside-ran"
    (tmp_path / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.setattr(lb, "project_root", lambda: project)
    results = tmp_path / "results" / "autotune-config" / "by-gpu"
    results.mkdir(parents=True)
    perfect = {"task": "autotune-config", "scheme": "by-gpu", "seed": 0, "dataset": {}, "split_sha256": None,
               "folds": {"GPU A": {"scores": {"male": 0.0, "top1_regret": 0.0}}}}
    for name, label in (("forge", "leaderboard/submissions/forge.py"), ("evil", "../evil.py"),
                        ("abs", str(tmp_path / "evil.py"))):
        (results / f"{name}.json").write_text(json.dumps({**perfect, "model": name, "model_file": label,
                                                          "model_sha256": "0" * 64}))
    with pytest.raises(lb.VerifyError) as err:
        lb.verify(root=tmp_path / "results", data_dir=store.path)
    problems = err.value.problems
    assert len(problems) == 3
    assert any("forge.py: predict() failed: the model called sys.exit(0)" in p for p in problems)
    assert any("model_file '../evil.py': refused, it climbs out with '..'" in p for p in problems)
    assert any("refused, it is an absolute path" in p for p in problems)
    assert not marker.exists()
    assert model.exists()
