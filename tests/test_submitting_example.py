"""SUBMITTING.md's worked example, run as it stands: a submission folder is checked, re-run by the CI script in
the sandbox on the packaged data, and added to a board by the maintainer's command."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def worked_example() -> str:
    text = (ROOT / "leaderboard" / "SUBMITTING.md").read_text()
    match = re.search(r"<!-- worked example -->\n```bash\n(.*?)\n```", text, re.S)
    assert match, "SUBMITTING.md lost its worked example block"
    return match.group(1)


@pytest.mark.slow
def test_the_worked_example_runs_as_written(tmp_path):
    (tmp_path / ".ci").mkdir()
    shutil.copy2(ROOT / ".ci" / "submission", tmp_path / ".ci" / "submission")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", worked_example()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "tiny-forest: model by Ada Example; runs kernel-power/holdout80" in out
    assert "tiny-forest on kernel-power / holdout80: 1 fold(s)" in out
    # holdout80: one fold, so the mean alone (no interval)
    assert re.search(r"\n  male +[0-9.e+-]+  mean absolute log error \(ranks the task\)", out)
    assert re.search(r"on the board it would rank \d+ of \d+ by male", out)

    model = tmp_path / "leaderboard/submissions/tiny-forest/model.py"
    ci = tmp_path / "build/submission-results/kernel-power/holdout80/tiny-forest.json"
    board = tmp_path / "leaderboard/results/kernel-power/holdout80/tiny-forest.json"
    assert board.read_bytes() == ci.read_bytes()
    res = json.loads(board.read_text())
    assert res["model"] == "tiny-forest" and res["model_file"] == "leaderboard/submissions/tiny-forest/model.py"
    assert res["model_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert res["submission"]["authors"] == ["Ada Example"] and list(res["folds"]) == ["holdout"]
    assert f"{res['model_sha256'][:12]}" in (tmp_path / "leaderboard/task-kernel-power.html").read_text()
    assert str(board) + "\n" in out or "leaderboard/results/kernel-power/holdout80/tiny-forest.json" in out
