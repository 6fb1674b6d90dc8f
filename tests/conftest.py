"""Project-wide test setup: ``@pytest.mark.gpu`` tests are skipped unless CuPy imports and sees a GPU."""

from __future__ import annotations

import functools

import pytest


@functools.cache
def gpu_available() -> tuple[bool, str]:
    """Whether CuPy and an NVIDIA GPU are usable here (and why not)."""
    from kgpubench.measure.cupy_backend import cupy_available

    return cupy_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    ok, why = gpu_available()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU and CuPy: {why}")
    for item in gpu_items:
        item.add_marker(skip)
