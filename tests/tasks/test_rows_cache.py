"""``current_rows_sha256``'s entries on disk (``rows/`` of the cache root): a reuse check reads no row again while
the task, its store files, the library's code and the packages are the same, and reads them again when any of those
changes or the entry does not read back as one hash."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from task_fixtures import autotune_table, make_store

from kgpubench.store.store import Store
from kgpubench.tasks import data as D
from kgpubench.tasks import get_task

TASK = "autotune-config"


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    """A store, an empty cache root, and a counter of the config reads (the in-process caches emptied)."""
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    store = make_store(tmp_path / "store", autotune_table())
    reads: list[str] = []
    real = Store.read

    def counted(self, config, **kwargs):
        reads.append(config)
        return real(self, config, **kwargs)

    monkeypatch.setattr(Store, "read", counted)

    def forget():
        monkeypatch.setattr(D, "_ROWS", {})
        monkeypatch.setattr(D, "_TABLES", {})

    forget()
    return store, reads, forget, tmp_path / "cache" / "rows"


def test_a_second_process_reads_the_hash_back_and_no_row(fresh):
    store, reads, forget, folder = fresh
    task = get_task(TASK)
    first = D.current_rows_sha256(task, store.path)
    assert reads == ["autotune"] and len(first) == 64
    (entry,) = folder.glob(f"{TASK}-*.json")
    assert json.loads(entry.read_text()) == {"rows_sha256": first}
    forget()  # another process: nothing kept in memory
    assert D.current_rows_sha256(task, store.path) == first and reads == ["autotune"]
    # the very hash the rows give
    table = store.read("autotune")
    assert D.rows_sha256(task, D.with_scoring_columns(task, table, D.select(task, table).rows)) == first


def test_other_code_reads_the_rows_again(fresh, monkeypatch):
    store, reads, forget, folder = fresh
    task = get_task(TASK)
    first = D.current_rows_sha256(task, store.path)
    forget()
    real = D.select
    monkeypatch.setattr(D, "select", lambda t, table: replace(real(t, table),
                                                               rows=real(t, table).rows.slice(1)))
    monkeypatch.setattr(D, "code_sha256", lambda: "a new selection rule")
    second = D.current_rows_sha256(task, store.path)
    assert reads == ["autotune", "autotune"] and second != first and len(list(folder.glob("*.json"))) == 2


@pytest.mark.parametrize("bad", ['{"rows_sha256": "abc"}', "[1]", "not json", '{"rows_sha256": "' + "A" * 64 + '"}',
                                 '{"rows_sha256": null, "x": 1}'])
def test_an_entry_that_is_not_one_hash_is_computed_again_and_rewritten(fresh, bad):
    store, reads, forget, folder = fresh
    task = get_task(TASK)
    first = D.current_rows_sha256(task, store.path)
    (entry,) = folder.glob("*.json")
    entry.write_text(bad)
    forget()
    assert D.current_rows_sha256(task, store.path) == first and reads == ["autotune", "autotune"]
    assert json.loads(entry.read_text()) == {"rows_sha256": first}


def test_an_unwritable_cache_costs_a_read_and_nothing_else(fresh, monkeypatch, tmp_path):
    store, reads, forget, _ = fresh
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(blocker))  # a file where the folder would be
    task = get_task(TASK)
    first = D.current_rows_sha256(task, store.path)
    forget()
    assert D.current_rows_sha256(task, store.path) == first and reads == ["autotune", "autotune"]
