"""What NVRTC's program log carries into the features, without a GPU or CuPy: CuPy's binding faked with the log
text NVRTC 13 prints, a log without a ptxas report, and the failure description the GPU test prints."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_gpu_precompile import bad_columns, failure_report

from kgpubench.features.toolchain import parse_ptxas_report
from kgpubench.measure.compile_cache import (
    CompileCache,
    CompileOutput,
    CupyNvrtc,
    FeatureDevice,
    Variant,
    describe_case_features,
    precompile,
    program_text,
)
from kgpubench.measure.suite import Case, KernelSource

KERNEL = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = K; }\n'
# What CuPy 14.2's nvrtc.getProgramLog returned for KERNEL (-DK=1 -std=c++17 --gpu-architecture=sm_90
# --generate-line-info -Xptxas=-v) with NVRTC 13.0.88 to 13.5.37 from NVIDIA's wheels: the ptxas report, and
# the C string's NUL terminator at the end.
NVRTC13_LOG = ("ptxas info    : 0 bytes gmem\n"
               "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
               "ptxas info    : Function properties for k\n"
               "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
               "ptxas info    : Used 10 registers, used 0 barriers\n"
               "ptxas info    : Compile time = 2.663 ms\n")
# The PTX NVRTC 13.0 gave for it (header comments and the .file path shortened).
KERNEL_PTX = """.version 9.0
.target sm_90
.address_size 64

	// .globl	k

.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .b32 	%r<3>;
	.reg .b64 	%rd<5>;
	.loc	1 1 0


	ld.param.u64 	%rd1, [k_param_0];
	.loc	1 1 28
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %tid.x;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	mov.u32 	%r2, 1065353216;
	st.global.u32 	[%rd4], %r2;
	ret;

}

	.file	1 "k.cu"
