"""On a GPU (``pytest -m gpu``): ahead-of-time compilation through CuPy's NVRTC in worker processes, CUBINs
loaded and run, features from the workers, a warm cache on the second pass."""

from __future__ import annotations

import numpy as np
import pytest

from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.compile_cache import (
    CompileCache,
    CupyNvrtc,
    FeatureDevice,
    Variant,
    describe_case_features,
    precompile,
)
from kgpubench.measure.suites import load_suite

pytestmark = pytest.mark.gpu


def bad_columns(cols) -> list[str]:
    """What is wrong with one case's worker features: nothing, or the columns that must be there and are not
    (``l`` > 0 executed instructions, ``nreg`` > 0 registers from the ptxas report)."""
    if not cols:
        return [f"no feature columns ({cols!r})"]
    out = []
    if not (isinstance(cols.get("l"), (int, float)) and cols["l"] > 0):
        out.append(f"l={cols.get('l')!r}, expected > 0")
    if not cols.get("nreg"):
        out.append(f"nreg={cols.get('nreg')!r}, expected the registers of the ptxas report")
    return out


def failure_report(backend, device, cases, feats) -> str:
    """Each bad case with its bad columns; the first of each kernel also with
    :func:`~kgpubench.measure.compile_cache.describe_case_features` (cache entry, ptxas report, log, columns
    recomputed in this process)."""
    lines, described = [], set()
    bad = [(i, case) for i, case in enumerate(cases) if bad_columns(feats[i])]
    for i, case in bad:
        lines.append(f"case {i} ({case.source.kernel} {dict(case.sizes)} block {tuple(case.block)}): "
                     + "; ".join(bad_columns(feats[i])))
        if case.source.kernel not in described:
            described.add(case.source.kernel)
            lines.append(describe_case_features(backend.compile_cache, device, case, feats[i]))
    if bad:
        lines.append(nvrtc_cache_trace(backend.compile_cache, device, bad[0][1]))
    return f"{len(bad)} of {len(cases)} quick cases lack features from the compile workers:\n" + "\n".join(lines)


def nvrtc_cache_trace(cache, device, case) -> str:
    """The variant of ``case`` compiled once more, here, with NVRTC's ``--enable-cache-trace`` (12.9+): whether
    NVRTC took the CUBIN from the driver's cache (which leaves the ptxas report out) despite ``--no-cache``."""
    variant = Variant.of(case.source, device.arch)
    out = cache.compiler(variant.text, variant.filename, [*variant.nvrtc_options(), "--enable-cache-trace"])
    log = [ln.strip() for ln in out.log.splitlines() if ln.strip()]
    return (f"NVRTC again with --enable-cache-trace (status {out.status}, {len(log)} log lines): "
            + (" | ".join(log[:12]) if log else "empty"))


def test_precompiled_cubins_run_and_the_cache_is_warm_the_second_time(tmp_path):
    backend = get_backend("cupy", compile_cache_dir=tmp_path / "cache")
    dev = backend.device()
    suite = load_suite("regular")
    cases = list(suite.cases(quick=True))
    # The same variants compiled once before into another compile cache, as the GPU session's background
    # precompile does: NVRTC 12.9+ keeps their CUBINs in the driver's cache, and only --no-cache keeps it from
    # handing them back below without a ptxas report (the nreg=None of the H200 on 2026-11-26 and 2026-11-29).
    earlier = precompile(CompileCache(tmp_path / "earlier", compiler=CupyNvrtc.find()), dev.arch, cases, jobs=1)
    assert earlier.compiled == 6 and not earlier.failures
    feats = backend.precompile(cases)
    assert len(feats) == len(cases)
    device = FeatureDevice(dev.arch, dev.sm_count)
    assert not any(bad_columns(f) for f in feats), failure_report(backend, device, cases, feats)
    case = next(c for c in cases if c.source.kernel == "vector_add")
    kernel = backend.compile(case.source)
    n = 4096
    a, b = backend.xp.arange(n, dtype=np.float32), backend.xp.ones(n, dtype=np.float32)
    c = backend.xp.zeros(n, dtype=np.float32)
    kernel((n // 256, 1, 1), (256, 1, 1), (a, b, c, np.int32(n)))
    assert float(c[n - 1]) == n and kernel.registers == feats[cases.index(case)]["nreg"]
    again = precompile(get_backend("cupy", compile_cache_dir=tmp_path / "cache").compile_cache, dev.arch, cases,
                       features=device)
    assert again.compiled == 0 and again.hits == len({str(c.source.path) for c in cases}) == 6  # 6 files
