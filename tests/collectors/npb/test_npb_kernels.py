"""Every NPB kernel compiles to PTX and assembles with ptxas for sm_70, sm_80 and sm_90, and its PTX parses
into the kernel entries and control flow the features module reads.

Compilation goes through :func:`kgpubench.features.check.compile_check_many` (nvcc where it supports the arch,
NVRTC + ptxas from the ``features`` extra for sm_70): one batch of the four benchmarks per architecture.
"""

import importlib

import pytest

from kgpubench.features.check import CompileUnit, compile_check_many

BENCHES = ("EP", "CG", "MG", "FT")
EXPECTED = {
    "EP": ["ep"],
    "CG": [f"kernel_{w}" for w in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                   "ten", "eleven")],
    "MG": ["comm3", "interp", "norm2u3", "psinv", "resid", "rprj3", "zero3"],
    "FT": ["fftx_1", "fftx_2", "fftx_3", "ffty_1", "ffty_2", "ffty_3", "fftz_1", "fftz_2", "fftz_3", "checksum",
           "compute_indexmap", "compute_initial_conditions", "evolve", "init_ui"],
}


@pytest.fixture(scope="module", params=["sm_70", "sm_80", "sm_90"])
def compiled(request, npb, toolchain_for):
    """``(arch, {bench: CheckedModule})`` with every kernel at 1024 threads per block (a non-default
    assignment: the largest shared-memory reductions), one batch per architecture."""
    arch = request.param
    sources = importlib.import_module(npb.__name__ + ".sources")
    spec = importlib.import_module(npb.__name__ + ".spec")
    units = [CompileUnit(sources.source_path(b), sources.defines(b, spec.uniform_tpb(b, 1024)),
                         tuple(sources.COMPILE_OPTIONS), label=f"NPB {b} at 1024 threads per block") for b in BENCHES]
    return arch, dict(zip(BENCHES, compile_check_many(units, arch, toolchain=toolchain_for(arch))))


@pytest.mark.slow
@pytest.mark.parametrize("bench", BENCHES)
def test_compiles_for_every_arch_and_ptx_features_parse(npb, bench, compiled):
    from kgpubench.features.cfg import build_cfg
    from kgpubench.features.ptx import parse_ptx

    spec = importlib.import_module(npb.__name__ + ".spec")
    assert spec.kernel_names(bench) == EXPECTED[bench]
    arch, mods = compiled
    mod = mods[bench]
    assert f".target {arch}" in mod.ptx
    assert mod.entries == sorted(EXPECTED[bench])  # ptxas assembled every kernel for this arch
    assert all(res.registers > 0 for res in mod.resources.values())
    module = parse_ptx(mod.ptx)
    assert sorted(module.entries) == sorted(EXPECTED[bench])
    for name in EXPECTED[bench]:
        entry = module.entry(name)
        flow = build_cfg(entry)
        assert entry.instructions and flow.blocks
    # kernels with a loop over data have natural loops (MG's fixed 27-point loops are unrolled)
    looped = {"EP": "ep", "CG": "kernel_three", "FT": "fftx_2"}.get(bench)
    if looped:
        assert build_cfg(module.entry(looped)).loops
    else:
        assert not build_cfg(module.entry("psinv")).loops
    # the define reached the code: the reduction kernels' shared arrays are sized by it (1024 doubles)
    if bench in ("EP", "CG"):
        assert "[8192]" in mod.ptx


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


def test_static_features_extract_for_every_kernel(npb, toolchain_for):
    """Through the harness entry point (``kgpubench.features.case_features``) on the suite's quick cases.

    Loops with data-dependent trip counts (reductions, CSR rows, FFT passes) are counted statically here;
    loop-free kernels get exact executed counts."""
    from kgpubench.features import case_features

    toolchain_for("sm_80")
    seen = {}
    for case in npb.SUITE.cases(quick=True):
        key = (case.key["benchmark"], case.source.kernel)
        if key not in seen:
            seen[key] = case_features(case, arch="sm_80", static_counts=True)
    assert len(seen) == 1 + 11 + 7 + 14
    assert all(f["nreg"] > 0 and f["l"] > 0 for f in seen.values())
    # the first planned kernel_two case is TPB 32: its reduction array is 32 doubles = 64 words
    assert seen[("CG", "kernel_two")]["shmem_words"] == 64 and seen[("MG", "zero3")]["shmem_words"] == 0
