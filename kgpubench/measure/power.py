"""Power, energy and GPU conditions through NVML (nvidia-ml-py).

- :func:`open_nvml_device` -> :class:`NvmlDevice` (or ``None`` without nvidia-ml-py / NVML);
- :func:`idle_power` : mean power over ~1 s with the GPU idle (measured before a suite);
- :func:`measure_power` : protocol 2's power window (below);
- :class:`GpuState` : SM/memory clocks, temperature, throttle reasons and performance state at one instant.

The power window (protocol 2)
-----------------------------
On an H100, ``nvmlDeviceGetPowerUsage`` is a 1 s average and the total-energy counter (mJ) moves about every
100 ms, so two reads of the counter around a 500 ms window can be off by about 20 %. Instead, with the GPU
kept busy by rounds of timing samples queued ahead (the queue never runs dry), the host polls the counter
every ``poll_s`` (1 ms) and notes the moments it *changes*. After ``settle_ms`` of load (the board's power
ramps up), the first change opens the window at ``(t_a, E_a)``; the first change after ``t_a +
min_window_ms`` (1 s) closes it at ``(t_b, E_b)``; power = ``(E_b - E_a) / (t_b - t_a)``. Both ends are
counter updates, so the counter's own update period cancels; what remains is the polling delay at each end:
the power error is at most ``2 * poll_s / window`` plus one mJ of counter resolution, 0.2 % for a 1 s window
polled every 1 ms. ``power_samples`` counts the counter updates inside the window and ``power_w_std`` is the
standard deviation of the power between consecutive updates. Where the GPU has no energy counter, power is
the mean of ``nvmlDeviceGetPowerUsage`` read every 10 ms over the window (``sampling``), whose error is that
of the driver's averaging (up to its 1 s average on recent boards). The same samples give the row's times.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgpubench.errors import LaunchFailed

MIN_WINDOW_MS = 1000.0
SETTLE_MS = 200.0
POLL_S = 0.001
SAMPLE_INTERVAL_S = 0.01
ROUND_MS = 10.0
# NVML clock-event reasons that mean the clocks were held down by power or heat (not idle, not a setting):
# SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40, HW power brake 0x80.
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


class NvmlDevice:
    """One GPU through ``pynvml`` (the module nvidia-ml-py installs): reads, and clock locks (see
    :mod:`kgpubench.measure.conditions`) that are always undone."""

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

    def sm_clock_mhz(self) -> float:
        return float(self._nvml.nvmlDeviceGetClockInfo(self._h, self._nvml.NVML_CLOCK_SM))

    def throttle_reasons(self) -> int:
        return int(_reasons_fn(self._nvml)(self._h))

    def pstate(self) -> int | None:
        try:
            return int(self._nvml.nvmlDeviceGetPerformanceState(self._h))
        except self._nvml.NVMLError:
            return None

    def state(self) -> GpuState:
        n, h = self._nvml, self._h
        return GpuState(
            sm_mhz=self.sm_clock_mhz(),
            mem_mhz=float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
            temperature_c=float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
            throttle_reasons=self.throttle_reasons(),
            pstate=self.pstate(),
        )

    # -- clock locks (root only; kgpubench.measure.conditions.ClockLock always undoes them) ----------------
    def default_sm_clock_mhz(self) -> float | None:
        """The SM clock the board runs applications at by default (NVML's default applications clock)."""
        n = self._nvml
        try:
            return float(n.nvmlDeviceGetDefaultApplicationsClock(self._h, n.NVML_CLOCK_SM))
        except n.NVMLError:
            return None

    def lock_sm_clock(self, mhz: float) -> None:
        self._nvml.nvmlDeviceSetGpuLockedClocks(self._h, int(mhz), int(mhz))

    def reset_sm_clock(self) -> None:
        self._nvml.nvmlDeviceResetGpuLockedClocks(self._h)


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
    pstate: int | None = None

    def columns(self, suffix: str) -> dict[str, Any]:
        out = {f"clock_sm_mhz_{suffix}": self.sm_mhz, f"clock_mem_mhz_{suffix}": self.mem_mhz,
               f"temperature_c_{suffix}": self.temperature_c, f"throttle_reasons_{suffix}": self.throttle_reasons}
        if suffix == "before":
            out["pstate_before"] = self.pstate
        return out


@dataclass(frozen=True)
class PowerResult:
    """One power window: average power (W), energy per unit (J), window (ms), counter updates, units run."""

    power_w_avg: float
    energy_j: float
    window_ms: float
    samples: int
    launches: int
    method: str
    power_w_std: float | None
    sample_times_ms: tuple[float, ...]
    reasons_seen: int = 0

    def columns(self) -> dict[str, Any]:
        return {"power_w_avg": self.power_w_avg, "energy_j": self.energy_j, "power_window_ms": self.window_ms,
                "power_samples": self.samples, "power_launches": self.launches, "power_method": self.method,
                "power_windows": 1, "power_w_std": self.power_w_std}


def idle_power(dev: NvmlDevice, duration_s: float = 1.0, *, interval_s: float = 0.05,
               sleep: Callable[[float], None] = time.sleep) -> float:
    """Mean board power (W) over ``duration_s`` with nothing launched."""
    n = max(1, round(duration_s / interval_s))
    reads = []
    for _ in range(n):
        reads.append(dev.power_mw())
        sleep(interval_s)
    return sum(reads) / len(reads) / 1000.0


class _Load:
    """Keeps the GPU busy with rounds of samples, two in flight, and collects their sample times."""

    def __init__(self, sampler: Any, round_samples: int) -> None:
        self.sampler, self.k = sampler, max(1, round_samples)
        self.pending = [sampler.submit(self.k), sampler.submit(self.k)]
        self.times: list[float] = []

    def step(self) -> None:
        """Collect the oldest round if it finished and queue another."""
        if self.sampler.ready(self.pending[0]):
            self.times.extend(self.sampler.collect(self.pending.pop(0)))
            self.pending.append(self.sampler.submit(self.k))

    def finish(self) -> list[float]:
        for p in self.pending:
            self.times.extend(self.sampler.collect(p))
        self.pending = []
        return self.times


def measure_power(dev: NvmlDevice, sampler: Any, sample_ms: float, *, min_window_ms: float = MIN_WINDOW_MS,
                  settle_ms: float = SETTLE_MS, poll_s: float = POLL_S,
                  clock_ns: Callable[[], int] = time.perf_counter_ns,
                  sleep: Callable[[float], None] = time.sleep) -> PowerResult:
    """Protocol 2's power window over the unit ``sampler`` times (see the module docstring).

    Parameters
    ----------
    sampler : Sampler
        A protocol-2 sampler with ``submit(samples)``, ``ready(pending)`` and ``collect(pending)``.
    sample_ms : float
        Expected time of one sample, to size rounds of about :data:`ROUND_MS`.
    """
    load = _Load(sampler, math.ceil(ROUND_MS / max(sample_ms, 1e-6)))
    reasons = 0
    t_start = clock_ns()
    if dev.total_energy_mj() is not None:
        updates: list[tuple[int, int]] = []  # (time ns, counter mJ) at each observed change
        last = dev.total_energy_mj()
        while True:
            load.step()
            sleep(poll_s)
            e, t = dev.total_energy_mj(), clock_ns()
            if e != last:
                last = e
                if (t - t_start) / 1e6 >= settle_ms:
                    updates.append((t, e))
                    reasons |= dev.throttle_reasons()
                    if len(updates) > 1 and (t - updates[0][0]) / 1e6 >= min_window_ms:
                        break
            if (t - t_start) / 1e6 > 10 * (min_window_ms + settle_ms) + 5000:
                raise LaunchFailed("the NVML energy counter stopped moving during a power window; check the "
                                   "driver (nvidia-smi -q -d POWER) and rerun")
        times = load.finish()
        (ta, ea), (tb, eb) = updates[0], updates[-1]
        window_ms = (tb - ta) / 1e6
        avg_w = (eb - ea) / window_ms  # mJ / ms = W
        steps = [(e1 - e0) / ((t1 - t0) / 1e6) for (t0, e0), (t1, e1) in zip(updates[:-1], updates[1:])]
        std = statistics.stdev(steps) if len(steps) > 1 else None
        method, reads = "energy_counter", len(updates) - 1
    else:
        while (clock_ns() - t_start) / 1e6 < settle_ms:
            load.step()
            sleep(poll_s)
        samples: list[int] = []
        t_a = last_read = clock_ns()
        samples.append(dev.power_mw())
        while (clock_ns() - t_a) / 1e6 < min_window_ms:
            load.step()
            sleep(poll_s)
            if (clock_ns() - last_read) / 1e9 >= SAMPLE_INTERVAL_S:
                last_read = clock_ns()
                samples.append(dev.power_mw())
        reasons |= dev.throttle_reasons()
        times = load.finish()
        window_ms = (clock_ns() - t_a) / 1e6
        avg_w = statistics.fmean(samples) / 1000.0 if samples else float("nan")
        std = statistics.stdev(samples) / 1000.0 if len(samples) > 1 else None
        method, reads = "sampling", max(1, len(samples))
    units = len(times) * sampler.launches
    energy_per_unit = avg_w * (sum(times) / 1000.0) / units if units else float("nan")
    return PowerResult(power_w_avg=avg_w, energy_j=energy_per_unit, window_ms=window_ms, samples=reads,
                       launches=units, method=method, power_w_std=std, sample_times_ms=tuple(times),
                       reasons_seen=reasons)
