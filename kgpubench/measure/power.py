"""Power and energy through NVML (nvidia-ml-py), read-only: clocks and power limits are never changed.

- :func:`open_nvml_device` -> :class:`NvmlDevice` (or ``None`` without nvidia-ml-py / NVML);
- :func:`idle_power` : mean power over ~1 s with the GPU idle (measured before a suite);
- :func:`measure_power` : loop the workload until the window is at least 500 ms (seed 002), reading the
  total-energy counter (Volta and newer) or, where it is missing, sampling power in a background thread;
  SM/memory clocks, temperature and throttle reasons are read before and after the window.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MIN_WINDOW_MS = 500.0
SAMPLE_INTERVAL_S = 0.01
MAX_BATCH = 200_000


class NvmlDevice:
    """Read-only view of one GPU through ``pynvml`` (the module nvidia-ml-py installs)."""

    def __init__(self, nvml: Any, handle: Any) -> None:
        self._nvml = nvml
        self._h = handle
        self._has_energy: bool | None = None

    def uuid(self) -> str:
        u = self._nvml.nvmlDeviceGetUUID(self._h)
        return u.decode() if isinstance(u, bytes) else str(u)

    def driver_version(self) -> str:
        v = self._nvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)

    def total_energy_mj(self) -> int | None:
        """Energy counter (mJ since driver load), or ``None`` where the GPU has none."""
        if self._has_energy is False:
            return None
        try:
            value = int(self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._h))
        except self._nvml.NVMLError:
            self._has_energy = False
            return None
        self._has_energy = True
        return value

    def power_mw(self) -> int:
        return int(self._nvml.nvmlDeviceGetPowerUsage(self._h))

    def state(self) -> GpuState:
        n, h = self._nvml, self._h
        return GpuState(
            sm_mhz=float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
            mem_mhz=float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
            temperature_c=float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
            throttle_reasons=int(_reasons_fn(n)(h)),
        )


def _reasons_fn(nvml: Any) -> Callable[[Any], int]:
    """``nvmlDeviceGetCurrentClocksEventReasons`` (new name) or ``...ThrottleReasons`` (older bindings)."""
    return getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nvml.nvmlDeviceGetCurrentClocksThrottleReasons


def open_nvml_device(pci_bus_id: str) -> NvmlDevice | None:
    """Open the GPU with this PCI bus id through NVML; ``None`` when nvidia-ml-py or NVML is unavailable."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode() if isinstance(pci_bus_id, str)
                                                      else pci_bus_id)
    except pynvml.NVMLError:
        return None
    return NvmlDevice(pynvml, handle)


@dataclass(frozen=True)
class GpuState:
    """Clocks, temperature and throttle-reason bitmask (NVML ``ClocksEventReasons``) at one instant."""

    sm_mhz: float
    mem_mhz: float
    temperature_c: float
    throttle_reasons: int

    def columns(self, suffix: str) -> dict[str, Any]:
        return {f"clock_sm_mhz_{suffix}": self.sm_mhz, f"clock_mem_mhz_{suffix}": self.mem_mhz,
                f"temperature_c_{suffix}": self.temperature_c, f"throttle_reasons_{suffix}": self.throttle_reasons}


@dataclass(frozen=True)
class PowerResult:
    """One power window: average power (W), energy per launch (J), window (ms), reads, launches, method."""

    power_w_avg: float
    energy_j: float
    window_ms: float
    samples: int
    launches: int
    method: str
    before: GpuState
    after: GpuState

    def columns(self) -> dict[str, Any]:
        return {"power_w_avg": self.power_w_avg, "energy_j": self.energy_j, "power_window_ms": self.window_ms,
                "power_samples": self.samples, "power_launches": self.launches, "power_method": self.method,
                **self.before.columns("before"), **self.after.columns("after")}


class _Sampler(threading.Thread):
    """Reads ``power_mw`` every ``interval`` seconds until stopped."""

    def __init__(self, dev: NvmlDevice, interval: float, sleep: Callable[[float], None]) -> None:
        super().__init__(daemon=True)
        self.dev, self.interval, self.sleep = dev, interval, sleep
        self.samples: list[int] = []
        self._stop_flag = threading.Event()

    def run(self) -> None:
        while not self._stop_flag.is_set():
            self.samples.append(self.dev.power_mw())
            self.sleep(self.interval)

    def stop(self) -> list[int]:
        self._stop_flag.set()
        self.join()
        return self.samples


def idle_power(dev: NvmlDevice, duration_s: float = 1.0, *, interval_s: float = 0.05,
               sleep: Callable[[float], None] = time.sleep) -> float:
    """Mean board power (W) over ``duration_s`` with nothing launched."""
    n = max(1, round(duration_s / interval_s))
    reads = []
    for _ in range(n):
        reads.append(dev.power_mw())
        sleep(interval_s)
    return sum(reads) / len(reads) / 1000.0


def measure_power(dev: NvmlDevice, run_launches: Callable[[int], None], per_launch_ms: float, *,
                  min_window_ms: float = MIN_WINDOW_MS, clock_ns: Callable[[], int] = time.perf_counter_ns,
                  sleep: Callable[[float], None] = time.sleep) -> PowerResult:
    """Run the workload for a window of at least ``min_window_ms`` and return its power and energy.

    Parameters
    ----------
    run_launches : callable
        ``run_launches(k)`` enqueues ``k`` timed units and waits for them to finish.
    per_launch_ms : float
        Expected time of one unit (the timing median), to size the batches.
    """
    before = dev.state()
    use_counter = dev.total_energy_mj() is not None
    sampler = None if use_counter else _Sampler(dev, SAMPLE_INTERVAL_S, sleep)
    launches = reads = 0
    e0 = dev.total_energy_mj() if use_counter else None
    if sampler:
        sampler.start()
    t0 = clock_ns()
    elapsed_ms = 0.0
    while elapsed_ms < min_window_ms:
        remaining = min_window_ms - elapsed_ms
        k = min(MAX_BATCH, max(1, math.ceil(remaining / max(per_launch_ms, 1e-6))))
        run_launches(k)
        launches += k
        elapsed_ms = (clock_ns() - t0) / 1e6
    if use_counter:
        e1 = dev.total_energy_mj()
        energy_total_j = (e1 - e0) / 1000.0
        reads = 2
        avg_w = energy_total_j / (elapsed_ms / 1000.0)
        method = "energy_counter"
    else:
        samples = sampler.stop()
        reads = len(samples)
        avg_w = sum(samples) / max(reads, 1) / 1000.0
        energy_total_j = avg_w * elapsed_ms / 1000.0
        method = "sampling"
    after = dev.state()
    return PowerResult(power_w_avg=avg_w, energy_j=energy_total_j / launches, window_ms=elapsed_ms,
                       samples=max(reads, 1), launches=launches, method=method, before=before, after=after)
