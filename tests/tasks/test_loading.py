
import pandas as pd
import pyarrow as pa
import pytest

from kgpubench.errors import SchemaValidationError, UnknownNameError
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.tasks.loading import load_dataset
from kgpubench.testing import valid_row


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "store")
    rows = [valid_row("autotune", params=[{"name": "block_size_x", "value": float(b)}], time_ms_median=t)
            for b, t in ((16, 1.25), (32, 1.5), (64, 2.0))]
    s.merge([write_shard(get_table("autotune").from_rows(rows), tmp_path / "a.parquet")])
    return s


def test_three_formats_hold_the_same_rows(store):
    arrow = load_dataset("autotune", format="arrow", data_dir=store.path)
    df = load_dataset("autotune", format="pandas", data_dir=store.path)
    ds = load_dataset("autotune", data_dir=store.path)
    assert isinstance(arrow, pa.Table) and isinstance(df, pd.DataFrame)
    assert arrow["time_ms_median"].to_pylist() == [1.25, 1.5, 2.0]
    assert df["time_ms_median"].tolist() == [1.25, 1.5, 2.0]
    assert ds["time_ms_median"] == [1.25, 1.5, 2.0]
    assert ds[1]["params"] == [{"name": "block_size_x", "value": 32.0}]


def test_empty_config_loads_as_empty_table_with_columns(store):
    ds = load_dataset("stencil", data_dir=store.path)
    assert ds.num_rows == 0
    assert ds.column_names == get_table("stencil").column_names


def test_unknown_config_and_format_are_clear_errors(store):
    with pytest.raises(UnknownNameError, match="autotune"):
        load_dataset("autotun", data_dir=store.path)
    with pytest.raises(SchemaValidationError, match="format='polars'"):
        load_dataset("autotune", format="polars", data_dir=store.path)


def test_plain_hugging_face_loads_the_store_folder(store, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))
    import datasets

    ds = datasets.load_dataset(str(store.path), "autotune", split="train", cache_dir=str(tmp_path / "hf-cache"))
    ours = load_dataset("autotune", data_dir=store.path)
    assert ds.num_rows == 3
    assert ds["row_id"] == ours["row_id"]
    assert ds.features == ours.features


def test_packaged_store_loads_every_config():
    for config in ("kernels", "npb", "stencil", "autotune"):
        table = load_dataset(config, format="arrow")
        assert table.schema.equals(get_table(config).arrow_schema(), check_metadata=False)


def test_a_data_dir_that_is_not_a_store_is_an_error_not_an_empty_table(tmp_path):
    from kgpubench.errors import DataFileNotFoundError

    with pytest.raises(DataFileNotFoundError, match="no such folder; pass a store folder"):
        load_dataset("npb", data_dir=tmp_path / "typo", format="arrow")
    with pytest.raises(DataFileNotFoundError, match="no manifest.json, so not a dataset store"):
        load_dataset("npb", data_dir=tmp_path, format="arrow")
