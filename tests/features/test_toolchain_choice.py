"""Choosing a toolchain per architecture: nvcc where it supports the arch, else NVRTC + ptxas (pip wheels).

The discovery logic runs on a fake layout (shell scripts that print a CUDA version, an empty libnvrtc);
the real wheels (``pip install "kgpubench[features]"``) are checked when they are installed.
"""

from __future__ import annotations

import importlib.metadata
import os
import stat
from pathlib import Path

import pytest

from kgpubench.errors import ToolchainError
from kgpubench.features import extract_features, find_toolchain
from kgpubench.features import toolchain as tcmod

CU = Path(__file__).parent / "data" / "kernels.cu"
TRIPS = {"tiled_matmul": {"line:13": "n / 16"}, "dist64": {}, "rowsum": {"L1": "cols"}}
SIZES = {"n": 256, "cols": 100}


def _fake_program(path: Path, version: str) -> Path:
    """A script that answers ``--version`` like nvcc/ptxas of CUDA ``version`` (X.Y.Z)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    major_minor = ".".join(version.split(".")[:2])
    path.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {major_minor}, V{version}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """nvcc 13.0 on PATH; the cu12 wheels under a fake ``nvidia`` namespace; no other toolkit."""
    for var in ("KGPUBENCH_NVCC", "KGPUBENCH_NVRTC", "KGPUBENCH_COMPILER", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    system = tmp_path / "cuda-13" / "bin"
    _fake_program(system / "nvcc", "13.0.88")
    _fake_program(system / "ptxas", "13.0.88")
    monkeypatch.setenv("PATH", f"{system}{os.pathsep}/usr/bin{os.pathsep}/bin")
    nvidia = tmp_path / "site-packages" / "nvidia"
    wheel_ptxas = _fake_program(nvidia / "cuda_nvcc" / "bin" / "ptxas", "12.9.86")
    lib_dir = nvidia / "cuda_nvrtc" / "lib"
    lib_dir.mkdir(parents=True)
    for name in ("libnvrtc.so.12", "libnvrtc.alt.so.12", "libnvrtc-builtins.so.12.9"):
        (lib_dir / name).write_bytes(b"\x7fELF fake")
    probed: list[Path] = []

    def probe(lib: Path) -> str:
        probed.append(lib)
        return "12.9.86"

    monkeypatch.setattr(tcmod, "_nvidia_roots", lambda: [nvidia])
    monkeypatch.setattr(tcmod, "_system_dirs", list)
    monkeypatch.setattr(tcmod, "_probe_nvrtc", probe)
    return {"system": system, "wheel_ptxas": wheel_ptxas, "nvrtc": lib_dir / "libnvrtc.so.12", "probed": probed}


def test_nvcc_13_serves_sm_75_and_up(layout):
    for arch in ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90"):
        tc = find_toolchain(arch)
        assert (tc.nvcc, tc.version, tc.nvrtc, tc.kind) == (str(layout["system"] / "nvcc"), "13.0.88", None, "nvcc")
    assert layout["probed"] == []  # NVRTC is not even looked at when nvcc fits


def test_sm_70_goes_to_nvrtc_12_and_wheel_ptxas(layout):
    tc = find_toolchain("sm_70")
    assert tc.nvcc is None and tc.kind == "nvrtc" and tc.major == 12
    assert tc.nvrtc == str(layout["nvrtc"])  # libnvrtc.so.12, not the .alt variant nor the builtins
    assert tc.ptxas == str(layout["wheel_ptxas"])  # the CUDA 13 ptxas on PATH cannot do sm_70
    assert tc.version == "nvrtc 12.9.86 / ptxas 12.9.86"
    assert layout["probed"] == [layout["nvrtc"]]
    # Assembling only (analyse a given PTX): the wheel's ptxas.
    only = find_toolchain("sm_70", need="ptxas")
    assert (only.ptxas, only.version, only.nvcc) == (str(layout["wheel_ptxas"]), "12.9.86", None)


def test_version_probes_are_remembered_on_disk(layout, monkeypatch):
    find_toolchain("sm_70")
    monkeypatch.setattr(tcmod, "_VERSION_MEMO", {})  # a new process: only the disk cache is left

    def refuse(*args, **kwargs):
        raise AssertionError("a version was probed again")

    monkeypatch.setattr(tcmod, "_probe_nvrtc", refuse)
    monkeypatch.setattr(tcmod.subprocess, "run", refuse)
    assert find_toolchain("sm_70").version == "nvrtc 12.9.86 / ptxas 12.9.86"


def test_forcing_nvrtc_or_nvcc(layout, monkeypatch):
    monkeypatch.setenv("KGPUBENCH_COMPILER", "nvrtc")
    assert find_toolchain("sm_80").version == "nvrtc 12.9.86 / ptxas 12.9.86"
    monkeypatch.setenv("KGPUBENCH_COMPILER", "nvcc")
    with pytest.raises(ToolchainError, match=r"supports sm_70 \(KGPUBENCH_COMPILER=nvcc\): found nvcc 13\.0\.88"):
        find_toolchain("sm_70")
    monkeypatch.setenv("KGPUBENCH_COMPILER", "clang")
    with pytest.raises(ToolchainError, match="expected auto, nvcc or nvrtc"):
        find_toolchain("sm_80")


def test_nvrtc_without_a_fitting_ptxas_is_refused(layout):
    layout["wheel_ptxas"].unlink()
    with pytest.raises(ToolchainError) as err:
        find_toolchain("sm_70")
    msg = str(err.value)
    assert "NVRTC 12.9.86" in msg and "ptxas found: 13.0.88" in msg and "nvidia-cuda-nvcc-cu12" in msg
    assert 'pip install "kgpubench[features]"' in msg
    _fake_program(layout["wheel_ptxas"], "12.4.131")  # older than NVRTC's PTX ISA: not paired
    with pytest.raises(ToolchainError, match=r"release 12\.9 or newer.*12\.4\.131"):
        find_toolchain("sm_70")


def test_nvrtc_from_environment_variable(layout, monkeypatch, tmp_path):
    own = tmp_path / "cuda-12.6" / "lib64" / "libnvrtc.so.12.6.77"
    own.parent.mkdir(parents=True)
    own.write_bytes(b"\x7fELF fake")
    monkeypatch.setenv("KGPUBENCH_NVRTC", str(own))
    assert find_toolchain("sm_70").nvrtc == str(own)  # before the wheels


def test_nothing_for_sm_70_says_what_to_install(layout):
    layout["wheel_ptxas"].unlink()
    layout["nvrtc"].unlink()
    with pytest.raises(ToolchainError) as err:
        find_toolchain("sm_70")
    msg = str(err.value)
    assert msg.count("pip install") == 1 and 'pip install "kgpubench[features]"' in msg
    assert "found nvcc 13.0.88" in msg and "nvidia-cuda-nvrtc-cu12 and nvidia-cuda-nvcc-cu12" in msg


# -- the real wheels ---------------------------------------------------------------------------------------

def _wheel_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{name} is not installed (pip install \"kgpubench[features]\" installs it)")


@pytest.fixture
def wheels(monkeypatch, tmp_path):
    nvrtc_v, nvcc_v = _wheel_version("nvidia-cuda-nvrtc-cu12"), _wheel_version("nvidia-cuda-nvcc-cu12")
    monkeypatch.delenv("KGPUBENCH_NVRTC", raising=False)
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return nvrtc_v, nvcc_v


def test_installed_wheels_are_found(wheels, monkeypatch):
    nvrtc_v, nvcc_v = wheels
    monkeypatch.setenv("KGPUBENCH_COMPILER", "nvrtc")  # even where a CUDA 12 nvcc would serve sm_70
    tc = find_toolchain("sm_70")
    assert Path(tc.nvrtc).parent.parts[-3:] == ("nvidia", "cuda_nvrtc", "lib") and Path(tc.nvrtc).name == \
        "libnvrtc.so.12"
    # The version comes from the library itself; it must agree with the wheels' metadata.
    assert tc.version == f"nvrtc {nvrtc_v} / ptxas {nvcc_v}"
    only = find_toolchain("sm_70", need="ptxas")
    if Path(only.ptxas).parts[-4:-1] == ("nvidia", "cuda_nvcc", "bin"):
        assert only.version == nvcc_v


def test_nvrtc_compile_error_names_file_and_kernel(wheels, monkeypatch):
    monkeypatch.setenv("KGPUBENCH_COMPILER", "nvrtc")
    bad = 'extern "C" __global__ void oops(float* a) { a[0] = undefined_thing; }\n'
    with pytest.raises(tcmod.CompileError) as err:
        extract_features(bad, "oops", arch="sm_70")
    msg = str(err.value)
    assert "NVRTC" in msg and "kernel.cu" in msg and "kernel oops" in msg and "sm_70" in msg
    assert 'identifier "undefined_thing" is undefined' in msg


@pytest.mark.parametrize("arch", ["sm_75", "sm_80"])
def test_nvrtc_ptx_gives_nvccs_loops_and_counts(wheels, monkeypatch, tmp_path, arch):
    """Same source through nvcc and through NVRTC: the same loops (ids, source lines, depth) and counts."""
    monkeypatch.setenv("KGPUBENCH_COMPILER", "nvcc")
    try:
        nvcc_tc = find_toolchain(arch)
    except ToolchainError as exc:
        pytest.skip(f"no nvcc for {arch} to compare with: {exc}")
    got = {}
    for compiler in ("nvcc", "nvrtc"):
        monkeypatch.setenv("KGPUBENCH_COMPILER", compiler)
        got[compiler] = {k: extract_features(CU, k, arch=arch, grid=(16, 16), block=(16, 16), sizes=SIZES,
                                             trip_counts=TRIPS[k]) for k in TRIPS}
    for k in TRIPS:
        a, b = got["nvcc"][k], got["nvrtc"][k]
        assert a.toolchain_version == nvcc_tc.version and b.toolchain_version.startswith("nvrtc 12.")
        assert [(lp["id"], lp["line"], lp["depth"]) for lp in a.loops] == \
               [(lp["id"], lp["line"], lp["depth"]) for lp in b.loops], k
        for name in ("lmr", "lmw", "lshr", "lshw", "ls", "ldpu", "lsfu", "flops", "global_bytes_read"):
            assert getattr(a, name) == getattr(b, name), (k, name)
        assert b.shmem_bytes == a.shmem_bytes
    # Hand counts (see test_compiled): one loop at line 13 (tiles) and one at line 37 (columns).
    assert [lp["line"] for lp in got["nvrtc"]["tiled_matmul"].loops] == [13]
    assert [lp["line"] for lp in got["nvrtc"]["rowsum"].loops] == [37]
    assert (got["nvrtc"]["rowsum"].lmr, got["nvrtc"]["rowsum"].lsfu) == (100, 100)


def test_a_wheels_nvrtc_builtins_are_loaded_first_and_globally(tmp_path, monkeypatch):
    """The nvidia-cuda-nvrtc 13 wheel's libnvrtc cannot find libnvrtc-builtins by itself: the helper beside it, of
    the same major version, is loaded first with RTLD_GLOBAL; another major's is not."""
    import ctypes

    from kgpubench.features import toolchain

    folder = tmp_path / "nvidia" / "cuda_nvrtc" / "lib"
    folder.mkdir(parents=True)
    for name in ("libnvrtc.so.13", "libnvrtc-builtins.so.13.0", "libnvrtc-builtins.so.12.8"):
        (folder / name).write_bytes(b"")
    loaded = []

    class Lib:
        def __getattr__(self, name):
            fn = type("Fn", (), {})()
            setattr(self, name, fn)
            return fn

    def cdll(name, mode=0):
        loaded.append((Path(name).name, mode))
        return Lib()

    monkeypatch.setattr(ctypes, "CDLL", cdll)
    monkeypatch.setattr(toolchain, "_NVRTC_LIBS", {})  # nothing of this fake stays loaded for other tests
    toolchain._load_nvrtc(str(folder / "libnvrtc.so.13"))
    assert loaded == [("libnvrtc-builtins.so.13.0", ctypes.RTLD_GLOBAL), ("libnvrtc.so.13", 0)]
