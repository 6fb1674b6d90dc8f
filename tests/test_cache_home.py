"""kgpubench's one cache root: the features, the trained models and the NVRTC artefacts sit side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgpubench.board.predict import cache_dir as models_dir
from kgpubench.features.toolchain import cache_dir as features_dir
from kgpubench.measure.compile_cache import cache_root as compile_dir
from kgpubench.resources import cache_home


@pytest.fixture
def clean(monkeypatch):
    for name in ("KGPUBENCH_CACHE_DIR", "XDG_CACHE_HOME", "KGPUBENCH_COMPILE_CACHE"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_every_cache_is_a_folder_of_the_one_root(clean, tmp_path):
    home = Path.home() / ".cache" / "kgpubench"
    assert (features_dir(), models_dir(), compile_dir()) == (home / "features", home / "models", home / "compile")
    clean.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert {features_dir().parent, models_dir().parent, compile_dir().parent} == {tmp_path / "xdg" / "kgpubench"}
    clean.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path / "mine"))  # wins over XDG
    assert (features_dir(), models_dir(), compile_dir()) == (
        tmp_path / "mine" / "features", tmp_path / "mine" / "models", tmp_path / "mine" / "compile")
    clean.setenv("KGPUBENCH_COMPILE_CACHE", str(tmp_path / "cc"))  # the compile cache alone can go elsewhere
    assert compile_dir() == tmp_path / "cc" and features_dir() == cache_home("features")


def test_a_tilde_in_the_variable_is_the_home_folder(clean):
    clean.setenv("KGPUBENCH_CACHE_DIR", "~/kg-cache")
    assert cache_home("models") == Path.home() / "kg-cache" / "models"
