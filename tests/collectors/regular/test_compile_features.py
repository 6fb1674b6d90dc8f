"""Every regular kernel compiles with nvcc to PTX for sm_70/75/80/90 and its static features extract."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest
from regular_loader import modules, regular

spec, _, _ = modules()
FILES = sorted({s.file for s in spec.SPECS})
ARCHS = ("sm_70", "sm_75", "sm_80", "sm_90")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


@functools.cache
def _supported() -> set[str]:
    out = subprocess.run(["nvcc", "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout
    return {line.strip().replace("compute_", "sm_") for line in out.split()}


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("file", FILES)
def test_ptx_compiles(file, arch, tmp_path):
    if arch not in _supported():
        pytest.skip(f"this nvcc cannot target {arch} (CUDA 13 dropped Volta); run this test with a CUDA 12 nvcc to check it")
    out = tmp_path / "k.ptx"
    res = subprocess.run(["nvcc", "--ptx", f"-arch={arch}", "-lineinfo", str(spec.KERNEL_DIR / file), "-o",
                          str(out)], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    text = out.read_text()
    for s in spec.SPECS:
        if s.file == file:
            assert f".entry {s.kernel}(" in text, f"extern \"C\" entry {s.kernel} missing"


def _features(case):
    from kgpubench.features import case_features
    from kgpubench.measure.features_link import trip_env

    return case_features(case, arch="sm_90", env=trip_env(case), sm_count=132)


@needs_nvcc
@pytest.mark.parametrize("kernel", [s.kernel for s in spec.SPECS])
def test_features_extract_for_quick_cases(kernel):
    for case in regular().cases(quick=True, kernels=[kernel]):
        f = _features(case)
        parts = ("lc", "lshr", "lshw", "lmr", "lmw", "ls", "ldpu", "lsfu")
        assert f["l"] == pytest.approx(sum(f[p] for p in parts))
        assert f["lmw"] > 0 and f["nreg"] > 0 and f["ldpu"] == 0  # float-only kernels
        assert f["nb"] == case.blocks and f["nt"] == case.threads_per_block


@needs_nvcc
def test_trip_counts_drive_the_counts():
    mm = {c.sizes["n"]: c for c in regular().cases(quick=True, kernels=["matrix_mul"]) if c.block == (16, 16, 1)}
    small, large = _features(mm[256]), _features(mm[1024])
    # shared-memory reads sit in the dot loop inside the tile loop: 1024/16 = 64 tiles vs 256/16 = 16
    assert large["lshr"] == pytest.approx(4 * small["lshr"])
    hot = next(c for c in regular().cases(quick=True, kernels=["calculate_temp"]))
    # one barrier after the loads and two per time step
    assert _features(hot)["ls"] == 1 + 2 * hot.sizes["iters"]
    eu = next(c for c in regular().cases(quick=True, kernels=["euclid"]))
    assert _features(eu)["lsfu"] > 0  # sqrtf


@needs_nvcc
def test_features_from_backend_ptx_when_nvcc_is_missing(monkeypatch, tmp_path):
    """On a GPU machine without nvcc the harness analyses the backend's PTX: same counts, no ptxas figures."""
    import kgpubench.features as api
    from kgpubench.errors import ToolchainError
    from kgpubench.measure.fake import FAKE_DEVICE
    from kgpubench.measure.features_link import static_features

    case = next(c for c in regular().cases(quick=True, kernels=["matrix_mul"]) if c.block == (16, 16, 1))
    direct = static_features(case, FAKE_DEVICE)

    def ptx_of(source):
        out = tmp_path / "k.ptx"
        subprocess.run(["nvcc", "--ptx", "-arch=sm_90", "-lineinfo", str(source.path), "-o", str(out)],
                       check=True, capture_output=True)
        return out.read_text()

    def no_nvcc(*args, **kwargs):
        raise ToolchainError("nvcc not found")

    monkeypatch.setattr(api, "case_features", no_nvcc)
    monkeypatch.setattr(api.record, "find_toolchain", no_nvcc, raising=False)
    fallback = static_features(case, FAKE_DEVICE, ptx_of)
    for col in ("l", "lc", "lmr", "lmw", "lshr", "lshw", "ls", "dpc", "nb", "nt", "alpha", "n", "s", "cpx"):
        assert fallback[col] == pytest.approx(direct[col]), col
    assert fallback.get("nreg") is None and direct["nreg"] > 0
    assert static_features(case, FAKE_DEVICE) == {}  # no PTX source: nothing, with a warning
