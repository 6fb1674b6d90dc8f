"""Every regular kernel compiles to PTX and assembles with ptxas for sm_70, sm_80 and sm_90, and its static
features extract with the trip counts the spec declares.

Compilation goes through :func:`kgpubench.features.check.compile_check_many` (nvcc where it supports the arch,
NVRTC + ptxas from the ``features`` extra for sm_70): one batch of all sources per architecture.
"""

from __future__ import annotations

import pytest
from regular_loader import modules, regular

from kgpubench.features.check import CompileUnit, compile_check, compile_check_many

spec, _, _ = modules()
FILES = sorted({s.file for s in spec.SPECS})
ARCHS = ("sm_70", "sm_80", "sm_90")


@pytest.fixture(scope="module", params=ARCHS)
def compiled(request, toolchain_for):
    """``(arch, {file: CheckedModule})`` for every kernel file, from one batch per architecture."""
    arch = request.param
    mods = compile_check_many([CompileUnit(spec.KERNEL_DIR / f) for f in FILES], arch, toolchain=toolchain_for(arch))
    return arch, dict(zip(FILES, mods))


@pytest.mark.parametrize("file", FILES)
def test_ptx_compiles_and_assembles(file, compiled):
    arch, mods = compiled
    mod = mods[file]
    assert f".target {arch}" in mod.ptx
    kernels = [s.kernel for s in spec.SPECS if s.file == file]
    assert kernels  # every file holds at least one spec kernel
    for kernel in kernels:
        assert f".entry {kernel}(" in mod.ptx, f"extern \"C\" entry {kernel} missing"
        assert mod.resources[kernel].registers > 0  # ptxas assembled it for this arch
    assert mod.entries == sorted(kernels)  # no entry the spec does not measure


def _features(case, arch="sm_90"):
    from kgpubench.features import case_features
    from kgpubench.measure.features_link import trip_env

    return case_features(case, arch=arch, env=trip_env(case), sm_count=132)


@pytest.mark.parametrize("arch", ["sm_70", "sm_90"])
@pytest.mark.parametrize("kernel", [s.kernel for s in spec.SPECS])
def test_features_extract_for_quick_cases(kernel, arch, toolchain_for):
    toolchain_for(arch)
    cases = list(regular().cases(quick=True, kernels=[kernel]))
    assert len(cases) == 4
    for case in cases:
        f = _features(case, arch)
        parts = ("lc", "lshr", "lshw", "lmr", "lmw", "ls", "ldpu", "lsfu")
        assert f["l"] == pytest.approx(sum(f[p] for p in parts))
        assert f["lmw"] > 0 and f["nreg"] > 0 and f["ldpu"] == 0  # float-only kernels
        assert f["nb"] == case.blocks and f["nt"] == case.threads_per_block


def test_trip_counts_drive_the_counts(toolchain_for):
    toolchain_for("sm_90")
    mm = {c.sizes["n"]: c for c in regular().cases(quick=True, kernels=["matrix_mul"]) if c.block == (16, 16, 1)}
    small, large = _features(mm[256]), _features(mm[1024])
    # shared-memory reads sit in the dot loop inside the tile loop: 1024/16 = 64 tiles vs 256/16 = 16
    assert large["lshr"] == pytest.approx(4 * small["lshr"])
    hot = next(c for c in regular().cases(quick=True, kernels=["calculate_temp"]))
    # one barrier after the loads and two per time step
    assert _features(hot)["ls"] == 1 + 2 * hot.sizes["iters"]
    eu = next(c for c in regular().cases(quick=True, kernels=["euclid"]))
    assert _features(eu)["lsfu"] > 0  # sqrtf


def test_features_from_backend_ptx_when_nvcc_is_missing(monkeypatch, toolchain_for):
    """On a GPU machine without nvcc the harness analyses the backend's PTX: same counts, no ptxas figures."""
    import kgpubench.features as api
    from kgpubench.errors import ToolchainError
    from kgpubench.measure.backends.fake import FAKE_DEVICE
    from kgpubench.measure.features_link import static_features

    tc = toolchain_for(FAKE_DEVICE.arch)
    case = next(c for c in regular().cases(quick=True, kernels=["matrix_mul"]) if c.block == (16, 16, 1))
    direct = static_features(case, FAKE_DEVICE)

    def ptx_of(source):
        return compile_check(source.path, FAKE_DEVICE.arch, defines=source.defines, options=source.options,
                             toolchain=tc).ptx

    def no_nvcc(*args, **kwargs):
        raise ToolchainError("nvcc not found")

    monkeypatch.setattr(api, "case_features", no_nvcc)
    monkeypatch.setattr(api.record, "find_toolchain", no_nvcc, raising=False)
    fallback = static_features(case, FAKE_DEVICE, ptx_of)
    for col in ("l", "lc", "lmr", "lmw", "lshr", "lshw", "ls", "dpc", "nb", "nt", "alpha", "n", "s", "cpx"):
        assert fallback[col] == pytest.approx(direct[col]), col
    assert fallback.get("nreg") is None and direct["nreg"] > 0
    assert static_features(case, FAKE_DEVICE) == {}  # no PTX source: nothing, with a warning
