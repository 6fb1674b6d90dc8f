"""The suite registry: the built-in suites of ``collectors/<name>/`` and those plugged in by entry points.

A built-in suite folder is loaded by file path as the package ``kgpubench_collectors.<name>`` (its
``__init__.py`` runs with the folder as its package path, so relative imports between the suite's modules
work). The package exposes ``SUITE`` or ``get_suite()``. The collectors folder is found with
:func:`kgpubench.resources.bundled_path` (a checkout's ``collectors/`` or the wheel's bundled copy).

Another package adds a suite with an entry point in the group :data:`ENTRY_POINT_GROUP`, naming a suite
object or a function that returns one::

    [project.entry-points."kgpubench.suites"]
    mysuite = "mypackage.suite:SUITE"

The registry is :data:`SUITES` (a :class:`kgpubench.registry.Registry`): the built-in folders first (a
:class:`SuiteFolder` each, imported when the suite is loaded), in :data:`SUITE_ORDER`, then the plugged-in suites
by name. Every registered suite is collected by ``kgpubench collect`` unless ``--suite`` names some; an entry point
of a built-in suite's name is refused in one line naming both.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgpubench.errors import KgpubenchError, SuiteLoadError, unknown_name
from kgpubench.registry import Registry
from kgpubench.resources import bundled_path

PACKAGE_PREFIX = "kgpubench_collectors"
ENTRY_POINT_GROUP = "kgpubench.suites"
# Collection order of the built-in suites (an order only: every registered suite is collected).
SUITE_ORDER = ("regular", "power", "stencil", "npb")


def collectors_dir() -> Path:
    """The ``collectors/`` folder (checkout or installed wheel)."""
    return bundled_path("collectors")


@dataclass(frozen=True)
class SuiteFolder:
    """A built-in suite: its folder under ``collectors/``, imported by :func:`load_suite`."""

    path: Path


def _folder_names(root: Path) -> list[str]:
    """The suite folders (those with an ``__init__.py``) of ``root``: in :data:`SUITE_ORDER`, then by name."""
    names = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()} if root.is_dir() else set()
    order = {n: i for i, n in enumerate(SUITE_ORDER)}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def _built_in_suites():
    root = collectors_dir()
    return ((name, SuiteFolder(root / name)) for name in _folder_names(root))


# A plugged-in suite is the object its entry point names (or a function returning it).
SUITES: Registry[Any] = Registry("suite", ENTRY_POINT_GROUP, builtins=_built_in_suites)


def available_suites(root: Path | None = None) -> list[str]:
    """Names of every registered suite (:data:`SUITES`); with ``root``, the suite folders of that folder only."""
    return list(SUITES) if root is None else _folder_names(root)


def load_suite(name: str, root: Path | None = None) -> Any:
    """The suite object called ``name``: its ``collectors/<name>/`` imported, or the plugged-in suite."""
    if root is None:
        entry = SUITES[name]
        if not isinstance(entry, SuiteFolder):
            return entry
        folder = entry.path
    else:
        folder = root / name
        if not (folder / "__init__.py").is_file():
            raise unknown_name("suite", name, available_suites(root))
    module = _import_folder(name, folder)
    if hasattr(module, "get_suite"):
        return module.get_suite()
    if hasattr(module, "SUITE"):
        return module.SUITE
    raise SuiteLoadError(f"{folder / '__init__.py'} defines neither SUITE nor get_suite(); "
                         "expose one of them (see kgpubench/measure/suite.py).")


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
