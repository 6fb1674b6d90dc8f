"""Registry, leakage guard, feature frames and fold scoring of the tasks."""

from pathlib import Path

import numpy as np
import pytest
from task_fixtures import autotune_table, npb_table, stencil_table

from kgpubench.errors import SchemaValidationError, UnknownNameError
from kgpubench.schema import get_table
from kgpubench.tasks import (
    CONFIG_MAIN_TASK,
    TASK_NAME,
    DuplicateTaskError,
    Task,
    TaskRegistry,
    feature_frame,
    forbidden_features,
    get_task,
    list_tasks,
    task_forbidden_features,
    task_rows,
)
from kgpubench.tasks.definitions import ALL_TASKS
from kgpubench.tasks.extras import BOARD_TABLES
from kgpubench.tasks.scoring import score_fold
from kgpubench.tasks.tuning import TASK as TUNING_TASK

ROOT = Path(__file__).resolve().parents[2]


def test_registry_rejects_duplicates_and_suggests_names():
    reg = TaskRegistry()
    reg.register("kernel-time", get_task("kernel-time"))
    with pytest.raises(DuplicateTaskError, match="already registered"):
        reg.register("kernel-time", get_task("kernel-time"))
    with pytest.raises(UnknownNameError, match="Did you mean 'autotune-config'"):
        get_task("autotune-confg")


def test_tasks_are_frozen_and_refuse_unknown_fields():
    t = get_task("kernel-time")
    with pytest.raises(AttributeError):
        t.target = "power_w_avg"
    with pytest.raises(TypeError):
        Task(**{f: getattr(t, f) for f in t.__dataclass_fields__}, colour="red")


def test_every_declared_task_is_registered_once_and_has_its_folders():
    """Derived from the declarations (a new task edits no list here): each declared task is registered under its
    own name, in declaration order, once, with a name fit for a folder; the committed results and split folders are
    those of the declared tasks (a renamed or dropped task leaves none behind) and of the board's own tables."""
    declared = [t.name for t in ALL_TASKS]
    assert [t.name for t in list_tasks()] == declared  # no plugin is installed in the test environment
    assert len(set(declared)) == len(declared) and all(TASK_NAME.fullmatch(n) for n in declared)
    assert all(get_task(n) is t for n, t in zip(declared, ALL_TASKS))
    board_tables = {rel.split("/")[0] for rel, _ in BOARD_TABLES.values()}
    assert board_tables == {TUNING_TASK}
    results = {p.name for p in (ROOT / "leaderboard" / "results").iterdir() if p.is_dir()}
    assert results == set(declared) | board_tables
    splits = {p.name for p in (ROOT / "splits").iterdir() if p.is_dir()}
    assert splits == {t.name for t in ALL_TASKS if t.split_files} | {TUNING_TASK}
    assert set(CONFIG_MAIN_TASK.values()) <= set(declared)


def test_leakage_guard_every_task_uses_only_real_pre_run_columns():
    assert list_tasks()
    for task in list_tasks():
        cols = get_table(task.config).column_names
        assert set(task.features) <= set(cols), task.name
        assert not set(task.features) & task_forbidden_features(task), task.name
        if not task.measured_inputs:
            assert not set(task.features) & forbidden_features(task.config), task.name
        assert task.target not in task.features
        assert not any(f.startswith(("time_", "power_", "energy")) for f in task.features)


def test_llm_operator_tasks_never_see_how_a_call_was_timed_or_where_it_came_from():
    forbidden = forbidden_features("llm_operators")
    assert {"time_ms", "time_statistic", "upstream_provenance", "source_file", "system", "run_id",
            "occurrence"} & forbidden >= {"time_ms", "time_statistic", "source_file", "run_id"}
    for name in ("gemm-latency", "attention-latency"):
        features = set(get_task(name).features)
        assert not features & {"time_ms", "system", "framework_version", "occurrence", "upstream_provenance",
                               "source_file"}, name
        assert {"flops", "bytes_min", "peak_tensor_tflops", "compute_dtype", "gpu_peak_fp32_gflops"} <= features
    assert get_task("gemm-latency").filters == (("operator", ("gemm",)),)
    assert not get_task("gemm-latency").split_files and get_task("kernel-time").split_files


