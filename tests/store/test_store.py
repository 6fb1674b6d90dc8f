import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from kgpubench.errors import (
    DataFileNotFoundError,
    DerivedChangeError,
    ManifestError,
    MergeConflictError,
    SchemaValidationError,
    StoreLockedError,
)
from kgpubench.schema import get_table
from kgpubench.store import store as store_mod
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.tasks.loading import load_dataset
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


@pytest.mark.parametrize(("point", "nth"), [("locked", 1), ("part-temp", 1), ("part", 1), ("part-temp", 2),
                                           ("part", 2), ("manifest-temp", 1)])
def test_merge_interrupted_before_its_commit_leaves_store_byte_identical(filled, tmp_path, monkeypatch, point,
                                                                         nth):
    """An exception (Ctrl-C, a full disk) anywhere before the manifest rename removes all the merge wrote."""
    before = snapshot(filled.path)
    new = shard(tmp_path, "c.parquet", [valid_row("npb", tpb=256)])
    other = write_shard(get_table("stencil").from_rows([valid_row("stencil")]), tmp_path / "d.parquet")
    seen = []

    def interrupt(p):
        seen.append(p)
        if seen.count(point) == nth and p == point:
            raise KeyboardInterrupt(f"interrupted at {point}")

    monkeypatch.setattr(store_mod, "_FAULT_HOOK", interrupt)
    with pytest.raises(KeyboardInterrupt):
        filled.merge([new, other])
    assert seen[-1] == point and seen.count(point) == nth
    monkeypatch.undo()
    assert snapshot(filled.path) == before and filled.leftovers() == []
    assert filled.read("npb").num_rows == 2


@pytest.mark.slow
def test_interrupt_after_the_commit_keeps_the_merge_and_repair_fixes_the_readme(filled, tmp_path, monkeypatch):
    old_readme = (filled.path / "README.md").read_text()

    def interrupt(p):
        if p == "readme-temp":
            raise KeyboardInterrupt

    monkeypatch.setattr(store_mod, "_FAULT_HOOK", interrupt)
    with pytest.raises(KeyboardInterrupt):
        filled.merge([shard(tmp_path, "c.parquet", [valid_row("npb", tpb=256)])])
    monkeypatch.undo()
    assert filled.version == "0.2.0" and filled.rows("npb") == 3
    assert (filled.path / "README.md").read_text() == old_readme  # the previous version: it still exists
    (violation,) = filled.validate()
    assert violation.file.endswith("README.md") and "does not describe dataset version 0.2.0" in violation.rule
    assert filled.repair() == [f"regenerated {filled.path / 'README.md'}"]
    assert "Dataset version **0.2.0**" in (filled.path / "README.md").read_text() and filled.validate() == []


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


def test_orphan_files_are_ignored_by_readers_and_reported_by_validate(filled):
    stray = filled.path / "npb" / "part-0123456789abcdef.parquet"
    stray.write_bytes(b"junk")
    temp = filled.path / ".manifest.json.x1y2z3.tmp"
    temp.write_text("{")
    notes = filled.path / "npb" / "NOTES.txt"  # not something a write leaves: neither reported nor removed
    notes.write_text("mine")
    assert filled.read("npb").num_rows == 2
    found = {v.file: v.rule for v in filled.validate()}
    assert set(found) == {str(stray), str(temp)}
    assert "orphaned part: not listed in manifest.json" in found[str(stray)]
    assert "unfinished temp file" in found[str(temp)] and "validate --repair" in found[str(temp)]
    assert sorted(filled.repair()) == sorted([f"removed {stray}", f"removed {temp}"])
    assert not stray.exists() and not temp.exists() and notes.read_text() == "mine"
    assert filled.validate() == [] and filled.repair() == []


def test_older_schema_files_gain_new_nullable_columns(filled, tmp_path):
    (entry,) = filled.files("npb")
    path = filled.path / entry["path"]
    pq.write_table(pq.read_table(path).drop_columns(["time_cv"]), path)
    m = json.loads(filled.manifest_path.read_text())
    m["configs"]["npb"]["files"][0]["sha256"] = store_mod.sha256_file(path)
    filled.manifest_path.write_text(json.dumps(m))
    table = filled.read("npb")
    assert table["time_cv"].null_count == 2 and table.schema == get_table("npb").arrow_schema()


