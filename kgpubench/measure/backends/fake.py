"""A CPU stand-in for the GPU layer, for tests of the harness logic only.

Its rows carry ``source = "fake"``, which the schema rejects: they can never validate or be merged.
Kernels do nothing unless a Python implementation is registered for their name (so an output left
poisoned fails verification, as on a GPU); timings are deterministic (a virtual clock advanced by the
configured time of each launch); :class:`FakeNvml` reads power from the same virtual clock.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kgpubench.errors import ContractError
from kgpubench.hardware import DeviceInfo
from kgpubench.measure.backends.base import (
    Capabilities,
    CaptureUnsupported,
    CaseFailure,
    CompileFailed,
    failure_for_code,
)
from kgpubench.measure.power import GpuState
from kgpubench.measure.suite import Dim3, KernelSource

FAKE_DEVICE = DeviceInfo(
    name="Fake GPU (CPU test double)", compute_capability="9.0", sm_count=4, memory_bytes=1 << 30,
    l2_bytes=1 << 20, smem_per_sm_bytes=96 * 1024, smem_per_block_bytes=48 * 1024,
    smem_per_block_optin_bytes=96 * 1024, max_threads_per_block=1024, max_block_dim=(1024, 1024, 64),
    max_grid_dim=(2**31 - 1, 65535, 65535), warp_size=32, clock_sm_mhz=1000.0, clock_mem_mhz=1000.0,
    memory_bus_width_bits=256, uuid_hash="0123456789abcdef", driver_version="fake", cuda_version="0.0",
    toolchain_version="fake", cupy_version=None,
)

KernelImpl = Callable[[Dim3, Dim3, tuple, int], None]


class FakeCudaError(RuntimeError):
    """Raised by a fake launch configured to fail; carries a CUDA error code in ``status`` like CuPy's."""

    def __init__(self, status: int) -> None:
        super().__init__(f"fake CUDA error {status}")
        self.status = status


@dataclass
class VirtualClock:
    """Nanoseconds of virtual time, advanced by fake launches."""

    now: int = 0

    def ns(self) -> int:
        return self.now

    def advance_ms(self, ms: float) -> None:
        self.now += round(ms * 1e6)

    def sleep(self, seconds: float) -> None:
        self.now += round(seconds * 1e9)


class FakeKernel:
    """A "compiled" kernel: records each launch, runs its registered implementation if any."""

    def __init__(self, backend: FakeBackend, name: str, defines: Mapping[str, Any]) -> None:
        self._backend = backend
        self.name = name
        self.defines = dict(defines)
        self.max_threads_per_block = backend.max_threads.get(name, 1024)
        self.registers: int | None = None  # unknown, as for a backend without a register count

    def __call__(self, grid: Dim3, block: Dim3, args: tuple, shared_mem: int = 0) -> None:
        self._backend._launch(self, tuple(grid), tuple(block), args, int(shared_mem))

    def function(self, name: str) -> FakeKernel:
        return FakeKernel(self._backend, name, self.defines)