def test_operator_latency_never_sees_how_the_call_was_timed_or_what_the_library_launched():
    forbidden = forbidden_features("operators")
    assert {"time_ms", "time_statistic", "calls_timed", "calls_kept", "timed_unit", "kernel_name", "kernels",
            "warps_per_sm", "source_file"} <= forbidden
    features = set(get_task("operator-latency").features)
    assert not features & {"kernel_name", "kernels", "grid_x", "block_x", "blocks_per_sm", "shape_set",
                           "occurrence"}
    assert {"operator", "dim_n", "flops", "bytes_min", "gpu_peak_fp32_gflops"} <= features


def test_leakage_guard_refuses_time_derived_inputs():
    forbidden = forbidden_features("autotune")
    assert {"time_ms_reported", "gflops_reported", "compile_time_ms", "time_ms_median"} <= forbidden
    assert "gpu_peak_fp32_gflops" not in forbidden_features("autotune")  # a hardware spec, not an outcome
    t = get_task("autotune-config")
    bad = Task(**{**{f: getattr(t, f) for f in t.__dataclass_fields__}, "name": "leaky",
                  "features": t.features + ("gflops_reported",)})
    with pytest.raises(SchemaValidationError, match="gflops_reported"):
        TaskRegistry().register(bad.name, bad)
    ghost = Task(**{**{f: getattr(t, f) for f in t.__dataclass_fields__}, "name": "ghost",
                    "features": ("no_such_column",)})
    with pytest.raises(SchemaValidationError, match="no_such_column"):
        TaskRegistry().register(ghost.name, ghost)


def test_feature_frame_expands_params_and_drops_everything_else():
    table = autotune_table(gpus=("GPU A",))
    X = feature_frame(get_task("autotune-config"), table)
    assert "param.block_size_x" in X.columns and "param.tile" in X.columns
    assert "time_ms_median" not in X.columns and "row_id" not in X.columns
    assert X["param.block_size_x"].tolist()[:3] == [16.0, 16.0, 16.0]
    assert X["kernel"].dtype == object


def test_task_rows_filters_status_and_declared_values():
    table = npb_table()
    rows = task_rows(get_task("npb-tpb"), table)
    assert rows.num_rows == 48 == table.num_rows - 4  # every ok kernel row; not the 4 default run rows
    from kgpubench.testing import valid_row

    extra = get_table("npb").from_rows([valid_row("npb", status="launch_error", time_ms_median=None,
                                                  time_ms_mean=None, time_ms_min=None, time_ms_std=None)])
    assert task_rows(get_task("npb-tpb"), extra).num_rows == 0


def test_stencil_scoring_by_hand():
    table = stencil_table().slice(0, 5)  # one problem: GPU A, 64^3, float32, so 2; tiles 111,222,444,148,888
    task = get_task("stencil-tile")
    y = np.array([10.0, 8.0, 5.0, 6.0, 4.0])
    p = np.array([9.0, 1.0, 7.0, 8.0, 9.0])  # picks tile (2,2,2): 8.0
    s = score_fold(task, table, y, p)
    assert s["improvement_coefficient"] == pytest.approx(10.0 / 8.0)
    assert s["pct_improved"] == 100.0
    assert s["regret"] == pytest.approx(8.0 / 4.0 - 1)
    assert s["male"] == pytest.approx(np.mean(np.abs(np.log(p) - np.log(y))))


