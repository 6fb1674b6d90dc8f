"""Every third-party module the library imports at module level is a declared dependency of the package
(pyproject's ``dependencies``): a module that only arrives through another package's requirements (markdown-it-py
through rich, markupsafe through jinja2) can leave with that package's next release. Optional dependencies are
imported inside functions (their extras) and are not checked here."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

try:  # Python 3.11 has tomllib; 3.10 (requires-python) gets tomli from the dev extra
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]).lower()


def undeclared(package: Path, declared: set[str]) -> dict[str, str]:
    """Top-level modules imported at module level under ``package`` whose distribution is not ``declared``,
    each with the first file importing it."""
    dists = packages_distributions()
    out: dict[str, str] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            for name in names:
                if name in sys.stdlib_module_names or name in ("kgpubench", "__future__"):
                    continue
                if not {_name(d) for d in dists.get(name, [name])} & declared:
                    out.setdefault(name, str(path.relative_to(package.parent)))
    return out


def test_every_module_level_import_is_a_declared_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(d) for d in project["dependencies"]}
    assert {"markdown-it-py", "markupsafe", "jinja2", "pyarrow"} <= declared
    assert undeclared(ROOT / "kgpubench", declared) == {}


def test_an_undeclared_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "m.py").write_text("import numpy\nfrom markupsafe import Markup\n\ndef f():\n    import cupy\n")
    assert undeclared(package, {"numpy"}) == {"markupsafe": "pkg/m.py"}  # cupy: inside a function, optional
