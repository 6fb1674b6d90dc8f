"""The table-at-once row ids (:func:`kgpubench.schema.arrow_row_ids`, used by ``Table.from_rows`` and validation)
are byte for byte the stored ids on every row of every packaged config (the promise that no existing row id
moved), and those of the reference :func:`kgpubench.schema.row_id_of` on a fixed sample of them and on
generated rows with floats, ints, None, unicode names and parameter lists in and out of order."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgpubench.resources import default_data_dir as data_dir
from kgpubench.schema import TABLES, arrow_row_id_array, arrow_row_ids, get_table, row_id_of, row_ids
from kgpubench.testing import valid_row


def _packaged(config: str) -> pa.Table | None:
    files = sorted((data_dir() / config).rglob("*.parquet"))
    if not files:
        return None
    return pa.concat_tables([pq.read_table(f) for f in files], promote_options="default")


REFERENCE_SAMPLE = 20_000


@pytest.mark.slow
@pytest.mark.parametrize("config", sorted(TABLES))
def test_fast_row_ids_equal_the_stored_ids_on_every_packaged_row_and_the_reference_on_a_sample(config):
    data = _packaged(config)
    if data is None:
        pytest.skip(f"no packaged rows of {config}")
    decl = get_table(config)
    fast = arrow_row_ids(decl, data)  # the whole table at once, as validation computes them
    assert fast == data["row_id"].to_pylist()  # the stored ids: nothing moved
    # The one-row-at-a-time reference on a fixed sample (every step-th row, the last too): the whole table took
    # about 100 s of the suite; equality on every row is held by the stored ids above.
    step = max(1, data.num_rows // REFERENCE_SAMPLE)
    sample = sorted({*range(0, data.num_rows, step), data.num_rows - 1})
    keys = data.select(decl.key_columns).take(sample).to_pylist()
    assert [fast[i] for i in sample] == row_ids(decl, keys)


def test_a_known_row_id_by_hand():
    import hashlib

    row = valid_row("autotune", params=[{"name": "b", "value": 0.5}, {"name": "a", "value": 32.0}])
    decl = get_table("autotune")
    table = decl.from_rows([row])
    key = {k: row.get(k) for k in decl.key_columns}
    # sorted keys; params sorted by name; whole floats as ints, other floats as their repr text
    payload = ('["autotune",[["gpu_name",' + f'"{key["gpu_name"]}"' + '],["kernel",' + f'"{key["kernel"]}"' +
               '],["params",[["a",32],["b","0.5"]]],["params_text",null],["problem_size",' +
               f'"{key["problem_size"]}"' + ']]]')
    assert table["row_id"][0].as_py() == hashlib.sha256(payload.encode()).hexdigest()[:16]
    assert table["row_id"][0].as_py() == row_id_of("autotune", key)


NAMES = st.text(alphabet=st.sampled_from("ab_xyzé\u4e2d\"\\"), min_size=1, max_size=4)
NUMBERS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**53, 2**53).map(float),
                    st.sampled_from([0.0, -0.0, 0.1, 1e300, 5e-324, 2.0**60]))
PARAMS = st.one_of(st.none(), st.lists(st.fixed_dictionaries({"name": NAMES, "value": st.one_of(st.none(), NUMBERS)}),
                                       max_size=5))
TEXT_PARAMS = st.one_of(st.none(), st.lists(st.fixed_dictionaries({"name": NAMES, "value": st.one_of(
    st.none(), st.text(max_size=5))}), max_size=3))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(PARAMS, TEXT_PARAMS, st.sampled_from(["k", "k2", "ké"]),
                               st.one_of(st.none(), st.sampled_from(["64", "4096x4096"]))), min_size=1, max_size=12))
def test_generated_autotune_rows(rows):
    decl = get_table("autotune")
    dicts = [valid_row("autotune", params=p, params_text=t, kernel=k, problem_size=s) for p, t, k, s in rows]
    table = decl.from_rows(dicts)
    reference = [row_id_of("autotune", {k: r.get(k) for k in decl.key_columns}) for r in dicts]
    assert table["row_id"].to_pylist() == reference
    assert arrow_row_ids(decl, table) == reference


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.tuples(st.one_of(st.none(), st.integers(1, 2**40)), st.one_of(st.none(), NUMBERS),
                                 st.one_of(st.none(), st.booleans())), min_size=1, max_size=10))
def test_generated_scalar_key_types(values):
    """int, float (nan, inf, -0.0, whole and not), bool and null keys in a made-up table."""
    from kgpubench.schema import Column, Table

    decl = Table("made_up", "1.0.0", "test", (
        Column("row_id", "string", "id"), Column("i", "int64", "int key", key=True),
        Column("f", "float64", "float key", key=True), Column("b", "bool", "bool key", key=True),
        Column("l", "list<float64>", "list key", key=True)))
    dicts = [{"i": i, "f": f, "b": b, "l": None if f is None else [f, 1.0]} for i, f, b in values]
    table = decl.from_rows(dicts)
    reference = [row_id_of("made_up", {k: r.get(k) for k in decl.key_columns}) for r in dicts]
    assert table["row_id"].to_pylist() == reference


def test_a_large_table_is_hashed_a_slice_at_a_time_with_the_same_ids(monkeypatch):
    from kgpubench.schema import _rowids

    decl = get_table("operators")
    rows = [valid_row("operators", dim_b=b, gpu_name=g) for b in range(1, 6) for g in ("A", "B")]
    table = decl.from_rows(rows)
    whole = arrow_row_ids(decl, table)
    monkeypatch.setattr(_rowids, "_CHUNK_ROWS", 3)  # 10 rows: slices of 3, 3, 3 and 1
    assert arrow_row_ids(decl, table) == whole == row_ids(decl, rows)


@pytest.mark.parametrize("limit", [1, 2, 1 << 30])
def test_merging_few_valued_keys_gives_the_same_ids(monkeypatch, limit):
    """Adjacent scalar keys are merged into one fragment per value combination while the combinations are few;
    each merge limit (every key alone, pairs, the default) gives the reference's ids."""
    from kgpubench.schema import _rowids

    decl = get_table("operators")
    rows = [valid_row("operators", dim_b=b, dim_m=m, gpu_name=g) for b in (1, 2, 3) for m in (None, 7, 8)
            for g in ("A", "B")] * 2
    reference = row_ids(decl, rows)
    monkeypatch.setattr(_rowids, "_GROUP_TEXTS", limit)
    table = decl.from_rows(rows)
    assert table["row_id"].to_pylist() == reference
    assert arrow_row_id_array(decl, table).to_pylist() == reference
    assert len(set(reference)) == len(rows) // 2  # each row twice: equal keys, equal ids


