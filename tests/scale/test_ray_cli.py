"""The ``--ray`` options: Ray is never imported without them; with them, the commands run on Ray."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgpubench.scale.cli import optional_values

ROOT = Path(__file__).resolve().parents[2]


def test_without_ray_option_ray_is_never_imported():
    code = ("import sys\nimport kgpubench.cli\nprint('AFTER_IMPORT', 'ray' in sys.modules)\n"
            "sys.argv = ['kgpubench', 'collect', '--suite', 'regular', '--quick', '--dry-run']\n"
            "from kgpubench.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('AFTER_DRY_RUN', sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "AFTER_IMPORT False" in res.stdout and "AFTER_DRY_RUN []" in res.stdout, res.stdout + res.stderr
    assert "regular: 32 cases" in res.stdout  # the dry run did run


def test_ray_option_takes_an_optional_address():
    assert optional_values(["collect", "--ray"]) == ["collect", "--ray="]
    assert optional_values(["collect", "--ray", "--quick"]) == ["collect", "--ray=", "--quick"]
    assert optional_values(["collect", "--ray", "auto", "--quick"]) == ["collect", "--ray", "auto", "--quick"]
    assert optional_values(["collect", "--ray=10.0.0.1:6379"]) == ["collect", "--ray=10.0.0.1:6379"]
    assert optional_values(["x", "--", "--ray"]) == ["x", "--", "--ray"]  # after --: an argument, untouched


def test_missing_ray_is_one_line_naming_the_extra(monkeypatch):
    from kgpubench.errors import MissingDependencyError
    from kgpubench.scale.session import import_ray, resolve_address

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(MissingDependencyError, match=r'pip install "kgpubench\[ray\]"'):
        import_ray()
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert resolve_address("") == "10.0.0.1:6379" and resolve_address("local") is None
    assert resolve_address(" auto ") == "auto"
