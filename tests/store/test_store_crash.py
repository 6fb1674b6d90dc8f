"""Merges killed at every step, and merges running at the same time (real processes, real SIGKILL).

Each killed merge runs in its own process with a hook (``kgpubench.store.store._FAULT_HOOK``) that sends SIGKILL to
itself at a named point of the write. Afterwards the store must hold the old version or the new one, byte for
byte once ``repair`` has cleared what the kill left, and a later merge must go through.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.store import KILL_POINTS, Store
from kgpubench.testing import valid_row

# Run a merge in a child process; argv: store, comma-separated shards, kill point, occurrence, hold folder.
CHILD = r"""
import os, signal, sys, time
from pathlib import Path
from kgpubench.store import store as S
store, shards, point, nth, hold = sys.argv[1], sys.argv[2].split(","), sys.argv[3], int(sys.argv[4]), sys.argv[5]
seen = [0]
def hook(p):
    if p != point:
        return
    seen[0] += 1
    if seen[0] != nth:
        return
    if hold != "-":  # hold the lock until told to go on
        Path(hold, "held").touch()
        while not Path(hold, "release").exists():
            time.sleep(0.01)
    else:
        os.kill(os.getpid(), getattr(signal, os.environ.get("KILL_SIGNAL", "SIGKILL")))
