"""The tree passes the project's ruff configuration (pyproject.toml [tool.ruff])."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    res = subprocess.run([ruff, "check", "--output-format", "concise", "kgpubench", "collectors", "baselines",
                          "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:]
