"""Finding and loading suites from ``collectors/<name>/``.

A suite folder is loaded by file path as the package ``kgpubench_collectors.<name>`` (its ``__init__.py``
runs with the folder as its package path, so relative imports between the suite's modules work). The package
exposes ``SUITE`` or ``get_suite()``. The collectors folder is found with
:func:`kgpubench.resources.bundled_path` (a checkout's ``collectors/`` or the wheel's bundled copy).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from typing import Any

from kgpubench.errors import KgpubenchError, SuiteLoadError, unknown_name

PACKAGE_PREFIX = "kgpubench_collectors"
SUITE_ORDER = ("regular", "power", "stencil", "npb")


def collectors_dir() -> Path:
    """The ``collectors/`` folder (checkout or installed wheel)."""
    from kgpubench.resources import bundled_path

    return bundled_path("collectors")


def available_suites(root: Path | None = None) -> list[str]:
    """Names of the suite folders (those with an ``__init__.py``), in priority order then by name."""
    root = root or collectors_dir()
    names = [p.name for p in root.iterdir() if (p / "__init__.py").is_file()] if root.is_dir() else []
    order = {n: i for i, n in enumerate(SUITE_ORDER)}
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def load_suite(name: str, root: Path | None = None) -> Any:
    """Import ``collectors/<name>/`` and return its suite object."""
    root = root or collectors_dir()
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
