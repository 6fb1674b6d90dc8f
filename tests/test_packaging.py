"""The wheel is self-contained: bundled folders and packaged data travel inside it."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(result.stderr[-2000:])
    (path,) = out.glob("kgpubench-*.whl")
    return zipfile.ZipFile(path)


def test_wheel_carries_data_and_bundled_folders(wheel):
    names = set(wheel.namelist())
    assert "kgpubench/data/manifest.json" in names
    assert "kgpubench/data/README.md" in names
    for folder in ("collectors", "splits", "baselines", "leaderboard"):
        assert any(n.startswith(f"kgpubench/_bundled/{folder}/") for n in names), folder
    for rel in (p.relative_to(ROOT).as_posix() for p in (ROOT / "kgpubench" / "data").rglob("*.parquet")):
        assert rel in names


def test_bundled_path_prefers_checkout_and_falls_back_to_wheel_copy(tmp_path, monkeypatch):
    from kgpubench import resources

    assert resources.bundled_path("collectors") == ROOT / "collectors"
    fake_pkg = tmp_path / "site" / "kgpubench"
    (fake_pkg / "_bundled" / "splits").mkdir(parents=True)
    monkeypatch.setattr(resources, "PACKAGE_DIR", fake_pkg)
    assert resources.bundled_path("splits") == fake_pkg / "_bundled" / "splits"
    from kgpubench.errors import DataFileNotFoundError

    with pytest.raises(DataFileNotFoundError, match="'baselines' is missing"):
        resources.bundled_path("baselines")


def test_wheel_records_the_commit_it_was_built_from(wheel):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    recorded = wheel.read("kgpubench/_commit.txt").decode().strip()
    assert recorded.split("+")[0] == head
