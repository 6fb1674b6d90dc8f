"""Where the bundled folders are, from a source checkout or from an installed wheel.

In a wheel, the top-level folders (collectors, splits, baselines, leaderboard) travel as
``kgpubench/_bundled/<name>``; in a checkout (or an editable install) they sit beside the package.
Packaged data always lives inside the package, in ``kgpubench/data``.
"""

from __future__ import annotations

from pathlib import Path

from kgpubench.errors import DataFileNotFoundError

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED = ("collectors", "splits", "baselines", "leaderboard")


def bundled_path(name: str) -> Path:
    """Return the folder ``name`` (one of :data:`BUNDLED`), preferring a checkout's copy."""
    if name not in BUNDLED:
        raise ValueError(f"unknown bundled folder {name!r}; expected one of {BUNDLED}")
    for candidate in (PACKAGE_DIR.parent / name, PACKAGE_DIR / "_bundled" / name):
        if candidate.is_dir():
            return candidate
    raise DataFileNotFoundError(
        f"the bundled folder {name!r} is missing (looked beside the package and in kgpubench/_bundled); "
        "reinstall kgpubench (`pip install --force-reinstall kgpubench`)."
    )


def default_data_dir() -> Path:
    """The packaged data store (``kgpubench/data``)."""
    return PACKAGE_DIR / "data"
