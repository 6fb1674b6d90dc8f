"""Ray for the scale tests: one small local instance per module (2 CPUs, no dashboard), with this folder and
``tests/measure`` importable in its workers (the fakes live there)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FAKES = [str(HERE), str(HERE.parent / "measure"), str(HERE.parent / "tasks")]
for path in FAKES:
    if path not in sys.path:
        sys.path.insert(0, path)


@pytest.fixture(scope="module")
def ray_local():
    """A local Ray with 2 CPUs and 3 (declared, fake) GPUs, shut down after the module."""
    ray = pytest.importorskip("ray")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([*FAKES, str(HERE.parents[1]), *([old] if old else [])])
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        ray.init(num_cpus=2, num_gpus=3, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    yield ray
    ray.shutdown()
