"""``kgpubench tasks`` on the shipped data: config, target, features by group, rows, problems and folds."""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from kgpubench.cli import app, main
from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import get_task, list_tasks, problem_keys, select
from kgpubench.tasks.overview import feature_groups, fold_summary, overviews
from kgpubench.tasks.splits import assign_folds, evaluated_folds

runner = CliRunner()


@pytest.fixture(scope="module")
def listed():
    result = runner.invoke(app, ["tasks", "--json"])
    assert result.exit_code == 0, result.output
    return {o["name"]: o for o in json.loads(result.output)}


@pytest.mark.slow
def test_every_task_is_listed_with_counts_that_match_the_board_rules(listed):
    assert list(listed) == [t.name for t in list_tasks()]
    store = Store(default_data_dir())
    tables = {}  # a config is read once: several tasks share one
    for task in list_tasks():
        if task.config not in tables:
            tables[task.config] = store.read(task.config)
        rows = select(task, tables[task.config]).rows
        o = listed[task.name]
        assert (o["config"], o["target"], o["ranked_by"]) == (task.config, task.target, task.primary_metric)
        assert o["rows"] == rows.num_rows
        if task.problem_columns:
            assert o["problems"] == len(set(problem_keys(task, rows)))
        for s in o["schemes"]:
            assert s["fold_names"] == evaluated_folds(s["scheme"], assign_folds(task, rows, s["scheme"]))
            assert s["on_board"] == (s["scheme"] in task.evaluated_schemes)


@pytest.mark.slow
def test_the_autotune_task_says_19_problems_and_why_random10_has_9_folds(listed):
    o = listed["autotune-config"]
    assert o["problems"] == 19
    by = {s["scheme"]: s for s in o["schemes"]}
    assert by["random10"]["folds"] == 9 and "1" not in by["random10"]["fold_names"]
    assert by["by-gpu"]["folds"] == 8 and "NVIDIA A100-PCIE-40GB" in by["by-gpu"]["fold_names"]
    (ov,) = overviews(None, ["autotune-config"])
    texts = [fold_summary(s) for s in ov.schemes]
    assert texts[0].startswith("random10: 9 of 10 folds (1 hash bucket drew no row or problem) [0, 2, 3, 4, ...]")
    table = runner.invoke(app, ["tasks", "autotune-config"]).output
    assert "[holdout]" in table  # fold names are printed as text, never read as markup


def test_features_come_in_groups_and_every_feature_is_in_exactly_one():
    for task in list_tasks():
        groups = feature_groups(task)
        flat = [n.split(" ")[0] for names in groups.values() for n in names]
        assert sorted(flat) == sorted(task.features)
    kt = feature_groups(get_task("kernel-time"))
    assert "gpu_peak_fp32_gflops" in kt["GPU figures"] and "grid_x" in kt["launch configuration"]
    assert "lmr" in kt["static code features"] and "n" in kt["problem and configuration"]


def test_an_unknown_task_is_one_line_with_a_suggestion(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["kgpubench", "tasks", "kernel-tim"])
    monkeypatch.delenv("KGPUBENCH_DEBUG", raising=False)
    with pytest.raises(SystemExit) as done:
        main()
    err = capsys.readouterr().err
    assert done.value.code == 1 and len(err.strip().splitlines()) == 1
    assert "Did you mean 'kernel-time'" in err and "Traceback" not in err


def test_overviews_count_a_store_of_ones_own(tmp_path):
    empty = overviews(tmp_path / "store", ["kernel-time"])[0]
    assert empty.rows == 0 and all(s.folds == 0 for s in empty.schemes)


def test_overviews_read_a_config_once_for_all_of_its_tasks_and_count_as_one_task_alone(tmp_path, monkeypatch):
    from kgpubench.schema import get_table
    from kgpubench.store.shards import write_shard
    from kgpubench.tasks.overview import overview
    from kgpubench.testing import valid_row

    store = Store(tmp_path / "store")
    rows = [valid_row("kernels", grid_x=g, gpu_name=gpu) for g in (1, 2, 4) for gpu in ("GPU A", "GPU B")]
    store.merge([write_shard(get_table("kernels").from_rows(rows), tmp_path / "k.parquet")], today="2026-01-01")
    names = [t.name for t in list_tasks() if t.config in ("kernels", "npb")]
    assert sum(get_task(n).config == "kernels" for n in names) > 1
    reads, read = [], Store.read
    monkeypatch.setattr(Store, "read", lambda self, config, **kw: reads.append(config) or read(self, config, **kw))
    found = overviews(store.path, names)
    assert sorted(reads) == ["kernels", "npb"] and [o.name for o in found] == names
    monkeypatch.undo()
    alone = [overview(get_task(n), store).to_dict() for n in names]
    assert [o.to_dict() for o in found] == alone
    assert any(o["rows"] for o in alone)  # the counts compared are not all empty
