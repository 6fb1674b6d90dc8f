"""Which rows a task uses: the protocol rule, complete problems, vectorised problem keys and feature frames."""

import json

import numpy as np
import pyarrow as pa
import pytest
from task_fixtures import GPUS, autotune_table, kernels_table, npb_table, stencil_table

from kgpubench.schema import canonical_value, get_table
from kgpubench.tasks import feature_frame, get_task, group_codes, problem_keys, select, task_rows
from kgpubench.tasks.selection import protocol_mask
from kgpubench.testing import valid_row

P2 = dict(measurement_protocol=2, timing_method="graph", launches_per_sample=100, l2_policy="warm")


def _kernel_rows(gpu, n_values, **extra):
    return [valid_row("kernels", gpu_name=gpu, **GPUS[gpu], size_params=[{"name": "n", "value": float(n)}],
                      n=float(n), **{"time_ms_median": float(n) / 1000, **extra}) for n in n_values]


def test_protocol_2_rows_replace_a_gpus_protocol_1_rows_only_for_that_gpu():
    rows = (_kernel_rows("GPU A", (1, 2, 3)) + _kernel_rows("GPU B", (1, 2, 3, 4))
            + _kernel_rows("GPU B", (10, 20), run_id="test-run-0002", **P2))
    table = get_table("kernels").from_rows(rows)
    assert protocol_mask(table).tolist() == [True] * 3 + [False] * 4 + [True] * 2
    sel = select(get_task("kernel-time"), table)
    assert sorted(zip(sel.rows["gpu_name"].to_pylist(), sel.rows["n"].to_pylist())) == [
        ("GPU A", 1.0), ("GPU A", 2.0), ("GPU A", 3.0), ("GPU B", 10.0), ("GPU B", 20.0)]
    assert sel.superseded_rows == 4 and sel.protocol_1_rows == 3
    assert sel.report()["gpus"] == ["GPU A", "GPU B"]


def test_a_configuration_measured_again_is_used_once_with_its_first_runs_row():
    """Rule 2: the store keeps each run's row of a configuration measured again (same row_id); a task uses the
    first run's (earliest collected_at, then run_id), so it has one label per configuration."""
    import datetime as dt

    day = lambda d: dt.datetime(2026, 11, d, tzinfo=dt.timezone.utc)  # noqa: E731
    first = _kernel_rows("GPU B", (1, 2), run_id="test-run-0001", collected_at=day(26), **P2)
    again = _kernel_rows("GPU B", (2, 3), run_id="test-run-0002", collected_at=day(29), **P2)
    again[0]["time_ms_median"] = 9.0  # the repeat of n=2 read another time: the first run's 0.002 is used
    table = get_table("kernels").from_rows(again + first)  # the later run first in the table: order does not count
    sel = select(get_task("kernel-time"), table)
    got = sorted(zip(sel.rows["n"].to_pylist(), sel.rows["time_ms_median"].to_pylist(), sel.rows["run_id"].to_pylist()))
    assert got == [(1.0, 0.001, "test-run-0001"), (2.0, 0.002, "test-run-0001"), (3.0, 0.003, "test-run-0002")]
    assert sel.repeated_rows == 1 and sel.report()["repeated_rows"] == 1
    assert "repeated_rows" not in select(get_task("kernel-time"), get_table("kernels").from_rows(first)).report()


def test_first_runs_takes_the_earliest_time_then_run_id_with_nulls_last():
    import datetime as dt

    from kgpubench.tasks.selection import first_runs

    t = pa.table({"row_id": ["a", "a", "b", "a", "c", "c"],
                  "collected_at": pa.array([dt.datetime(2026, 11, 29), dt.datetime(2026, 11, 26), None, None,
                                            dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 1)], pa.timestamp("us")),
                  "run_id": ["r2", "r1", "r9", "r0", "z", "y"]})
    assert first_runs(t).tolist() == [False, True, True, False, False, True]
    assert first_runs(t.slice(2, 1)).tolist() == [True]


@pytest.mark.parametrize("task", ["kernel-power", "npb-tpb", "stencil-tile"])
def test_the_shipped_tasks_have_one_row_per_configuration(task):
    """The H200's rows of 2026-11-29 repeat configurations of the 2026-11-26 boards: each task still has one row
    per row_id, the left-out count is what the store repeats, and a repeated configuration keeps its first row."""
    import pyarrow.compute as pc

    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store
    from kgpubench.tasks.selection import _usable_mask

    t = get_task(task)
    table = Store(default_data_dir()).read(t.config)
    sel = select(t, table)
    ids = sel.rows["row_id"].to_pylist()
    assert len(ids) == len(set(ids))
    usable = table.filter(pa.array(protocol_mask(table) & _usable_mask(t, table, status=True)))
    repeats = usable.num_rows - pc.count_distinct(usable["row_id"]).as_py()
    assert sel.repeated_rows == repeats > 0
    kept = dict(zip(ids, sel.rows["collected_at"].to_pylist()))
    by_id: dict = {}
    for rid, at in zip(usable["row_id"].to_pylist(), usable["collected_at"].to_pylist()):
        by_id.setdefault(rid, []).append(at)
    assert all(kept[rid] == min(times) for rid, times in by_id.items() if len(times) > 1 and rid in kept)