@dataclass
class FakeBackend:
    """Backend double. All parameters are optional.

    Parameters
    ----------
    implementations : mapping
        Kernel name -> ``fn(grid, block, args, shared_mem)`` run on each launch (NumPy arrays in ``args``).
    time_ms : float or callable
        Time of one launch: a constant, or ``fn(kernel_name, launch_index) -> ms``.
    compile_errors : set of str
        Kernel names whose compilation fails.
    launch_errors : mapping
        Kernel name -> CUDA error code its launches raise.
    max_threads : mapping
        Kernel name -> the compiled kernel's thread limit (registers); default 1024.
    free_bytes : int
        Free device memory reported.
    device_info : DeviceInfo
        What :meth:`device` returns.
    with_nvml : bool
        Whether :meth:`nvml` gives a :class:`FakeNvml`.
    launch_overhead_ms : float
        Host launch cost that protocol-1 timing (:meth:`time_launches`, one event pair per call) sees on top
        of every call's time and protocol-2 samplers do not (as on a GPU).
    capture_fails : set of str
        Kernel names whose units cannot be captured in a graph (the sampler raises CaptureUnsupported).
    capabilities : Capabilities, optional
        What it declares; default: graphs, and power and clocks when ``with_nvml`` (no precompile, no PTX: a
        test subclass that adds ``precompile`` declares it too).
    """

    implementations: Mapping[str, KernelImpl] = field(default_factory=dict)
    time_ms: float | Callable[[str, int], float] = 1.0
    compile_errors: set[str] = field(default_factory=set)
    launch_errors: Mapping[str, int] = field(default_factory=dict)
    max_threads: Mapping[str, int] = field(default_factory=dict)
    free_bytes: int = 1 << 30
    device_info: DeviceInfo = FAKE_DEVICE
    with_nvml: bool = True
    energy_counter: bool = True
    power_w: float = 200.0
    launch_overhead_ms: float = 0.0
    capture_fails: set[str] = field(default_factory=set)
    capabilities: Capabilities | None = None

    name = "fake"
    row_source = "fake"
    xp = np

    def __post_init__(self) -> None:
        if self.capabilities is None:
            self.capabilities = Capabilities(graphs=True, power=self.with_nvml, clocks=self.with_nvml)
        self.clock = VirtualClock()
        self.launches: list[tuple[str, Dim3, Dim3, int]] = []
        self.compiled: list[tuple[str, tuple[str, ...]]] = []
        self._count: dict[str, int] = {}
        self._nvml = FakeNvml(self.clock, self.power_w, self.energy_counter) if self.with_nvml else None
        self.samplers: list[FakeSampler] = []
        self.flushes = 0

    def device(self) -> DeviceInfo:
        return self.device_info

    def compile(self, source: KernelSource) -> FakeKernel:
        self.compiled.append((source.kernel, source.define_options()))
        if source.kernel in self.compile_errors:
            raise CompileFailed(f"fake compile error in {source.kernel}")
        return FakeKernel(self, source.kernel, source.defines)

    def _launch(self, k: FakeKernel, grid: Dim3, block: Dim3, args: tuple, shared_mem: int) -> None:
        if k.name in self.launch_errors:
            raise FakeCudaError(self.launch_errors[k.name])
        i = self._count.get(k.name, 0)
        self._count[k.name] = i + 1
        self.launches.append((k.name, grid, block, shared_mem))
        ms = self.time_ms(k.name, i) if callable(self.time_ms) else float(self.time_ms)
        self.clock.advance_ms(ms)
        self._last_ms = ms
        impl = self.implementations.get(k.name)
        if impl is not None:
            impl(grid, block, args, shared_mem)

    def time_launches(self, fn: Callable[[], None], count: int) -> list[float]:
        """Call ``fn`` ``count`` times; each time is the virtual time the call advanced plus the launch cost."""
        out = []
        for _ in range(count):
            t0 = self.clock.now
            fn()
            out.append((self.clock.now - t0) / 1e6 + self.launch_overhead_ms)
        return out

    def sampler(self, fn: Callable[[], None], *, method: str, launches: int) -> FakeSampler:
        """A protocol-2 sampler on the virtual clock (no launch cost in the samples)."""
        if method not in ("graph", "batch", "cold"):
            raise ValueError(f"unknown timing method {method!r}")
        if method == "graph" and not self.capabilities.graphs:
            raise ContractError("graph sampler asked of a fake backend that declares no graphs capability")
        if method == "graph":
            before = len(self.launches)
            fn()  # "capture": find which kernels the unit launches
            names = {name for name, *_ in self.launches[before:]}
            if names & set(self.capture_fails):
                raise CaptureUnsupported(f"fake: {sorted(names & set(self.capture_fails))} cannot be captured")
        sampler = FakeSampler(self, fn, method, 1 if method == "cold" else int(launches))
        self.samplers.append(sampler)
        return sampler

    def synchronize(self) -> None:
        return None

    def free_memory_bytes(self) -> int:
        return self.free_bytes

    def classify(self, exc: BaseException) -> CaseFailure | None:
        if isinstance(exc, CaseFailure):
            return exc
        if isinstance(exc, FakeCudaError):
            return failure_for_code(exc.status)
        if isinstance(exc, MemoryError):
            return failure_for_code(2)
        return None

    def nvml(self) -> FakeNvml | None:
        return self._nvml

    def with_device(self, **changes: Any) -> FakeBackend:
        """A copy whose device info has ``changes`` (e.g. ``max_threads_per_block=512``)."""
        return replace(self, device_info=replace(self.device_info, **changes))


class FakeSampler:
    """Virtual-clock sampler: a sample is the time ``launches`` calls of the unit advance the clock."""

    def __init__(self, backend: FakeBackend, fn: Callable[[], None], method: str, launches: int) -> None:
        self.backend, self._fn, self.method, self.launches = backend, fn, method, launches
        self.rounds: list[int] = []
        self.closed = False

    def run(self, samples: int) -> list[float]:
        self.rounds.append(samples)
        out = []
        for _ in range(samples):
            if self.method == "cold":
                self.backend.flushes += 1
            t0 = self.backend.clock.now
            for _ in range(self.launches):
                self._fn()
            out.append((self.backend.clock.now - t0) / 1e6)
        return out

    def submit(self, samples: int) -> list[float]:
        """Asynchronous round (power windows): on the virtual clock it runs at once."""
        return self.run(samples)

    def ready(self, pending: list[float]) -> bool:
        return True

    def collect(self, pending: list[float]) -> list[float]:
        return list(pending)

    def close(self) -> None:
        self.closed = True


