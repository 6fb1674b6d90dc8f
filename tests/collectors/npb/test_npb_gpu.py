"""On a GPU: our CUDA kernels reproduce the official class S values at the default, max and warp
assignments, through the real backend (NVRTC) and CUDA events."""

import importlib

import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("bench", ["EP", "CG", "MG", "FT"])
@pytest.mark.parametrize("assignment", ["default", "max", "warp"])
def test_official_class_s_on_gpu(npb, bench, assignment):
    from kgpubench.measure.backend import get_backend

    d = importlib.import_module(npb.__name__ + ".driver")
    spec = importlib.import_module(npb.__name__ + ".spec")
    apps = importlib.import_module(npb.__name__ + ".apps")
    backend = get_backend("cupy")
    tpb = spec.default_tpb(bench) if assignment == "default" else spec.uniform_tpb(bench, d.UNIFORM[assignment])
    app = apps.APPS[bench]("S", backend.xp)
    app.setup()
    meas = d.measure_assignment(app, d.compile_assignment(backend, bench, tpb), tpb, clock=d.event_clock(backend),
                                sync=backend.synchronize, rule=d.SweepRule(min_runs=2, min_total_ms=0))
    assert meas.status == "ok" and meas.verified, meas.detail
    assert meas.runs == 2 and all(t > 0 for ts in meas.call_ms.values() for t in ts)
    assert sum(meas.kernel_ms_per_run) <= sum(meas.app_ms) * 1.05
