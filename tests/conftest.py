"""Project-wide test setup: ``@pytest.mark.gpu`` tests are skipped unless CuPy imports and sees a GPU; model
code runs in the sandbox, unisolated (``KGPUBENCH_TRUST=1``) only on a host that cannot isolate it."""

from __future__ import annotations

import functools
import os

import pytest


@functools.cache
def gpu_available() -> tuple[bool, str]:
    """Whether CuPy and an NVIDIA GPU are usable here (and why not)."""
    from kgpubench.measure.backends.cupy_backend import cupy_available

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


def pytest_configure(config: pytest.Config) -> None:
    from kgpubench.sandbox.session import TRUST_ENV, isolation_support

    if not isolation_support()[0]:  # the suite's models are the project's own and its fixtures
        os.environ[TRUST_ENV] = "1"


def pytest_report_header(config: pytest.Config) -> str:
    from kgpubench.sandbox.session import isolation_support

    ok, why = isolation_support()
    return "model sandbox: " + ("kernel isolation" if ok else f"none here, models run unisolated ({why})")