def test_same_identity_with_different_values_is_a_conflict_not_a_skip(filled, tmp_path):
    before = snapshot(filled.path)
    changed = shard(tmp_path, "changed.parquet", [valid_row("npb", tpb=128),
                                                  valid_row("npb", tpb=64, time_ms_median=2.5, time_ms_mean=2.5)])
    with pytest.raises(MergeConflictError) as err:
        filled.merge([changed])
    conflicts = err.value.conflicts
    assert [(c.row, c.column, c.value, c.other_value, c.other) for c in conflicts] == [
        (1, "time_ms_mean", 2.5, 1.05, "the store"), (1, "time_ms_median", 2.5, 1.0, "the store")]
    expected_id = get_table("npb").from_rows([valid_row("npb", tpb=64)])["row_id"][0].as_py()
    assert conflicts[0].row_id == expected_id and conflicts[0].run_id == "test-run-0001"
    message = str(err.value)
    assert "\n" not in message and "refused: 1 row(s)" in message and "nothing was merged" in message
    assert f"{changed}: row 1, column 'time_ms_mean'" in message and "2.5 here, 1.05 in the store" in message
    assert snapshot(filled.path) == before


def test_conflict_between_two_incoming_shards_names_both_files(filled, tmp_path):
    before = snapshot(filled.path)
    a = shard(tmp_path, "a.parquet", [valid_row("npb", tpb=512, status_detail="first")])
    b = shard(tmp_path, "b.parquet", [valid_row("npb", tpb=1024), valid_row("npb", tpb=512, status_detail="second")])
    with pytest.raises(MergeConflictError) as err:
        filled.merge([a, b])
    (c,) = err.value.conflicts
    assert (c.file, c.row, c.column, c.value, c.other_value, c.other) == (
        str(b), 1, "status_detail", "second", "first", f"{a} row 0")
    assert snapshot(filled.path) == before


def test_a_newer_kgpubench_is_the_same_measurement_a_newer_catalogue_is_not_skipped(filled, tmp_path):
    """Re-importing with a newer kgpubench (version) adds nothing and conflicts with nothing; a changed catalogue
    figure (gpu_*) is refused rather than skipped (tests/store/test_replace_derived.py); the GPU's identity
    (gpu_uuid_hash) and every measured value still count."""
    again = shard(tmp_path, "again.parquet", [valid_row("npb", tpb=64, kgpubench_version="9.9.9")])
    report = filled.merge([again])
    assert report.added == {} and report.duplicates == {"npb": 1} and not report.changed
    before = snapshot(filled.path)
    catalogue = shard(tmp_path, "catalogue.parquet", [valid_row("npb", tpb=64, gpu_memory_bandwidth_gbs=1234.5)])
    with pytest.raises(DerivedChangeError, match="--replace-derived"):
        filled.merge([catalogue])
    assert snapshot(filled.path) == before
    other_board = shard(tmp_path, "board.parquet", [valid_row("npb", tpb=64, gpu_uuid_hash="ffffffffffffffff")])
    with pytest.raises(MergeConflictError) as err:
        filled.merge([other_board])
    assert [c.column for c in err.value.conflicts] == ["gpu_uuid_hash"]


def test_identical_rows_in_two_incoming_shards_are_merged_once(filled, tmp_path):
    a = shard(tmp_path, "a.parquet", [valid_row("npb", tpb=512)])
    b = shard(tmp_path, "b.parquet", [valid_row("npb", tpb=512), valid_row("npb", tpb=32)])
    report = filled.merge([a, b])
    assert report.added == {"npb": 1} and report.duplicates == {"npb": 2}
    assert sorted(filled.read("npb")["tpb"].to_pylist()) == [32, 64, 512]