S._FAULT_HOOK = hook
report = S.Store(store).merge(shards, today="2026-02-01")
print(sum(report.added.values()), sum(report.duplicates.values()), report.version_after)
"""
TODAY = "2026-02-01"


def child(store: Path, shards: list[Path], point: str = "-", nth: int = 1, hold: Path | str = "-",
          stderr=subprocess.PIPE, signal: str = "SIGKILL") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, str(store), ",".join(map(str, shards)), point, str(nth),
                             str(hold)], stdout=subprocess.PIPE, stderr=stderr, text=True,
                            env=dict(os.environ, KILL_SIGNAL=signal))


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def base(tmp_path) -> Path:
    """A store at version 0.1.0 holding two npb rows."""
    shard = write_shard(get_table("npb").from_rows([valid_row("npb", tpb=32), valid_row("npb", tpb=64)]),
                        tmp_path / "base.parquet")
    Store(tmp_path / "base").merge([shard], today="2026-01-01")
    return tmp_path / "base"


@pytest.fixture
def new_shards(tmp_path) -> list[Path]:
    """One new npb row and one stencil row: a merge writes two parts."""
    return [write_shard(get_table("npb").from_rows([valid_row("npb", tpb=256)]), tmp_path / "new npb.parquet"),
            write_shard(get_table("stencil").from_rows([valid_row("stencil")]), tmp_path / "stencil.parquet")]


# (point, occurrence): the second part's points too, so a kill between the two parts is covered.
CASES = [("locked", 1), ("part-temp", 1), ("part", 1), ("part-temp", 2), ("part", 2), ("manifest-temp", 1),
         ("manifest", 1), ("readme-temp", 1), ("readme", 1)]


def test_every_kill_point_is_covered():
    assert {p for p, _ in CASES} == set(KILL_POINTS)


@pytest.mark.slow
def test_sigkill_at_every_step_leaves_old_or_new_version(base, new_shards, tmp_path):
    reference = tmp_path / "reference"
    shutil.copytree(base, reference)
    Store(reference).merge(new_shards, today=TODAY)
    before, after = snapshot(base), snapshot(reference)
    assert after["manifest.json"] != before["manifest.json"]

    stores = {case: tmp_path / f"killed-{case[0]}-{case[1]}" for case in CASES}
    procs = {}
    for case, store in stores.items():
        shutil.copytree(base, store)
        procs[case] = child(store, new_shards, *case)
    for case, proc in procs.items():
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == -9, (case, err)

    for (point, _nth), path in stores.items():
        store = Store(path)
        now = snapshot(path)
        committed = now["manifest.json"] == after["manifest.json"]
        assert committed == (point in ("manifest", "readme-temp", "readme")), point
        target = after if committed else before
        # What a reader sees is exactly one version: the manifest and every file it lists.
        assert store.read("npb").num_rows == (3 if committed else 2), point
        # The README never describes a version that does not exist: the old one until it is regenerated.
        assert now["README.md"] in (before["README.md"], after["README.md"]), point
        assert not committed or point != "readme" or now["README.md"] == after["README.md"]
        # Everything else that differs from the target is a leftover that validate reports and repair clears.
        extra = {name for name in now if name not in target}
        assert {str(p.relative_to(path)) for p, _ in store.leftovers()} == extra, point
        reported = {Path(v.file).name for v in store.validate()}
        # The generated files (croissant.json is written first, then README.md) describe the target or are stale.
        stale = {name for name in ("croissant.json", "README.md") if now.get(name) != target[name]}
        assert point != "readme-temp" or stale == {"README.md"}, point
        assert reported == {Path(e).name for e in extra} | stale, point
        actions = store.repair()
        assert len(actions) == len(extra) + len(stale), (point, actions)
        assert snapshot(path) == target, point
        assert store.validate() == []
        # A later merge is never stuck on what the kill left: it ends where an uninterrupted merge ends.
        store.merge(new_shards, today=TODAY)
        assert snapshot(path) == after, point


@pytest.mark.parametrize("signal", ["SIGKILL", "SIGTERM"])
def test_orphan_left_by_a_kill_is_adopted_by_the_next_merge_without_repair(base, new_shards, signal):
    proc = child(base, new_shards, "part", 2, signal=signal)
    proc.communicate(timeout=60)
    assert proc.returncode == {"SIGKILL": -9, "SIGTERM": -15}[signal]
    orphans = Store(base).leftovers()
    assert len(orphans) == 2 and all("orphaned part" in why for _, why in orphans)
    report = Store(base).merge(new_shards, today=TODAY)
    assert report.added == {"npb": 1, "stencil": 1} and report.version_after == "0.2.0"
    assert Store(base).validate() == []


def _wait_for(path: Path, text: str | None = None, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and (text is None or text in path.read_text()):
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never showed {text!r}")


@pytest.mark.slow
def test_second_writer_waits_for_the_first_and_both_merges_land(base, tmp_path):
    x = write_shard(get_table("npb").from_rows([valid_row("npb", tpb=128)]), tmp_path / "x.parquet")
    y = write_shard(get_table("npb").from_rows([valid_row("npb", tpb=512), valid_row("npb", tpb=1024)]),
                    tmp_path / "y.parquet")
    hold = tmp_path / "hold"
    hold.mkdir()
    first = child(base, [x], "locked", 1, hold)
    _wait_for(hold / "held")  # the first merge holds the lock and has not read the manifest yet
    log = tmp_path / "second.err"
    with open(log, "w") as err:
        second = child(base, [y], stderr=err)
        _wait_for(log, "waiting for it to finish")
        (hold / "release").touch()
        out1, err1 = first.communicate(timeout=60)
        out2, _ = second.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0, err1 + log.read_text()
    assert out1.split() == ["1", "0", "0.2.0"] and out2.split() == ["2", "0", "0.3.0"]
    store = Store(base)
    table = store.read("npb")
    assert sorted(table["tpb"].to_pylist()) == [32, 64, 128, 512, 1024]
    assert len(store.files("npb")) == 3 and store.version == "0.3.0"
    assert [e["added_rows"] for e in store.manifest()["changelog"]] == [{"npb": 2}, {"npb": 1}, {"npb": 2}]
    assert store.validate() == []  # no orphan, README describes 0.3.0


@pytest.mark.slow
def test_two_merges_started_together_lose_and_duplicate_nothing(base, tmp_path):
    shards = [write_shard(get_table("npb").from_rows([valid_row("npb", tpb=t, run_id=f"run-{t}")
                                                      for t in (8, 16, 24)]), tmp_path / "a.parquet"),
              write_shard(get_table("stencil").from_rows([valid_row("stencil", tile_b1=b) for b in (1, 2)]),
                          tmp_path / "b.parquet")]
    procs = [child(base, [s]) for s in shards]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    store = Store(base)
    assert store.version == "0.3.0"
    assert store.rows("npb") == 5 and store.rows("stencil") == 2
    npb = store.read("npb")
    assert len(set(zip(npb["row_id"].to_pylist(), npb["run_id"].to_pylist()))) == 5
    assert store.validate() == []


@pytest.mark.slow
def test_same_shard_merged_twice_at_once_lands_once(base, new_shards):
    procs = [child(base, new_shards) for _ in range(2)]
    outs = sorted(p.communicate(timeout=60)[0].split() for p in procs)
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [["0", "2", "0.2.0"], ["2", "0", "0.2.0"]]  # one added both rows, the other skipped them
    store = Store(base)
    assert store.version == "0.2.0" and store.rows("npb") == 3 and store.rows("stencil") == 1
    assert store.validate() == []  # the README is the winner's and describes 0.2.0
    assert json.loads((base / "manifest.json").read_text())["changelog"][-1]["added_rows"] == {"npb": 1,
                                                                                              "stencil": 1}
