"""compile_check / compile_check_many: source -> PTX -> ptxas through the toolchain chosen per architecture."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kgpubench.errors import DataFileNotFoundError, ToolchainError
from kgpubench.features import check as checkmod
from kgpubench.features import toolchain as tcmod
from kgpubench.features.check import CompileUnit, compile_check, compile_check_many
from kgpubench.features.toolchain import CompileError, find_toolchain

STORE = 'extern "C" __global__ void store(int* out) { out[threadIdx.x] = VALUE; }\n'
FLAG = ('#if FLAG != 1\n#error "FLAG must be 1"\n#endif\n'
        'extern "C" __global__ void flag(int* out) { out[0] = FLAG; }\n')
BAD = 'extern "C" __global__ void bad(int* out) { out[0] = UNDEFINED_THING; }\n'
BIG_SHARED = ('extern "C" __global__ void big(float* x) {\n  __shared__ float s[16384];\n'  # 64 KiB > 48 KiB
              '  s[threadIdx.x] = x[threadIdx.x];\n  __syncthreads();\n  x[threadIdx.x] = s[threadIdx.x + 1];\n}\n')


def _toolchain(arch):
    try:
        return find_toolchain(arch)
    except ToolchainError as exc:
        pytest.skip(f"no CUDA toolchain for {arch}: {exc}")


@pytest.mark.parametrize("arch", ["sm_70", "sm_90"])
def test_one_source_with_a_define(arch):
    tc = _toolchain(arch)
    mod = compile_check(STORE, arch, defines={"VALUE": 4711}, toolchain=tc)
    assert mod.arch == arch and mod.toolchain == tc
    assert f".target {arch}" in mod.ptx and ".entry store(" in mod.ptx
    assert re.search(r"\b4711\b", mod.ptx)  # the define reached the code
    assert mod.entries == ["store"] and mod.resources["store"].registers > 0
    assert mod.resources["store"].shared_bytes == 0
    # an empty value means 1, as -DFLAG does
    assert compile_check(FLAG, arch, defines={"FLAG": ""}, toolchain=tc).entries == ["flag"]


def test_a_file_source(tmp_path):
    tc = _toolchain("sm_90")
    cu = tmp_path / "k.cu"
    cu.write_text(STORE)
    mod = compile_check(cu, "sm_90", defines={"VALUE": 99}, toolchain=tc)
    assert re.search(r"\b99\b", mod.ptx) and mod.label == "k.cu (VALUE=99)"
    with pytest.raises(DataFileNotFoundError, match="missing.cu does not exist"):
        compile_check(tmp_path / "missing.cu", "sm_90", toolchain=tc)


def test_a_batch_keeps_order_and_defines_and_runs_nvcc_once(tmp_path, monkeypatch):
    tc = _toolchain("sm_90")
    if tc.nvcc is None:
        pytest.skip(f"sm_90 compiles with {tc.version} here, not nvcc: nothing to batch")
    cu = tmp_path / "store.cu"
    cu.write_text(STORE)
    calls = []
    real_run = subprocess.run

    def spy(cmd, *args, **kwargs):
        calls.append(Path(cmd[0]).name)
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(checkmod.subprocess, "run", spy)
    units = [CompileUnit(cu, {"VALUE": 101}), CompileUnit(STORE, {"VALUE": 202}), CompileUnit(cu, {"VALUE": 303})]
    mods = compile_check_many(units, "sm_90", toolchain=tc)
    assert [m.label for m in mods] == ["store.cu (VALUE=101)", "<source text> (VALUE=202)", "store.cu (VALUE=303)"]
    for mod, value in zip(mods, ("101", "202", "303")):
        assert re.findall(r"\b(101|202|303)\b", mod.ptx) == [value]
        assert mod.entries == ["store"]
    assert calls.count("nvcc") == 1 and calls.count("ptxas") == 3


@pytest.mark.parametrize("arch", ["sm_70", "sm_90"])
def test_a_compile_error_names_the_unit_and_carries_the_compilers_message(arch):
    tc = _toolchain(arch)
    units = [CompileUnit(STORE, {"VALUE": 1}), CompileUnit(BAD, label="the bad one")]
    with pytest.raises(CompileError) as info:
        compile_check_many(units, arch, toolchain=tc)
    message = str(info.value)
    assert message.startswith(f"compile check of the bad one for {arch} failed")
    assert 'identifier "UNDEFINED_THING" is undefined' in message


def test_ptxas_checks_the_targets_limits():
    tc = _toolchain("sm_70")
    # PTX is fine; the static shared-memory limit (48 KiB = 0xc000) is ptxas's to enforce.
    with pytest.raises(CompileError, match=r"for sm_70 failed: ptxas could not assemble(.|\n)*too much shared data"):
        compile_check(BIG_SHARED, "sm_70", toolchain=tc)


def test_no_toolchain_says_what_to_install(monkeypatch, tmp_path):
    for var in ("KGPUBENCH_NVCC", "KGPUBENCH_NVRTC", "KGPUBENCH_COMPILER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KGPUBENCH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tcmod, "_candidate_dirs", list)
    monkeypatch.setattr(tcmod, "_nvrtc_candidates", list)
    with pytest.raises(ToolchainError, match=r'pip install "kgpubench\[features\]"') as info:
        compile_check(STORE, "sm_70", defines={"VALUE": 1})
    assert not isinstance(info.value, CompileError)
