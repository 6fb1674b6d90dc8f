"""The shard writer's journal: every finished row survives a crash (only a torn last record is lost), rows
come back on reopen, journals become parquet parts, duplicates keep their first copy, legacy parts load."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq

from kgpubench.measure.output import ShardWriter, read_journal
from kgpubench.schema import get_table


def _row(i: int, run: str = "run-0001") -> dict:
    return {"run_id": run, "status": "ok", "gpu_name": "G", "gpu_vendor": "nvidia", "gpu_architecture": "x",
            "gpu_sm_count": 1, "suite": "regular", "program": "p", "kernel": "k", "variant": "",
            "size_params": [{"name": "n", "value": float(i)}], "grid_x": 1, "grid_y": 1, "grid_z": 1,
            "block_x": 32, "block_y": 1, "block_z": 1, "source": "fake", "time_ms_median": 0.5 + i,
            "collected_at": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc), "kgpubench_version": "0"}


def _parquet_rows(folder):
    return sum(pq.read_table(p).num_rows for p in folder.glob("*.parquet"))


def test_rows_of_a_crashed_writer_come_back_and_become_a_part(tmp_path):
    w = ShardWriter(tmp_path, "kernels", compact_every=100)
    ids = [w.append(_row(i)) for i in range(5)]
    journal = next(tmp_path.glob("j*.arrows"))
    assert [r["row_id"] for r in read_journal(journal)] == ids  # on disk before append returned
    assert _parquet_rows(tmp_path) == 0
    # The process dies here: no close(). The next run opens the folder.
    again = ShardWriter(tmp_path, "kernels")
    assert [r["row_id"] for r in again.rows()] == ids and again.run_id == "run-0001"
    assert again.rows()[3]["time_ms_median"] == 3.5 and again.rows()[3]["size_params"] == [
        {"name": "n", "value": 3.0}]
    assert not list(tmp_path.glob("*.arrows")) and _parquet_rows(tmp_path) == 5  # folded into parquet


def test_a_torn_last_record_loses_only_that_row(tmp_path):
    w = ShardWriter(tmp_path, "kernels", compact_every=100)
    ids = [w.append(_row(i)) for i in range(3)]
    journal = next(tmp_path.glob("j*.arrows"))
    data = journal.read_bytes()
    journal.write_bytes(data[:-40])  # the process died while writing the third row
    again = ShardWriter(tmp_path, "kernels")
    assert [r["row_id"] for r in again.rows()] == ids[:2]
    header_only = tmp_path / "other"
    header_only.mkdir()
    (header_only / "j00000000.arrows").write_bytes(data[:10])  # died before the schema was complete
    assert len(ShardWriter(header_only, "kernels")) == 0


def test_periodic_parts_hold_only_new_rows_and_close_merges(tmp_path):
    w = ShardWriter(tmp_path, "kernels", compact_every=4)
    ids = [w.append(_row(i)) for i in range(10)]
    sizes = sorted(pq.read_table(p).num_rows for p in tmp_path.glob("*.parquet"))
    assert sizes == [4, 4]  # two parts of new rows; rows 9 and 10 are in the journal
    assert len(read_journal(next(tmp_path.glob("j*.arrows")))) == 2
    w.close()
    files = list(tmp_path.glob("*"))
    assert len(files) == 1 and files[0].suffix == ".parquet"
    assert pq.read_table(files[0]).column("row_id").to_pylist() == ids


def test_a_row_in_both_a_part_and_a_journal_is_kept_once(tmp_path):
    w = ShardWriter(tmp_path, "kernels", compact_every=2)
    w.append(_row(1))
    w.append(_row(2))  # -> part c00000001 with both rows, journal deleted
    w.append(_row(3))
    journal = next(tmp_path.glob("j*.arrows"))
    # A crash between writing a part and deleting its journal: the journal still holds rows of the part.
    table = get_table("kernels")
    import pyarrow as pa

    with open(tmp_path / "j00000000.arrows", "wb") as fh, pa.ipc.new_stream(
            fh, table.arrow_schema()) as stream:
        stream.write_table(table.from_rows([_row(1), _row(2)]))
    again = ShardWriter(tmp_path, "kernels")
    assert len(again) == 3 and sorted(r["time_ms_median"] for r in again.rows()) == [1.5, 2.5, 3.5]
    assert not journal.exists() and _parquet_rows(tmp_path) == 3


def test_legacy_one_row_parts_are_read(tmp_path):
    from kgpubench.foundation.files import write_parquet_atomic

    table = get_table("kernels")
    for i in range(3):
        write_parquet_atomic(table.from_rows([_row(i)]), tmp_path / f"p{i:08d}.parquet")
    w = ShardWriter(tmp_path, "kernels")
    assert len(w) == 3
    w.append(_row(7))
    w.close()
    assert [p.name for p in tmp_path.iterdir()] == ["c00000005.parquet"] and _parquet_rows(tmp_path) == 4


def test_validate_merge_and_repeat_readers_see_a_killed_collections_journal(tmp_path):
    """A collector killed at its step limit leaves parts and a journal; read_shard reads both (read-only), drops
    a torn last record and keeps the first copy of a row that sits in a part and in the journal."""
    import shutil

    import pytest

    from kgpubench.errors import DataFileNotFoundError
    from kgpubench.store.shards import is_shard_folder, read_shard, shard_files

    folder = tmp_path / "regular"
    w = ShardWriter(folder, "kernels", compact_every=4)
    ids = [w.append(_row(i)) for i in range(7)]  # rows 0-3 in a part, 4-6 in the journal; then killed
    journal = next(folder.glob("j*.arrows"))
    before = sorted(p.name for p in folder.iterdir())
    config, table = read_shard(folder)
    assert config == "kernels" and table.column("row_id").to_pylist() == ids
    assert table.column("time_ms_median").to_pylist() == [0.5 + i for i in range(7)]
    assert sorted(p.name for p in folder.iterdir()) == before  # reading folds nothing: the folder is untouched
    assert [p.suffix for p in shard_files(folder)] == [".parquet", ".arrows"] and is_shard_folder(folder)
    # a crash between writing a part and deleting its journal: the journal's rows are also in a part
    shutil.copy(journal, folder / "j00000099.arrows")
    journal.write_bytes(journal.read_bytes()[:-40])  # and the first journal's last record is torn
    _config, table = read_shard(folder)
    assert table.column("row_id").to_pylist() == ids  # row 6 survives through the copy, each row once
    # a folder whose only journal never got its header: nothing to read, said so
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "j00000000.arrows").write_bytes(journal.read_bytes()[:10])
    with pytest.raises(DataFileNotFoundError, match="journals without a complete header"):
        read_shard(empty)
    assert not is_shard_folder(tmp_path / "nothing-here")


def test_kgpubench_validate_counts_journal_rows(tmp_path):
    from kgpubench.store.validation import validate_shard

    w = ShardWriter(tmp_path / "s", "kernels", compact_every=100)
    for i in range(3):
        w.append(_row(i))
    config, table, violations = validate_shard(tmp_path / "s")
    # three rows read from the journal alone; fake-source rows never validate as data
    assert (config, table.num_rows) == ("kernels", 3) and {v.column for v in violations} >= {"source"}
