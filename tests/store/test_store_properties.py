"""Property tests (hypothesis): validation never raises on any column content, and merges keep exactly the
rows a simple model of "identity -> first value, conflicts refused" says they keep."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kgpubench.errors import KgpubenchError, MergeConflictError
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.store.validation import validate_table
from kgpubench.testing import valid_row, valid_table

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True),
                    st.text(max_size=8), st.sampled_from(["1.0", "None", "", " x", "nan", "1e308"]))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3),
                   st.lists(st.fixed_dictionaries({"name": st.text(max_size=3), "value": SCALARS}), max_size=2))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(config=st.sampled_from(["kernels", "npb", "stencil", "autotune"]), data=st.data())
def test_validation_reports_never_raises(config, data):
    table = valid_table(config, rows=[valid_row(config), valid_row(config, run_id="other-run")])
    column = data.draw(st.sampled_from(table.column_names))
    values = data.draw(st.lists(VALUES, min_size=2, max_size=2))
    try:
        array = pa.array(values)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        assume(False)
    bad = table.set_column(table.column_names.index(column), column, array)
    found = validate_table(bad, config, file="f.parquet")
    assert all(v.column in bad.column_names and (v.row is None or 0 <= v.row < 2) for v in found)
    assert all("\n" not in str(v) for v in found)
    if array.type == table[column].type and array.equals(table[column].combine_chunks()):
        assert found == []


IDENTITY = st.tuples(st.sampled_from([8, 16, 32]), st.sampled_from(["run-a", "run-b"]))
SHARD = st.dictionaries(IDENTITY, st.sampled_from([1.0, 2.0]), min_size=1, max_size=4)
CALLS = st.lists(st.lists(SHARD, min_size=1, max_size=2), min_size=1, max_size=3)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=CALLS)
def test_merges_keep_first_values_refuse_conflicts_and_never_duplicate(calls):
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "store")
        model: dict[tuple[int, str], float] = {}
        version = 0
        for c, shards in enumerate(calls):
            paths = []
            for s, rows in enumerate(shards):
                table = get_table("npb").from_rows([
                    valid_row("npb", tpb=tpb, run_id=run, time_ms_median=v, time_ms_mean=v, time_ms_min=0.5)
                    for (tpb, run), v in rows.items()])
                paths.append(write_shard(table, Path(tmp) / f"call{c}-shard{s}.parquet"))
            seen: dict[tuple[int, str], float] = {}
            conflict = False
            for rows in shards:
                for key, v in rows.items():
                    conflict |= model.get(key, seen.get(key, v)) != v
                    seen.setdefault(key, v)
            before = snapshot(store.path) if store.path.exists() else {}
            if conflict:
                with pytest.raises(MergeConflictError):
                    store.merge(paths)
                assert (snapshot(store.path) if store.path.exists() else {}) == before
                continue
            report = store.merge(paths)
            new = {k: v for k, v in seen.items() if k not in model}
            assert report.added == ({"npb": len(new)} if new else {})
            version += bool(new)
            model.update(new)
        assert store.version == f"0.{version}.0"
        table = store.read("npb")
        got = list(zip(zip(table["tpb"].to_pylist(), table["run_id"].to_pylist()),
                       table["time_ms_median"].to_pylist()))
        assert len(got) == len(model) and dict(got) == model
        if store.path.exists():
            assert store.validate() == []


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e308, -0.0])
def test_no_float_breaks_the_store_comparison(value, tmp_path):
    store = Store(tmp_path / "s")
    row = valid_row("npb", time_cv=0.05)
    store.merge([write_shard(get_table("npb").from_rows([row]), tmp_path / "a.parquet")])
    other = write_shard(get_table("npb").from_rows([dict(row, time_cv=value)]), tmp_path / "b.parquet")
    with pytest.raises(KgpubenchError):  # refused by validation (non-finite, > bound) or as a conflict
        store.merge([other])


def test_a_params_column_of_a_null_list_and_a_null_item_is_reported_not_raised():
    """Found by the property above in CI: row ids of a list<struct<name, value>> column whose only item is null
    (no name anywhere) raised IndexError instead of leaving that row to the reference."""
    table = valid_table("autotune", rows=[valid_row("autotune"), valid_row("autotune", run_id="other-run")])
    bad = table.set_column(table.column_names.index("params"), "params", pa.array([None, [None]]))
    found = validate_table(bad, "autotune", file="f.parquet")
    assert found and all(v.column in bad.column_names and (v.row is None or 0 <= v.row < 2) for v in found)
