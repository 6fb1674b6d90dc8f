"""Hostile input, issue 44 item 4: a shard whose measured protocol-2 rows do not name the commit that measured
them. Built from real rows of the shipped store (the H200's npb rows), with the commit taken away; validate and
merge refuse it in one line naming the row and the column, and the store is left as it was."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
from cli_helpers import cli

from kgpubench.resources import default_data_dir
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.store.validation import validate_table


def _shipped_protocol_2_rows(n: int = 4) -> pa.Table:
    rows = Store(default_data_dir()).read("npb", verify=False)
    traced = rows.filter(pc.fill_null(pc.equal(rows["measurement_protocol"], 2), False))
    assert traced.num_rows >= n and traced["kgpubench_commit"].null_count == 0  # the shipped rows name theirs
    return traced.slice(0, n)


def _without_commit(table: pa.Table, rows: list[int]) -> pa.Table:
    commits = table["kgpubench_commit"].to_pylist()
    for i in rows:
        commits[i] = None
    i = table.column_names.index("kgpubench_commit")
    return table.set_column(i, "kgpubench_commit", pa.array(commits, pa.string()))


def test_the_shipped_rows_validate_and_lose_validity_with_their_commit():
    table = _shipped_protocol_2_rows()
    assert validate_table(table, "npb") == []
    found = validate_table(_without_commit(table, [1, 3]), "npb")
    assert [(v.row, v.column) for v in found] == [(1, "kgpubench_commit"), (3, "kgpubench_commit")]
    assert "must name the project commit that measured it" in found[0].rule and "KGPUBENCH_COMMIT" in found[0].rule


def test_protocol_1_rows_without_a_commit_stay_mergeable():
    table = _shipped_protocol_2_rows()
    i = table.column_names.index("measurement_protocol")
    older = table.set_column(i, "measurement_protocol", pa.array([None] * table.num_rows, pa.int32()))
    assert validate_table(_without_commit(older, [0, 1, 2, 3]), "npb") == []


def test_merge_refuses_an_untraced_shard_and_leaves_the_store(tmp_path, monkeypatch, capsys):
    store = tmp_path / "store"
    Store(store).merge([write_shard(_shipped_protocol_2_rows(2), tmp_path / "first.parquet")], today="2026-11-29")
    before = {p.name: p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}
    bad = write_shard(get_table("npb").from_rows(_without_commit(_shipped_protocol_2_rows(), [2]).to_pylist()),
                      tmp_path / "untraced.parquet")
    code, out, err = cli(monkeypatch, capsys, "validate", bad)
    assert code != 0 and "row 2, column 'kgpubench_commit'" in out + err and "warning" not in err
    code, _out, err = cli(monkeypatch, capsys, "merge", bad, "--into", store)
    assert code != 0 and "row 2, column 'kgpubench_commit'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert {p.name: p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()} == before
    shutil.rmtree(store)
