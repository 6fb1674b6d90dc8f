"""Every stencil kernel variant compiles with nvcc for sm_70/80/90 (a handful of representative define sets).

One nvcc call per (define set, architecture) compiles both entries (thread-tile and shared-tile) to PTX; ptxas
then assembles them. CUDA 13 dropped sm_70: that architecture needs a CUDA 12 nvcc (``$KGPUBENCH_NVCC``) and is
skipped when none is found.
"""

from __future__ import annotations

import importlib
import re

import pytest

from kgpubench.errors import ToolchainError
from kgpubench.features.toolchain import compile_to_ptx, find_toolchain, ptxas_resources
from kgpubench.measure.suites import load_suite

load_suite("stencil")
spec = importlib.import_module("kgpubench_collectors.stencil.spec")
cases = importlib.import_module("kgpubench_collectors.stencil.cases")

REPRESENTATIVE = [
    spec.StencilConfig((256,) * 3, "float32", 2, (1, 1, 1)),
    spec.StencilConfig((256,) * 3, "float64", 16, (8, 1, 4)),
    spec.StencilConfig((256,) * 3, "float32", 8, (2, 16, 4), "shared-tile"),
]


def _toolchain(arch):
    try:
        return find_toolchain(arch)
    except ToolchainError as exc:
        pytest.skip(f"no nvcc for {arch}: {exc}")


@pytest.mark.parametrize("arch", ["sm_70", "sm_80", "sm_90"])
@pytest.mark.parametrize("cfg", REPRESENTATIVE, ids=lambda c: f"{c.dtype}-o{c.space_order}-{'x'.join(map(str, c.tile))}")
def test_both_variants_compile(cfg, arch):
    tc = _toolchain(arch)
    src = cases.kernel_source(cfg)
    ptx = compile_to_ptx(src.path.read_text(), filename=src.path.name, kernel=src.kernel, arch=arch,
                         defines={k: str(v) for k, v in src.defines.items()}, options=(), include_dirs=(),
                         toolchain=tc)
    assert ".entry stencil_thread_tile(" in ptx and ".entry stencil_shared_tile(" in ptx
    # The dtype define reaches the code: double-precision FMAs only in float64 builds.
    assert bool(re.search(r"\bfma\.rn\.f64", ptx)) == (cfg.dtype == "float64")
    res = ptxas_resources(ptx, arch=arch, toolchain=tc)
    assert set(res) >= {"stencil_thread_tile", "stencil_shared_tile"}
    # __launch_bounds__(128): ptxas may use at most 65536 / 128 = 512 -> capped at 255 registers per thread.
    assert 0 < res["stencil_thread_tile"].registers <= 255


def test_an_odd_space_order_does_not_compile():
    tc = _toolchain("sm_90")
    src = cases.kernel_source(spec.StencilConfig((64,) * 3, "float32", 2, (1, 1, 1)))
    defines = {k: str(v) for k, v in src.defines.items()} | {"KG_SPACE_ORDER": "3"}
    with pytest.raises(ToolchainError, match="KG_SPACE_ORDER must be a positive even integer"):
        compile_to_ptx(src.path.read_text(), filename=src.path.name, kernel=src.kernel, arch="sm_90",
                       defines=defines, options=(), include_dirs=(), toolchain=tc)
