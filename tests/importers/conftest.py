"""Fixtures of the importer tests."""

from __future__ import annotations

import pytest


@pytest.fixture()
def _staged_licence(tmp_path):
    """Folders staged by hand under ``tmp_path`` stand for upstream folders, which carry their LICENSE: one in
    ``tmp_path`` (the folder above each of them) lets the folder importers accept them."""
    (tmp_path / "LICENSE").write_text("test data licence\n")
