"""Shared fixtures of the suite tests: the CUDA toolchain per architecture, or a skip that says what to install."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kgpubench.errors import ToolchainError
from kgpubench.features.toolchain import Toolchain, find_toolchain


@pytest.fixture(scope="session")
def toolchain_for() -> Callable[[str], Toolchain]:
    """``toolchain_for(arch)``: the toolchain :func:`find_toolchain` picks for ``arch``.

    Skips the test only when no toolchain here supports ``arch``; the reason is the toolchain module's own
    message (e.g. for sm_70 beside a CUDA 13 nvcc: ``pip install "kgpubench[features]"``). Compile errors are
    not caught: they fail the test.
    """

    def get(arch: str) -> Toolchain:
        try:
            return find_toolchain(arch, need="nvcc")
        except ToolchainError as exc:
            pytest.skip(f"no CUDA toolchain for {arch}: {exc}")

    return get
