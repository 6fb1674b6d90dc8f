"""Load ``collectors/npb`` the way ``kgpubench collect`` does: by file path, as ``kgpubench_collectors.npb``."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

NPB_DIR = Path(__file__).resolve().parents[3] / "collectors" / "npb"


def load_npb() -> types.ModuleType:
    name = "kgpubench_collectors.npb"
    if name in sys.modules:
        return sys.modules[name]
    if "kgpubench_collectors" not in sys.modules:
        parent = types.ModuleType("kgpubench_collectors")
        parent.__path__ = []  # a namespace for suites
        sys.modules["kgpubench_collectors"] = parent
    spec = importlib.util.spec_from_file_location(name, NPB_DIR / "__init__.py",
                                                  submodule_search_locations=[str(NPB_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def npb() -> types.ModuleType:
    """The suite package; submodules are imported as ``importlib.import_module(npb.__name__ + '.x')``."""
    return load_npb()
