"""Every stencil kernel variant compiles to PTX and assembles with ptxas for sm_70/80/90 (a handful of
representative define sets).

Compilation goes through :func:`kgpubench.features.check.compile_check_many` (nvcc where it supports the arch,
NVRTC + ptxas from the ``features`` extra for sm_70, which CUDA 13 dropped): one batch of the representative
define sets per architecture; each unit holds both entries (thread-tile and shared-tile).
"""

from __future__ import annotations

import importlib
import re

import pytest

from kgpubench.features.check import CompileUnit, compile_check, compile_check_many
from kgpubench.features.toolchain import CompileError
from kgpubench.measure.suites import load_suite

load_suite("stencil")
spec = importlib.import_module("kgpubench_collectors.stencil.spec")
cases = importlib.import_module("kgpubench_collectors.stencil.cases")

REPRESENTATIVE = [
    spec.StencilConfig((256,) * 3, "float32", 2, (1, 1, 1)),
    spec.StencilConfig((256,) * 3, "float64", 16, (8, 1, 4)),
    spec.StencilConfig((256,) * 3, "float32", 8, (2, 16, 4), "shared-tile"),
]


def _unit(cfg):
    src = cases.kernel_source(cfg)
    return CompileUnit(src.path, dict(src.defines), tuple(src.options), label=_id(cfg))


def _id(cfg):
    return f"{cfg.dtype}-o{cfg.space_order}-{'x'.join(map(str, cfg.tile))}"


@pytest.fixture(scope="module", params=["sm_70", "sm_80", "sm_90"])
def compiled(request, toolchain_for):
    """``(arch, {config id: CheckedModule})`` from one batch per architecture."""
    arch = request.param
    mods = compile_check_many([_unit(c) for c in REPRESENTATIVE], arch, toolchain=toolchain_for(arch))
    return arch, {_id(c): m for c, m in zip(REPRESENTATIVE, mods)}


@pytest.mark.parametrize("cfg", REPRESENTATIVE, ids=_id)
def test_both_variants_compile(cfg, compiled):
    arch, mods = compiled
    mod = mods[_id(cfg)]
    assert f".target {arch}" in mod.ptx
    assert ".entry stencil_thread_tile(" in mod.ptx and ".entry stencil_shared_tile(" in mod.ptx
    # The dtype define reaches the code: double-precision FMAs only in float64 builds.
    assert bool(re.search(r"\bfma\.rn\.f64", mod.ptx)) == (cfg.dtype == "float64")
    assert mod.entries == ["stencil_shared_tile", "stencil_thread_tile"]
    # __launch_bounds__(128): ptxas may use at most 65536 / 128 = 512 -> capped at 255 registers per thread.
    assert 0 < mod.resources["stencil_thread_tile"].registers <= 255


def test_an_odd_space_order_does_not_compile(toolchain_for):
    tc = toolchain_for("sm_90")
    src = cases.kernel_source(spec.StencilConfig((64,) * 3, "float32", 2, (1, 1, 1)))
    defines = dict(src.defines) | {"KG_SPACE_ORDER": "3"}
    with pytest.raises(CompileError, match="KG_SPACE_ORDER must be a positive even integer"):
        compile_check(src.path, "sm_90", defines=defines, options=src.options, toolchain=tc)
