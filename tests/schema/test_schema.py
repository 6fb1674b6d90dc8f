import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgpubench.errors import UnknownNameError
from kgpubench.schema import TABLES, Column, Table, get_table, row_id_of
from kgpubench.store.shards import read_shard, write_shard
from kgpubench.testing import valid_row, valid_table


@pytest.mark.parametrize("config", sorted(TABLES))
def test_written_file_schema_equals_declared_schema(tmp_path, config):
    path = write_shard(valid_table(config), tmp_path / "s.parquet")
    on_disk = pq.read_schema(path)
    declared = get_table(config).arrow_schema()
    assert on_disk.equals(declared, check_metadata=False)
    assert on_disk.metadata[b"kgpubench"] == declared.metadata[b"kgpubench"]
    name, table = read_shard(path)
    assert name == config
    assert table.to_pylist()[0]["gpu_name"] == "Test GPU"


# Tables of upstream facts with no times at all (CLBlast keeps only the winning configuration), and tables with
# their own timing columns (NeuSight's `operators`: one upstream statistic, no median/min/std, no power;
# gpuperfpredict's `profiles`: one profiled launch, no repeats, no power; MIOpen's `convolutions`: the one figure
# Find() stored per solver).
TIMELESS = {"tunings", "operators", "profiles", "convolutions", "llm_operators"}


@pytest.mark.parametrize("config", sorted(TABLES))
def test_every_table_carries_the_common_columns(config):
    names = set(get_table(config).column_names)
    timed = () if config in TIMELESS else ("time_ms_median", "time_ms_min", "time_ms_mean", "time_ms_std", "repeats",
                                           "power_w_avg", "energy_j", "power_window_ms")
    for needed in ("row_id", "run_id", "status", "gpu_name", "gpu_sm_count", "gpu_memory_bandwidth_gbs",
                   "gpu_l2_bytes", "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", *timed,
                   "source", "collector_version", "toolchain_version", "driver_version", "collected_at"):
        assert needed in names, needed
    if config == "operators":
        assert {"time_ms", "calls_timed", "calls_kept", "time_statistic", "timed_unit"} <= names
    if config == "profiles":  # single profiled launches: one time, no power
        assert get_table(config).column("repeats").max == 1
        assert {"time_ms", "timed_unit"} <= names and not names & {"time_ms_median", "power_w_avg"}
    if config == "llm_operators":  # one mean per call, the framework and kernel source in the key
        assert {"time_ms", "time_statistic", "framework", "kernel_source"} <= names
        assert {"framework", "framework_version", "kernel_source", "dtype"} <= set(get_table(config).key_columns)
    if config == "convolutions":  # a product inferred from the ISA and CU count says so, and they are in the key
        assert {"time_ms", "time_statistic", "gpu_inferred_from"} <= names
        assert {"gpu_arch", "gpu_compute_units", "solver", "direction"} <= set(get_table(config).key_columns)
    assert "gpu_name" in get_table(config).key_columns


def test_row_id_is_hash_of_key_columns_only():
    a = valid_row("autotune")
    b = valid_row("autotune", time_ms_median=5.0, run_id="other-run")
    c = valid_row("autotune", params=[{"name": "block_size_x", "value": 32.0}])
    ids = get_table("autotune").from_rows([a, b, c])["row_id"].to_pylist()
    assert ids[0] == ids[1]
    assert ids[0] != ids[2]
    assert len(ids[0]) == 16 and int(ids[0], 16) >= 0


def test_row_id_is_stable_and_order_free():
    key = {"gpu_name": "X", "kernel": "k", "problem_size": "1", "params": [{"name": "b", "value": 2.0},
                                                                           {"name": "a", "value": 1.0}]}
    reordered = dict(reversed(list(key.items())))
    reordered["params"] = list(reversed(key["params"]))
    assert row_id_of("autotune", key) == row_id_of("autotune", reordered)
    # A whole float and the same int hash alike; 1.5 does not.
    assert row_id_of("t", {"v": 2.0}) == row_id_of("t", {"v": 2})
    assert row_id_of("t", {"v": 1.5}) != row_id_of("t", {"v": 1})


def test_unknown_config_suggests_the_close_name():
    with pytest.raises(UnknownNameError, match="did you mean 'kernels'|Did you mean 'kernels'"):
        get_table("kernel")


def test_from_rows_refuses_unknown_columns():
    with pytest.raises(ValueError, match="unknown columns \\['bogus'\\]"):
        get_table("npb").from_rows([valid_row("npb", bogus=1)])


def test_declaration_errors_are_caught_early():
    with pytest.raises(ValueError, match="unknown type"):
        Column("x", "float128", "bad")
    with pytest.raises(ValueError, match="twice"):
        Table("t", "1.0.0", "d", (Column("a", "int64", "a"), Column("a", "int64", "a")))


def test_timestamps_are_utc_microseconds():
    table = valid_table("stencil", collected_at=dt.datetime(2026, 3, 4, 5, 6, 7, 123456, tzinfo=dt.timezone.utc))
    assert table.schema.field("collected_at").type == pa.timestamp("us", tz="UTC")
    assert table["collected_at"][0].as_py().microsecond == 123456


def test_static_feature_columns_follow_the_features_package():
    from kgpubench.features.isa import MIX_CLASSES
    from kgpubench.schema.common import MIX_CLASSES as DECLARED
    from kgpubench.schema.common import static_feature_columns

    assert DECLARED == MIX_CLASSES
    names = {c.name for c in static_feature_columns()}
    for config in ("kernels", "stencil"):
        assert names <= set(get_table(config).column_names), config


def test_extracted_features_fill_and_validate_kernels_and_stencil_rows():
    from pathlib import Path

    from kgpubench.errors import ToolchainError
    from kgpubench.features import extract_features
    from kgpubench.store.validation import validate_table

    source = Path(__file__).parents[1] / "features" / "data" / "kernels.cu"
    try:
        feats = extract_features(source, "tiled_matmul", arch="sm_80", grid=(8, 8, 1), block=(16, 16, 1),
                                 sizes={"n": 128}, static_counts=True, sm_count=108)
    except ToolchainError as exc:  # pragma: no cover - machines without nvcc/NVRTC
        pytest.skip(str(exc))
    cols = feats.as_columns()
    assert set(cols) <= set(get_table("kernels").column_names)
    for config in ("kernels", "stencil"):
        decl = get_table(config)
        row = valid_row(config, **{k: v for k, v in cols.items() if k in decl.column_names})
        table = decl.from_rows([row])
        assert validate_table(table, config) == []
        assert table["shmem_words"][0].as_py() * 4 == table["shmem_bytes"][0].as_py() > 0
        assert table["mix_sync"][0].as_py() == table["ls"][0].as_py() > 0
