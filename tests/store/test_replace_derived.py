"""merge --replace-derived: a re-import whose catalogue-derived columns changed replaces the stored rows; a changed
measurement never does, and without the option a derived change is refused, never skipped."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_helpers import cli

from kgpubench.errors import DerivedChangeError, MergeConflictError
from kgpubench.schema import get_table
from kgpubench.store import store as store_mod
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.testing import valid_row


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def rows(config: str, count: int, **overrides) -> list[dict]:
    if config == "llm_operators":
        return [valid_row(config, m=16 + i, peak_tensor_tflops=989.0, **overrides) for i in range(count)]
    return [valid_row(config, tpb=32 + i, **overrides) for i in range(count)]


def shard(tmp_path: Path, name: str, config: str, dict_rows: list[dict]) -> Path:
    return write_shard(get_table(config).from_rows(dict_rows), tmp_path / name)


@pytest.fixture
def store(tmp_path):
    """npb rows tpb 32..35 in one part, then 36..37 in a second part (two merges), at version 0.2.0."""
    s = Store(tmp_path / "store")
    s.merge([shard(tmp_path, "a.parquet", "npb", rows("npb", 4))], today="2026-01-02")
    s.merge([shard(tmp_path, "b.parquet", "npb", [valid_row("npb", tpb=36), valid_row("npb", tpb=37)])],
            today="2026-01-03")
    return s


def test_the_derived_columns_are_declared_by_the_schema():
    npb, llm = get_table("npb"), get_table("llm_operators")
    assert "gpu_memory_bandwidth_gbs" in npb.derived_columns and "gpu_specs_source" in npb.derived_columns
    assert "peak_tensor_tflops" in llm.derived_columns and "peak_tensor_tflops" not in npb.column_names
    for decl in (npb, llm):  # the GPU's identity and every measurement are not derived
        for name in ("gpu_name", "gpu_uuid_hash", "row_id", "run_id", "time_ms_median", "time_ms", "status",
                     "flops", "collected_at"):
            assert name not in decl.derived_columns


def test_a_derived_only_change_is_refused_without_the_option(store, tmp_path):
    before = snapshot(store.path)
    changed = shard(tmp_path, "changed.parquet", "npb", [valid_row("npb", tpb=99),
                                                         valid_row("npb", tpb=33, gpu_memory_bandwidth_gbs=7700.0)])
    with pytest.raises(DerivedChangeError) as err:
        store.merge([changed])
    message = str(err.value)
    assert "\n" not in message and "nothing was merged" in message and "--replace-derived" in message
    assert f"{changed}: row 1, column 'gpu_memory_bandwidth_gbs'" in message
    assert "7700.0 here, 3350.0 in the store" in message
    assert err.value.details() == []  # one line, however many rows
    assert snapshot(store.path) == before


def test_a_derived_only_change_is_applied_with_the_option_in_place(store, tmp_path):
    stored_before = store.read("npb")
    old_parts = [e["path"] for e in store.files("npb")]
    changed = shard(tmp_path, "changed.parquet", "npb", [valid_row("npb", tpb=33, gpu_memory_bandwidth_gbs=7700.0),
                                                         valid_row("npb", tpb=37, gpu_tdp_w=1000.0),
                                                         valid_row("npb", tpb=34)])  # a duplicate
    report = store.merge([changed], replace_derived=True, today="2026-01-04")
    assert report.added == {} and report.replaced == {"npb": 2} and report.duplicates == {"npb": 1}
    assert report.replaced_columns == {"npb": ["gpu_memory_bandwidth_gbs", "gpu_tdp_w"]}
    assert (report.version_before, report.version_after) == ("0.2.0", "0.3.0")
    after = store.read("npb")
    assert after.num_rows == stored_before.num_rows
    assert after["tpb"].to_pylist() == stored_before["tpb"].to_pylist()  # the stored row order is kept
    assert after["gpu_memory_bandwidth_gbs"].to_pylist() == [3350.0, 7700.0, 3350.0, 3350.0, 3350.0, 3350.0]
    assert after["gpu_tdp_w"].to_pylist()[5] == 1000.0 and after["gpu_tdp_w"].to_pylist()[1] == \
        stored_before["gpu_tdp_w"].to_pylist()[1]
    for name in ("row_id", "run_id", "time_ms_median", "collected_at"):
        assert after[name].equals(stored_before[name])
    manifest = store.manifest()
    new_parts = [e["path"] for e in manifest["configs"]["npb"]["files"]]
    assert len(new_parts) == 2 and not set(new_parts) & set(old_parts)
    assert not any((store.path / p).exists() for p in old_parts)  # superseded parts removed after the commit
    entry = manifest["changelog"][-1]
    assert entry["version"] == "0.3.0" and entry["added_rows"] == {} and entry["replaced_rows"] == {"npb": 2}
    assert "replaced 2 npb rows" in entry["note"] and "gpu_memory_bandwidth_gbs, gpu_tdp_w" in entry["note"]
    assert store.validate() == []
    assert "replaced 2 npb rows" in (store.path / "README.md").read_text()  # the card's changelog
    again = store.merge([changed], replace_derived=True)  # now every row is a duplicate
    assert not again.changed and again.duplicates == {"npb": 3}


def test_a_measured_change_is_refused_even_with_the_option(store, tmp_path):
    before = snapshot(store.path)
    changed = shard(tmp_path, "changed.parquet", "npb", [
        valid_row("npb", tpb=33, gpu_memory_bandwidth_gbs=7700.0),
        valid_row("npb", tpb=34, gpu_memory_bandwidth_gbs=7700.0, time_ms_median=0.95)])
    with pytest.raises(MergeConflictError) as err:
        store.merge([changed], replace_derived=True)
    assert not isinstance(err.value, DerivedChangeError)
    (c,) = err.value.conflicts
    assert (c.file, c.row, c.column, c.value, c.other_value) == (str(changed), 1, "time_ms_median", 0.95, 1.0)
    assert f"{changed}: row 1, column 'time_ms_median'" in str(err.value)
    assert snapshot(store.path) == before


def test_new_and_replaced_rows_in_one_merge(store, tmp_path):
    changed = shard(tmp_path, "mix.parquet", "npb", [valid_row("npb", tpb=500),
                                                     valid_row("npb", tpb=32, gpu_l2_bytes=123),
                                                     valid_row("npb", tpb=501)])
    report = store.merge([changed], replace_derived=True, note="catalogue fix (issue 1)")
    assert report.added == {"npb": 2} and report.replaced == {"npb": 1}
    table = store.read("npb")
    assert table["tpb"].to_pylist() == [32, 33, 34, 35, 36, 37, 500, 501]
    assert table["gpu_l2_bytes"].to_pylist()[0] == 123
    assert len(store.files("npb")) == 3  # the rewritten first part, the untouched second, the new rows' part
    note = store.manifest()["changelog"][-1]["note"]
    assert note.startswith("catalogue fix (issue 1). replaced 1 npb rows") and "gpu_l2_bytes" in note


def test_two_shards_disagreeing_on_a_derived_figure_conflict(store, tmp_path):
    a = shard(tmp_path, "x.parquet", "npb", [valid_row("npb", tpb=900)])
    b = shard(tmp_path, "y.parquet", "npb", [valid_row("npb", tpb=900, gpu_tdp_w=1.0)])
    with pytest.raises(MergeConflictError, match="gpu_tdp_w") as err:
        store.merge([a, b], replace_derived=True)
    assert err.value.conflicts[0].other == f"{a} row 0"


def test_mass_replacement_is_vectorised(tmp_path):
    """10,000 rows of llm_operators whose peak changed: one refusal line without the option, all replaced with it
    (the comparison is column by column: a per-row take made this take many minutes)."""
    s = Store(tmp_path / "store")
    first = get_table("llm_operators").from_rows(rows("llm_operators", 10_000))
    s.merge([write_shard(first, tmp_path / "first.parquet")])
    column = first.schema.get_field_index("peak_tensor_tflops")
    second = first.set_column(column, first.schema.field(column), pa.array(np.full(10_000, 1978.0)))
    path = write_shard(second, tmp_path / "second.parquet")
    with pytest.raises(DerivedChangeError, match="refused: 10000 row") as err:
        s.merge([path])
    assert len(err.value.conflicts) == 10_000 and err.value.details() == []
    report = s.merge([path], replace_derived=True)
    assert report.replaced == {"llm_operators": 10_000} and report.replaced_columns == {
        "llm_operators": ["peak_tensor_tflops"]}
    assert s.read("llm_operators")["peak_tensor_tflops"].to_pylist() == [1978.0] * 10_000
    assert s.read("llm_operators")["row_id"].equals(first["row_id"])


def test_cli_option(store, tmp_path, monkeypatch, capsys):
    changed = shard(tmp_path, "cli.parquet", "npb", [valid_row("npb", tpb=35, gpu_clock_sm_mhz=2000.0)])
    code, out, err = cli(monkeypatch, capsys, "merge", changed, "--into", store.path)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--replace-derived" in err and "gpu_clock_sm_mhz" in err
    assert str(changed) in err and "Traceback" not in err
    code, out, err = cli(monkeypatch, capsys, "merge", changed, "--into", store.path, "--replace-derived")
    assert code == 0 and "replaced 1 npb rows (gpu_clock_sm_mhz changed)" in out
    assert json.loads((store.path / "manifest.json").read_text())["changelog"][-1]["replaced_rows"] == {"npb": 1}
    assert pq.read_table(store.path / store.files("npb")[0]["path"])["gpu_clock_sm_mhz"].to_pylist()[3] == 2000.0


@pytest.mark.parametrize(("point", "nth"), [("part-temp", 1), ("part", 1), ("part-temp", 2), ("manifest-temp", 1)])
def test_a_replacement_interrupted_before_its_commit_leaves_the_store_byte_identical(store, tmp_path, monkeypatch,
                                                                                     point, nth):
    """The rewritten part and the new rows' part are written before the manifest; an exception before its rename
    removes both and keeps the superseded part."""
    before = snapshot(store.path)
    mixed = shard(tmp_path, "mixed.parquet", "npb", [valid_row("npb", tpb=33, gpu_tdp_w=1.0),
                                                     valid_row("npb", tpb=600)])
    seen = []

    def interrupt(p):
        seen.append(p)
        if p == point and seen.count(point) == nth:
            raise KeyboardInterrupt(f"interrupted at {point}")

    monkeypatch.setattr(store_mod, "_FAULT_HOOK", interrupt)
    with pytest.raises(KeyboardInterrupt):
        store.merge([mixed], replace_derived=True)
    monkeypatch.undo()
    assert seen.count(point) == nth
    assert snapshot(store.path) == before and store.leftovers() == []
    assert store.read("npb")["gpu_tdp_w"].to_pylist()[1] != 1.0