def test_npb_app_time_ratio_by_hand():
    task = get_task("npb-tpb")
    table = task_rows(task, npb_table())
    rows = table.filter(np.array([g == "GPU A" and b == "EP" for g, b in zip(table["gpu_name"].to_pylist(),
                                                                         table["benchmark"].to_pylist())]))
    tpb = np.array(rows["tpb"].to_pylist())
    kern = np.array(rows["kernel"].to_pylist())
    y = np.array(rows["time_ms_mean"].to_pylist())
    # choose 32 for every kernel (score = tpb)
    s = score_fold(task, rows, y, tpb.astype(float), predicts_target=False)
    best = 0.5 + (10 * y[(kern == "k1")].min() + 100 * y[(kern == "k2")].min()) / 1000
    chosen = 0.5 + (10 * y[(kern == "k1") & (tpb == 32)][0] + 100 * y[(kern == "k2") & (tpb == 32)][0]) / 1000
    assert s["app_time_ratio"] == pytest.approx(chosen / best)
    assert s["app_time_s"] == pytest.approx(chosen)
    assert s["male"] is None


def test_autotune_problem_metrics_by_hand():
    table = autotune_table(gpus=("GPU A",)).slice(0, 12)  # one problem: GPU A gemm
    task = get_task("autotune-config")
    y = np.array(table["time_ms_median"].to_pylist())
    s = score_fold(task, table, y, -y)  # the exact reverse order: picks the slowest
    assert s["top1_regret"] == pytest.approx(y.max() / y.min() - 1)
    assert s["kendall_tau"] < -0.9
    s2 = score_fold(task, table, y, y)
    assert s2["top1_regret"] == 0.0 and s2["kendall_tau"] == pytest.approx(1.0) and s2["male"] == 0.0


def test_top1_regret_reads_the_rows_noise():
    from kgpubench.tasks.scoring import time_noise

    task = get_task("autotune-config")
    table = autotune_table(gpus=("GPU A",)).slice(0, 12)
    y = np.array(table["time_ms_median"].to_pylist())
    se = time_noise(task, table)
    # the fixture's rows: std = 1 % of the time over 10 repeats -> standard error 0.01 t / sqrt(10)
    np.testing.assert_allclose(se, 0.01 * y / np.sqrt(10))
    order = np.argsort(y, kind="mergesort")
    p = y.copy()
    p[order[0]] = y.max() + 1  # the best is ranked last: the pick is the second fastest, 20 % slower
    assert score_fold(task, table, y, p)["top1_regret"] == pytest.approx(y[order[1]] / y[order[0]] - 1)
    # the same pick with 15 % standard errors on both rows is within noise (0.2 <= 2 sqrt(2) 0.15 x ~7)
    rows = table.to_pylist()
    for r in rows:
        r["time_ms_std"] = 0.15 * r["time_ms_median"] * np.sqrt(10)
    noisy = table.from_pylist(rows, schema=table.schema)
    assert score_fold(task, noisy, y, p)["top1_regret"] == 0.0


def test_program_time_sees_program_facts_and_gpu_figures_never_times_or_setup():
    task = get_task("program-time")
    assert task.config == "programs" and task.target == "time_ms_mean" and task.schemes == ("random10", "by-gpu")
    # the other GPUs' times reach a model only through its training rows; the set-up names the provider
    assert not {"time_ms_min", "time_ms_max", "time_ms_std", "time_cv", "setup", "gpu_name", "status_detail",
                "framework_version", "cuda_version"} & set(task.features)
    assert {"problem_set", "problem", "compile_mode", "constants", "op_counts", "gpu_memory_bandwidth_gbs"} <= set(
        task.features)


def test_only_a_counters_task_may_use_measured_profiler_columns():
    """`prof_*` columns are declared measured: refused to every task unless it declares measured_inputs, which
    its name must say."""
    base = get_task("rodinia-time")
    counters = get_task("rodinia-time-counters")
    prof = [c.name for c in get_table("profiles").columns if c.measured]
    assert len(prof) == 66 and set(prof) <= set(counters.features) and not set(prof) & set(base.features)
    with pytest.raises(SchemaValidationError, match="prof_achieved_occupancy"):
        TaskRegistry().register(base.name, Task(**{**{f: getattr(base, f) for f in base.__dataclass_fields__},
                                                   "features": (*base.features, "prof_achieved_occupancy")}))
    with pytest.raises(ValueError, match="-counters"):
        Task(**{**{f: getattr(counters, f) for f in counters.__dataclass_fields__}, "name": "rodinia-profiled"})
