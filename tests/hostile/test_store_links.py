"""Hostile inputs, issue 30 items 4 and 7: a store whose config folder is a symbolic link into another store, and
a merge retried after a kill that landed after its commit.

Before: ``validate --repair`` deleted the other store's parts as orphans of this one; a retry said "merged
nothing new" and left a stale README, croissant.json and ``.tmp`` files until ``--repair``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import cli

from kgpubench.errors import ManifestError
from kgpubench.schema import get_table
from kgpubench.store import store as store_mod
from kgpubench.store.shards import write_shard
from kgpubench.store.store import Store
from kgpubench.testing import valid_row


def _store(tmp_path: Path, name: str, tpbs) -> Store:
    shard = write_shard(get_table("npb").from_rows([valid_row("npb", tpb=t) for t in tpbs]),
                        tmp_path / f"{name}.parquet")
    s = Store(tmp_path / name)
    s.merge([shard], today="2026-01-02")
    return s


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def linked(tmp_path):
    """Store ``a`` whose ``npb`` folder is a link to store ``b``'s (whose parts ``a``'s manifest does not list)."""
    a, b = _store(tmp_path, "a", [32]), _store(tmp_path, "b", [64, 128])
    (a.path / "npb").rename(tmp_path / "a-npb-moved")
    (a.path / "npb").symlink_to(b.path / "npb")
    return a, b


def test_repair_refuses_a_store_with_a_link_and_deletes_nothing(linked, monkeypatch, capsys):
    a, b = linked
    before = snapshot(b.path)
    with pytest.raises(ManifestError) as err:
        a.repair()
    assert str(err.value).startswith(f"{a.path / 'npb'}: is a symbolic link (1 in the store); a store never "
                                     "follows one out of its folder, so nothing was repaired.")
    code, _, err_text = cli(monkeypatch, capsys, "validate", "--repair", a.path)
    assert code == 1 and "is a symbolic link" in err_text
    assert snapshot(b.path) == before and b.rows("npb") == 2 and b.validate() == []


def test_validate_reports_the_link_and_lists_nothing_through_it(linked):
    a, b = linked
    assert a.leftovers() == []
    (violation,) = a.validate()
    assert violation.file == str(a.path / "npb") and "is a symbolic link" in violation.rule


def test_merge_refuses_a_store_with_a_link(linked, tmp_path):
    a, b = linked
    before = snapshot(b.path)
    shard = write_shard(get_table("npb").from_rows([valid_row("npb", tpb=256)]), tmp_path / "new.parquet")
    with pytest.raises(ManifestError, match="so nothing was merged"):
        a.merge([shard])
    assert snapshot(b.path) == before


def test_a_linked_part_is_never_read(tmp_path):
    a, b = _store(tmp_path, "a", [32]), _store(tmp_path, "b", [64])
    (part,) = (a.path / "npb").glob("part-*.parquet")
    (other,) = (b.path / "npb").glob("part-*.parquet")
    part.unlink()
    part.symlink_to(other)
    with pytest.raises(ManifestError, match="is a symbolic link"):
        a.repair()
    with pytest.raises(ManifestError, match="is \\(or is in\\) a symbolic link"):
        a.read("npb")
    assert other.exists()


def test_a_retry_after_a_kill_past_the_commit_finishes_the_work(tmp_path, monkeypatch, capsys):
    s = _store(tmp_path, "s", [32])
    shard = write_shard(get_table("npb").from_rows([valid_row("npb", tpb=256)]), tmp_path / "c.parquet")
    old_readme, old_croissant = (s.path / "README.md").read_text(), (s.path / "croissant.json").read_text()

    def interrupt(point):
        if point == "manifest":  # right after the commit: README and croissant.json still describe 0.1.0
            raise KeyboardInterrupt

    monkeypatch.setattr(store_mod, "_FAULT_HOOK", interrupt)
    with pytest.raises(KeyboardInterrupt):
        s.merge([shard])
    monkeypatch.undo()
    tmp = s.path / ".README.md.x.tmp"  # what a writer killed mid-way leaves
    tmp.write_text("half")
    assert s.version == "0.2.0" and (s.path / "README.md").read_text() == old_readme
    assert (s.path / "croissant.json").read_text() == old_croissant and len(s.validate()) == 3
    code, out, err = cli(monkeypatch, capsys, "merge", shard, "--into", s.path)
    assert code == 0, err
    assert f"finished an interrupted write: removed {tmp}" in out
    assert f"finished an interrupted write: regenerated {s.path / 'README.md'}" in out
    assert "merged nothing new; 1 exact duplicate(s) skipped; dataset version 0.2.0 -> 0.2.0" in out
    assert not tmp.exists() and s.validate() == []
    assert "Dataset version **0.2.0**" in (s.path / "README.md").read_text()
