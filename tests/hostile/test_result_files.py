"""Hostile inputs: result files arrive by pull request and are read by ``leaderboard render``/``verify`` and
``submission accept``. Before, a deep or invalid one gave an internal error and a duplicate key was resolved
silently; now each is one line naming the file."""

from __future__ import annotations

import pytest
from cli_helpers import cli

from kgpubench.results.ownership import is_submission_result, ours

CASES = {
    "100,000-deep": ("[" * 100_000 + "]" * 100_000, "JSON nested too deeply to read"),
    "duplicate key": ('{"task": "a", "scheme": "b", "status": "ok", "status": "failed"}',
                      "the key 'status' appears twice"),
    "invalid": ('{"task": 1', "not valid JSON"),
    "a list": ("[1, 2]", "top level is a list, expected a result object"),
    "too large": ('{"pad": "' + "x" * (16 << 20) + '"}', "larger than 16,777,216 bytes"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_result_file_is_one_line(case, tmp_path, monkeypatch, capsys):
    text, why = CASES[case]
    path = tmp_path / "results" / "autotune-config" / "by-gpu" / "evil.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    code, out, err = cli(monkeypatch, capsys, "leaderboard", "render", "--results", tmp_path / "results")
    (line,) = err.splitlines()
    assert code == 1 and line.startswith(f"error: {path}: ") and why in line, line
    assert not ours(path) and not is_submission_result(path)  # never an internal error either
