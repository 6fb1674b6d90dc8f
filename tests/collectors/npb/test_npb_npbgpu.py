"""The NPB-GPU adapter: config files, report parsing (texts written to SPEC-npb.md's format), rows."""

import importlib

import pytest

CG_REPORT = """
 CG Benchmark Completed.
 Class           =                        S
 Size            =                     1400
 Iterations      =                       15
 Time in seconds =                         0.25
 Mop/s total     =                     265.01
 Operation type  =           floating point
 Verification    =               SUCCESSFUL

 GPU Kernel\tThreads Per Block\tTime in Seconds\tTime in Percentage
 conj_grad kernel one\t1024\t0.0010\t0.40%
 conj_grad kernel two\t256\t0.0020\t0.80%
 conj_grad kernel three\t64\t0.1000\t40.00%
 conj_grad kernel eleven\t512\t0.0005\t0.20%

"""

MG_REPORT_FAILED = """ MG Benchmark Completed.
 Class           =                        W
 Time in seconds =                         1.50
 Mop/s total     =                    1000.00
 Verification    =             UNSUCCESSFUL
 GPU Kernel\tThreads Per Block
 comm3\t1024
 interp\t64
"""


@pytest.fixture(scope="module")
def ng(npb):
    return importlib.import_module(npb.__name__ + ".npbgpu")


def test_parse_profiling_report(ng):
    r = ng.parse_report(CG_REPORT)
    assert (r.benchmark, r.npb_class, r.time_s, r.verified) == ("CG", "S", 0.25, True)
    assert list(r.kernels) == ["kernel_one", "kernel_two", "kernel_three", "kernel_eleven"]
    assert r.kernels["kernel_three"] == {"tpb": 64.0, "time_s": 0.1, "percent": 40.0}


def test_parse_report_without_timers_and_failed_verification(ng):
    r = ng.parse_report(MG_REPORT_FAILED)
    assert r.verification == "UNSUCCESSFUL" and not r.verified
    assert r.kernels == {"comm3": {"tpb": 1024.0}, "interp": {"tpb": 64.0}}


def test_truncated_output_names_what_is_missing(ng):
    with pytest.raises(ng.NpbGpuError, match="Verification ="):
        ng.parse_report(" CG Benchmark Completed.\n Class = S\n Time in seconds = 1.0\n")


def test_gpu_config_keeps_defaults_and_sets_the_assignment(ng):
    text = ng.gpu_config_text({"MG": {"psinv": 64}})
    lines = dict(ln.split(" = ") for ln in text.strip().splitlines())
    assert lines["MG_THREADS_PER_BLOCK_ON_PSINV"] == "64"
    assert lines["MG_THREADS_PER_BLOCK_ON_RESID"] == "512"
    assert lines["CG_THREADS_PER_BLOCK_ON_KERNEL_ONE"] == "1024" and lines["EP_THREADS_PER_BLOCK"] == "32"
    assert lines["FT_THREADS_PER_BLOCK_ON_FFTX_1"] == "1024" and len(lines) == 1 + 11 + 7 + 14


def test_cuda_dir_errors_name_the_option(ng, tmp_path):
    with pytest.raises(FileNotFoundError, match="--npb-gpu-src"):
        ng.cuda_dir(tmp_path)
    (tmp_path / "CUDA" / "config").mkdir(parents=True)
    assert ng.cuda_dir(tmp_path) == tmp_path / "CUDA"


def test_collect_drives_make_and_run_and_restores_config(ng, tmp_path):
    cuda = tmp_path / "CUDA"
    (cuda / "config").mkdir(parents=True)
    (cuda / "config" / "gpu.config").write_text("ORIGINAL\n")
    calls, configs = [], []

    def shell(cmd, cwd, timeout):
        calls.append(cmd)
        if cmd[0] == "make":
            configs.append((cwd / "config" / "gpu.config").read_text())
            return ""
        tpb1 = int(configs[-1].split("CG_THREADS_PER_BLOCK_ON_KERNEL_ONE = ")[1].split()[0])
        return CG_REPORT.replace("kernel one\t1024\t0.0010", f"kernel one\t{tpb1}\t0.0010")

    rows = ng.collect_npb_gpu(tmp_path, benchmarks=["CG"], classes=["S"], tpbs=[32, 1024], runs=2, shell=shell)
    assert (cuda / "timer.flag").exists() and (cuda / "config" / "gpu.config").read_text() == "ORIGINAL\n"
    # 3 run assignments + 11 kernels x 2 TPB = 25 builds, each run twice
    assert sum(c[0] == "make" for c in calls) == 25 and calls[0] == ["make", "cg", "CLASS=S"]
    assert sum(c[0] == "./bin/cg.S" for c in calls) == 50
    assert len(rows) == 25
    run_default = rows[0]
    assert run_default["row_kind"] == "run" and run_default["assignment"] == "default"
    assert run_default["app_time_s"] == 0.25 and run_default["time_ms_median"] == 250.0
    assert run_default["remainder_s"] == pytest.approx(0.25 - 0.1035)
    one32 = next(r for r in rows if r["kernel"] == "kernel_one" and r["tpb"] == 32)
    assert one32["tpb_effective"] == 32 and one32["time_ms_median"] == pytest.approx(1.0)
    assert one32["variant"] == "npb-gpu" and one32["status"] == "ok"
    # kernels the table does not list get no time: infeasible with a reason, never a made-up value
    five = next(r for r in rows if r["kernel"] == "kernel_five" and r["tpb"] == 32)
    assert five["status"] == "infeasible" and "time_ms_median" not in five
