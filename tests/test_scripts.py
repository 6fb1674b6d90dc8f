"""Every Python script under scripts/ starts and prints its usage: its imports (several are inside ``main``) name
things the library still has (neusight_paper_metric.py once imported a name that had moved to tasks/extras.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def test_there_are_scripts():
    assert {p.name for p in SCRIPTS} >= {"budget_curves.py", "fewshot_curves.py", "neusight_paper_metric.py"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_script_prints_its_usage(script):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:") and done.stderr == ""