@pytest.mark.parametrize(("edit", "message"), [
    (lambda m: m.pop("configs"), "`configs` is missing"),
    (lambda m: m.update(dataset_version="one"), "dataset_version 'one' is not MAJOR.MINOR.PATCH"),
    (lambda m: m["configs"]["npb"]["files"][0].pop("sha256"), r"files\[0\].sha256 None is not 64 hex"),
    (lambda m: m["configs"]["npb"]["files"][0].update(rows="2"), r"files\[0\].rows '2' is not a row count"),
    (lambda m: m["configs"]["npb"]["files"][0].update(path="../../etc/passwd"), "is not npb/<file>.parquet"),
    (lambda m: m["configs"]["npb"]["files"][0].update(path="/etc/x.parquet"), "is not npb/<file>.parquet"),
    (lambda m: m["configs"].update(bogus={"files": []}), "config 'bogus' is not one of"),
    (lambda m: m["configs"].update(npb=[]), "configs.npb.files is missing"),
    (lambda m: m.update(changelog=[{"version": 1}]), "changelog is not a list of entries"),
    (lambda m: m["configs"]["npb"]["files"].append(dict(m["configs"]["npb"]["files"][0])), "is listed twice"),
])
def test_malformed_manifest_is_one_line_naming_what_is_wrong(filled, edit, message):
    m = json.loads(filled.manifest_path.read_text())
    edit(m)
    filled.manifest_path.write_text(json.dumps(m))
    for action in (lambda: filled.read("npb"), filled.validate, lambda: filled.merge([]), filled.repair):
        with pytest.raises(ManifestError, match=message) as err:
            action()
        assert "\n" not in str(err.value) and "malformed manifest" in str(err.value)


def test_manifest_that_is_not_json_or_too_deep(filled):
    for text in ("[" * 100_000, "\x00\xff", ""):
        filled.manifest_path.write_text(text)
        with pytest.raises(ManifestError, match="malformed manifest"):
            filled.manifest()


def test_a_held_lock_makes_a_second_writer_wait_then_fail_in_one_line(filled, tmp_path):
    new = shard(tmp_path, "c.parquet", [valid_row("npb", tpb=256)])
    before = snapshot(filled.path)
    messages = []
    with filled.writing():  # flock locks conflict between two opens of the lock file, even in one process
        with pytest.raises(StoreLockedError, match="another kgpubench process is writing this store; try again"):
            filled.merge([new], lock_timeout=0)
        with pytest.raises(StoreLockedError, match=r"still was after 0.2 s"):
            filled.merge([new], lock_timeout=0.2, on_wait=messages.append)
        with pytest.raises(StoreLockedError):
            filled.repair(lock_timeout=0)
    assert messages == [f"{filled.path}: another kgpubench process is writing this store; waiting for it to "
                        "finish (up to 0.2 s) ..."]
    assert snapshot(filled.path) == before
    assert filled.merge([new], lock_timeout=0).added == {"npb": 1}


@pytest.mark.parametrize("timeout", [-1, float("nan"), "soon"])
def test_bad_lock_timeout_is_refused(filled, timeout):
    with pytest.raises(SchemaValidationError, match="lock timeout"):
        filled.merge([], lock_timeout=timeout)


def test_store_path_that_is_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(DataFileNotFoundError, match="is a file, expected a dataset store folder"):
        Store(tmp_path / "file").merge([shard(tmp_path, "a.parquet", [valid_row("npb")])])


def test_read_of_some_columns_equals_those_of_the_whole_table_and_nulls_a_column_an_old_part_lacks(filled,
                                                                                                   tmp_path):
    filled.merge([shard(tmp_path, "b.parquet", [valid_row("npb", tpb=128, kgpubench_commit="ab12345")])])
    whole = filled.read("npb")
    wanted = ["kgpubench_commit", "source", "tpb"]  # not in the schema's order: read in the order asked
    assert filled.read("npb", verify=False, columns=wanted).equals(whole.select(wanted))
    assert filled.read("npb", verify=False, columns=wanted)["kgpubench_commit"].to_pylist() == [None, None,
                                                                                                "ab12345"]
    # a part written before the schema declared kgpubench_commit: the whole table reads it as null, so does this
    (entry,) = [e for e in filled.files("npb") if e["rows"] == 1]
    path = filled.path / entry["path"]
    pq.write_table(pq.read_table(path).drop_columns(["kgpubench_commit"]), path)
    some = filled.read("npb", verify=False, columns=wanted)
    assert some.equals(filled.read("npb", verify=False).select(wanted))
    assert some["kgpubench_commit"].to_pylist() == [None, None, None]
    assert some["tpb"].to_pylist() == [32, 64, 128]
    assert filled.read("kernels", verify=False, columns=["source"]).num_rows == 0  # a config without parts
    with pytest.raises(ValueError, match="verify=False"):
        filled.read("npb", columns=["source"])  # a part of a file cannot be hash-checked
    with pytest.raises(ValueError, match="'tbp' is not a column of schema npb"):
        filled.read("npb", verify=False, columns=["tbp"])
