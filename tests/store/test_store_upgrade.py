"""Old parts rewritten with every declared column; the shipped parts validate one by one and read in mlcroissant."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgpubench.resources import default_data_dir
from kgpubench.schema import TABLES
from kgpubench.store.checks import validate_paths
from kgpubench.store.store import Store
from kgpubench.store.upgrade import stale_parts, upgrade


def validate_part(path):
    (found,) = validate_paths([path]).values()
    return found


def _old_store(tmp_path) -> Store:
    """A copy of the shipped store whose first kernels part (the protocol-1 rows) lacks the columns kernels 1.5.0
    added after 1.2.0."""
    root = tmp_path / "data"
    shutil.copytree(default_data_dir(), root)
    store = Store(root)
    entry = store.files("kernels")[0]
    path = root / entry["path"]
    old = pq.read_table(path)
    drop = ["measurement_protocol", "timing_method", "kgpubench_commit", "gpu_tdp_w"]
    path.unlink()
    pq.write_table(old.drop_columns(drop), tmp_path / "old.parquet")
    digest = hashlib.sha256((tmp_path / "old.parquet").read_bytes()).hexdigest()
    shutil.move(tmp_path / "old.parquet", root / "kernels" / f"part-{digest[:16]}.parquet")
    manifest = json.loads(store.manifest_path.read_text())
    manifest["configs"]["kernels"]["files"][0].update(sha256=digest, path=f"kernels/part-{digest[:16]}.parquet")
    store.manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return store


@pytest.mark.slow
def test_upgrade_adds_the_missing_columns_and_changes_no_row(tmp_path):
    store = _old_store(tmp_path)
    before = store.read("kernels")
    assert list(stale_parts(store)) == ["kernels"]
    assert any("required column is missing" in str(v) for v in validate_part(
        store.path / store.files("kernels")[0]["path"]))
    old_rows = pq.read_metadata(store.path / store.files("kernels")[0]["path"]).num_rows
    report = upgrade(store, today="2026-11-25")
    assert report.parts == {"kernels": 1} and report.rows == {"kernels": old_rows} and old_rows < before.num_rows
    assert report.version_after == store.version != report.version_before
    assert stale_parts(store) == {}
    entries = store.files("kernels")
    assert all(validate_part(store.path / entry["path"]) == [] for entry in entries)
    assert store.read("kernels").equals(before)  # the same rows, value for value
    assert sorted(p.name for p in (store.path / "kernels").glob("*.parquet")) == sorted(
        entry["path"].split("/")[1] for entry in entries)  # the old part replaced, no file left behind
    assert store.manifest()["changelog"][-1]["added_rows"] == {}
    assert upgrade(store).parts == {}  # a second upgrade has nothing to do


@pytest.mark.slow
@pytest.mark.parametrize("config", sorted(TABLES))
def test_every_shipped_part_validates_on_its_own(config):
    store = Store(default_data_dir())
    for entry in store.files(config):
        path = store.path / entry["path"]
        assert validate_part(path) == [], path
        assert set(TABLES[config].column_names) <= set(pq.read_schema(path).names)


@pytest.mark.slow
def test_every_record_set_of_the_shipped_croissant_reads_in_mlcroissant():
    mlc = pytest.importorskip("mlcroissant")
    store = Store(default_data_dir())
    doc = json.loads((store.path / "croissant.json").read_text())
    ds = mlc.Dataset(jsonld=str(store.path / "croissant.json"))
    for record_set in doc["recordSet"]:
        name = record_set.get("@id") or record_set["name"]
        if not store.files(name):
            continue
        (first,) = itertools.islice(ds.records(name), 1)
        table = pa.Table.from_pylist([{k.split("/", 1)[1]: v for k, v in first.items()}])
        assert set(TABLES[name].column_names) <= set(table.column_names), name