def test_a_failed_protocol_2_row_still_switches_its_gpu_to_protocol_2():
    rows = _kernel_rows("GPU A", (1, 2)) + _kernel_rows(
        "GPU A", (5,), run_id="test-run-0002", status="launch_error", time_ms_median=None, **P2)
    sel = select(get_task("kernel-time"), get_table("kernels").from_rows(rows))
    assert sel.rows.num_rows == 0 and sel.superseded_rows == 2


def test_tables_without_the_protocol_column_are_unaffected():
    table = autotune_table()
    assert "measurement_protocol" not in table.column_names
    sel = select(get_task("autotune-config"), table)
    assert sel.rows.num_rows == table.num_rows and sel.protocol_1_rows is None


def test_npb_problem_missing_kernel_configurations_is_excluded_and_counted():
    table = npb_table()
    task = get_task("npb-tpb")
    # drop CG on GPU A at k2 tpb 1024: the problem now has 11 of 12 kernel x TPB configurations
    keep = [not (g == "GPU A" and b == "CG" and k == "k2" and t == 1024) for g, b, k, t in zip(
        table["gpu_name"].to_pylist(), table["benchmark"].to_pylist(), table["kernel"].to_pylist(),
        table["tpb"].to_pylist())]
    sel = select(task, table.filter(pa.array(keep)))
    assert sel.incomplete_rows == 11 and sel.rows.num_rows == 48 - 12
    assert len(sel.incomplete_problems) == 1
    assert sel.incomplete_problems[0].startswith('["GPU A","CG","B",') and "11 of 12" in sel.incomplete_problems[0]
    # a failed configuration was measured: the problem stays complete, the failed row is not a choice
    failed = table.to_pylist()
    for r in failed:
        if r["gpu_name"] == "GPU A" and r["benchmark"] == "CG" and r["kernel"] == "k2" and r["tpb"] == 1024:
            r.update(status="launch_error", time_ms_mean=None, time_ms_median=None)
    sel = select(task, pa.Table.from_pylist(failed, schema=table.schema))
    assert sel.incomplete_rows == 0 and sel.rows.num_rows == 47


def test_npb_problem_missing_a_kernel_the_default_run_names_is_excluded():
    table = npb_table()
    keep = [not (g == "GPU B" and b == "EP" and k == "k1") for g, b, k in zip(
        table["gpu_name"].to_pylist(), table["benchmark"].to_pylist(), table["kernel"].to_pylist())]
    sel = select(get_task("npb-tpb"), table.filter(pa.array(keep)))
    assert sel.incomplete_rows == 6 and "6 of 12" in sel.incomplete_problems[0]


def _stencil(grid, tiles, variant="thread-tile"):
    return [valid_row("stencil", gpu_name="GPU A", **GPUS["GPU A"], grid_nx=grid, grid_ny=grid, grid_nz=grid,
                      dtype="float32", space_order=2, variant=variant, tile_b1=a, tile_b2=b, tile_b3=c)
            for a, b, c in tiles]


def test_stencil_incomplete_variant_rows_are_dropped_and_incomplete_sweeps_excluded():
    from kgpubench.tasks.stencil import shared_tiles, train_tiles

    tiles = train_tiles()
    assert len(tiles) == 190 and tiles[0] == (1, 1, 1)
    rows = _stencil(256, tiles) + _stencil(256, shared_tiles(2, "float32")[:5], "shared-tile")
    sel = select(get_task("stencil-tile"), get_table("stencil").from_rows(rows))
    assert sel.rows.num_rows == 190 and sel.incomplete_rows == 5
    assert sel.incomplete_problems[0].endswith(f"shared-tile: 5 of {len(shared_tiles(2, 'float32'))} tiles measured")
    # the thread-tile sweep itself incomplete: the whole problem goes
    sel = select(get_task("stencil-tile"), get_table("stencil").from_rows(_stencil(512, tiles[:100])))
    assert sel.rows.num_rows == 0 and sel.incomplete_rows == 100
    # a grid outside the sweep declares no configuration set: kept as measured
    sel = select(get_task("stencil-tile"), get_table("stencil").from_rows(_stencil(96, tiles[:3])))
    assert sel.rows.num_rows == 3 and sel.incomplete_problems == []


