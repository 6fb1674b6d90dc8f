"""``kgpubench leaderboard render --out DIR`` on committed results: the board goes into DIR, nothing beside the
results; a file in the way of --out is one error line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgpubench.board.leaderboard import results_dir
from kgpubench.cli import app

TASK = "npb-tpb"  # a small task of the committed board (seconds to render)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    base = tmp_path_factory.mktemp("render-out")
    shutil.copytree(results_dir() / TASK, base / "results" / TASK)
    out = base / "elsewhere" / "board"
    result = CliRunner().invoke(app, ["leaderboard", "render", "--results", str(base / "results"), "--out", str(out)])
    return base, out, result


@pytest.mark.slow  # renders a task's pages and plots (seconds)
def test_the_board_is_written_into_out_and_nothing_beside_the_results(rendered):
    base, out, result = rendered
    assert result.exit_code == 0, result.output
    written = [Path(line) for line in result.stdout.splitlines() if line.strip()]
    assert written and all(p.is_relative_to(out) and p.is_file() for p in written)
    for name in ("README.md", "index.html", f"task-{TASK}.html"):
        assert out / name in written
    assert sorted(p.name for p in base.iterdir()) == ["elsewhere", "results"]  # no README.md/index.html beside
    page = (out / f"task-{TASK}.html").read_text()
    models = {json.loads(p.read_text())["model"] for p in (results_dir() / TASK / "by-gpu").glob("*.json")}
    assert models and all(m in page for m in models)


def test_out_naming_a_file_is_one_error_line(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "board.txt").write_text("mine")
    result = CliRunner().invoke(app, ["leaderboard", "render", "--results", str(tmp_path / "results"),
                                      "--out", str(tmp_path / "board.txt")])
    assert result.exit_code == 1
    assert "--out" in str(result.exception) and "takes a folder" in str(result.exception)
    assert (tmp_path / "board.txt").read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == [
        "board.txt", "results"]
