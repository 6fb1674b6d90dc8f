"""Issue 44, item 4: a measured protocol-2 row names the commit that measured it. A collection that could not
record it is refused before anything is measured (``kgpubench.measure.api._require_commit``); the schema
refuses such rows at validate and merge (tests/hostile/test_untraced_rows.py)."""

from __future__ import annotations

import pytest

import kgpubench
from kgpubench.buildinfo import project_commit
from kgpubench.errors import OptionError
from kgpubench.measure import api
from kgpubench.measure.backends.fake import FakeBackend


@pytest.fixture(autouse=True)
def _fresh_commit():
    """project_commit is cached per process: clear it around each test so a changed environment is read, and
    no other test of this worker sees the values set here."""
    project_commit.cache_clear()
    yield
    project_commit.cache_clear()


def _add(grid, block, args, smem):
    a, b, c, n = args
    c[:n] = a[:n] + b[:n]


class MeasuringLooking(FakeBackend):
    """The fake GPU, declaring real rows: only to reach the check, which runs before any case; nothing it
    would write is ever validated or merged here."""

    row_source = "measured"


def _collect(backend, out):
    return kgpubench.collect("regular", backend=backend, out=out, quick=True, kernels=["vector_add"])


def test_a_malformed_commit_in_the_environment_is_refused_before_any_row(tmp_path, monkeypatch):
    monkeypatch.setenv("KGPUBENCH_COMMIT", "main")  # a branch name, not a commit
    with pytest.raises(OptionError) as err:
        _collect(MeasuringLooking(implementations={"vector_add": _add}, with_nvml=False), tmp_path / "out")
    assert str(err.value).startswith("KGPUBENCH_COMMIT='main' is not a commit") and "hex" in str(err.value)
    assert not (tmp_path / "out").exists()  # refused before the shard folder was made


def test_no_commit_at_all_is_refused_and_says_how_to_give_one(tmp_path, monkeypatch):
    monkeypatch.delenv("KGPUBENCH_COMMIT", raising=False)
    monkeypatch.setattr(api, "project_commit", lambda: None)  # a source tree copied without .git, no wheel file
    with pytest.raises(OptionError) as err:
        _collect(MeasuringLooking(implementations={"vector_add": _add}, with_nvml=False), tmp_path / "out")
    text = str(err.value)
    assert "cannot tell which kgpubench commit is measuring" in text and "set KGPUBENCH_COMMIT" in text
    assert not (tmp_path / "out").exists()


def test_the_fake_backend_is_not_held_to_it_and_a_given_commit_lands_on_the_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(api, "project_commit", lambda: None)
    done = _collect(FakeBackend(implementations={"vector_add": _add}, with_nvml=False), tmp_path / "fake")
    assert done.summary.written == 4  # its rows carry source "fake" and never validate anyway
    monkeypatch.undo()
    monkeypatch.setenv("KGPUBENCH_COMMIT", "C0FFEE" * 6 + "abcd")
    project_commit.cache_clear()
    done = _collect(FakeBackend(implementations={"vector_add": _add}, with_nvml=False), tmp_path / "given")
    assert {r["kgpubench_commit"] for r in done.records} == {"c0ffee" * 6 + "abcd"}
