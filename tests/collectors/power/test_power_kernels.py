"""Every power kernel compiles to PTX with nvcc (sm_70, sm_80, sm_90) and its PTX loops are exactly the loops
the spec gives trip counts for, for every compile-time configuration of the sweep.

nvcc runs once per architecture on all sources (default defines), plus once for every distinct set of
defines of the sweep (wrapper files that define the parameters and include the kernel source).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from pathlib import Path

import pytest

from kgpubench.features.cfg import build_cfg
from kgpubench.features.expr import evaluate
from kgpubench.features.ptx import parse_ptx
from kgpubench.measure.features_link import trip_env
from kgpubench.measure.suites import load_suite

SUITE = load_suite("power")
power = importlib.import_module("kgpubench_collectors.power")
spec = importlib.import_module("kgpubench_collectors.power.spec")
NVCC = shutil.which("nvcc")
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
SOURCES = sorted(power.KERNEL_DIR.glob("*.cu"))


def _supported_archs() -> set[str]:
    out = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True, check=True).stdout
    return {line.strip().replace("compute_", "sm_") for line in out.split()}


def _nvcc_ptx(files: list[Path], arch: str, outdir: Path) -> dict[str, str]:
    proc = subprocess.run([NVCC, "-ptx", "-lineinfo", f"-arch={arch}", *map(str, files), "-odir", str(outdir)],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return {f.stem: (outdir / f"{f.stem}.ptx").read_text() for f in files}


@pytest.fixture(scope="module", params=["sm_70", "sm_80", "sm_90"])
def ptx_by_source(request, tmp_path_factory):
    arch = request.param
    if arch not in _supported_archs():
        pytest.skip(f"this nvcc ({NVCC}) cannot target {arch} (CUDA 13 dropped Volta); a CUDA 12 nvcc can")
    return arch, _nvcc_ptx(SOURCES, arch, tmp_path_factory.mktemp(arch))


def test_every_kernel_compiles_and_exposes_its_entry(ptx_by_source):
    arch, ptx = ptx_by_source
    assert len(ptx) == len(SOURCES) == 10
    for pk in spec.KERNELS:
        module = parse_ptx(ptx[Path(pk.source).stem])
        entry = module.entry(pk.kernel)
        assert entry.name == pk.kernel  # extern "C": not mangled
        assert f".target {arch}" in ptx[Path(pk.source).stem]
        assert len(entry.instructions) > 10


@pytest.fixture(scope="module")
def sweep_variants(tmp_path_factory):
    """PTX (sm_90) of every distinct (source, defines) of the full sweep, from one nvcc call."""
    tmp = tmp_path_factory.mktemp("variants")
    if "sm_90" not in _supported_archs():
        pytest.skip("this nvcc cannot target sm_90")
    variants = {}
    for case in SUITE.cases(quick=False, sm_count=132):
        tag = case.source.path.stem + "".join(f"__{k}_{v}" for k, v in sorted(case.source.defines.items()))
        variants.setdefault(tag, case)
    files = []
    for tag, case in variants.items():
        defines = "".join(f"#define {k} {v}\n" for k, v in sorted(case.source.defines.items()))
        wrapper = tmp / f"{tag}.cu"
        wrapper.write_text(f'{defines}#include "{case.source.path}"\n')
        files.append(wrapper)
    ptx = _nvcc_ptx(files, "sm_90", tmp)
    return [(case, ptx[tag]) for tag, case in variants.items()]


def test_sweep_has_32_distinct_compilations(sweep_variants):
    # dotp 3, madd 2, mtrans 3, scalar_prod 3, fwt 2 x 3, scan 2 x 3, histogram 3, dct 3, black_scholes 1,
    # binomial 2.
    assert len(sweep_variants) == 3 + 2 + 3 + 3 + 6 + 6 + 3 + 3 + 1 + 2 == 32


def test_ptx_loops_are_exactly_the_loops_with_trip_counts(sweep_variants):
    for case, text in sweep_variants:
        cfg = build_cfg(parse_ptx(text).entry(case.source.kernel))
        names = [next(n for n in loop.names if n.startswith("line:")) for loop in cfg.loops]
        assert sorted(names) == sorted(case.trip_counts), (case.label(), names)
        for loop in cfg.loops:  # nesting in the PTX follows the source: deeper loops have later lines
            if loop.parent is not None:
                parent = next(p for p in cfg.loops if p.id == loop.parent)
                assert parent.line < loop.line
        for expr in case.trip_counts.values():
            assert evaluate(expr, trip_env(case)) > 0


def test_case_features_extract_with_the_declared_trip_counts(sweep_variants):
    features = pytest.importorskip("kgpubench.features")
    extract = getattr(features, "case_features", None)
    if extract is None:
        pytest.skip("kgpubench.features has no case_features() yet")
    case, _ = next((c, t) for c, t in sweep_variants if c.source.kernel == "binomial_options")
    row = extract(case, arch="sm_90", env=trip_env(case))
    # The node loop runs steps x (steps + 1) / (2 nt) times per option: the executed count dwarfs the
    # instruction count of the kernel body.
    assert row["l"] > 1000 * 50
    assert row["ls"] > 0 and row["lshr"] > 0 and row["lshw"] > 0
