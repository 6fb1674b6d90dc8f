"""Which kgpubench wrote a row: the package version and the project's git commit.

Both work from an installed wheel, an editable install and a plain source tree run with ``PYTHONPATH`` (how a
lent GPU machine runs the collector):

- :func:`package_version`: the installed distribution's version when it is this very source tree (or the
  wheel), else the ``version`` in the ``pyproject.toml`` beside the package, else ``"0.0.0+unknown"``.
- :func:`project_commit`: ``$KGPUBENCH_COMMIT`` when set (a copy of the tree without ``.git``, e.g. on a GPU
  machine, gets it from the caller), else ``git rev-parse HEAD`` in the checkout that holds the package, with
  ``+dirty`` when tracked files differ from it, else the commit a wheel build recorded in ``_commit.txt``,
  else ``None``.

A result records more of what made it: :func:`code_sha256` (the package's sources) and :func:`package_versions`
(Python's and the installed versions of kgpubench and :data:`PACKAGES`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
COMMIT_ENV = "KGPUBENCH_COMMIT"
COMMIT_FILE = PACKAGE_DIR / "_commit.txt"
_COMMIT = re.compile(r"[0-9a-f]{7,40}(\+dirty)?")
UNKNOWN_VERSION = "0.0.0+unknown"
# The packages whose installed versions a result records (:func:`package_versions`).
PACKAGES = ("numpy", "pandas", "pyarrow", "scikit-learn", "scipy", "lightgbm", "xgboost", "threadpoolctl")


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    """The kgpubench version of the code that is running (see the module docstring)."""
    pyproject = PACKAGE_DIR.parent / "pyproject.toml"
    if pyproject.is_file():  # a source tree: its own pyproject wins over whatever is installed
        found = _pyproject_version(pyproject.read_text())
        if found:
            return found
    # importlib.metadata here, not at the top: it is a quarter of `import kgpubench.cli`, and a source tree
    # never needs it
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("kgpubench")
    except PackageNotFoundError:
        return UNKNOWN_VERSION
    return dist.version


def _pyproject_version(text: str) -> str | None:
    """The ``version = "..."`` of the ``[project]`` table."""
    section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, flags=re.M | re.S)
    if not section:
        return None
    m = re.search(r'^version\s*=\s*"([^"]+)"', section.group(1), flags=re.M)
    return m.group(1) if m else None


@functools.lru_cache(maxsize=1)
def project_commit() -> str | None:
    """The project's git commit (40 hex digits, ``+dirty`` if the tree has changes), or ``None``."""
    env = os.environ.get(COMMIT_ENV, "").strip().lower()
    if env:
        return env if _COMMIT.fullmatch(env) else None
    from_git = _git_commit(PACKAGE_DIR.parent)
    if from_git:
        return from_git
    if COMMIT_FILE.is_file():
        text = COMMIT_FILE.read_text().strip().lower()
        return text if _COMMIT.fullmatch(text) else None
    return None


def _git_commit(root: Path) -> str | None:
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if not _COMMIT.fullmatch(head):
        return None
    return head + ("+dirty" if dirty else "")


@functools.lru_cache(maxsize=1)
def code_sha256() -> str:
    """sha256 over the package's Python sources (relative path and bytes of every ``*.py``, sorted): part of a
    result's provenance-only ``inputs_sha256`` and of ``predict``'s answer key, so a kept answer made by other
    library code is never read back. ``leaderboard run --reuse`` does not compare it (any commit would re-run every
    result); ``leaderboard verify`` catches a code change that moves a score."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if "_bundled" in path.parts:
            continue
        h.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\x00")
        h.update(path.read_bytes() + b"\x00")
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    """Python's and the installed versions of kgpubench and :data:`PACKAGES` (``absent`` if not installed), read
    once per process (each look-up parses a package's metadata: 60 ms for the nine under load, once per result)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:
    from importlib.metadata import PackageNotFoundError, version  # not at the top: see package_version

    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in ("kgpubench", *PACKAGES):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return tuple(out.items())
