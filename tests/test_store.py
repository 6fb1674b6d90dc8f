import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgpubench import shards as shards_mod
from kgpubench import store as store_mod
from kgpubench.errors import DataFileNotFoundError, ManifestError, SchemaValidationError
from kgpubench.loading import load_dataset
from kgpubench.schema import get_table
from kgpubench.shards import write_shard
from kgpubench.store import Store
from kgpubench.testing import valid_row


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def shard(tmp_path, name, rows, config="npb"):
    return write_shard(get_table(config).from_rows(rows), tmp_path / name)


@pytest.fixture
def filled(tmp_path):
    """A store holding two npb rows, at version 0.1.0."""
    s = Store(tmp_path / "store")
    s.merge([shard(tmp_path, "a.parquet", [valid_row("npb", tpb=32), valid_row("npb", tpb=64)])], today="2026-01-02")
    return s


def test_first_merge_creates_version_manifest_and_readme(filled):
    m = filled.manifest()
    assert m["dataset_version"] == "0.1.0"
    (entry,) = m["configs"]["npb"]["files"]
    assert entry["rows"] == 2 and len(entry["sha256"]) == 64
    assert m["configs"]["npb"]["schema_version"] == get_table("npb").version
    assert m["changelog"][0]["added_rows"] == {"npb": 2} and m["changelog"][0]["date"] == "2026-01-02"
    readme = (filled.path / "README.md").read_text()
    assert "config_name: npb" in readme and entry["path"] in readme


def test_merge_dedupes_exact_duplicates_keeps_other_runs_and_bumps_minor(filled, tmp_path):
    again = shard(tmp_path, "b.parquet", [valid_row("npb", tpb=32), valid_row("npb", tpb=32, run_id="second-run"),
                                          valid_row("npb", tpb=128)])
    report = filled.merge([again])
    assert report.added == {"npb": 2} and report.duplicates == {"npb": 1}
    assert (report.version_before, report.version_after) == ("0.1.0", "0.2.0")
    table = filled.read("npb")
    assert table.num_rows == 4
    assert sorted(zip(table["tpb"].to_pylist(), table["run_id"].to_pylist())) == [
        (32, "second-run"), (32, "test-run-0001"), (64, "test-run-0001"), (128, "test-run-0001")]


def test_merging_the_same_shard_twice_adds_nothing(filled, tmp_path):
    before = snapshot(filled.path)
    report = filled.merge([shard(tmp_path, "a2.parquet", [valid_row("npb", tpb=64)])])
    assert not report.changed and report.added == {}
    assert snapshot(filled.path) == before


def test_bad_shard_is_refused_whole_and_nothing_written(filled, tmp_path):
    before = snapshot(filled.path)
    good = shard(tmp_path, "good.parquet", [valid_row("npb", tpb=256)])
    bad = shard(tmp_path, "bad.parquet", [valid_row("npb", tpb=512), valid_row("npb", tpb=1024, status="??")])
    with pytest.raises(SchemaValidationError, match="1 schema violation") as err:
        filled.merge([good, bad])
    assert [(v.row, v.column) for v in err.value.violations] == [(1, "status")]
    assert "bad.parquet" in str(err.value)
    assert snapshot(filled.path) == before


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])
def test_merge_interrupted_mid_write_leaves_store_byte_identical(filled, tmp_path, monkeypatch, fail_at):
    """Writes go npb part, stencil part, README, manifest; a crash inside any of them changes nothing."""
    before = snapshot(filled.path)
    new = shard(tmp_path, "c.parquet", [valid_row("npb", tpb=256)])
    other = write_shard(get_table("stencil").from_rows([valid_row("stencil")]), tmp_path / "d.parquet")
    real_fsync = shards_mod.os.fsync
    calls = []

    def crash_on_nth_fsync(fd):
        calls.append(fd)
        if len(calls) == fail_at:
            raise KeyboardInterrupt("killed mid-write")
        real_fsync(fd)

    monkeypatch.setattr(shards_mod.os, "fsync", crash_on_nth_fsync)
    with pytest.raises(KeyboardInterrupt):
        filled.merge([new, other])
    monkeypatch.undo()
    assert len(calls) >= fail_at  # restoring the README after the crash writes again
    assert snapshot(filled.path) == before
    assert filled.read("npb").num_rows == 2


def test_tampered_file_is_named_on_load(filled):
    (entry,) = filled.files("npb")
    path = filled.path / entry["path"]
    table = pq.read_table(path)
    pq.write_table(table.slice(0, 1), path)
    with pytest.raises(ManifestError, match=f"{entry['path']}.*does not match the manifest"):
        load_dataset("npb", data_dir=filled.path, format="arrow")
    (violation,) = filled.validate()
    assert entry["path"] in violation.file


def test_missing_listed_file_is_a_clear_error(filled):
    (entry,) = filled.files("npb")
    (filled.path / entry["path"]).unlink()
    with pytest.raises(DataFileNotFoundError, match="listed in .*manifest.json but missing"):
        filled.read("npb")


def test_malformed_manifest_is_a_clear_error(filled):
    filled.manifest_path.write_text("{not json")
    with pytest.raises(ManifestError, match="malformed manifest"):
        filled.read("npb")


def test_orphan_files_are_ignored(filled):
    (filled.path / "npb" / "part-stray.parquet").write_bytes(b"junk")
    assert filled.read("npb").num_rows == 2


def test_older_schema_files_gain_new_nullable_columns(filled, tmp_path):
    (entry,) = filled.files("npb")
    path = filled.path / entry["path"]
    pq.write_table(pq.read_table(path).drop_columns(["time_cv"]), path)
    m = json.loads(filled.manifest_path.read_text())
    m["configs"]["npb"]["files"][0]["sha256"] = store_mod.sha256_file(path)
    filled.manifest_path.write_text(json.dumps(m))
    table = filled.read("npb")
    assert table["time_cv"].null_count == 2 and table.schema == get_table("npb").arrow_schema()
