"""kgpubench_version and the project commit, from a checkout, a plain copy, an env var and a wheel file."""

import shutil
import subprocess
from pathlib import Path

import pytest

from kgpubench import buildinfo

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    monkeypatch.delenv(buildinfo.COMMIT_ENV, raising=False)
    buildinfo.package_version.cache_clear()
    buildinfo.project_commit.cache_clear()
    yield
    buildinfo.package_version.cache_clear()
    buildinfo.project_commit.cache_clear()


def test_version_from_the_source_tree_pyproject():
    text = (ROOT / "pyproject.toml").read_text()
    declared = next(line.split('"')[1] for line in text.splitlines() if line.startswith("version = "))
    assert buildinfo.package_version() == declared
    assert buildinfo.package_version() != buildinfo.UNKNOWN_VERSION


def test_pyproject_version_reads_only_the_project_table():
    text = '[tool.x]\nversion = "9.9"\n[project]\nname = "k"\nversion = "1.2.3"\n[tool.y]\nversion = "7"\n'
    assert buildinfo._pyproject_version(text) == "1.2.3"
    assert buildinfo._pyproject_version('[tool.x]\nversion = "9.9"\n') is None


def test_commit_of_the_checkout_matches_git():
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert buildinfo.project_commit().split("+")[0] == head


def test_commit_from_the_environment_wins_and_is_checked(monkeypatch):
    monkeypatch.setenv(buildinfo.COMMIT_ENV, "ABCDEF1234567")
    assert buildinfo.project_commit() == "abcdef1234567"
    buildinfo.project_commit.cache_clear()
    monkeypatch.setenv(buildinfo.COMMIT_ENV, "not a commit")
    assert buildinfo.project_commit() is None


def test_dirty_tree_and_plain_copy(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.txt").write_text("one\n")
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert buildinfo._git_commit(repo) == head
    (repo / "pkg" / "a.txt").write_text("two\n")
    assert buildinfo._git_commit(repo) == head + "+dirty"
    copy = tmp_path / "copy"
    shutil.copytree(repo / "pkg", copy / "pkg")
    assert buildinfo._git_commit(copy) is None
    # A copy without git falls back to the file a wheel build wrote.
    monkeypatch.setattr(buildinfo, "PACKAGE_DIR", copy / "pkg")
    monkeypatch.setattr(buildinfo, "COMMIT_FILE", copy / "pkg" / "_commit.txt")
    assert buildinfo.project_commit() is None
    buildinfo.project_commit.cache_clear()
    (copy / "pkg" / "_commit.txt").write_text(head + "\n")
    assert buildinfo.project_commit() == head
