"""The CuPy backend on a real GPU (``pytest -m gpu``): compile cache, error classification, timing, NVML."""

from __future__ import annotations

import numpy as np
import pytest

from kgpubench.measure.backends.base import CompileFailed, Infeasible
from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.suite import KernelSource

pytestmark = pytest.mark.gpu

SPIN = r'''
extern "C" __global__ void spin(float* out, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
    out[threadIdx.x] = SCALE;
}
'''


@pytest.fixture(scope="module")
def backend():
    return get_backend("cupy")


def test_device_info_is_sane(backend):
    dev = backend.device()
    assert dev.sm_count > 0 and dev.max_threads_per_block == 1024 and dev.warp_size == 32
    assert dev.memory_bytes > 1 << 30 and len(dev.uuid_hash) == 16
    assert dev.cuda_version and dev.cupy_version and dev.toolchain_version.startswith("nvrtc")


def test_compile_defines_cache_and_errors(backend, tmp_path):
    src = tmp_path / "spin.cu"
    src.write_text(SPIN)
    k1 = backend.compile(KernelSource(src, "spin", {"SCALE": 2}))
    k2 = backend.compile(KernelSource(src, "spin", {"SCALE": 2}))
    assert k1._module is k2._module  # cached per (text, defines, arch)
    out = backend.xp.zeros(32, dtype=np.float32)
    k1((1, 1, 1), (32, 1, 1), (out, np.int64(0)))
    assert float(out[0]) == 2.0
    with pytest.raises(CompileFailed):
        backend.compile(KernelSource(src, "spin"))  # SCALE undefined


def test_event_timing_of_a_spin_kernel(backend, tmp_path):
    src = tmp_path / "spin.cu"
    src.write_text(SPIN)
    k = backend.compile(KernelSource(src, "spin", {"SCALE": 1}))
    out = backend.xp.zeros(32, dtype=np.float32)
    clock_khz = backend.device().clock_sm_mhz * 1000
    cycles = int(clock_khz * 2)  # about 2 ms at the maximum clock; longer if the clock is lower
    times = backend.time_launches(lambda: k((1, 1, 1), (32, 1, 1), (out, np.int64(cycles))), 5)
    assert len(times) == 5 and all(1.5 < t < 20.0 for t in times)


def test_too_much_shared_memory_is_infeasible(backend, tmp_path):
    src = tmp_path / "spin.cu"
    src.write_text(SPIN)
    k = backend.compile(KernelSource(src, "spin", {"SCALE": 1}))
    out = backend.xp.zeros(32, dtype=np.float32)
    with pytest.raises(Exception) as info:
        k((1, 1, 1), (32, 1, 1), (out, np.int64(0)), shared_mem=backend.device().smem_per_block_optin_bytes + 1024)
        backend.synchronize()
    assert isinstance(backend.classify(info.value), Infeasible)


def test_nvml_energy_counter_reads(backend):
    nvml = backend.nvml()
    if nvml is None:
        pytest.skip("nvidia-ml-py is not installed")
    e0 = nvml.total_energy_mj()
    assert e0 is None or e0 > 0
    state = nvml.state()
    assert state.sm_mhz > 0 and state.temperature_c > 0


VADD = r'''
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
'''


