"""Hostile model cache (issue 40 item 5): a pickle replaced in ``kgpubench predict``'s cache ran its code on the
next ``predict`` and was then silently rebuilt. Now the folder is kgpubench's own (0700, this user's), each
entry's sha256 is recorded when kgpubench writes it, and an entry that does not match is refused in one line,
never unpickled and never rebuilt over."""

from __future__ import annotations

import os
import pickle

import pytest

from kgpubench.board import predict as P
from kgpubench.errors import ModelCacheError
from kgpubench.tasks import get_task


class Planted:
    """Unpickling this writes a marker file: the stand-in for a pickle that runs code."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture
def cached(tmp_path, monkeypatch):
    monkeypatch.setenv(P.CACHE_ENV, str(tmp_path / "cache"))
    task = get_task("kernel-time")
    model = P.choose_model(task, "median").path
    calls = []

    def fake_train(*args, **kwargs):
        calls.append(args)
        return {"format": P.CACHE_FORMAT, "model": {"fitted": len(calls)}}

    monkeypatch.setattr(P, "train_model", fake_train)
    P.cached_model(task, model, "random10")
    path = next((tmp_path / "cache" / "models").glob("kernel-time-median-*.pkl"))
    return task, model, path, calls


def _refused(task, model, path, calls, needle):
    with pytest.raises(ModelCacheError) as info:
        P.cached_model(task, model, "random10")
    message = str(info.value)
    assert "\n" not in message and str(path) in message and needle in message, message
    assert len(calls) == 1  # not rebuilt
    return message


def test_a_replaced_pickle_is_refused_unread_and_not_rebuilt(cached, tmp_path):
    task, model, path, calls = cached
    marker = tmp_path / "ran"
    planted = pickle.dumps({"format": P.CACHE_FORMAT, "model": Planted(str(marker))})
    path.write_bytes(planted)
    _refused(task, model, path, calls, "sha256 is not the one recorded")
    assert not marker.exists() and path.read_bytes() == planted  # never read, never replaced


def test_a_pickle_without_its_digest_is_refused(cached, tmp_path):
    task, model, path, calls = cached
    path.with_name(path.name + ".sha256").unlink()
    _refused(task, model, path, calls, "no sha256 recorded")


def test_a_truncated_entry_is_refused_not_silently_rebuilt(cached):
    task, model, path, calls = cached
    path.write_bytes(path.read_bytes()[:10])
    _refused(task, model, path, calls, "not written by kgpubench")


def test_a_symlinked_entry_is_refused(cached, tmp_path):
    task, model, path, calls = cached
    target = tmp_path / "elsewhere.pkl"
    target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    _refused(task, model, path, calls, "not a regular file")


def test_a_cache_folder_others_may_enter_is_refused(cached):
    task, model, path, calls = cached
    os.chmod(path.parent, 0o755)
    _refused(task, model, path.parent, calls, "has mode 0755")


def test_a_symlinked_cache_folder_is_refused(tmp_path, monkeypatch):
    (tmp_path / "cache").mkdir()
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "cache" / "models").symlink_to(tmp_path / "real")
    monkeypatch.setenv(P.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(ModelCacheError, match="is not a folder"):
        P.own_cache_dir()


def test_a_new_cache_folder_is_0700(tmp_path, monkeypatch):
    monkeypatch.setenv(P.CACHE_ENV, str(tmp_path / "c"))
    assert P.own_cache_dir().stat().st_mode & 0o777 == 0o700
