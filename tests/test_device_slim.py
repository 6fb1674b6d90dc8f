"""scripts/device_slim.sh on a small repository: the throw-away branch without the big folders, the limit on
what travels, and the way back."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("git") is None,
                                reason="needs bash and git")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "data" / "imported").mkdir(parents=True)
    (r / "code.py").write_text("print('hi')\n")
    (r / ".gitignore").write_text(".carried/\n")  # as .whl/ and .session/ are in the project
    (r / "data" / "imported" / "part.parquet").write_bytes(os.urandom(3 << 20))  # 3 MiB
    (r / "data" / "measured.parquet").write_bytes(os.urandom(1 << 10))
    git(r, "init", "-q", "-b", "main")
    git(r, "-c", "user.email=t@t", "-c", "user.name=t", "add", "-A")
    git(r, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "first")
    return r


def slim(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "REPO": str(repo), "SLIM_PATHS": "data/imported", "CARRY": ".carried",
               "LIMIT_MIB": "2", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t", **env}
    return subprocess.run(["bash", str(ROOT / "scripts" / "device_slim.sh"), *args], capture_output=True, text=True,
                          check=False, env=environ, timeout=60)


def test_enter_drops_the_big_folders_on_a_branch_and_leave_restores_them(repo):
    sha = git(repo, "rev-parse", "HEAD")
    res = slim(repo, "enter")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == f"KGPUBENCH_COMMIT={sha}"
    assert git(repo, "branch", "--show-current") == "device-slim"
    assert git(repo, "ls-files").split() == [".gitignore", "code.py", "data/measured.parquet"]
    assert (repo / ".session" / "kgpubench_commit").read_text().strip() == sha  # for scripts/gpu_session.sh
    assert slim(repo, "enter").returncode == 1  # not twice
    res = slim(repo, "leave")
    assert res.returncode == 0 and "back on main" in res.stdout
    assert git(repo, "branch", "--show-current") == "main" and git(repo, "rev-parse", "HEAD") == sha
    assert (repo / "data" / "imported" / "part.parquet").stat().st_size == 3 << 20
    assert "device-slim" not in git(repo, "branch")
    assert slim(repo, "leave").returncode == 1  # nothing to leave


def test_a_tree_over_the_limit_goes_back_and_names_the_big_files(repo):
    (repo / ".carried").mkdir()
    (repo / ".carried" / "wheel.whl").write_bytes(os.urandom(1 << 20))
    res = slim(repo, "enter", SLIM_PATHS="nothing-to-drop", LIMIT_MIB="3")  # 3 MiB + 1 MiB carried + code
    assert res.returncode == 1 and "4 MiB would travel, over 3 MiB" in res.stderr
    assert "data/imported/part.parquet" in res.stderr
    assert git(repo, "branch", "--show-current") == "main" and "device-slim" not in git(repo, "branch")


def test_uncommitted_changes_are_refused(repo):
    (repo / "code.py").write_text("print('changed')\n")
    res = slim(repo, "enter")
    assert res.returncode == 1 and "commit or stash your changes first" in res.stderr
    assert git(repo, "branch", "--show-current") == "main"