def _vadd(backend, tmp_path, n):
    src = tmp_path / "vadd.cu"
    src.write_text(VADD)
    k = backend.compile(KernelSource(src, "vadd"))
    xp = backend.xp
    a, b, c = xp.ones(n, dtype=np.float32), xp.ones(n, dtype=np.float32), xp.empty(n, dtype=np.float32)
    return lambda: k(((n + 255) // 256, 1, 1), (256, 1, 1), (a, b, c, np.int32(n)))


def test_graph_samples_exclude_the_launch(backend, tmp_path):
    """A 4096-element add reads ~10 us with an event pair per launch; protocol 2 reads the kernel alone."""
    from kgpubench.measure.runner import time_unit

    unit = _vadd(backend, tmp_path, 4096)
    per_launch = np.median(backend.time_launches(unit, 200)) * 1000
    result = time_unit(backend, unit)
    ours = result.stats.median * 1000
    assert result.method == "graph" and result.launches >= 100
    assert ours < per_launch / 2 and 0.3 < ours < 5.0, (ours, per_launch)
    assert result.rse <= 0.005 and not result.cap_hit


def test_graph_spin_kernel_time_matches_its_cycles(backend, tmp_path):
    from kgpubench.measure.runner import time_unit

    src = tmp_path / "spin.cu"
    src.write_text(SPIN)
    k = backend.compile(KernelSource(src, "spin", {"SCALE": 1}))
    out = backend.xp.zeros(32, dtype=np.float32)
    nvml = backend.nvml()
    mhz = nvml.sm_clock_mhz() if nvml else backend.device().clock_sm_mhz
    cycles = int(mhz * 1000 * 0.05)  # about 50 us at the current clock
    result = time_unit(backend, lambda: k((1, 1, 1), (32, 1, 1), (out, np.int64(cycles))))
    assert 0.03 < result.stats.median < 0.2 and result.launches >= 10


def test_cold_samples_flush_and_stay_positive(backend, tmp_path):
    from kgpubench.measure.runner import time_unit

    unit = _vadd(backend, tmp_path, 1 << 20)
    result = time_unit(backend, unit, l2_policy="flushed")
    assert result.method == "cold" and result.launches == 1 and result.stats.min > 0


def test_cupti_cold_samples_read_the_kernel_not_the_launch(backend, tmp_path):
    """The cupti timer reads a flushed 4096-element add without the event pair's launch (about 2 us on an H200),
    and a 50 us spin kernel at its cycles, as the event timer does."""
    pytest.importorskip("cupti", reason="the cupti cold timer needs cupti-python")
    from kgpubench.measure.runner import time_unit

    cupti = get_backend("cupy", cold_timer="cupti")
    small = _vadd(cupti, tmp_path, 4096)
    events_us = time_unit(backend, small, l2_policy="flushed").stats.median * 1000
    got = time_unit(cupti, small, l2_policy="flushed")
    cupti_us = got.stats.median * 1000
    assert got.method == "cupti" and got.launches == 1 and not got.cap_hit
    assert 0.3 < cupti_us < events_us - 0.5, (cupti_us, events_us)
    src = tmp_path / "spin.cu"
    src.write_text(SPIN)
    k = cupti.compile(KernelSource(src, "spin", {"SCALE": 1}))
    out = cupti.xp.zeros(32, dtype=np.float32)
    nvml = cupti.nvml()
    cycles = int((nvml.sm_clock_mhz() if nvml else cupti.device().clock_sm_mhz) * 1000 * 0.05)
    spin = time_unit(cupti, lambda: k((1, 1, 1), (32, 1, 1), (out, np.int64(cycles))), l2_policy="flushed")
    assert spin.method == "cupti" and 0.03 < spin.stats.median < 0.2


def test_cupti_samples_read_by_their_own_event_pairs_and_the_drained_wait(backend, tmp_path):
    """Issue 44 on a real GPU: every CUPTI-timed sample is also read by its own event pair, never longer than it;
    the drained timer's spin lies between the flush and the unit, outside the unit's span."""
    pytest.importorskip("cupti", reason="the cupti cold timers need cupti-python")
    from kgpubench.measure.backends.cupti_clock import same_samples
    from kgpubench.measure.backends.cupy_timing import DRAIN_US
    from kgpubench.measure.runner import time_unit

    for timer in ("cupti", "cupti-drained"):
        b = get_backend("cupy", cold_timer=timer)
        unit = _vadd(b, tmp_path, 1 << 20)
        b.cold_pairs = pairs = []
        try:
            got = time_unit(b, unit, l2_policy="flushed")
        finally:
            b.cold_pairs = None
        same = same_samples(pairs)
        assert got.method == "cupti" and same["samples"] >= 10, (timer, same)
        assert same["cupti_longer"] == 0, (timer, same)
        assert same["events_median_us"] > same["cupti_median_us"], (timer, same)
        if timer == "cupti-drained":
            assert same["flush_gap_median_us"] >= DRAIN_US, same
        else:
            assert same["flush_gap_median_us"] < DRAIN_US, same


def test_power_window_on_the_energy_counter(backend, tmp_path):
    from kgpubench.measure.power import measure_power

    nvml = backend.nvml()
    if nvml is None or nvml.total_energy_mj() is None:
        pytest.skip("no NVML energy counter here")
    unit = _vadd(backend, tmp_path, 1 << 24)
    sampler = backend.sampler(unit, method="graph", launches=10)
    try:
        result = measure_power(nvml, sampler, 1.0)
    finally:
        sampler.close()
    assert result.method == "energy_counter" and 1000.0 <= result.window_ms < 1500.0
    assert 50.0 < result.power_w_avg < 1200.0 and result.samples >= 5 and result.launches > 100
