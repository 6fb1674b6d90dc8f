"""Atomic writes: never a half file, never a silent overwrite, one-line errors naming the path."""

from __future__ import annotations

import errno
import os

import pytest

from kgpubench.errors import NotWritableError, OutputExistsError, OutputWriteError
from kgpubench.foundation import files
from kgpubench.foundation.files import atomic_write_bytes, check_output


def test_no_overwrite_keeps_the_existing_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "out.json"
    atomic_write_bytes(path, b"first", overwrite=False)
    with pytest.raises(OutputExistsError, match="out.json: already exists; pass --force"):
        atomic_write_bytes(path, b"second", overwrite=False)
    assert path.read_bytes() == b"first" and sorted(os.listdir(tmp_path)) == ["out.json"]
    atomic_write_bytes(path, b"third")
    assert path.read_bytes() == b"third"


def test_without_hard_links_no_overwrite_still_refuses(tmp_path, monkeypatch):
    def no_links(*_a):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(files.os, "link", no_links)
    path = tmp_path / "out.json"
    atomic_write_bytes(path, b"first", overwrite=False)
    assert path.read_bytes() == b"first"
    with pytest.raises(OutputExistsError):
        atomic_write_bytes(path, b"second", overwrite=False)
    assert path.read_bytes() == b"first" and sorted(os.listdir(tmp_path)) == ["out.json"]


@pytest.mark.parametrize(("code", "kind", "text"), [
    (errno.ENOSPC, OutputWriteError, "could not be written (No space left on device)"),
    (errno.EROFS, NotWritableError, "cannot write here (Read-only file system)"),
    (errno.EACCES, NotWritableError, "cannot write here (Permission denied)"),
])
def test_os_errors_become_one_line_naming_the_path(tmp_path, monkeypatch, code, kind, text):
    def fail(*_a):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(files.os, "replace", fail)
    path = tmp_path / "out.parquet"
    with pytest.raises(kind) as err:
        atomic_write_bytes(path, b"data")
    assert str(err.value).startswith(f"{path}: {text}") and isinstance(err.value, OSError)
    assert os.listdir(tmp_path) == []  # the temp file is gone too


def test_a_parent_that_is_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputWriteError, match="could not be written"):
        atomic_write_bytes(tmp_path / "file" / "out.json", b"data")


def test_check_output(tmp_path):
    assert check_output(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "old").write_text("x")
    with pytest.raises(OutputExistsError, match="already exists"):
        check_output(tmp_path / "old")
    assert check_output(tmp_path / "old", force=True) == tmp_path / "old"
    with pytest.raises(OutputExistsError, match="is a folder"):
        check_output(tmp_path, force=True)