def test_stencil_sweep_mirror_matches_the_collector_spec():
    from collectors.stencil import spec
    from kgpubench.tasks import stencil

    assert stencil.train_tiles() == spec.train_tiles()
    assert stencil.eval_tiles() == spec.eval_tiles()
    for order in spec.SPACE_ORDERS:
        for dtype in spec.DTYPES:
            assert stencil.shared_tiles(order, dtype) == spec.shared_tiles(order, dtype)
    assert stencil.TRAIN_GRIDS == spec.TRAIN_GRIDS and stencil.EVAL_GRIDS == spec.EVAL_GRIDS


def test_search_space_shorter_than_declared_is_excluded():
    table = autotune_table(gpus=("GPU A",))
    rows = table.to_pylist()
    for r in rows:
        r["search_space_size"] = 12
    rows[0]["search_space_size"] = 13  # gemm on GPU A declares 13 configurations and has 12 rows
    sel = select(get_task("autotune-config"), pa.Table.from_pylist(rows, schema=table.schema))
    assert sel.incomplete_rows == 12 and sel.rows.num_rows == 12
    assert sel.incomplete_problems == ['["GPU A","gemm","1024x1024"]: 12 of 13 configurations of the search space']


def test_problem_keys_are_the_canonical_json_of_each_rows_problem():
    table = autotune_table()
    task = get_task("autotune-config")
    expected = [json.dumps([canonical_value(v) for v in vals], separators=(",", ":"))
                for vals in zip(*(table[c].to_pylist() for c in task.problem_columns))]
    assert problem_keys(task, table).tolist() == expected
    assert expected[0] == '["GPU A","gemm","1024x1024"]'
    codes, first = group_codes(table, task.problem_columns)
    assert codes.max() + 1 == 6 and codes[:12].tolist() == [0] * 12 and first.tolist() == [0, 12, 24, 36, 48, 60]


def test_group_codes_treat_null_as_a_value():
    t = pa.table({"a": ["x", None, "x", None], "b": [1, 1, 1, 2]})
    codes, first = group_codes(t, ("a", "b"))
    assert codes.tolist() == [0, 1, 0, 2] and first.tolist() == [0, 1, 3]


def test_params_expand_to_one_column_per_name_with_nan_where_absent():
    task = get_task("autotune-config")
    rows = [valid_row("autotune", params=[{"name": "tile", "value": 2.0}, {"name": "bx", "value": 64.0}],
                      params_text=[{"name": "layout", "value": "row"}]),
            valid_row("autotune", params=[{"name": "bx", "value": 32.0}], params_text=[]),
            valid_row("autotune", params=None, params_text=None)]
    X = feature_frame(task, get_table("autotune").from_rows(rows))
    assert [c for c in X.columns if c.startswith("param.")] == ["param.bx", "param.tile", "param.layout"]
    assert X["param.bx"].tolist()[:2] == [64.0, 32.0] and np.isnan(X["param.bx"].iloc[2])
    assert X["param.tile"].iloc[0] == 2.0 and np.isnan(X["param.tile"].iloc[1])
    assert X["param.layout"].iloc[0] == "row" and X["param.layout"].iloc[1:].isna().all()
    assert X["param.layout"].dtype == object


def test_power_task_tells_fp64_from_fp32_twins():
    task = get_task("kernel-power")
    assert {"mix_fp64", "flops_fp64", "mix_fp32", "nb", "nt"} <= set(task.features)
    rows = [valid_row("kernels", suite="power", kernel="madd", variant=v, compute_density=1.75, sm_saturation=1.0,
                      source_lines=3, mix_fp32=m32, mix_fp64=m64, power_w_avg=p)
            for v, m32, m64, p in (("fp32", 100.0, 0.0, 300.0), ("fp64", 0.0, 100.0, 357.0))]
    X = feature_frame(task, task_rows(task, get_table("kernels").from_rows(rows)))
    assert X.loc[0, "compute_density"] == X.loc[1, "compute_density"]
    assert X["mix_fp64"].tolist() == [0.0, 100.0]


def test_every_fixture_table_keeps_its_rows():
    for name, table in (("kernel-time", kernels_table()), ("stencil-tile", stencil_table()),
                        ("npb-tpb", npb_table())):
        sel = select(get_task(name), table)
        assert sel.incomplete_rows == 0 and sel.superseded_rows == 0, name
        assert sel.rows.num_rows > 0


@pytest.mark.parametrize("bad", ["time_ms_median", "suite"])
def test_missing_columns_are_one_clear_error(bad):
    from kgpubench.errors import SchemaValidationError

    table = kernels_table().drop_columns([bad])
    with pytest.raises(SchemaValidationError, match=bad):
        select(get_task("kernel-time"), table)
