"""Every power kernel compiles to PTX and assembles with ptxas for sm_70, sm_80 and sm_90, its PTX loops are
exactly the loops the spec gives trip counts for (every compile-time configuration of the sweep), and its
static features extract with those trip counts.

Compilation goes through :func:`kgpubench.features.check.compile_check_many` (nvcc where it supports the arch,
NVRTC + ptxas from the ``features`` extra for sm_70): one batch of all sources (default defines) per
architecture, and one batch of every distinct set of defines of the sweep (sm_90).
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import pytest

from kgpubench.features import extract_features
from kgpubench.features.cfg import build_cfg
from kgpubench.features.check import CompileUnit, compile_check_many
from kgpubench.features.expr import evaluate
from kgpubench.features.ptx import parse_ptx
from kgpubench.measure.features_link import trip_env
from kgpubench.measure.suites import load_suite

pytestmark = pytest.mark.slow  # every test compiles the suite's kernels for three architectures first

SUITE = load_suite("power")
power = importlib.import_module("kgpubench_collectors.power")
spec = importlib.import_module("kgpubench_collectors.power.spec")
SOURCES = sorted(power.KERNEL_DIR.glob("*.cu"))


@pytest.fixture(scope="module", params=["sm_70", "sm_80", "sm_90"])
def ptx_by_source(request, toolchain_for):
    arch = request.param
    mods = compile_check_many([CompileUnit(path) for path in SOURCES], arch, toolchain=toolchain_for(arch))
    return arch, {path.stem: mod for path, mod in zip(SOURCES, mods)}


def test_every_kernel_compiles_and_exposes_its_entry(ptx_by_source):
    arch, mods = ptx_by_source
    assert len(mods) == len(SOURCES) == 10
    for pk in spec.KERNELS:
        mod = mods[Path(pk.source).stem]
        entry = parse_ptx(mod.ptx).entry(pk.kernel)
        assert entry.name == pk.kernel  # extern "C": not mangled
        assert f".target {arch}" in mod.ptx
        assert len(entry.instructions) > 10
        assert mod.resources[pk.kernel].registers > 0  # ptxas assembled it for this arch


@pytest.fixture(scope="module")
def sweep_variants(toolchain_for):
    """``[(case, CheckedModule)]`` (sm_90) for every distinct (source, defines) of the full sweep, one batch."""
    tc = toolchain_for("sm_90")
    variants = {}
    for case in SUITE.cases(quick=False, sm_count=132):
        tag = case.source.path.stem + "".join(f"__{k}_{v}" for k, v in sorted(case.source.defines.items()))
        variants.setdefault(tag, case)
    units = [CompileUnit(Path(c.source.path), dict(c.source.defines), tuple(c.source.options), label=tag)
             for tag, c in variants.items()]
    return list(zip(variants.values(), compile_check_many(units, "sm_90", toolchain=tc)))


def test_sweep_has_32_distinct_compilations(sweep_variants):
    # dotp 3, madd 2, mtrans 3, scalar_prod 3, fwt 2 x 3, scan 2 x 3, histogram 3, dct 3, black_scholes 1,
    # binomial 2.
    assert len(sweep_variants) == 3 + 2 + 3 + 3 + 6 + 6 + 3 + 3 + 1 + 2 == 32


def test_ptx_loops_are_exactly_the_loops_with_trip_counts(sweep_variants):
    for case, mod in sweep_variants:
        cfg = build_cfg(parse_ptx(mod.ptx).entry(case.source.kernel))
        names = [next(n for n in loop.names if n.startswith("line:")) for loop in cfg.loops]
        assert sorted(names) == sorted(case.trip_counts), (case.label(), names)
        for loop in cfg.loops:  # nesting in the PTX follows the source: deeper loops have later lines
            if loop.parent is not None:
                parent = next(p for p in cfg.loops if p.id == loop.parent)
                assert parent.line < loop.line
        for expr in case.trip_counts.values():
            assert evaluate(expr, trip_env(case)) > 0


def test_features_extract_for_every_variant_with_the_declared_trip_counts(sweep_variants):
    """From the checked PTX (no second compile): every loop gets exactly its declared trip count."""
    seen = set()
    for case, mod in sweep_variants:
        env = trip_env(case)
        common = dict(arch="sm_90", grid=case.grid, block=case.block, sizes=env, sm_count=132,
                      dynamic_smem_bytes=int(case.shared_mem_bytes), ptx=mod.ptx)
        feats = extract_features(Path(case.source.path), case.source.kernel, trip_counts=case.trip_counts, **common)
        declared = {name: evaluate(expr, env) for name, expr in case.trip_counts.items()}
        assert {f"line:{lp['line']}": lp["trip_count"] for lp in feats.loops} == declared, case.label()
        cols = feats.as_columns()
        assert cols["nreg"] > 0 and cols["nb"] == case.grid[0] and cols["nt"] == math.prod(case.block)
        parts = ("lc", "lshr", "lshw", "lmr", "lmw", "ls", "ldpu", "lsfu")
        assert cols["l"] == pytest.approx(sum(cols[p] for p in parts))
        once = extract_features(Path(case.source.path), case.source.kernel, static_counts=True, **common)
        if max(declared.values()) > 1:  # the trip counts multiply the loop bodies
            assert cols["l"] > once.as_columns()["l"], case.label()
        seen.add(case.source.kernel)
    assert seen == {pk.kernel for pk in spec.KERNELS}


def test_case_features_extract_with_the_declared_trip_counts(sweep_variants, toolchain_for):
    """Through the harness entry point (``kgpubench.features.case_features``, which compiles and caches)."""
    from kgpubench.features import case_features

    toolchain_for("sm_90")
    case, _ = next((c, m) for c, m in sweep_variants if c.source.kernel == "binomial_options")
    row = case_features(case, arch="sm_90", env=trip_env(case))
    # The node loop runs steps x (steps + 1) / (2 nt) times per option: the executed count dwarfs the
    # instruction count of the kernel body.
    assert row["l"] > 1000 * 50
    assert row["ls"] > 0 and row["lshr"] > 0 and row["lshw"] > 0
