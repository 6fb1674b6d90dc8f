import math

import pyarrow as pa
import pytest

from kgpubench.schema import get_table
from kgpubench.testing import valid_row, valid_table
from kgpubench.validation import validate_table


def rules(table, config):
    return [(v.row, v.column, v.rule) for v in validate_table(table, config)]


def one_bad(config, **overrides):
    return validate_table(valid_table(config, **overrides), config)


def test_a_valid_row_has_no_violation():
    for config in ("kernels", "npb", "stencil", "autotune"):
        assert validate_table(valid_table(config), config) == []


@pytest.mark.parametrize("value, rule", [(-1.0, "must be > 0"), (0.0, "must be > 0"),
                                         (math.nan, "finite"), (math.inf, "finite")])
def test_bad_times_are_rejected(value, rule):
    found = one_bad("kernels", time_ms_median=value, time_ms_mean=2.0)
    assert [(v.row, v.column) for v in found if rule in v.rule] == [(0, "time_ms_median")]


def test_unknown_status_is_rejected_with_its_value():
    (v,) = one_bad("npb", status="crashed")
    assert (v.row, v.column, v.value) == (0, "status", "crashed")
    assert "one of ok, compile_error" in v.rule


def test_fake_source_never_validates():
    (v,) = one_bad("stencil", source="fake")
    assert v.column == "source" and v.value == "fake"


def test_missing_provenance_of_measured_rows_is_rejected():
    found = one_bad("kernels", source="measured", driver_version=None, cuda_version="12.4",
                    toolchain_version="12.4", cupy_version="13.0", collector_version="1",
                    gpu_uuid_hash="0123456789abcdef")
    assert [(v.column, v.rule) for v in found] == [("driver_version", "must not be null when source matches "
                                                                       "`measured`")]


def test_missing_licence_of_imported_rows_is_rejected():
    (v,) = one_bad("autotune", source_license=None)
    assert v.column == "source_license"


def test_ok_rows_need_timing_but_failures_do_not():
    (v,) = one_bad("autotune", time_ms_median=None)
    assert v.column == "time_ms_median" and "status matches `ok`" in v.rule
    failed = valid_row("autotune", status="compile_error", time_ms_median=None, time_ms_min=None,
                       time_ms_mean=None, time_ms_std=None, repeats=None)
    assert validate_table(get_table("autotune").from_rows([failed]), "autotune") == []


def test_duplicate_key_with_same_run_id_is_rejected_and_other_runs_are_kept():
    row = valid_row("npb")
    table = get_table("npb").from_rows([row, row, dict(row, run_id="another-run")])
    assert rules(table, "npb") == [(1, "row_id", "duplicate key: same row_id and run_id as row 0")]


def test_tampered_row_id_is_rejected():
    table = valid_table("npb")
    table = table.set_column(0, "row_id", pa.array(["0000000000000000"]))
    (v,) = validate_table(table, "npb")
    assert v.column == "row_id" and "hash of the key columns" in v.rule


def test_min_above_median_is_rejected():
    found = one_bad("stencil", time_ms_min=1.5)
    assert [(v.column, v.rule) for v in found] == [("time_ms_median", "must be >= time_ms_min (1.5)"),
                                                   ("time_ms_mean", "must be >= time_ms_min (1.5)")]


def test_range_enum_and_pattern_rules():
    found = one_bad("stencil", tile_b1=0, dtype="float16", gpu_compute_capability="nine")
    assert sorted((v.column, v.value) for v in found) == [("dtype", "float16"), ("gpu_compute_capability", "nine"),
                                                          ("tile_b1", 0)]


def test_not_null_key_column():
    (v,) = [v for v in one_bad("autotune", kernel=None) if v.column == "kernel"]
    assert v.rule == "must not be null"


def test_missing_and_extra_columns_are_reported_without_rows():
    table = valid_table("npb").drop_columns(["status"]).append_column("surprise", pa.array([1]))
    found = validate_table(table, "npb")
    assert sorted((v.column, v.row) for v in found) == [("status", None), ("surprise", None)]


def test_wrong_type_is_reported():
    table = valid_table("npb")
    idx = table.column_names.index("tpb")
    table = table.set_column(idx, "tpb", pa.array(["many"]))
    (v,) = validate_table(table, "npb")
    assert v.column == "tpb" and "expected int32" in v.rule


def test_every_violation_of_many_rows_is_listed():
    rows = [valid_row("npb", tpb=t) for t in (32, 64, 128)]
    rows[0]["status"] = "nope"
    rows[2]["status"] = "nope"
    found = validate_table(get_table("npb").from_rows(rows), "npb")
    assert [(v.row, v.column) for v in found] == [(0, "status"), (2, "status")]
