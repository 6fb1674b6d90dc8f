"""croissant.json: generated from the schema and the manifest, valid for mlcroissant (no error, no warning),
typed and described fields per table, every part with its sha256, licence, citation and RAI fields; records
read through mlcroissant are the store's rows; kept up to date by merge and checked by validate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from task_fixtures import autotune_table, kernels_table, make_store

import kgpubench
from kgpubench.resources import default_data_dir
from kgpubench.schema import TABLES
from kgpubench.store.croissant import RAI, render
from kgpubench.store.store import Store

mlc = pytest.importorskip("mlcroissant", reason="the croissant extra (make test installs it)")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    """kernels and autotune rows; npb and stencil empty."""
    return make_store(tmp_path_factory.mktemp("croissant") / "store", kernels_table(), autotune_table())


@pytest.fixture(scope="module")
def dataset(store):
    return mlc.Dataset(jsonld=str(store.path / "croissant.json"))


@pytest.mark.slow
def test_merge_writes_a_valid_document(store, dataset):
    issues = dataset.metadata.ctx.issues
    assert not issues.errors and not issues.warnings
    assert (store.path / "croissant.json").read_text() == render(store)
    doc = json.loads((store.path / "croissant.json").read_text())
    assert doc["license"] == "https://creativecommons.org/licenses/by/4.0/" and "@misc{kgpubench" in doc["citeAs"]
    assert doc["version"] == store.version == "0.1.0" and doc["datePublished"] == "2026-01-01"
    for key in ("rai:dataCollection", "rai:dataLimitations", "rai:dataBiases", "rai:personalSensitiveInformation",
                "rai:dataUseCases", "rai:dataSocialImpact"):
        assert doc[key] == RAI[key] and len(doc[key]) > 40


def test_record_sets_fields_and_types_follow_the_schema(store):
    doc = json.loads((store.path / "croissant.json").read_text())
    sets = {r["name"]: r for r in doc["recordSet"]}
    assert sorted(sets) == sorted(TABLES)
    for name, decl in TABLES.items():
        assert [f["name"] for f in sets[name]["field"]] == [c.name for c in decl.columns]
        assert all(f["description"] for f in sets[name]["field"])
    kernels = {f["name"]: f for f in sets["kernels"]["field"]}
    assert kernels["row_id"]["dataType"] == "sc:Text" and kernels["gpu_sm_count"]["dataType"] == "sc:Integer"
    assert kernels["time_ms_median"]["dataType"] == "sc:Float" and "Unit: ms." in kernels["time_ms_median"][
        "description"]
    assert kernels["collected_at"]["dataType"] == "sc:DateTime"
    assert kernels["size_params"]["repeated"] is True
    assert [s["name"] for s in kernels["size_params"]["subField"]] == ["name", "value"]
    assert [s["dataType"] for s in kernels["size_params"]["subField"]] == ["sc:Text", "sc:Float"]


def test_distribution_lists_every_part_with_its_sha256(store):
    doc = json.loads((store.path / "croissant.json").read_text())
    objects = {d["contentUrl"]: d for d in doc["distribution"] if d["@type"] == "cr:FileObject"}
    listed = [f["path"] for c in store.configs() for f in store.files(c)]
    assert sorted(objects) == sorted(listed) and len(listed) == 2
    for path, obj in objects.items():
        assert obj["sha256"] == hashlib.sha256((store.path / path).read_bytes()).hexdigest()
    sets = [d for d in doc["distribution"] if d["@type"] == "cr:FileSet"]
    assert sorted(d["includes"] for d in sets) == sorted(f"{c}/part-*.parquet" for c in TABLES)


@pytest.mark.slow
def test_records_read_through_mlcroissant_are_the_rows(store, dataset):
    ours = kgpubench.load_dataset("kernels", data_dir=store.path, format="pandas").set_index("row_id")
    records = list(dataset.records(record_set="kernels"))
    assert len(records) == len(ours) > 0
    ids = [r["kernels/row_id"].decode() for r in records]
    assert sorted(ids) == sorted(ours.index)
    for r in records[:5]:
        row = ours.loc[r["kernels/row_id"].decode()]
        assert r["kernels/time_ms_median"] == row["time_ms_median"]
        assert r["kernels/kernel"].decode() == row["kernel"]
        pairs = [(p["kernels/size_params/name"].decode(), p["kernels/size_params/value"])
                 for p in r["kernels/size_params"]]
        assert pairs == [(p["name"], p["value"]) for p in row["size_params"]]
    assert list(dataset.records(record_set="npb")) == []


def test_validate_reports_a_stale_document_and_repair_rewrites_it(store, tmp_path):
    import shutil

    copy = Store(tmp_path / "copy")
    shutil.copytree(store.path, copy.path)
    path = copy.path / "croissant.json"
    path.write_text(path.read_text().replace('"version": "0.1.0"', '"version": "9.9.9"'))
    assert [Path(v.file).name for v in copy.validate()] == ["croissant.json"]
    assert copy.repair() == [f"regenerated {path}"]
    assert path.read_text() == render(store).replace(str(store.path), str(copy.path))


@pytest.mark.slow
def test_the_packaged_document_is_current():
    packaged = Store(default_data_dir())
    assert (packaged.path / "croissant.json").read_text() == render(packaged)
    issues = mlc.Dataset(jsonld=str(packaged.path / "croissant.json")).metadata.ctx.issues
    assert not issues.errors and not issues.warnings
