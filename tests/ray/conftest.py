"""Ray for the scale tests: one small local instance (2 CPUs, no dashboard), with this folder and
``tests/measure`` importable in its workers (the fakes live there).

Starting Ray costs seconds, so consecutive tests that use ``ray_local`` share one instance: it starts before
the first of a run of them (before their module fixtures) and stops after the last (under ``pytest -n
--dist loadfile`` the files of this folder run on one worker, one after another: tests/conftest.py). A test
that does not use it never sees Ray running.
"""

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
FIXTURE = "ray_local"


def _uses_ray(item: pytest.Item | None) -> bool:
    return item is not None and FIXTURE in getattr(item, "fixturenames", ())


def start_ray():
    """A local Ray with 2 CPUs and 3 (declared, fake) GPUs, unless one is running here."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        return ray
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
    return ray


@pytest.fixture
def ray_local():
    """The running local Ray (:func:`pytest_runtest_setup` starts it, before any module fixture)."""
    return start_ray()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _uses_ray(item):
        start_ray()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield  # the test's fixtures (and a module's, after its last test) are torn down first
    if _uses_ray(item) and not _uses_ray(nextitem):
        ray = sys.modules.get("ray")
        if ray is not None and ray.is_initialized():
            ray.shutdown()
    return result
