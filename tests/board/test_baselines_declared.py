"""Which tasks each baseline runs on is declared in kgpubench/board/baselines.py (RUNS_ON), not in its model file:
the rules select exactly the tasks the files' TASKS literals listed, a new task on an existing config gets the
baselines a user would expect with no baseline edited, and only its own cells are run again."""

from __future__ import annotations

import dataclasses

import pytest

from kgpubench.board import baselines as bl
from kgpubench.board import leaderboard as lb
from kgpubench.errors import DataFileNotFoundError
from kgpubench.resources import default_data_dir
from kgpubench.store.store import Store
from kgpubench.tasks import REGISTRY, get_task, list_tasks
from kgpubench.tasks.reference import ORACLE

# Frozen: the TASKS literal each baseline file held before the tasks moved to RUNS_ON (git show 0392de1:baselines/).
OLD_TASKS = {
    "c45": ("stencil-tile",),
    "config_blend": ("autotune-config",),
    "config_consensus": ("autotune-config",),
    "elm": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power", "autotune-config",
            "rodinia-time"),
    "gemm_waves": ("gemm-latency",),
    "kernel_scaling": ("rodinia-time",),
    "knn": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "stencil-tile", "rodinia-time"),
    "lgbm": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power", "stencil-tile",
             "autotune-config", "program-time", "operator-latency", "rodinia-time", "rodinia-time-counters"),
    "lgbm_ranker": ("autotune-config", "stencil-tile", "npb-tpb"),
    "median": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power", "npb-tpb", "stencil-tile",
               "autotune-config", "program-time", "operator-latency", "rodinia-time", "rodinia-time-counters",
               "gemm-latency", "attention-latency", "conv-time", "conv-solver"),
    "mlp": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power", "rodinia-time"),
    "nearest_gpu": ("rodinia-time",),
    "neusight_wave": ("operator-latency",),
    "npb_exhausting": ("npb-tpb",),
    "npb_max": ("npb-tpb",),
    "npb_profiling": ("npb-tpb",),
    "npb_qlearning": ("npb-tpb",),
    "npb_warp": ("npb-tpb",),
    "operator_roofline": ("operator-latency",),
    "operator_transfer": ("operator-latency",),
    "power_nonlinear": ("kernel-power",),
    "program_floor": ("program-time",),
    "program_transfer": ("program-time",),
    "random_forest": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power", "stencil-tile",
                      "autotune-config", "rodinia-time", "rodinia-time-counters"),
    "regression_tree": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "stencil-tile", "autotune-config",
                        "rodinia-time", "rodinia-time-counters"),
    "roofline": ("kernel-time", "kernel-time-compute", "kernel-time-memory"),
    "roofline_gbdt": ("gemm-latency", "attention-latency", "conv-time", "conv-solver"),
    "roofline_transfer": ("gemm-latency", "attention-latency", "conv-time", "conv-solver"),
    "roofline_util": ("rodinia-time", "rodinia-time-counters"),
    "solver_consensus": ("conv-solver",),
    "solver_ranker": ("conv-solver",),
    "svr": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power"),
    "tensor_roofline": ("gemm-latency", "attention-latency", "conv-time", "conv-solver"),
    "transfer": ("autotune-config", "stencil-tile", "npb-tpb", "conv-solver"),
    "wavelet_nn": ("kernel-power",),
    "xgb": ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power", "stencil-tile",
            "autotune-config", "rodinia-time", "rodinia-time-counters"),
    "xgb_ranker": ("autotune-config", "stencil-tile", "npb-tpb"),
}


# The tasks there were then (median ran on every one); a task added since is not compared here.
THEN = set(OLD_TASKS["median"])


def test_the_rules_select_exactly_the_tasks_the_files_declared():
    files = [p for p in lb.baseline_files() if p.stem in OLD_TASKS]  # a baseline added since is not compared
    assert sorted(p.stem for p in files) == sorted(OLD_TASKS)
    assert len(THEN) == 15 and THEN <= {t.name for t in list_tasks()}
    for path in files:
        assert {t.name for t in bl.planned_tasks(path)} & THEN == set(OLD_TASKS[path.stem]), path.stem
    # and the board plans them so: every (model, task) pair of the old TASKS, nothing else
    pairs = {(j.name, j.task.name) for j in lb.plan(files, tasks=THEN, references=False)}
    assert pairs == {(m, t) for m, tasks in OLD_TASKS.items() for t in tasks}


