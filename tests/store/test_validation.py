import math

import pyarrow as pa
import pytest

from kgpubench.schema import get_table
from kgpubench.store.validation import validate_table
from kgpubench.testing import valid_row, valid_table


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


def _retyped(config, column, array):
    """A valid table of ``config`` with ``column`` replaced by ``array`` (any arrow type)."""
    table = valid_table(config)
    return table.set_column(table.column_names.index(column), column, array)


@pytest.mark.parametrize(("column", "array", "expected"), [
    ("time_ms_median", pa.array(["1.0"]), "has type string, expected double"),  # a number written as text
    ("grid_x", pa.array(["4"]), "has type string, expected int64"),
    ("kernel", pa.array([7]), "has type int64, expected string"),  # text written as a number
    ("time_cv_high", pa.array([1]), "has type int64, expected bool"),
    ("collected_at", pa.array(["2026-01-01"]), "has type string, expected timestamp"),
    ("size_params", pa.array([[{"name": "n", "value": "1024"}]]), "expected list<item: struct<name: string"),
    ("repeats", pa.array([2.5]), "a value does not convert"),  # a float with a fraction in an int column
    ("repeats", pa.array([2**40]), "a value does not convert"),  # too large for int32
])
def test_values_of_the_wrong_type_are_never_parsed(column, array, expected):
    (v,) = validate_table(_retyped("kernels", column, array), "kernels")
    assert (v.row, v.column) == (None, column) and expected in v.rule


def test_compatible_numbers_are_accepted():
    assert validate_table(_retyped("kernels", "repeats", pa.array([10.0])), "kernels") == []
    assert validate_table(_retyped("kernels", "time_ms_median", pa.array([1], pa.int8())), "kernels") == []
    assert validate_table(_retyped("kernels", "kernel", pa.array(["vector_add"]).dictionary_encode()), "kernels") == []


@pytest.mark.parametrize(("config", "overrides", "column", "rule"), [
    ("kernels", {"time_ms_median": 1e308}, "time_ms_median", "must be <= 86400000"),
    ("npb", {"app_time_s": 90_000.0}, "app_time_s", "must be <= 86400"),
    ("kernels", {"power_w_avg": 1e6}, "power_w_avg", "must be <= 3000"),
    ("stencil", {"temperature_c_before": 400.0}, "temperature_c_before", "must be <= 150"),
    ("autotune", {"compile_time_ms": 1e12}, "compile_time_ms", "must be <= 86400000"),
    ("kernels", {"kernel": ""}, "kernel", "must match"),
    ("kernels", {"kernel": " vector_add"}, "kernel", "must match"),
    ("npb", {"kernel": "line\nbreak"}, "kernel", "must match"),
    ("autotune", {"problem_size": "None"}, "problem_size", "is the text of a missing value; give the real value"),
    ("autotune", {"kernel": "NaN"}, "kernel", "is the text of a missing value"),
    ("stencil", {"gpu_name": "null"}, "gpu_name", "is the text of a missing value"),
    ("npb", {"run_id": "None"}, "run_id", "is the text of a missing value"),
])
def test_values_that_slipped_through_are_refused(config, overrides, column, rule):
    found = [(v.column, v.rule) for v in one_bad(config, **overrides)]
    assert any(c == column and rule in r for c, r in found), found
    assert {c for c, _ in found} <= {column, "row_id"}  # a key column changes the row id too: nothing else


def test_bounds_and_name_rules_appear_in_the_card():
    from kgpubench.store.card import field_table

    text = field_table(get_table("autotune"))
    assert "| `time_ms_median` | float64 | ms | required when status ~ `ok`; > 0; <= 86400000 |" in text
    assert "`problem_size` | string |  | not null; matches `\\S(?:.*\\S)?`; not `None`, `null`, `nan`" in text


def test_measured_rows_without_version_or_commit_warn_but_stay_valid():
    from kgpubench.store.validation import provenance_warnings

    measured = {"source": "measured", "source_file": None, "source_license": None, "collector_version": "1.0.0",
                "toolchain_version": "nvrtc 13.0", "driver_version": "580.1", "cuda_version": "13.0",
                "cupy_version": "14.0", "gpu_uuid_hash": "0123456789abcdef"}
    rows = [valid_row("npb", tpb=t, **measured) for t in (32, 64, 128)]
    rows[0].update(kgpubench_version="0.0.0+unknown", kgpubench_commit=None)
    rows[1].update(kgpubench_version="0.2.0", kgpubench_commit=None)
    rows[2].update(kgpubench_version="0.2.0", kgpubench_commit="a" * 40)
    table = get_table("npb").from_rows(rows)
    assert validate_table(table, "npb") == []
    version, commit = provenance_warnings(table, "s.parquet")
    assert version.startswith("s.parquet: warning: 1 of 3 measured row(s)") and "kgpubench version" in version
    assert "2 of 3 measured row(s)" in commit and "kgpubench_commit" in commit
    rows[0].update(kgpubench_version="0.2.0", kgpubench_commit="b" * 40)
    rows[1].update(kgpubench_commit="c" * 7 + "+dirty")
    assert provenance_warnings(get_table("npb").from_rows(rows), "s.parquet") == []


@pytest.mark.integration
@pytest.mark.slow
def test_validate_cli_prints_provenance_warnings_for_the_protocol_1_rows(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-m", "kgpubench.cli", "validate", str(root / "kgpubench" / "data")],
                         capture_output=True, text=True, check=False, cwd=root, timeout=300)
    assert res.returncode == 0, res.stderr
    import pyarrow.compute as pc

    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store

    kernels = Store(default_data_dir()).read("kernels")
    measured = kernels.filter(pc.equal(kernels["source"], "measured"))
    missing = measured["kgpubench_commit"].null_count  # the protocol-1 rows; the H200 rows record theirs
    assert 0 < missing < measured.num_rows
    assert (f"[kernels]: warning: {missing} of {measured.num_rows} measured row(s) do not record the project "
            "commit") in res.stderr
