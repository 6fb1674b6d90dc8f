"""A task's extra tables (NeuSight's paper metric) on the board, declared on the task, read from the results."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kgpubench.board.render import render_markdown
from kgpubench.errors import UnknownNameError
from kgpubench.resources import source_checkout
from kgpubench.tasks import TaskRegistry, get_task
from kgpubench.tasks.extras import extra_path, load_extras

CLASSES = ("bmm", "linear", "elementwise", "softmax", "layernorm")


def _doc(models):
    return {"workloads": 17, "calls": 385,
            "models": {m: {c: {"error_pct": v, "workloads": 17} for c, v in zip(CLASSES, errs)}
                       for m, errs in models.items()}}


def test_the_paper_metric_table_puts_the_papers_rows_first_and_sorts_ours(tmp_path):
    task = get_task("operator-latency")
    path = extra_path(tmp_path, task.name, "neusight-paper-metric")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(_doc({"slow": (50, 50, 50, 50, 50), "good": (10, 20, 8, 9, 90)})))
    table, *others = load_extras(task, tmp_path)  # then few-shot curves and goals
    assert [t.title for t in others] == ["fewshot", "goals"]  # not computed in tmp_path
    assert table.header == ("model", "BMM", "FC", "elementwise", "softmax", "LayerNorm")
    assert [r[0] for r in table.rows] == ["NeuSight (paper)", "NeuSight's roofline (paper)", "good", "slow"]
    assert table.rows[0][1:] == ("13.8", "13.9", "19.3", "13.9", "56.7")
    assert table.rows[2][1:] == ("10.0", "20.0", "8.0", "9.0", "90.0")
    text = render_markdown([], [task], {task.name: [table]})
    assert "### NeuSight's paper metric beside ours" in text and "| good | 10.0 | 20.0 | 8.0 | 9.0 | 90.0 |" in text
    assert "17 inference workloads (385 operator calls)" in text


def test_a_missing_or_broken_extra_file_is_said_not_computed(tmp_path):
    task = get_task("operator-latency")
    missing, *_ = load_extras(task, tmp_path)
    assert missing.header == () and "Not computed here" in missing.note
    path = extra_path(tmp_path, task.name, "neusight-paper-metric")
    path.parent.mkdir(parents=True)
    path.write_text('{"models": {}, "models": {}}')  # a key twice: refused, not half-read
    broken, *_ = load_extras(task, tmp_path)
    assert "Not computed here" in broken.note


def test_an_unknown_extra_is_refused_at_registration():
    task = dataclasses.replace(get_task("operator-latency"), name="other", extras=("no-such-table",))
    with pytest.raises(UnknownNameError, match="no-such-table"):
        TaskRegistry().register(task.name, task)


def test_the_committed_board_shows_our_models_beside_the_paper_on_the_neusight_split():
    root = source_checkout() / "leaderboard"
    doc = json.loads((root / "results" / "operator-latency" / "neusight-paper-metric.json").read_text())
    readme = (root / "README.md").read_text()
    page = (root / "task-operator-latency.html").read_text()
    assert "| NeuSight (paper) | 13.8 | 13.9 | 19.3 | 13.9 | 56.7 |" in readme
    for model, errs in doc["models"].items():
        cells = " | ".join(f"{errs[c]['error_pct']:.1f}" for c in CLASSES)
        assert f"| {model} | {cells} |" in readme
        assert f">{model}<" in page
    assert "NeuSight&#x27;s paper metric beside ours" in page or "NeuSight's paper metric beside ours" in page


def test_the_board_shows_tuning_transfer_from_its_results_file(tmp_path):
    from kgpubench.board.render import BOARD_KEY
    from kgpubench.tasks.extras import load_board_tables

    (missing,) = load_board_tables(tmp_path)
    assert missing.title == "tuning-transfer" and "Not computed here" in missing.note
    doc = {"scheme": "by-device", "folds": 3, "test_entries": 40, "note": "",
           "strategies": {"majority": {"exact_micro": 0.2, "exact_macro": 0.25, "exact_shared_architecture": 0.1,
                                       "param_agreement_micro": 0.5},
                          "clblast-fallback": {"exact_micro": 0.4, "exact_macro": 0.375,
                                               "exact_shared_architecture": 0.3, "param_agreement_micro": 0.7}}}
    (tmp_path / "tuning-transfer").mkdir()
    (tmp_path / "tuning-transfer" / "by-device.json").write_text(json.dumps(doc))
    (table,) = load_board_tables(tmp_path)
    assert [r[:5] for r in table.rows] == [("clblast-fallback", "0.400", "0.375", "0.300", "0.700"),
                                           ("majority", "0.200", "0.250", "0.100", "0.500")]
    text = render_markdown([], [get_task("kernel-time")], {BOARD_KEY: [table]})
    assert "## tuning-transfer" in text and "| clblast-fallback | 0.400 | 0.375 | 0.300 | 0.700 |" in text
    assert "3 folds, one per tuned device, 40 entries" in text


def test_the_committed_board_shows_tuning_transfer():
    root = source_checkout() / "leaderboard"
    doc = json.loads((root / "results" / "tuning-transfer" / "by-device.json").read_text())
    readme = (root / "README.md").read_text()
    best = max(doc["strategies"], key=lambda s: doc["strategies"][s]["exact_micro"])
    assert "## tuning-transfer" in readme
    assert f"| {best} | {doc['strategies'][best]['exact_micro']:.3f} |" in readme
    assert ">tuning-transfer<" in (root / "index.html").read_text()


def test_the_fewshot_and_goals_tables_render_on_the_board(tmp_path):
    task = get_task("rodinia-time")
    assert task.extras == ("fewshot", "goals")
    doc = {"metric": "male", "plan": {"scheme": "by-gpu", "train_rule": {"cap": 10000},
                                      "test_rule": {"scored": "the rest", "max_test_rows": 1000}},
           "models": {"lgbm": {"0": {"median": {"male": 0.4, "mdape": 30.0}, "folds": {"A": {}}},
                               "5": {"median": {"male": 0.2, "mdape": 12.5}, "folds": {"A": {}}}}}}
    goals = {"goals": [{"goal": "7 of 8", "target_pct": 10.0, "need": 7, "groups": 8, "best_model": "lgbm",
                        "figures": {"A": 9.94}, "met": False}]}
    for name, d in (("fewshot", doc), ("goals", goals)):
        path = extra_path(tmp_path, task.name, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(d))
    tables = load_extras(task, tmp_path)
    assert [t.title for t in tables] == ["Few-shot curves on an unseen GPU", "Goals"]
    text = render_markdown([], [task], {task.name: tables})
    assert "| lgbm | 5 | 0.2 | 12.5 | 1 |" in text
    assert "| 7 of 8 | ≤ 10.0 % on 7 of 8 | lgbm | A 9.9 | — | not met |" in text
