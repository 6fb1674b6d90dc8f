"""A store as a Hugging Face dataset: plain ``datasets.load_dataset(<store>, <config>)`` offline gives the rows
``kgpubench.load_dataset`` gives for every table (an empty one stops with a message saying so), the README
declares every config with its files and features, the layout check finds what the Hub could not read, and
the upload sends exactly the listed files (to a fake API: no upload in tests)."""

from __future__ import annotations

import datasets
import pandas as pd
import pytest
from task_fixtures import autotune_table, kernels_table, make_store, stencil_table

import kgpubench
from kgpubench.errors import SchemaValidationError
from kgpubench.resources import default_data_dir
from kgpubench.schema import TABLES
from kgpubench.store.hub import check_layout, empty_data_files, hub_configs, push_to_hub, readme_yaml, upload_files
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    """kernels, stencil and autotune rows (autotune in two parts, from two merges); npb empty."""
    root = tmp_path_factory.mktemp("hub")
    s = make_store(root / "store", kernels_table(), stencil_table(), autotune_table(gpus=("GPU A",)))
    shard = write_shard(autotune_table(gpus=("GPU B",)), root / "more.parquet")
    s.merge([shard], today="2026-01-02")
    return s


@pytest.fixture
def offline(monkeypatch, tmp_path):
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "hf-cache"


def _same(plain: datasets.Dataset, ours: datasets.Dataset) -> None:
    assert plain.features == ours.features
    a, b = plain.to_pandas(), ours.to_pandas()
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("config", ["kernels", "stencil", "autotune"])
def test_plain_datasets_gives_the_rows_kgpubench_gives(store, offline, config):
    plain = datasets.load_dataset(str(store.path), config, cache_dir=str(offline))
    assert list(plain) == ["train"]
    ours = kgpubench.load_dataset(config, data_dir=store.path)
    assert plain["train"].num_rows == store.rows(config) == ours.num_rows > 0
    _same(plain["train"], ours)


def test_autotune_spans_two_parts_in_manifest_order(store):
    files = [f["path"] for f in store.files("autotune")]
    assert len(files) == 2
    meta = readme_yaml(store)
    entry = next(c for c in meta["configs"] if c["config_name"] == "autotune")
    assert entry["data_files"] == [{"split": "train", "path": files}]


def test_an_empty_table_is_declared_and_says_so(store, offline):
    meta = readme_yaml(store)
    assert [c["config_name"] for c in meta["configs"]] == sorted(TABLES) == [
        "autotune", "convolutions", "kernels", "llm_operators", "npb", "operators", "profiles", "programs", "stencil",
        "tunings"]
    npb = next(c for c in meta["configs"] if c["config_name"] == "npb")
    assert npb["data_files"][0]["path"] == [empty_data_files("npb")]
    info = next(i for i in meta["dataset_info"] if i["config_name"] == "npb")
    assert [f["name"] for f in info["features"]] == TABLES["npb"].arrow_schema().names
    with pytest.raises(FileNotFoundError, match="NO ROWS YET - the npb table of this store is empty"):
        datasets.load_dataset(str(store.path), "npb", cache_dir=str(offline))
    ours = kgpubench.load_dataset("npb", data_dir=store.path)
    assert ours.num_rows == 0 and ours.column_names == TABLES["npb"].arrow_schema().names


@pytest.mark.slow
def test_packaged_kernels_load_the_same_both_ways(offline):
    packaged = Store(default_data_dir())
    assert readme_yaml(packaged)["configs"] == hub_configs(packaged)[0]
    plain = datasets.load_dataset(str(packaged.path), "kernels", cache_dir=str(offline))["train"]
    assert plain.num_rows == packaged.rows("kernels") > 1000
    _same(plain, kgpubench.load_dataset("kernels"))


def test_layout_is_ready_and_the_check_finds_problems(store, tmp_path):
    assert check_layout(store) == []
    files = upload_files(store)
    assert files[:3] == ["README.md", "croissant.json", "manifest.json"]
    assert sorted(files[3:]) == sorted(f["path"] for c in store.configs() for f in store.files(c))
    import shutil

    copy = Store(tmp_path / "copy")
    shutil.copytree(store.path, copy.path)
    readme = copy.path / "README.md"
    readme.write_text(readme.read_text().replace("config_name: npb", "config_name: npb2"))
    (copy.path / "croissant.json").unlink()
    problems = check_layout(copy)
    assert any("README.md: its `configs` do not list" in p for p in problems)
    assert any(p.endswith("croissant.json: missing; `kgpubench validate --repair` regenerates it.") for p in problems)


class FakeApi:
    def __init__(self) -> None:
        self.calls = []

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))

    def upload_folder(self, **kw):
        self.calls.append(("upload_folder", kw))


def test_push_sends_the_listed_files_only(store, tmp_path):
    (store.path / ".kgpubench.lock").touch()
    api = FakeApi()
    sent = push_to_hub(store, "someone/kgpubench", api=api)
    assert sent == upload_files(store)
    assert api.calls[0] == ("create_repo", "someone/kgpubench",
                            {"repo_type": "dataset", "private": False, "exist_ok": True})
    kw = api.calls[1][1]
    assert kw["allow_patterns"] == sent and kw["folder_path"] == str(store.path) and kw["repo_type"] == "dataset"
    assert kw["commit_message"] == f"kgpubench dataset version {store.version}"
    broken = tmp_path / "broken"
    import shutil

    shutil.copytree(store.path, broken)
    (broken / "README.md").unlink()
    with pytest.raises(SchemaValidationError, match="not ready to upload: .*README.md: missing"):
        push_to_hub(broken, "someone/kgpubench", api=FakeApi())


@pytest.mark.parametrize("which", ["shipped", "test store", "empty"])
def test_the_readme_yaml_is_the_text_pyyaml_s_own_safe_dumper_writes(which, store, tmp_path, monkeypatch):
    """The README header comes from libyaml's emitter when PyYAML has it: the same text, byte for byte, as the
    pure-Python SafeDumper gives (the shipped store's committed README included; an empty store's long
    "no rows yet" file names too), so that where the header is written does not change what it says."""
    import yaml

    from kgpubench.store import card

    chosen = {"shipped": Store(default_data_dir()), "test store": store, "empty": Store(tmp_path / "none")}[which]
    assert card.YAML_DUMPER is (yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper)
    fast = card.hf_header(chosen)
    monkeypatch.setattr(card, "YAML_DUMPER", yaml.SafeDumper)
    assert fast == card.hf_header(chosen)
    if which == "shipped":
        assert (chosen.path / "README.md").read_text().startswith(fast)
