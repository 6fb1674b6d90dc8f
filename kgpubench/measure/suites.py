"""The suite registry: the built-in suites of ``collectors/<name>/`` and those plugged in by entry points.

A built-in suite folder is loaded by file path as the package ``kgpubench_collectors.<name>`` (its
``__init__.py`` runs with the folder as its package path, so relative imports between the suite's modules
work). The package exposes ``SUITE`` or ``get_suite()``. The collectors folder is found with
:func:`kgpubench.resources.bundled_path` (a checkout's ``collectors/`` or the wheel's bundled copy).

Another package adds a suite with an entry point in the group :data:`ENTRY_POINT_GROUP`, naming a suite
object or a function that returns one::

    [project.entry-points."kgpubench.suites"]
    mysuite = "mypackage.suite:SUITE"

Every registered suite is collected by ``kgpubench collect`` unless ``--suite`` names some; a built-in folder
wins over an entry point of the same name.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from kgpubench.errors import KgpubenchError, SuiteLoadError, unknown_name
from kgpubench.resources import bundled_path

PACKAGE_PREFIX = "kgpubench_collectors"
ENTRY_POINT_GROUP = "kgpubench.suites"
# Collection order of the built-in suites (an order only: every registered suite is collected).
SUITE_ORDER = ("regular", "power", "stencil", "npb")


def collectors_dir() -> Path:
    """The ``collectors/`` folder (checkout or installed wheel)."""
    return bundled_path("collectors")


def suite_entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed entry points of :data:`ENTRY_POINT_GROUP`, by name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_suites(root: Path | None = None) -> list[str]:
    """Names of every registered suite: the suite folders (those with an ``__init__.py``) and, for the default
    collectors folder, the entry points; in :data:`SUITE_ORDER`, then by name."""
    folder_root = root or collectors_dir()
    names = {p.name for p in folder_root.iterdir() if (p / "__init__.py").is_file()} if folder_root.is_dir() else set()
    if root is None:
        names |= set(suite_entry_points())
    order = {n: i for i, n in enumerate(SUITE_ORDER)}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def load_suite(name: str, root: Path | None = None) -> Any:
    """The suite object called ``name``: ``collectors/<name>/`` imported, else the entry point's object."""
    folder = (root or collectors_dir()) / name
    if not (folder / "__init__.py").is_file():
        entry = suite_entry_points().get(name) if root is None else None
        if entry is None:
            raise unknown_name("suite", name, available_suites(root))
        return _load_entry_point(entry)
    module = _import_folder(name, folder)
    if hasattr(module, "get_suite"):
        return module.get_suite()
    if hasattr(module, "SUITE"):
        return module.SUITE
    raise SuiteLoadError(f"{folder / '__init__.py'} defines neither SUITE nor get_suite(); "
                         "expose one of them (see kgpubench/measure/suite.py).")


def _load_entry_point(entry: importlib.metadata.EntryPoint) -> Any:
    """The suite an entry point names (a suite object, or a function returning one)."""
    try:
        obj = entry.load()
        return obj() if inspect.isfunction(obj) else obj
    except KgpubenchError:
        raise
    except Exception as exc:
        raise SuiteLoadError(f"suite {entry.name!r} (entry point {entry.value!r} in {ENTRY_POINT_GROUP!r}) failed to "
                             f"load: {type(exc).__name__}: {exc}. Fix or uninstall the package that declares it.") \
            from exc


def _import_folder(name: str, folder: Path) -> Any:
    if PACKAGE_PREFIX not in sys.modules:
        parent = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(PACKAGE_PREFIX, None,
                                                                                is_package=True))
        parent.__path__ = []
        sys.modules[PACKAGE_PREFIX] = parent
    full = f"{PACKAGE_PREFIX}.{name}"
    if full in sys.modules and Path(getattr(sys.modules[full], "__file__", "")).parent == folder:
        return sys.modules[full]
    spec = importlib.util.spec_from_file_location(full, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    try:
        spec.loader.exec_module(module)
    except KgpubenchError:
        sys.modules.pop(full, None)
        raise
    except Exception as exc:
        sys.modules.pop(full, None)
        raise SuiteLoadError(f"suite {name!r} ({folder}) failed to import: {type(exc).__name__}: {exc}. "
                             "Fix the suite module.") from exc
    return module
