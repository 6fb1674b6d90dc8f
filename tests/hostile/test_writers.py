"""Hostile inputs, issue 30 item 5: every writer refuses an existing file without ``--force``, checks that it can
write before it runs, and ``-`` means standard output everywhere (never a file named ``-``).

Before: ``score`` (no ``--force``), ``evaluate`` and ``submit --out`` overwrote an existing file, ``score --out -``
wrote a file named ``-``, and ``evaluate`` found an unwritable ``--out`` only after the run.
"""

from __future__ import annotations

import json
import os

import pytest
from cli_helpers import cli

RESULT = {"task": "autotune-config", "scheme": "by-gpu", "model": "m", "status": "ok", "wall_time_s": 2.0,
          "folds": {"a": {"scores": {}}, "b": {"scores": {}}},
          "aggregate": {"top1_regret": {"mean": 0.25, "std": 0.01}, "kendall_tau": {"mean": 0.5, "std": 0.1}}}
MODEL = "def make_model(task, seed):\n    return None\n"


@pytest.fixture
def ran(monkeypatch):
    """Stand-ins for the long steps (evaluate, score, submit's run): they record that they ran."""
    import kgpubench.models.evaluation
    import kgpubench.models.submission
    from kgpubench.results.result import Result

    calls = []

    def fake(*args, **kwargs):
        calls.append(args)
        return Result.from_dict(RESULT)

    monkeypatch.setattr(kgpubench.models.evaluation, "evaluate", fake)
    monkeypatch.setattr(kgpubench.models.submission, "evaluate", fake)  # submit's evaluate
    monkeypatch.setattr(kgpubench.models.submission, "score_predictions", fake)
    return calls


def _command(kind, tmp_path):
    model = tmp_path / "m.py"
    model.write_text(MODEL)
    preds = tmp_path / "p.csv"
    preds.write_text("row_id,fold,prediction\n")
    base = {"evaluate": ["evaluate", model, "--task", "autotune-config", "--scheme", "by-gpu"],
            "submit": ["submit", model, "--task", "autotune-config", "--scheme", "by-gpu"],
            "score": ["score", preds, "--task", "autotune-config", "--scheme", "by-gpu"]}
    return base[kind]


@pytest.mark.parametrize("kind", ["evaluate", "submit", "score"])
def test_an_existing_out_file_is_refused_before_running(kind, tmp_path, monkeypatch, capsys, ran):
    out = tmp_path / "mine.json"
    out.write_text("precious")
    code, _, err = cli(monkeypatch, capsys, *_command(kind, tmp_path), "--out", out)
    assert (code, err) == (1, f"error: {out}: already exists; pass --force to overwrite it, or choose another "
                              "path.\n")
    assert out.read_text() == "precious" and ran == []
    code, _, err = cli(monkeypatch, capsys, *_command(kind, tmp_path), "--out", out, "--force")
    assert code == 0, err
    assert json.loads(out.read_text())["aggregate"]["top1_regret"]["mean"] == 0.25 and len(ran) == 1


@pytest.mark.parametrize("kind", ["evaluate", "submit", "score"])
def test_dash_means_standard_output(kind, tmp_path, monkeypatch, capsys, ran):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(monkeypatch, capsys, *_command(kind, tmp_path), "--out", "-")
    assert code == 0, err
    assert json.loads(out)["model"] == "m" and not (tmp_path / "-").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only folder")
@pytest.mark.parametrize("kind", ["evaluate", "submit", "score"])
def test_an_unwritable_out_is_refused_before_running(kind, tmp_path, monkeypatch, capsys, ran):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = cli(monkeypatch, capsys, *_command(kind, tmp_path), "--out", locked / "sub" / "r.json")
    finally:
        locked.chmod(0o700)
    assert code == 1 and "is not writable" in err and ran == []


@pytest.mark.parametrize("kind", ["evaluate", "submit", "score"])
def test_an_out_under_a_file_is_refused_before_running(kind, tmp_path, monkeypatch, capsys, ran):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli(monkeypatch, capsys, *_command(kind, tmp_path), "--out", blocker / "r.json")
    assert code == 1 and f"{blocker} is not a folder" in err and ran == []


def test_evaluate_default_name_is_checked_before_running(tmp_path, monkeypatch, capsys, ran):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m--autotune-config--by-gpu.json").write_text("precious")
    code, _, err = cli(monkeypatch, capsys, *_command("evaluate", tmp_path))
    assert code == 1 and "m--autotune-config--by-gpu.json: already exists" in err and ran == []


@pytest.mark.parametrize("args", [
    ["import", "kernel-tuner", "x.json", "--out", "-"],
    ["export", "t4", "--config", "autotune", "--out", "-"],
    ["leaderboard", "run", "--out", "-"],
    ["leaderboard", "splits", "--out", "-"],
    ["collect", "--out", "-", "--dry-run"],
])
def test_dash_is_never_a_file_or_folder_named_dash(args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text('{"cache": {}}')
    code, _, err = cli(monkeypatch, capsys, *args)
    assert code == 1 and "'-' means standard output, and this command writes" in err, err
    assert not (tmp_path / "-").exists()


def test_submission_run_refuses_existing_results_without_force(tmp_path, monkeypatch, capsys, ran):
    sub = tmp_path / "submissions" / "mine"
    sub.mkdir(parents=True)
    (sub / "submission.yaml").write_text("name: mine\nauthors: [A]\ndescription: A model that guesses.\n"
                                         "runs:\n  - {task: autotune-config, scheme: by-gpu}\n")
    (sub / "model.py").write_text(MODEL)
    out = tmp_path / "ci" / "autotune-config" / "by-gpu" / "mine.json"
    out.parent.mkdir(parents=True)
    out.write_text("precious")
    code, _, err = cli(monkeypatch, capsys, "submission", "run", sub, "--out", tmp_path / "ci")
    assert code == 1 and f"{out}: already exists" in err and out.read_text() == "precious" and ran == []