def test_texts_hashed_from_coded_groups_are_the_whole_texts_hashed():
    """A row's text given as coded groups (one, two: the one-loop case, three) hashes as the text written out."""
    import hashlib

    import numpy as np

    from kgpubench.schema._rowids import group_digests, hashed_groups

    g1 = (np.array([1, 0, 1, 1]), [b'["t",[["a",1]', b'["t",[["a",2]'])
    g2 = (np.array([0, 0, 2, 1]), [b',["b","x"]', b',["b","y"]', b',["b",null]'])
    g3 = (np.array([0, 0, 0, 0]), [b"]]"])
    rows = [b'["t",[["a",2],["b","x"]', b'["t",[["a",1],["b","x"]', b'["t",[["a",2],["b",null]',
            b'["t",[["a",2],["b","y"]']  # by hand, row by row
    for groups in ([g1], [g1, g2], [g1, g2, g3]):
        texts = [b"".join(r for r in parts) for parts in zip(*[[t[c] for c in codes] for codes, t in groups])]
        assert all(row.startswith(text) or text.startswith(row) for row, text in zip(rows, texts))
        want = [hashlib.sha256(t).digest() for t in texts]
        assert group_digests(groups) == b"".join(want)
        assert [h.digest() for h in hashed_groups(groups)] == want
    assert group_digests([g1, g2]) == b"".join(hashlib.sha256(t).digest() for t in rows)
