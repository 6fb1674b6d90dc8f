"""T4 results import, T4 export (structure checked against the schema's facts) and the round trip."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.importers import ImportFormatError, import_rows, import_table, import_to_shard
from kgpubench.store.store import Store
from kgpubench.tasks.export import export_t4, export_t4_table, parse_where

DATA = Path(__file__).parent / "data"
T4_INPUT = DATA / "t4_results_input.json"
FACTS = json.loads((DATA / "t4_results_schema_facts.json").read_text())
CACHES = [DATA / "convolution_RTX_2080_Ti_excerpt.json", DATA / "convolution_W7800_excerpt.json.gz"]
MI250X = DATA / "dedispersion_MI250X_excerpt.json.gz"
T4_OPTS = {"gpu": "RTX 2080 Ti", "kernel": "convolution_kernel", "problem_size": "4096x4096"}

_JSON_TYPES = {"object": dict, "array": list, "string": str, "number": (int, float)}


def _is(value, type_name: str) -> bool:
    return isinstance(value, _JSON_TYPES[type_name]) and not isinstance(value, bool)


def check_t4_structure(doc) -> list[str]:
    """Every way ``doc`` breaks the T4 results schema facts (empty when it conforms)."""
    errors = []
    top = FACTS["top_level"]["properties"]
    if not isinstance(doc, dict):
        return ["top level is not an object"]
    if not re.match(top["schema_version"]["pattern"], doc.get("schema_version", "")):
        errors.append(f"schema_version {doc.get('schema_version')!r}")
    if not _is(doc.get("results"), "array"):
        return errors + ["results is not an array"]
    spec = FACTS["result"]
    for i, r in enumerate(doc["results"]):
        errors += [f"results[{i}] lacks {k}" for k in spec["required"] if k not in r]
        for key, kind in spec["properties"].items():
            if key not in r:
                continue
            ok = r[key] in kind if isinstance(kind, list) else _is(r[key], kind)
            if not ok:
                errors.append(f"results[{i}].{key} = {r[key]!r} is not {kind}")
        for key, kind in spec["times"].items():
            if key in r.get("times", {}) and not _is(r["times"][key], kind):
                errors.append(f"results[{i}].times.{key} is not {kind}")
        for m in r.get("measurements", []):
            m_spec = spec["measurement"]
            if not _is(m.get("name"), m_spec["name"]) or not _is(m.get("unit"), m_spec["unit"]):
                errors.append(f"results[{i}] measurement {m}")
            if not any(_is(m.get("value"), k) for k in m_spec["value"]):
                errors.append(f"results[{i}] measurement value {m.get('value')!r}")
    return errors


def test_the_structure_check_catches_breaks():
    good = {"schema_version": "1.0.0", "results": [{"configuration": {}, "times": {"runtimes": []},
                                                    "invalidity": "correct", "correctness": 1}]}
    assert check_t4_structure(good) == []
    bad = json.loads(json.dumps(good))
    bad["results"][0]["invalidity"] = "fine"
    del bad["results"][0]["correctness"]
    assert len(check_t4_structure(bad)) == 2


def test_t4_input_needs_kernel_and_problem_size():
    with pytest.raises(ImportFormatError, match="--kernel NAME and --problem-size"):
        import_rows([T4_INPUT], gpu="RTX 2080 Ti")


def test_t4_input_rows():
    rows = import_rows([T4_INPUT], **T4_OPTS)
    assert [r["status"] for r in rows] == ["ok", "compile_error", "launch_error"]
    assert [r["failure"] for r in rows] == [None, "compile", "runtime"]
    ok = rows[0]
    assert ok["repeats"] == 10 and ok["time_ms_min"] == 2.853951930999756
    assert ok["time_ms_median"] == pytest.approx((2.8569600582122803 + 2.85699200630188) / 2, rel=1e-15)
    assert ok["time_ms_reported"] == 2.8577247858047485
    assert ok["compile_time_ms"] == 262.1809460001714
    assert rows[1]["compile_time_ms"] is not None  # read from Kernel Tuner's `compilation` spelling
    assert ok["source_format"] == "t4" and ok["run_id"].startswith("t4-")
    # same configuration and GPU as the cache record: the same row id
    cache_row = import_table([CACHES[0]]).to_pylist()
    t4_row = import_table([T4_INPUT], **T4_OPTS).to_pylist()[0]
    assert t4_row["row_id"] in {r["row_id"] for r in cache_row}


@pytest.mark.parametrize("invalidity,status", [("timeout", "launch_error"), ("correctness", "verification_failed"),
                                               ("constraints", "infeasible")])
def test_t4_invalidity_statuses(tmp_path, invalidity, status):
    doc = {"schema_version": "1.0.0", "results": [{"configuration": {"b": 4}, "times": {}, "invalidity": invalidity,
                                                   "correctness": 1}]}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    (row,) = import_rows([tmp_path / "r.json"], **T4_OPTS)
    assert (row["status"], row["failure"]) == (status, invalidity)


def test_t4_unknown_invalidity(tmp_path):
    doc = {"results": [{"configuration": {}, "times": {}, "invalidity": "meh", "correctness": 1}]}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    with pytest.raises(ImportFormatError, match=r"results\[0\] has invalidity 'meh'"):
        import_rows([tmp_path / "r.json"], **T4_OPTS)


@pytest.fixture()
def store(tmp_path) -> Path:
    shard, _ = import_to_shard(CACHES, tmp_path / "a.parquet")
    shard2, _ = import_to_shard([MI250X], tmp_path / "b.parquet", gpu="MI250X")
    Store(tmp_path / "store").merge([shard, shard2], today="2026-01-01")
    return tmp_path / "store"


def test_export_validates_structurally(store, tmp_path):
    paths = export_t4("autotune", tmp_path / "out", data_dir=store)
    assert len(paths) == 3  # one per GPU x kernel x problem size
    for path in paths:
        doc = json.loads(path.read_text())
        assert check_t4_structure(doc) == [], path
        assert doc["metadata"]["kgpubench_dataset_version"] == "0.1.0"
    w7800 = json.loads(next(p for p in paths if "W7800" in p.name).read_text())
    failed = [r for r in w7800["results"] if r["invalidity"] == "compile"]
    assert len(failed) == 1 and failed[0]["configuration"]["block_size_x"] == 64


MEASURED = ["status", "failure", "time_ms_median", "time_ms_min", "time_ms_mean", "time_ms_std", "repeats",
            "time_cv", "time_ms_reported", "gflops_reported", "gbs_reported", "compile_time_ms", "benchmark_time_ms",
            "verification_time_ms", "framework_time_ms", "strategy_time_ms", "collected_at", "gpu_name", "kernel",
            "problem_size", "params", "params_text"]


IDENTITY = ["run_id", "source", "source_file", "source_format", "source_commit", "source_doi", "source_license",
            "objective", "search_space_size"]


def test_export_then_reimport_preserves_every_measured_value_and_the_identity(store, tmp_path):
    paths = export_t4("autotune", tmp_path / "out", data_dir=store)
    back = import_table(paths, source="roundtrip", license="MIT")
    before = Store(store).read("autotune")
    assert back.num_rows == before.num_rows == 9
    old = {r["row_id"]: r for r in before.to_pylist()}
    for r in back.to_pylist():
        o = old[r["row_id"]]  # same key columns, so the same row id
        assert {c: r[c] for c in MEASURED} == {c: o[c] for c in MEASURED}
        # the same measurement: its run and upstream provenance come back, whatever --source says
        assert {c: r[c] for c in IDENTITY} == {c: o[c] for c in IDENTITY}
        assert r["run_id"].startswith("kt-") and r["source"] == "imported:benchmark_hub"


def test_export_import_merge_adds_nothing_and_other_runs_stay(store, tmp_path):
    paths = export_t4("autotune", tmp_path / "out", data_dir=store)
    shard, _ = import_to_shard(paths, tmp_path / "again.parquet")
    report = Store(store).merge([shard], today="2026-01-02")
    assert (report.added, report.duplicates, report.changed) == ({}, {"autotune": 9}, False)
    # the same configurations measured by another run (a T4 file without kgpubench's run ids) are new rows
    doc = json.loads(paths[0].read_text())
    for result in doc["results"]:
        result["measurements"] = [m for m in result["measurements"] if m["name"] != "run_id"]
    (tmp_path / "other.json").write_text(json.dumps(doc))
    other, table = import_to_shard([tmp_path / "other.json"], tmp_path / "other.parquet")
    report = Store(store).merge([other], today="2026-01-02")
    assert report.added == {"autotune": len(doc["results"])} and table["run_id"][0].as_py().startswith("t4-")
    assert Store(store).rows("autotune") == 9 + len(doc["results"])


def test_exported_runs_metadata(store, tmp_path):
    paths = export_t4("autotune", tmp_path / "out", data_dir=store)
    doc = json.loads(next(p for p in paths if "W7800" in p.name).read_text())
    (run_id,) = doc["metadata"]["kgpubench_runs"]
    facts = doc["metadata"]["kgpubench_runs"][run_id]
    assert facts["source_file"] == "data/convolution_W7800_excerpt.json.gz" and facts["search_space_size"] == 2
    assert facts["source_license"] == "MIT" and facts["source_format"] == "kernel-tuner-cache"
    assert {m["value"] for r in doc["results"] for m in r["measurements"] if m["name"] == "run_id"} == {run_id}


def test_export_stencil_rows_mapping(tmp_path):
    row = {"gpu_name": "NVIDIA H100 PCIe", "status": "ok", "variant": "shared-tile", "dtype": "float32",
           "space_order": 8, "grid_nx": 256, "grid_ny": 128, "grid_nz": 64, "tile_b1": 4, "tile_b2": 8, "tile_b3": 32,
           "block_size": 256, "time_ms_median": 1.25, "time_ms_min": 1.0, "time_ms_mean": 1.5, "time_ms_std": 0.5,
           "repeats": 3, "power_w_avg": 210.0, "collected_at": None}
    (path,) = export_t4_table(pa.Table.from_pylist([row]), "stencil", tmp_path)
    assert path.name == "stencil__NVIDIA_H100_PCIe__wave3d-shared-tile-float32-so8__256x128x64.json"
    doc = json.loads(path.read_text())
    assert check_t4_structure(doc) == []
    (res,) = doc["results"]
    assert res["configuration"] == {"block_size": 256, "tile_b1": 4, "tile_b2": 8, "tile_b3": 32}
    values = {m["name"]: (m["value"], m["unit"]) for m in res["measurements"]}
    assert values["time"] == (1.5, "ms") and values["power_w_avg"] == (210.0, "W")
    assert res["times"]["runtimes"] == [] and res["invalidity"] == "correct"


def test_where_filters(store):
    from kgpubench.tasks.loading import load_dataset

    table = load_dataset("autotune", format="arrow", data_dir=store)
    assert parse_where(table, ["gpu_name=AMD Radeon PRO W7800"]).num_rows == 2
    assert parse_where(table, ["status!=ok", "gpu_name=NVIDIA GeForce RTX 2080 Ti"]).num_rows == 2
    assert parse_where(table, ["repeats=32"]).num_rows == 4  # 3 MI250X + 1 W7800
    with pytest.raises(UnknownNameError, match="gpu_nam"):
        parse_where(table, ["gpu_nam=x"])
    with pytest.raises(ImportFormatError, match="not a value of column 'repeats'"):
        parse_where(table, ["repeats=many"])


def test_export_npb_kernel_and_run_rows(tmp_path):
    base = {"gpu_name": "NVIDIA H100 PCIe", "benchmark": "CG", "npb_class": "S", "variant": "kgpubench",
            "collected_at": None, "time_ms_mean": 2.0, "time_ms_median": 2.0, "time_ms_min": 2.0,
            "time_ms_std": 0.0, "repeats": 5}
    kernel_row = dict(base, row_kind="kernel", kernel="spmv", tpb=128, status="ok", tpb_assignment=None)
    run_row = dict(base, row_kind="run", kernel="app", tpb=None, status="verification_failed",
                   tpb_assignment=[{"name": "spmv", "value": 256.0}, {"name": "dot", "value": 64.0}])
    paths = export_t4_table(pa.Table.from_pylist([kernel_row, run_row]), "npb", tmp_path)
    docs = {p.name: json.loads(p.read_text()) for p in paths}
    assert sorted(docs) == ["npb__NVIDIA_H100_PCIe__CG.app.kgpubench__S.json",
                            "npb__NVIDIA_H100_PCIe__CG.spmv.kgpubench__S.json"]
    (run,) = docs["npb__NVIDIA_H100_PCIe__CG.app.kgpubench__S.json"]["results"]
    assert run["configuration"] == {"tpb_dot": 64, "tpb_spmv": 256}
    assert (run["invalidity"], run["correctness"]) == ("correctness", 0)
    (k,) = docs["npb__NVIDIA_H100_PCIe__CG.spmv.kgpubench__S.json"]["results"]
    assert k["configuration"] == {"tpb": 128} and check_t4_structure({"schema_version": "1.0.0", "results": [k]}) == []