def test_no_baseline_file_declares_its_tasks_any_more():
    for path in lb.baseline_files():
        assert b"\nTASKS" not in path.read_bytes(), path.name


def test_every_bundled_baseline_is_a_declared_baseline_file(monkeypatch):
    entries = list(bl.BASELINES.values())
    assert all(isinstance(e, bl.BaselineFile) for e in entries)
    assert {e.path.stem: e.runs_on for e in entries} == bl.RUNS_ON
    monkeypatch.delitem(bl.RUNS_ON, "median")
    with pytest.raises(DataFileNotFoundError, match=r"median\.py: this baseline has no line in RUNS_ON"):
        list(bl._built_in_baselines())
    monkeypatch.setitem(bl.RUNS_ON, "median", (bl.ANY,))
    monkeypatch.setitem(bl.RUNS_ON, "ghost", (bl.ANY,))
    with pytest.raises(DataFileNotFoundError, match=r"RUNS_ON declares \['ghost'\], which have no file"):
        list(bl._built_in_baselines())


def test_a_rule_matches_on_every_attribute_it_names():
    gemm, attention, conv = get_task("gemm-latency"), get_task("attention-latency"), get_task("conv-time")
    only_gemm = bl.On(config="llm_operators", rows=(("operator", ("gemm",)),))
    assert (only_gemm(gemm), only_gemm(attention), only_gemm(conv)) == (True, False, False)
    counters, plain = get_task("rodinia-time-counters"), get_task("rodinia-time")
    assert bl.On(config="profiles", counters=False)(plain) and not bl.On(config="profiles", counters=False)(counters)
    assert bl.On(kind="recommendation")(get_task("npb-tpb")) and not bl.On(kind="recommendation")(plain)
    assert bl.On(target="power_w_avg")(get_task("kernel-power")) and not bl.On(target="power_w_avg")(plain)
    with pytest.raises(ValueError, match=r"On\(kind='regresion'\): expected"):
        bl.On(kind="regresion")
    with pytest.raises(ValueError, match="runs_on must be one or more"):
        bl.BaselineFile(lb.baseline_files()[0], ())


def test_a_file_outside_the_registry_is_planned_on_its_own_TASKS(tmp_path):
    # a submission named like a baseline is not that baseline: its own TASKS say where it runs
    path = tmp_path / "median.py"
    path.write_text('TASKS = ("npb-tpb",)\n\n\ndef make_model(task, seed):\n    raise NotImplementedError\n')
    assert [t.name for t in bl.planned_tasks(path)] == ["npb-tpb"]
    path.write_text("def make_model(task, seed):\n    raise NotImplementedError\n")
    assert len(bl.planned_tasks(path)) == len(list_tasks())  # no TASKS: every task


def test_a_new_regression_task_on_kernels_gets_kernel_times_baselines_and_only_its_cells_run():
    # the recipe: one Task declaration (here registered for the block), no baseline edited
    new = dataclasses.replace(get_task("kernel-time"), name="kernel-time-foo", sections=(),
                              description="kernel-time again, under another name.")
    with REGISTRY.added(new.name, new):
        jobs = lb.plan()
        models = {t: {j.name for j in jobs if j.task.name == t} for t in ("kernel-time", "kernel-time-foo")}
        assert models["kernel-time-foo"] == models["kernel-time"]
        assert {m for m, tasks in OLD_TASKS.items() if "kernel-time" in tasks} | {ORACLE.name} <= models["kernel-time"]
        # what `leaderboard run --reuse` runs again of that plan, against the committed results
        rerun, reused = lb._reuse(jobs, lb.results_dir(), None, seed=0, store=Store(default_data_dir()),
                                  progress=None, warn=pytest.fail)
    assert {(j.name, j.task.name, j.scheme) for j in rerun} == {
        (j.name, j.task.name, j.scheme) for j in jobs if j.task.name == "kernel-time-foo"}
    assert len(rerun) == len(models["kernel-time"]) * len(new.evaluated_schemes)
    assert len(reused) == len(jobs) - len(rerun)
