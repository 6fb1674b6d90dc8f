"""The CuPy backend on a real GPU (``pytest -m gpu``): compile cache, error classification, timing, NVML."""

from __future__ import annotations

import numpy as np
import pytest

from kgpubench.measure.backend import CompileFailed, Infeasible, get_backend
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
