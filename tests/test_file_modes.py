"""Files written for others get the mode any file of the user gets (0644 under umask 022), not the 0600 of a
temp file: results, shards, exports, board pages."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pyarrow as pa
import pytest

from kgpubench.foundation.files import atomic_write_bytes, file_mode, write_parquet_atomic


@pytest.fixture
def umask():
    old = os.umask(0o022)

    def set_mask(mask: int) -> None:
        os.umask(mask)
    yield set_mask
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_atomic_writes_follow_the_umask(tmp_path, umask):
    atomic_write_bytes(tmp_path / "a.json", b"{}")
    write_parquet_atomic(pa.table({"x": [1]}), tmp_path / "a.parquet")
    assert _mode(tmp_path / "a.json") == 0o644 and _mode(tmp_path / "a.parquet") == 0o644
    umask(0o027)
    atomic_write_bytes(tmp_path / "b.json", b"{}")
    assert _mode(tmp_path / "b.json") == 0o640
    atomic_write_bytes(tmp_path / "a.json", b"[]")  # a replaced file takes the mode of the new write
    assert _mode(tmp_path / "a.json") == 0o640


def test_file_mode_reads_the_umask_without_changing_it(umask):
    umask(0o077)
    assert file_mode() == 0o600
    umask(0o002)
    assert file_mode() == 0o664
    assert os.umask(0o022) == 0o002  # still what the test set


def test_exported_files_are_readable_by_others(tmp_path, umask):
    from task_fixtures import autotune_table, make_store

    from kgpubench.tasks.export import export_t4

    store = make_store(tmp_path / "store", autotune_table())
    written = export_t4("autotune", tmp_path / "out", data_dir=store.path)
    assert written and {_mode(p) for p in written} == {0o644}
    shards = list((tmp_path / "store").rglob("*.parquet"))
    assert shards and {_mode(p) for p in shards} == {0o644}


def test_the_two_caches_write_files_with_the_users_mode_not_0600(tmp_path, umask):
    """The features' disk cache and the collector's compile cache wrote their entries 0600 (mkstemp)."""
    from kgpubench.features.toolchain import DiskCache
    from kgpubench.measure import compile_cache

    cache = DiskCache(tmp_path / "features")
    cache.put("ab" + "0" * 62, {"x": 1})
    (entry,) = (tmp_path / "features").rglob("*.json")
    assert _mode(entry) == 0o644 and cache.get("ab" + "0" * 62) == {"x": 1}
    compile_cache._write_atomic(tmp_path / "k.cubin", b"\x7fELF")
    assert _mode(tmp_path / "k.cubin") == 0o644 and (tmp_path / "k.cubin").read_bytes() == b"\x7fELF"
    umask(0o077)
    compile_cache._write_atomic(tmp_path / "private.ptx", b"//")
    assert _mode(tmp_path / "private.ptx") == 0o600  # a stricter umask is still honoured
