"""The board's presentation is declared on the task: the renderer names no task or model, a section a task
declares is rendered (and one it does not declare is not), and the site's templates escape what they print."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
from pathlib import Path

import pytest

from kgpubench.board import render
from kgpubench.board.render import SECTION_KINDS, page_blocks, render_markdown
from kgpubench.board.site import site_pages
from kgpubench.results.result import BoardEntry, read_record
from kgpubench.tasks import extras, get_task, list_tasks
from kgpubench.tasks.extras import (
    ExtraTable,
    ModelsBesideBest,
    ProblemStrategies,
    SchemeMetrics,
    Section,
    SubsetErrors,
    UnseenGpuGoal,
)

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "leaderboard" / "results"
RENDERER = [ROOT / "kgpubench" / "board" / "render.py", *sorted((ROOT / "kgpubench" / "board" / "site").glob("*.py"))]
TEMPLATES = sorted((ROOT / "kgpubench" / "board" / "site" / "templates").glob("*.j2"))
SCRIPT = "<script>alert(1)</script>"


def _names() -> tuple[set[str], set[str]]:
    """Every task name, and every baseline's name that is not also a word of the result format (``median``
    is a baseline and the statistic every aggregate records)."""
    tasks = {t.name for t in list_tasks()}
    statistics = set(_load("autotune-config", "random10", "median")["aggregate"]["male"])
    assert "median" in statistics
    models = {p.stem for p in (ROOT / "baselines").glob("*.py") if not p.stem.startswith("_")} - statistics
    return tasks, models


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def _string_literals(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every string constant of ``path`` that is neither a docstring nor a subscript key
    (``aggregate["median"]`` reads a field of the result format, not a model)."""
    tree = ast.parse(path.read_text())
    skip = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    skip |= {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


@pytest.mark.parametrize("path", RENDERER, ids=lambda p: p.name)
def test_the_renderer_names_no_task_and_no_model(path):
    tasks, models = _names()
    assert {"npb-tpb", "kernel-power"} <= tasks and {"power_nonlinear", "wavelet_nn", "transfer"} <= models
    found = []
    for line, value in _string_literals(path):
        found += [(line, t) for t in tasks if _mentions(value, t)]
        found += [(line, m) for m in models if value == m or f"`{m}`" in value]
    assert found == [], f"{path.name}: declare these on the task (Task.sections, Task.gpu_baseline)"


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_the_templates_name_no_task_and_no_model(path):
    tasks, models = _names()
    text = path.read_text()
    assert [t for t in tasks if _mentions(text, t)] == []
    assert [m for m in models if f"`{m}`" in text or f'"{m}"' in text] == []


def test_every_section_kind_has_a_renderer():
    kinds = {c.kind for c in vars(extras).values() if isinstance(c, type) and issubclass(c, Section) and c.kind}
    assert kinds == {c.kind for c in extras.SECTIONS}
    assert kinds == set(SECTION_KINDS) == {"subset-errors", "problem-strategies", "models-beside-best",
                                           "scheme-metrics", "unseen-gpu-goal"}
    declared = {type(s) for t in list_tasks() for s in t.sections}
    assert declared == {SubsetErrors, ProblemStrategies, ModelsBesideBest, SchemeMetrics, UnseenGpuGoal}


def test_a_task_with_sections_survives_the_json_the_sandbox_sends():
    def tup(v):  # as kgpubench.sandbox.child rebuilds a task
        return tuple(tup(x) for x in v) if isinstance(v, list) else v

    for task in list_tasks():
        fields = json.loads(json.dumps(dataclasses.asdict(task)))  # as kgpubench.sandbox.session sends a task
        again = type(task)(**{k: tup(v) for k, v in fields.items()})
        assert again == task and hash(again) == hash(task)
    with pytest.raises(Exception, match="unknown section kind 'table'"):
        extras.section_from_fields({"kind": "table", "title": "t", "note": "n"})


def _load(task: str, scheme: str, model: str) -> dict:
    return json.loads((RESULTS / task / scheme / f"{model}.json").read_text())


def _as(result: dict, task: str, **changes) -> BoardEntry:
    """A result file's JSON under another task name (and ``changes``), as the board holds it."""
    out = copy.deepcopy(result)
    out.update(task=task, **changes)
    return BoardEntry(read_record(out))


def test_a_section_a_task_declares_is_rendered_and_only_then():
    toy = "toy-power"
    section = ModelsBesideBest(title="Toy seed — power", note="The toy seed's own model beside the best other.",
                               models=("svr",), schemes=("random10", "by-gpu"),
                               paper=("toy seed (paper)", "— / 1.5", "—"))
    metrics = SchemeMetrics(title="Toy metrics per scheme", note="One row per model and scheme.",
                            schemes=("random10",), columns=(("mean % error", "mape"),))
    task = dataclasses.replace(get_task("kernel-power"), name=toy, sections=(section, metrics))
    results = [_as(_load("kernel-power", "random10", m), toy) for m in ("svr", "lgbm", "median", "oracle")]
    text = render_markdown(results, [task])
    body = text.split("## The seed studies' protocols on our rows", 1)[1]
    assert body.index("### Toy seed — power") < body.index("### Toy metrics per scheme")
    rows = [line for line in body.splitlines() if line.startswith("| ")]
    svr, lgbm = results[0].record.aggregate["mape"].mean, results[1].record.aggregate["mape"].mean
    best_other = min(("lgbm", "median"), key=lambda m: next(
        e.record for e in results if e.record.model == m).aggregate["male"].mean)
    assert rows[0] == "| model | random10 | by-gpu |"
    assert rows[1].startswith(f"| svr | {svr:.3g} / ") and rows[1].endswith(" | — |")
    assert rows[2].startswith(f"| {best_other} | ")
    assert rows[3] == "| toy seed (paper) | — / 1.5 | — |"
    assert f"| lgbm | random10 | {render._fmt(results[1].record, 'mape')} |" in body and lgbm > 0
    pages, _ = site_pages(results, [task])
    assert 'id="toy-seed-power"' in pages["seeds.html"] and "toy seed (paper)" in pages["seeds.html"]
    # the same task without the declaration: no such section anywhere
    bare = dataclasses.replace(task, sections=())
    assert "Toy seed" not in render_markdown(results, [bare])
    assert "Toy seed" not in site_pages(results, [bare])[0]["seeds.html"]


def test_a_declared_goal_names_the_declared_baseline():
    toy = "toy-tuning"
    goal = UnseenGpuGoal(title="Goal: toy GPUs", note="Beat `elm` on every GPU.", baseline="elm", regret=0.5,
                         nothing="*Nothing yet*.")
    task = dataclasses.replace(get_task("autotune-config"), name=toy, sections=(goal,), gpu_baseline="elm")
    results = [_as(_load("autotune-config", "by-gpu", m), toy) for m in ("xgb", "elm", "median")]
    blocks = page_blocks(results, [task])
    heads = [b.text for b in blocks if b.kind in ("h2", "h3")]
    assert "Goal: toy GPUs" in heads and "Goal: unseen GPUs" not in heads
    table = next(b for b in blocks if b.kind == "table" and b.rows[0][0] == "GPU")
    assert table.rows[0][2:] == ("elm top1_regret", "beats elm")
    # without results under the scheme: the declared sentence
    assert [b.text for b in page_blocks([], [task]) if b.kind == "p"][-1] == "*Nothing yet*."


def test_script_in_a_model_name_message_or_note_is_escaped_on_every_page():
    task = get_task("autotune-config")
    loaded = _load("autotune-config", "random10", "median")
    good = _as(loaded, task.name)
    evil = _as(loaded, task.name, model=SCRIPT)
    unscored = {k: v for k, v in loaded.items() if k not in ("folds", "aggregate", "samples")}
    failed = _as(unscored, task.name, model="broken", status="failed", message=f"fold 1: {SCRIPT}")
    note = ExtraTable(f"table {SCRIPT}", f"a note with {SCRIPT}", ("model", SCRIPT), ((SCRIPT, "1"),))
    pages, _ = site_pages([good, evil, failed], [task], extras={task.name: [note], render.BOARD_KEY: [note]})
    for name, text in pages.items():
        assert "<script" not in text.lower(), name
    task_page = pages[f"task-{task.name}.html"]
    assert task_page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5  # score table, provenance, failure, extra
    assert "&lt;script&gt;" in pages["index.html"]
