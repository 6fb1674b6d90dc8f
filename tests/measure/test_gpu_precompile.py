"""On a GPU (``pytest -m gpu``): ahead-of-time compilation through CuPy's NVRTC in worker processes, CUBINs
loaded and run, features from the workers, a warm cache on the second pass."""

from __future__ import annotations

import numpy as np
import pytest

from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.compile_cache import FeatureDevice, precompile
from kgpubench.measure.suites import load_suite

pytestmark = pytest.mark.gpu


def test_precompiled_cubins_run_and_the_cache_is_warm_the_second_time(tmp_path):
    backend = get_backend("cupy", compile_cache_dir=tmp_path)
    dev = backend.device()
    suite = load_suite("regular")
    cases = list(suite.cases(quick=True))
    feats = backend.precompile(cases)
    assert len(feats) == len(cases) and all(f and f["l"] > 0 and f["nreg"] for f in feats)
    case = next(c for c in cases if c.source.kernel == "vector_add")
    kernel = backend.compile(case.source)
    n = 4096
    a, b = backend.xp.arange(n, dtype=np.float32), backend.xp.ones(n, dtype=np.float32)
    c = backend.xp.zeros(n, dtype=np.float32)
    kernel((n // 256, 1, 1), (256, 1, 1), (a, b, c, np.int32(n)))
    assert float(c[n - 1]) == n and kernel.registers == feats[cases.index(case)]["nreg"]
    again = precompile(get_backend("cupy", compile_cache_dir=tmp_path).compile_cache, dev.arch, cases,
                       features=FeatureDevice(dev.arch, dev.sm_count))
    assert again.compiled == 0 and again.hits == len({str(c.source.path) for c in cases}) == 6  # 6 files
