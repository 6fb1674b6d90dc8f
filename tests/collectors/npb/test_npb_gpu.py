"""On a GPU: our CUDA kernels reproduce the official class S values at the default, max and warp
assignments, through the real backend (NVRTC); protocol-2 replays of the recorded calls time the kernels."""

import importlib

import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("bench", ["EP", "CG", "MG", "FT"])
@pytest.mark.parametrize("assignment", ["default", "max", "warp"])
def test_official_class_s_on_gpu(npb, bench, assignment):
    from kgpubench.measure.backends.registry import get_backend

    d = importlib.import_module(npb.__name__ + ".driver")
    spec = importlib.import_module(npb.__name__ + ".spec")
    apps = importlib.import_module(npb.__name__ + ".apps")
    backend = get_backend("cupy")
    tpb = spec.default_tpb(bench) if assignment == "default" else spec.uniform_tpb(bench, d.UNIFORM[assignment])
    app = apps.APPS[bench]("S", backend.xp)
    app.setup()
    meas = d.measure_assignment(app, d.compile_assignment(backend, bench, tpb), tpb, sync=backend.synchronize,
                                rule=d.SweepRule(min_runs=2, min_total_ms=0))
    assert meas.status == "ok" and meas.verified, meas.detail
    assert meas.runs == 2
    from kgpubench.measure.runner import time_unit
    from kgpubench.measure.timing import StopRule

    kernels = time_unit(backend, meas.launcher.replay(), rule=StopRule(min_samples=3, max_gpu_ms=500.0))
    # every kernel of a run, without launch gaps, takes no longer than the run itself
    assert 0 < kernels.stats.mean <= min(meas.app_ms) * 1.05