class FakeNvml:
    """NVML double on the virtual clock.

    ``power_w`` is constant; the energy counter integrates it but, like an H100's, only moves every
    ``update_ms`` of (virtual) time. ``sm_mhz`` is a constant or ``fn(now_ns)`` (to make the clock drop);
    ``reasons`` likewise gives the throttle-reason bitmask. Clock locks are recorded in ``locks``.
    """

    def __init__(self, clock: VirtualClock, power_w: float, energy_counter: bool = True, *,
                 update_ms: float = 100.0, sm_mhz: float | Callable[[int], float] = 1500.0,
                 reasons: int | Callable[[int], int] = 0, default_sm_mhz: float | None = 1755.0) -> None:
        self.clock, self.power_w, self.energy_counter = clock, power_w, energy_counter
        self.update_ms, self.sm_mhz, self.reasons, self.default_sm_mhz = update_ms, sm_mhz, reasons, default_sm_mhz
        self.state_reads = 0
        self.energy_reads = 0
        self.locks: list[float | None] = []

    def uuid(self) -> str:
        return "GPU-00000000-0000-0000-0000-000000000000"

    def driver_version(self) -> str:
        return "fake"

    def total_energy_mj(self) -> int | None:
        if not self.energy_counter:
            return None
        self.energy_reads += 1
        period = round(self.update_ms * 1e6)
        updated_at = self.clock.now // period * period if period > 0 else self.clock.now
        return round(self.power_w * updated_at / 1e6)  # W * ns / 1e6 = mJ

    def power_mw(self) -> int:
        return round(self.power_w * 1000)

    def sm_clock_mhz(self) -> float:
        return float(self.sm_mhz(self.clock.now) if callable(self.sm_mhz) else self.sm_mhz)

    def throttle_reasons(self) -> int:
        return int(self.reasons(self.clock.now) if callable(self.reasons) else self.reasons)

    def pstate(self) -> int | None:
        return 0

    def state(self) -> GpuState:
        self.state_reads += 1
        return GpuState(sm_mhz=self.sm_clock_mhz(), mem_mhz=2600.0, temperature_c=40.0 + self.state_reads,
                        throttle_reasons=self.throttle_reasons(), pstate=0)

    def default_sm_clock_mhz(self) -> float | None:
        return self.default_sm_mhz

    def lock_sm_clock(self, mhz: float) -> None:
        self.locks.append(float(mhz))

    def reset_sm_clock(self) -> None:
        self.locks.append(None)


# -- a stand-in for CuPy's array module (tests of device-side verification) ----------------------------------------
class FakeDeviceArray(np.ndarray):
    """A NumPy array that poses as a CuPy array (its type's module is ``cupy``): copies to the host go through
    :meth:`get`, which records their sizes in :attr:`host_copies`, so tests see what would cross the bus."""

    host_copies: list[int] = []

    def get(self) -> np.ndarray:
        FakeDeviceArray.host_copies.append(int(self.size))
        return np.array(self.view(np.ndarray), copy=True)


FakeDeviceArray.__module__ = "cupy"


def fake_device_module() -> Any:
    """A module named ``cupy`` over NumPy whose allocations are :class:`FakeDeviceArray`.

    Install it with ``monkeypatch.setitem(sys.modules, "cupy", fake_device_module())`` so that
    :func:`kgpubench.measure.verify.array_module` finds it; every other name is NumPy's.
    """
    mod = types.ModuleType("cupy")

    def dev(a: Any) -> Any:
        return a.view(FakeDeviceArray) if isinstance(a, np.ndarray) else a

    def asarray(a: Any, dtype: Any = None) -> Any:
        if isinstance(a, FakeDeviceArray) and (dtype is None or np.dtype(dtype) == a.dtype):
            return a
        return dev(np.array(a.view(np.ndarray) if isinstance(a, FakeDeviceArray) else a, dtype=dtype, copy=True))

    def asnumpy(a: Any) -> np.ndarray:
        return a.get() if isinstance(a, FakeDeviceArray) else np.asarray(a)

    mod.ndarray = FakeDeviceArray
    mod.asarray = asarray
    mod.asnumpy = asnumpy
    mod.array = lambda a, dtype=None, copy=True: dev(np.array(a, dtype=dtype, copy=True))
    for name in ("empty", "zeros", "ones", "full", "arange", "empty_like", "zeros_like"):
        setattr(mod, name, (lambda fn: lambda *a, **k: dev(fn(*a, **k)))(getattr(np, name)))
    mod.__getattr__ = lambda name: getattr(np, name)
    return mod
