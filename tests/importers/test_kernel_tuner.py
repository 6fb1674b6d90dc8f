"""Kernel Tuner cache import: statuses, statistics, GPU resolution, provenance, stable ids, idempotent merge."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import math
from pathlib import Path

import pytest

from kgpubench.importers import BENCHMARK_HUB, ImportFormatError, import_rows, import_table, import_to_shard
from kgpubench.store.store import Store
from kgpubench.store.validation import validate_table

DATA = Path(__file__).parent / "data"
CONV_2080 = DATA / "convolution_RTX_2080_Ti_excerpt.json"
DEDISP_MI250X = DATA / "dedispersion_MI250X_excerpt.json.gz"
CONV_W7800 = DATA / "convolution_W7800_excerpt.json.gz"
UTC = dt.timezone.utc

# The repeats of configuration "2,32,15,15,0,1,1,1" in the RTX 2080 Ti excerpt.
TIMES_2080 = [2.867136001586914, 2.859488010406494, 2.8589119911193848, 2.85699200630188, 2.8572800159454346,
              2.8569600582122803, 2.8564159870147705, 2.8548479080200195, 2.853951930999756, 2.8552639484405518]


def by_params(rows, **wanted):
    for r in rows:
        if {p["name"]: p["value"] for p in r["params"]}.items() >= wanted.items():
            return r
    raise AssertionError(f"no row with {wanted}")


def crafted_cache(tmp_path: Path, cache: dict, keys=("block_size_x",), device="NVIDIA GeForce RTX 3090",
                  name="crafted.json") -> Path:
    doc = {"device_name": device, "kernel_name": "k", "problem_size": [64, 2], "tune_params_keys": list(keys),
           "tune_params": {}, "cache": cache}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def test_plain_cache_statuses_and_gpu():
    rows = import_rows([CONV_2080])
    assert len(rows) == 4
    assert sorted(r["status"] for r in rows) == ["compile_error", "launch_error", "ok", "ok"]
    assert {r["failure"] for r in rows if r["status"] == "compile_error"} == {"CompilationFailedConfig"}
    assert {r["failure"] for r in rows if r["status"] == "launch_error"} == {"RuntimeFailedConfig"}
    r = rows[0]
    assert (r["gpu_name"], r["gpu_sm_count"], r["gpu_cores"]) == ("NVIDIA GeForce RTX 2080 Ti", 68, 4352)
    assert (r["kernel"], r["problem_size"], r["search_space_size"]) == ("convolution_kernel", "4096x4096", 4)
    assert r["objective"] is None  # this upstream file names no objective


def test_repeat_statistics_by_hand():
    r = by_params(import_rows([CONV_2080]), block_size_x=2.0, use_padding=1.0)
    assert r["repeats"] == 10
    assert r["time_ms_min"] == 2.853951930999756
    # sorted repeats: the 5th and 6th are 2.8569600582122803 and 2.85699200630188
    assert r["time_ms_median"] == pytest.approx((2.8569600582122803 + 2.85699200630188) / 2, rel=1e-15)
    assert r["time_ms_mean"] == pytest.approx(2.8577247858047485, rel=1e-12)  # the file's own `time`
    mean = 2.8577247858047485
    std = math.sqrt(sum((t - mean) ** 2 for t in TIMES_2080) / 10)
    assert r["time_ms_std"] == pytest.approx(std, rel=1e-6)
    assert r["time_cv"] == pytest.approx(std / mean, rel=1e-6)
    assert r["time_ms_reported"] == 2.8577247858047485
    assert r["compile_time_ms"] == 262.1809460001714
    assert r["params_text"] == []
    assert [p["name"] for p in r["params"]] == sorted(p["name"] for p in r["params"])
    failed = by_params(import_rows([CONV_2080]), tile_size_x=4.0)  # the compile failure
    assert failed["status"] == "compile_error" and failed.get("time_ms_median") is None


def test_provenance_and_undated_fallback():
    r = import_rows([CONV_2080])[0]
    assert r["source"] == "imported:benchmark_hub"
    assert (r["source_commit"], r["source_doi"], r["source_license"]) == ("8eeb99e", "10.5281/zenodo.15364124",
                                                                          "MIT")
    assert r["source_file"] == "data/convolution_RTX_2080_Ti_excerpt.json"
    assert r["collected_at"] == dt.datetime(2025, 5, 19, 3, 4, 8, 555481, tzinfo=UTC) == BENCHMARK_HUB.undated


def test_gzip_empty_device_name_needs_gpu():
    with pytest.raises(ImportFormatError, match="device_name is empty.*--gpu"):
        import_rows([DEDISP_MI250X])


def test_gzip_with_gpu_option_uses_file_timestamps():
    rows = import_rows([DEDISP_MI250X], gpu="MI250X")
    assert len(rows) == 3
    r = by_params(rows, tile_size_x=1.0, block_size_x=1.0)
    assert (r["gpu_name"], r["gpu_vendor"], r["gpu_compute_capability"], r["gpu_sm_count"]) == (
        "AMD Instinct MI250X", "amd", None, 110)
    assert r["collected_at"] == dt.datetime(2023, 11, 22, 10, 22, 4, 92820, tzinfo=UTC)
    assert (r["repeats"], r["objective"], r["problem_size"]) == (32, "time", "25000x2048x1")
    assert r["gbs_reported"] == pytest.approx(805.1958816002698)


def test_unknown_device_name_is_imported_with_null_catalogue_columns(tmp_path):
    from kgpubench.hardware import UnknownGpuWarning

    path = crafted_cache(tmp_path, {"32": {"block_size_x": 32, "time": 1.5, "times": [1.0, 2.0]}},
                         device="Mystery GPU 9000")
    with pytest.warns(UnknownGpuWarning, match="'Mystery GPU 9000' is not in the GPU alias table"):
        (row,) = import_rows([path])
    assert (row["gpu_name"], row["gpu_sm_count"], row["gpu_vendor"], row["gpu_specs_source"]) == (
        "Mystery GPU 9000", None, None, [])
    assert (row["status"], row["time_ms_median"]) == ("ok", 1.5)


def test_unknown_failure_string_is_named(tmp_path):
    path = crafted_cache(tmp_path, {"32": {"block_size_x": 32, "time": "OutOfCheeseConfig"}})
    with pytest.raises(ImportFormatError, match=r"configuration '32' has time 'OutOfCheeseConfig'"):
        import_rows([path])


def test_invalid_config_is_infeasible(tmp_path):
    path = crafted_cache(tmp_path, {"32": {"block_size_x": 32, "time": "InvalidConfig"}})
    (row,) = import_rows([path])
    assert (row["status"], row["failure"], row["problem_size"]) == ("infeasible", "InvalidConfig", "64x2")


def test_success_without_times_is_an_error(tmp_path):
    path = crafted_cache(tmp_path, {"32": {"block_size_x": 32, "time": 1.5}})
    with pytest.raises(ImportFormatError, match="'32' reports a time but its `times`"):
        import_rows([path])


def test_non_numeric_parameters_go_to_params_text(tmp_path):
    cache = {"float,True": {"t": "float", "b": True, "time": "CompilationFailedConfig"},
             "double,True": {"t": "double", "b": True, "time": "CompilationFailedConfig"}}
    path = crafted_cache(tmp_path, cache, keys=("t", "b"))
    table = import_table([path])
    rows = table.to_pylist()
    assert rows[0]["params"] == []
    assert rows[0]["params_text"] == [{"name": "b", "value": "true"}, {"name": "t", "value": '"float"'}]
    assert rows[0]["row_id"] != rows[1]["row_id"]
    assert validate_table(table, "autotune") == []


def test_plain_and_gzip_of_same_content_share_ids(tmp_path):
    plain = tmp_path / "copy" / "convolution_W7800_excerpt.json"
    plain.parent.mkdir()
    plain.write_bytes(gzip.decompress(CONV_W7800.read_bytes()))
    a, b = import_table([CONV_W7800]), import_table([plain])
    assert a["row_id"].to_pylist() == b["row_id"].to_pylist()
    assert a["run_id"].to_pylist() == b["run_id"].to_pylist()
    assert a["run_id"][0].as_py().startswith("kt-") and a["run_id"][0] != import_table([CONV_2080])["run_id"][0]


def test_source_option_rules():
    with pytest.raises(ImportFormatError, match="--license"):
        import_rows([CONV_2080], source="my_lab")
    with pytest.raises(ImportFormatError, match="lower-case"):
        import_rows([CONV_2080], source="My Lab", license="MIT")
    rows = import_rows([CONV_2080], source="my_lab", license="CC-BY-4.0", collected_at="2023-01-01")
    assert (rows[0]["source"], rows[0]["source_license"], rows[0]["source_doi"]) == ("imported:my_lab",
                                                                                     "CC-BY-4.0", None)


def test_reimport_merges_nothing_new(tmp_path):
    shard, _table = import_to_shard([CONV_2080, CONV_W7800], tmp_path / "a.parquet")
    again, _ = import_to_shard([CONV_2080, CONV_W7800], tmp_path / "b.parquet")
    assert shard.read_bytes() == again.read_bytes()  # byte-stable: no wall-clock anywhere
    store = Store(tmp_path / "store")
    first = store.merge([shard], today="2026-01-01")
    assert first.added == {"autotune": 6}
    version, rows = store.version, store.read("autotune")
    second = store.merge([again], today="2026-01-02")
    assert second.added == {} and second.duplicates == {"autotune": 6}
    assert store.version == version == "0.1.0"
    assert store.read("autotune").equals(rows)