"""
DEVICE = FeatureDevice("sm_90", 132)


# What CuPy 14.2.0's nvrtc.getProgramLog returned for collectors/regular/kernels/srad.cu (-std=c++17
# --gpu-architecture=sm_90 --generate-line-info -Xptxas=-v --no-cache) with NVRTC 13.0.88 (nvidia-cuda-nvrtc
# 13.0.88, cuda-bindings 13.3.1), captured on 2026-11-29 on a machine without a GPU: two entries, in the order
# ptxas compiled them, and the NUL terminator.
SRAD_NVRTC13_LOG = ("ptxas info    : 0 bytes gmem\n"
                    "ptxas info    : Compiling entry function 'srad_cuda_2' for 'sm_90'\n"
                    "ptxas info    : Function properties for srad_cuda_2\n"
                    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                    "ptxas info    : Used 26 registers, used 0 barriers\n"
                    "ptxas info    : Compile time = 3.500 ms\n"
                    "ptxas info    : Compiling entry function 'srad_cuda_1' for 'sm_90'\n"
                    "ptxas info    : Function properties for srad_cuda_1\n"
                    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                    "ptxas info    : Used 21 registers, used 0 barriers\n"
                    "ptxas info    : Compile time = 14.619 ms\n\0")


def _fake_cupy(monkeypatch, log, ptx=KERNEL_PTX.encode(), options_seen=None):
    """``cupy.cuda.nvrtc`` as far as :class:`CupyNvrtc` uses it, returning ``log`` as the program log (and
    appending the options of each compilation to ``options_seen``)."""
    nvrtc = types.ModuleType("cupy.cuda.nvrtc")

    class NVRTCError(Exception):
        pass

    nvrtc.NVRTCError = NVRTCError
    nvrtc.getVersion = lambda: (13, 0)
    nvrtc.createProgram = lambda text, name, headers, includes: object()
    nvrtc.compileProgram = lambda prog, options: None if options_seen is None else options_seen.append(list(options))
    nvrtc.getPTX = lambda prog: ptx
    nvrtc.getCUBIN = lambda prog: b"\x7fELF fake"
    nvrtc.getProgramLog = lambda prog: log
    nvrtc.destroyProgram = lambda prog: None
    cuda = types.ModuleType("cupy.cuda")
    cuda.nvrtc = nvrtc
    cupy = types.ModuleType("cupy")
    cupy.cuda = cuda
    for name, module in (("cupy", cupy), ("cupy.cuda", cuda), ("cupy.cuda.nvrtc", nvrtc)):
        monkeypatch.setitem(sys.modules, name, module)


@pytest.mark.parametrize("log", [NVRTC13_LOG + "\0", (NVRTC13_LOG + "\0").encode()], ids=["str", "bytes"])
def test_cupy_nvrtc_log_is_text_whose_ptxas_report_parses(monkeypatch, log):
    _fake_cupy(monkeypatch, log)
    compiler = CupyNvrtc.find()
    out = compiler(KERNEL, "k.cu", ["-DK=1", "--gpu-architecture=sm_90", "-Xptxas=-v"])
    assert compiler.version == "nvrtc 13.0 (cupy)" and out.ok and out.ptx == KERNEL_PTX
    # Bytes are decoded, not str()-ed into one line of escaped newlines; the NUL terminator is gone.
    assert out.log == NVRTC13_LOG
    res = parse_ptxas_report(out.log)["k"]
    assert (res.registers, res.barriers, res.stack_bytes, res.spill_store_bytes) == (10, 0, 0, 0)


def test_the_captured_log_of_a_two_entry_regular_kernel_gives_each_entry_its_figures(monkeypatch, tmp_path):
    """CuPy's binding (faked) returns the log NVRTC 13.0 printed for srad.cu; the compile cache passes
    --no-cache through to NVRTC and keeps the log, whose ptxas report gives both entries their own figures."""
    seen: list[list[str]] = []
    _fake_cupy(monkeypatch, SRAD_NVRTC13_LOG, options_seen=seen)
    path = tmp_path / "srad.cu"
    path.write_text("// the text does not matter to the faked binding\n")
    art, _hit = CompileCache(tmp_path / "cache", compiler=CupyNvrtc.find()).get(
        Variant.of(KernelSource(path, "srad_cuda_1"), "sm_90"))
    assert seen == [["-std=c++17", "--gpu-architecture=sm_90", "--generate-line-info", "-Xptxas=-v", "--no-cache"]]
    assert art.log == SRAD_NVRTC13_LOG[:-1] and art.compiler == "nvrtc 13.0 (cupy)"
    res = art.resources()
    assert sorted(res) == ["srad_cuda_1", "srad_cuda_2"]
    assert (res["srad_cuda_1"].registers, res["srad_cuda_2"].registers) == (21, 26)
    for entry in res.values():
        assert (entry.stack_bytes, entry.spill_store_bytes, entry.spill_load_bytes, entry.barriers) == (0, 0, 0, 0)


def test_program_text_of_each_binding_type():
    assert program_text(None) == "" and program_text(b"a\nb\0") == "a\nb" and program_text("a\0") == "a"
    assert program_text(bytearray(b"x")) == "x" and program_text(memoryview(b"y\0")) == "y"


@dataclass(frozen=True)
class LoggingCompiler:
    """NVRTC stand-in: the real PTX of KERNEL, and ``log`` as the program log."""

    log: str
    version: str = "fake-nvrtc 13.0"

    def __call__(self, text, filename, options):
        return CompileOutput(status=0, ptx=KERNEL_PTX, cubin=b"\x7fELF", log=self.log)


def _case(tmp_path: Path, nt: int = 32) -> Case:
    path = tmp_path / "k.cu"
    path.write_text(KERNEL)
    return Case(key={"kernel": "k"}, columns={}, source=KernelSource(path, "k", defines={"K": 1}), grid=(1, 1, 1),
                block=(nt, 1, 1))


def test_the_report_of_nvrtc_13_gives_every_resource_column(tmp_path):
    cache = CompileCache(tmp_path / "cache", compiler=LoggingCompiler(NVRTC13_LOG))
    done = precompile(cache, "sm_90", [_case(tmp_path)], features=DEVICE, jobs=1)
    cols = done.features[0]
    assert cols["l"] > 0 and cols["nreg"] == 10 and cols["stack_bytes"] == 0 and cols["occupancy"] == 0.5
    assert done.warnings == []


@pytest.mark.parametrize(("log", "says"), [
    ("", "is empty (an NVRTC 12.9+ that took the CUBIN from the driver's cache without running ptxas, compiled "
         "without --no-cache;"),
    ("ptxas info    : 0 bytes gmem\n", "has no register count (1 lines, the first 'ptxas info    : 0 bytes gmem')"),
    (NVRTC13_LOG.replace("'k'", "'other'").replace(" for k", " for other"), "names only other"),
], ids=["empty", "no-count", "other-entry"])
def test_an_entry_without_a_ptxas_report_is_said_on_every_call(tmp_path, log, says):
    cache = CompileCache(tmp_path / "cache", compiler=LoggingCompiler(log))
    cases = [_case(tmp_path, 32), _case(tmp_path, 64)]
    for _ in range(2):  # compiled, then from the cache: the warning comes back with each call
        done = precompile(cache, "sm_90", cases, features=DEVICE, jobs=1)
        assert [c["nreg"] for c in done.features] == [None, None] and all(c["l"] > 0 for c in done.features)
        assert len(done.warnings) == 1, done.warnings
        assert says in done.warnings[0] and "not entry k" in done.warnings[0] and "fake-nvrtc 13.0" in done.warnings[0]
    text = describe_case_features(cache, DEVICE, cases[1], done.features[1])
    assert text.startswith("k {} grid (1, 1, 1) block (64, 1, 1): l=") and "nreg=None" in text
    assert "compiler fake-nvrtc 13.0; ptxas report (entry: registers) " in text and "PTX entries k" in text
    assert "recomputed in this process: l=" in text and f"warning: {done.warnings[0]}" in text


def test_the_description_of_a_good_case_and_of_an_uncompiled_one(tmp_path):
    cache = CompileCache(tmp_path / "cache", compiler=LoggingCompiler(NVRTC13_LOG))
    case = _case(tmp_path)
    assert "no cache entry for k.cu -DK=1 -std=c++17" in describe_case_features(cache, DEVICE, case, {})
    cols = precompile(cache, "sm_90", [case], features=DEVICE, jobs=1).features[0]
    text = describe_case_features(cache, DEVICE, case, cols)
    assert f"l={cols['l']!r} nreg=10" in text and "ptxas report (entry: registers) {'k': 10}" in text
    assert f"recomputed in this process: l={cols['l']!r} nreg=10\n" in text and "warning" not in text
    assert "log (6 lines): ptxas info    : 0 bytes gmem | ptxas info    : Compiling entry function 'k'" in text


def test_the_gpu_tests_failure_report_names_cases_columns_and_why(tmp_path):
    good = {"l": 7.0, "nreg": 10}
    assert bad_columns(good) == [] and bad_columns(None) == ["no feature columns (None)"]
    assert bad_columns({"l": 0.0, "nreg": None}) == ["l=0.0, expected > 0",
                                                     "nreg=None, expected the registers of the ptxas report"]
    cache = CompileCache(tmp_path / "cache", compiler=LoggingCompiler(""))
    cases = [_case(tmp_path, 32), _case(tmp_path, 64)]
    feats = precompile(cache, "sm_90", cases, features=DEVICE, jobs=1).features
    report = failure_report(types.SimpleNamespace(compile_cache=cache), DEVICE, cases, [good, *feats[1:]])
    assert report.startswith("1 of 2 quick cases lack features from the compile workers:\n"
                             "case 1 (k {} block (64, 1, 1)): nreg=None, expected the registers of the ptxas report\n"
                             "k {} grid (1, 1, 1) block (64, 1, 1): l=")
    assert "the ptxas report in the log of fake-nvrtc 13.0 is empty" in report and "log (0 lines): empty" in report
    # ... and ends with the first bad case compiled once more with NVRTC's cache trace (here the fake's empty log)
    assert report.endswith("\nNVRTC again with --enable-cache-trace (status 0, 0 log lines): empty")
