"""Every NPB kernel compiles with nvcc (sm_80, sm_90; sm_70 where the nvcc still supports it) and its PTX
parses into the kernel entries and control flow the features module reads."""

import importlib
import shutil
import subprocess

import pytest

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")

EXPECTED = {
    "EP": ["ep"],
    "CG": [f"kernel_{w}" for w in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                   "ten", "eleven")],
    "MG": ["comm3", "interp", "norm2u3", "psinv", "resid", "rprj3", "zero3"],
    "FT": ["fftx_1", "fftx_2", "fftx_3", "ffty_1", "ffty_2", "ffty_3", "fftz_1", "fftz_2", "fftz_3", "checksum",
           "compute_indexmap", "compute_initial_conditions", "evolve", "init_ui"],
}


def _archs():
    out = subprocess.run(["nvcc", "--list-gpu-arch"], check=True, capture_output=True, text=True).stdout.split()
    return [a for a in ("70", "80", "90") if f"compute_{a}" in out]


@pytest.mark.parametrize("bench", ["EP", "CG", "MG", "FT"])
def test_compiles_for_every_arch_and_ptx_features_parse(npb, bench, tmp_path):
    sources = importlib.import_module(npb.__name__ + ".sources")
    spec = importlib.import_module(npb.__name__ + ".spec")
    assert spec.kernel_names(bench) == EXPECTED[bench]
    archs = _archs()
    assert "80" in archs and "90" in archs
    # a non-default assignment: every kernel at 1024 threads (the largest shared-memory reductions)
    defs = sources.defines(bench, spec.uniform_tpb(bench, 1024))
    dflags = [f"-D{k}={v}" for k, v in defs.items()]
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    src = sources.source_path(bench)
    subprocess.run(["nvcc", "-fatbin", *gencode, *dflags, *sources.COMPILE_OPTIONS, "-o",
                    str(tmp_path / "k.fatbin"), str(src)], check=True, capture_output=True)
    ptx = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_80", "-lineinfo", *dflags, *sources.COMPILE_OPTIONS, "-o",
                    str(ptx), str(src)], check=True, capture_output=True)
    from kgpubench.features.cfg import build_cfg
    from kgpubench.features.ptx import parse_ptx

    module = parse_ptx(ptx.read_text())
    assert sorted(module.entries) == sorted(EXPECTED[bench])
    for name in EXPECTED[bench]:
        entry = module.entry(name)
        flow = build_cfg(entry)
        assert entry.instructions and flow.blocks
    # kernels with a loop over data have natural loops (MG's fixed 27-point loops are unrolled by nvcc)
    looped = {"EP": "ep", "CG": "kernel_three", "FT": "fftx_2"}.get(bench)
    if looped:
        assert build_cfg(module.entry(looped)).loops
    else:
        assert not build_cfg(module.entry("psinv")).loops
    # the define reached the code: the reduction kernels' shared arrays are sized by it (1024 doubles)
    if bench in ("EP", "CG"):
        assert "[8192]" in ptx.read_text()


def test_defines_follow_npb_gpu_keys_and_defaults(npb):
    sources = importlib.import_module(npb.__name__ + ".sources")
    d = sources.defines("CG", {"kernel_three": 128})
    assert d["CG_THREADS_PER_BLOCK_ON_KERNEL_THREE"] == 128
    assert d["CG_THREADS_PER_BLOCK_ON_KERNEL_ONE"] == 1024 and d["CG_THREADS_PER_BLOCK_ON_KERNEL_EIGHT"] == 64
    assert sources.defines("MG")["MG_THREADS_PER_BLOCK_ON_ZERO3"] == 128
    assert sources.defines("FT")["FT_THREADS_PER_BLOCK_ON_FFTX_3"] == 256
    assert sources.defines("EP") == {"EP_THREADS_PER_BLOCK": 32}


def test_bad_assignments_raise_with_the_fix(npb):
    sources = importlib.import_module(npb.__name__ + ".sources")
    with pytest.raises(KeyError, match="kernel_three"):
        sources.defines("CG", {"kernel_tree": 64})
    with pytest.raises(ValueError, match="power of two"):
        sources.defines("MG", {"resid": 96})


def test_static_features_extract_for_every_kernel(npb):
    """Through the harness entry point (``kgpubench.features.case_features``) on the suite's quick cases.

    Loops with data-dependent trip counts (reductions, CSR rows, FFT passes) are counted statically here;
    loop-free kernels get exact executed counts."""
    from kgpubench.features import case_features

    seen = {}
    for case in npb.SUITE.cases(quick=True):
        key = (case.key["benchmark"], case.source.kernel)
        if key not in seen:
            seen[key] = case_features(case, arch="sm_80", static_counts=True)
    assert len(seen) == 1 + 11 + 7 + 14
    assert all(f["nreg"] > 0 and f["l"] > 0 for f in seen.values())
    # the first planned kernel_two case is TPB 32: its reduction array is 32 doubles = 64 words
    assert seen[("CG", "kernel_two")]["shmem_words"] == 64 and seen[("MG", "zero3")]["shmem_words"] == 0
