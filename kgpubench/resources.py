"""Where the bundled folders are, from a source checkout or from an installed wheel.

The top-level folders of the repository (collectors, splits, baselines, leaderboard) stay where they are in
a checkout; the wheel maps them into the package as ``kgpubench/_bundled/<name>`` (``pyproject.toml``,
``force-include``). Both are found through :mod:`importlib.resources` under the ``kgpubench`` package:
a checkout's copy only when the package runs from a source checkout (the folder above it holds the
``pyproject.toml`` of the kgpubench project), so an unrelated installed top-level package called
``baselines`` or ``collectors`` can never shadow ours. Packaged data always lives inside the package, in
``kgpubench/data``.
"""

from __future__ import annotations

import os
import re
from importlib import resources as _resources
from pathlib import Path

from kgpubench.errors import DataFileNotFoundError

PACKAGE = "kgpubench"
PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED = ("collectors", "splits", "baselines", "leaderboard")
ENV_CACHE = "KGPUBENCH_CACHE_DIR"
_PROJECT_NAME = re.compile(r'(?m)^name\s*=\s*"kgpubench"\s*$')


def package_files() -> Path:
    """The ``kgpubench`` package folder, as :func:`importlib.resources.files` finds it."""
    return Path(str(_resources.files(PACKAGE))).resolve()


def source_checkout() -> Path | None:
    """The repository the package is imported from (a checkout or an editable install), else None."""
    root = package_files().parent
    pyproject = root / "pyproject.toml"
    try:
        return root if pyproject.is_file() and _PROJECT_NAME.search(pyproject.read_text()) else None
    except (OSError, UnicodeDecodeError):
        return None


def bundled_path(name: str) -> Path:
    """Return the folder ``name`` (one of :data:`BUNDLED`): the checkout's, else the wheel's bundled copy."""
    if name not in BUNDLED:
        raise ValueError(f"unknown bundled folder {name!r}; expected one of {BUNDLED}")
    checkout = source_checkout()
    candidates = ([checkout / name] if checkout is not None else []) + [package_files() / "_bundled" / name]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise DataFileNotFoundError(
        f"the bundled folder {name!r} is missing (looked in the source checkout and in kgpubench/_bundled); "
        "reinstall kgpubench (`pip install --force-reinstall kgpubench`)."
    )


def default_data_dir() -> Path:
    """The packaged data store (``kgpubench/data``)."""
    return package_files() / "data"


def cache_home(sub: str) -> Path:
    """The folder ``sub`` of kgpubench's one cache root: ``$KGPUBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/kgpubench``,
    else ``~/.cache/kgpubench``. Its sub-folders: ``features/`` (static features), ``models/`` (the trained models of
    ``kgpubench predict``) and ``compile/`` (NVRTC artefacts, unless ``$KGPUBENCH_COMPILE_CACHE`` names another)."""
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser() / sub
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "kgpubench" / sub
