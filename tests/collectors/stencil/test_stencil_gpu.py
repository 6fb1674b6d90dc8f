"""On a GPU: every quick configuration compiles with NVRTC, verifies against the reference and is timed."""

from __future__ import annotations

import pytest

from kgpubench.errors import NoGpuError
from kgpubench.measure.suites import load_suite

pytestmark = pytest.mark.gpu


def _backend():
    pytest.importorskip("cupy")
    from kgpubench.measure.backends.registry import get_backend

    try:
        return get_backend("cupy")
    except NoGpuError as exc:
        pytest.skip(str(exc))


def test_quick_cases_verify_and_time_on_the_gpu():
    from kgpubench.measure.runner import measure_case

    backend = _backend()
    suite = load_suite("stencil")
    cases = list(suite.cases(quick=True))
    assert len(cases) == 10
    for case in cases:
        out = measure_case(case, suite, backend)
        assert out.status == "ok", f"{case.label()}: {out.detail}"
        assert out.columns["time_ms_median"] > 0


def test_verification_catches_a_wrong_space_order_on_the_gpu():
    from dataclasses import replace

    from kgpubench.measure.runner import measure_case

    backend = _backend()
    suite = load_suite("stencil")
    case = next(iter(suite.cases(quick=True)))
    # Build the kernel for order 2 while the case (and its reference) says order 8.
    wrong = replace(case, source=replace(case.source, defines={**case.source.defines, "KG_SPACE_ORDER": 2}))
    out = measure_case(wrong, suite, backend)
    assert out.status == "verification_failed"
