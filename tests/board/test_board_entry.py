"""The board's input is typed (issue 42): ``load_results`` hands the renderer and the site
:class:`~kgpubench.results.result.BoardEntry` records (the record read from its file, the file, whether it is stale),
no dict with private keys crosses into the board's modules, and the stale mark still reaches the README and the
site from a stale entry."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from kgpubench.board import leaderboard as lb
from kgpubench.board.render import STALE_LEGEND, STALE_MARK, render_markdown
from kgpubench.board.site import site_pages
from kgpubench.board.site.pages import task_page_name
from kgpubench.results.result import BoardEntry, Result, Skipped, read_record, read_result_json
from kgpubench.tasks import get_task

ROOT = Path(__file__).resolve().parents[2]
# The modules the board's records travel through, from the results folder to the page.
BOARD_MODULES = ("kgpubench/board/leaderboard.py", "kgpubench/board/render.py", "kgpubench/board/ranking.py",
                 "kgpubench/board/baselines.py", "kgpubench/board/pull_request.py", "kgpubench/cli/leaderboard.py",
                 *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "kgpubench/board/site").glob("*.py")))


def _private_keys(path: Path) -> list[str]:
    """``line: key`` (each once, by line) of every string starting with ``_`` (not a dunder) that ``path`` uses as
    a mapping key: a subscript, the first argument of ``get``/``pop``/``setdefault``, a dict literal's key, a
    keyword of ``update()``; and every string constant ``_stale`` or ``_path`` wherever it stands."""

    def private(node: ast.AST | None) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_")
                and not node.value.startswith("__"))

    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        keys: list[ast.AST | None] = []
        if isinstance(node, ast.Subscript):
            keys.append(node.slice)
        elif isinstance(node, ast.Dict):
            keys += node.keys
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("get", "pop", "setdefault") and node.args:
                keys.append(node.args[0])
            if node.func.attr == "update":
                found += [f"{node.lineno}: {k.arg}" for k in node.keywords if k.arg and k.arg.startswith("_")]
        if isinstance(node, ast.Constant) and node.value in ("_stale", "_path"):
            found.append(f"{node.lineno}: {node.value}")
        found += [f"{k.lineno}: {k.value}" for k in keys if private(k)]
    return sorted(set(found), key=lambda f: (int(f.split(":")[0]), f))


def test_no_dict_with_private_keys_reaches_the_board():
    assert len(BOARD_MODULES) >= 10  # the site package was found
    found = {m: _private_keys(ROOT / m) for m in BOARD_MODULES}
    assert {m: keys for m, keys in found.items() if keys} == {}


def test_the_private_key_check_finds_what_it_must(tmp_path):
    """The check above is not vacuous: each way a private key used to travel is found."""
    bad = tmp_path / "bad.py"
    bad.write_text('def f(r, data):\n    data["_path"] = 1\n    x = r.get("_stale")\n    y = {"_why": 2}\n'
                   '    data.update(_note=3)\n    return r["__class__"], "_stale"\n')
    assert _private_keys(bad) == ["2: _path", "3: _stale", "4: _why", "5: _note", "6: _stale"]


def test_load_results_hands_each_file_as_a_typed_entry(tmp_path):
    """Every file of a committed task (results and a skipped scheme's status) as a ``BoardEntry``: the record as
    ``read_record`` reads the file, the file itself, not stale unless asked."""
    task = "kernel-time"  # its by-gpu scheme is skipped: one GPU
    if not (lb.results_dir() / task).is_dir():
        pytest.skip("no committed leaderboard/results in this checkout")
    shutil.copytree(lb.results_dir() / task, tmp_path / task)
    entries = lb.load_results(tmp_path)
    files = sorted(tmp_path.glob("*/*/*.json"))
    assert [e.path for e in entries] == files and len(files) >= 5
    assert all(isinstance(e, BoardEntry) and e.stale is False for e in entries)
    assert [e.record for e in entries] == [read_record(read_result_json(p), where=str(p)) for p in files]
    kinds = {type(e.record) for e in entries}
    assert kinds == {Result, Skipped}
    skipped = next(e for e in entries if isinstance(e.record, Skipped))
    assert skipped.path.name == lb.STATUS_FILE and "one GPU" in skipped.record.reason


def _result(model: str, regret: float) -> Result:
    return read_record({
        "task": "autotune-config", "scheme": "random10", "model": model, "kind": "model",
        "model_file": f"baselines/{model}.py", "date": "2026-11-25", "dataset": {"version": "0.1.0"},
        "folds": {"0": {"scores": {"top1_regret": regret}}, "1": {"scores": {"top1_regret": regret}}},
        "aggregate": {"top1_regret": {"mean": regret, "std": 0.0, "median": regret, "folds": 2}}})


def test_a_stale_entry_is_marked_in_the_readme_and_on_its_task_page():
    task = get_task("autotune-config")
    failed = read_record({"task": task.name, "scheme": "random10", "model": "broken", "status": "failed",
                          "message": "fold 0: predict returned NaN"})
    entries = [BoardEntry(_result("median", 0.3), stale=True), BoardEntry(_result("lgbm", 0.1)),
               BoardEntry(failed, stale=True)]
    readme = render_markdown(entries, [task])
    assert f"| 2 | median {STALE_MARK} |" in readme and "| 1 | lgbm |" in readme
    assert f"lgbm {STALE_MARK}" not in readme
    assert f"*Failed*: `broken` {STALE_MARK}: fold 0: predict returned NaN" in readme
    assert readme.count(STALE_LEGEND) == 1  # one scheme shown
    page = site_pages(entries, [task])[0][task_page_name(task.name)]
    assert f"median {STALE_MARK}</a>" in page and f"lgbm {STALE_MARK}" not in page
    assert "re-run it with <code>kgpubench leaderboard run</code>" in page
    # the same entries, none stale: no mark, no legend
    fresh = [BoardEntry(e.record, e.path) for e in entries]
    for text in (render_markdown(fresh, [task]), site_pages(fresh, [task])[0][task_page_name(task.name)]):
        assert STALE_MARK not in text and "re-run it with" not in text
