"""The GPU layer the harness talks to: a :class:`Backend` (CuPy on a real GPU, or the CPU fake for tests).

Building blocks (usable on their own, e.g. for whole-application flows):

- :func:`kgpubench.measure.backends.registry.get_backend` -> :class:`Backend` (``CupyBackend`` or ``FakeBackend``);
- ``backend.compile(KernelSource) -> CompiledKernel`` (cached per source text, defines, options, arch);
- ``backend.sampler(fn, method=..., launches=...) -> Sampler``: protocol-2 timing of a unit of work (a CUDA
  graph of ``launches`` calls replayed per sample, back-to-back calls, or one cold call after an L2 flush),
  see :mod:`kgpubench.measure.timing`;
- ``backend.time_launches(fn, count) -> list[float]``: CUDA-event times (ms) of ``count`` single calls of
  ``fn``, one event pair each (protocol 1: the launch is inside each time; kept for whole-application flows);
- ``backend.device() -> DeviceInfo`` (limits, identity, versions);
- ``backend.capabilities`` (:class:`Capabilities`): the optional parts it has (CUDA graphs, power, clocks,
  ahead-of-time compilation, PTX); the harness asks them, never the backend's name or attributes;
- ``backend.clock`` (:class:`HostClock`): the host time the power window polls and sleeps on;
- :func:`check_feasible` (launch configuration against the limits);
- the failure exceptions :class:`CompileFailed`, :class:`Infeasible`, :class:`LaunchFailed`, whose ``status``
  is the row status; ``backend.classify(exc)`` maps a backend exception to one of them by type and CUDA
  error code (never by message text), or returns ``None`` when it is not a per-case failure.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kgpubench.errors import (  # the failures a backend raises belong to its contract (re-exported here)
    CaptureUnsupported,
    CaseFailure,
    CompileFailed,
    ContextLostError,
    Infeasible,
    LaunchFailed,
)
from kgpubench.hardware import DeviceInfo
from kgpubench.measure.suite import Case, CompiledKernel, KernelSource

# CUDA error codes (driver CUresult; the runtime uses the same numbers for these since CUDA 10.1).
INFEASIBLE_CODES = {1: "invalid value (launch configuration)", 2: "out of memory",
                    9: "invalid configuration", 701: "launch out of resources (registers or shared memory)"}
STICKY_CODES = {700: "illegal address", 702: "launch timeout", 714: "hardware stack error",
                715: "illegal instruction", 716: "misaligned address", 717: "invalid address space",
                718: "invalid pc", 719: "launch failure"}


def failure_for_code(code: int) -> CaseFailure:
    """The row failure for a CUDA error ``code``: infeasible, sticky launch error, or plain launch error."""
    if code in INFEASIBLE_CODES:
        return Infeasible(f"CUDA error {code}: {INFEASIBLE_CODES[code]}", code=code)
    if code in STICKY_CODES:
        return LaunchFailed(f"CUDA error {code}: {STICKY_CODES[code]}", code=code, sticky=True)
    return LaunchFailed(f"CUDA error {code}", code=code)


def uuid_hash(uuid: str) -> str:
    """First 16 hex digits of sha256 over the canonical UUID text (``GPU-xxxxxxxx-...``, lower case)."""
    text = uuid.strip().lower()
    if not text.startswith("gpu-"):
        text = "gpu-" + text
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Capabilities:
    """The optional parts of the backend contract a backend has (the harness asks these, never probes).

    Parameters
    ----------
    graphs : bool
        ``sampler(method="graph")`` replays a unit captured in a CUDA graph; without it the harness times in
        batches (``batch``) where the L2 policy would use a graph.
    power : bool
        ``nvml()`` reads board power and energy: cases with ``power=True`` get a power window (protocol 2)
        and the suite's idle power is measured. Without it, no power columns.
    clocks : bool
        ``nvml()`` reads the SM clock, throttle reasons and GPU state (the condition columns, clock drops
        while timing, the reference clock) and can lock the SM clock (``--lock-clocks``).
    precompile : bool
        ``precompile(cases, *, sources=(), features=True) -> list`` compiles ahead of time (and computes the
        static features) before the run loop.
    ptx : bool
        ``ptx(source) -> str`` gives the PTX of a kernel (static features without nvcc).
    """

    graphs: bool = False
    power: bool = False
    clocks: bool = False
    precompile: bool = False
    ptx: bool = False

    def names(self) -> list[str]:
        """The names of the capabilities that are on, e.g. ``["clocks", "graphs", "power"]``."""
        return sorted(k for k, v in vars(self).items() if v)


class HostClock:
    """The host's time for polling loops (the power window, idle power): ``ns()`` and ``sleep(seconds)``.

    The CuPy backend uses this one (``time.perf_counter_ns``, ``time.sleep``); the fake backend a virtual clock
    with the same two methods.
    """

    def ns(self) -> int:
        return time.perf_counter_ns()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class Backend(Protocol):
    """What the harness needs from the GPU layer.

    Attributes
    ----------
    name : str
        ``"cupy"`` or ``"fake"``.
    row_source : str
        Value of the ``source`` column of rows it produces: ``"measured"`` for CuPy, ``"fake"`` for the fake
        (which the schema rejects, so fake rows can never validate).
    xp : module
        The array module inputs are allocated with (``cupy`` or ``numpy``).
    capabilities : Capabilities
        The optional parts it has; a method of one it lacks is never called.
    clock : HostClock
        Host time for polling loops (``ns()``, ``sleep(seconds)``).
    """

    name: str
    row_source: str
    xp: Any
    capabilities: Capabilities
    clock: HostClock

    def device(self) -> DeviceInfo: ...

    def compile(self, source: KernelSource) -> CompiledKernel: ...

    def time_launches(self, fn: Callable[[], None], count: int) -> list[float]: ...

    def sampler(self, fn: Callable[[], None], *, method: str, launches: int) -> Any:
        """A :class:`kgpubench.measure.timing.Sampler` timing ``fn``; ``method="graph"`` may raise
        :class:`CaptureUnsupported`."""

    def synchronize(self) -> None: ...

    def free_memory_bytes(self) -> int: ...

    def classify(self, exc: BaseException) -> CaseFailure | None: ...

    def nvml(self) -> Any | None:
        """An :class:`kgpubench.measure.power.NvmlDevice` for this GPU, or ``None`` without NVML (then neither
        ``power`` nor ``clocks`` is among the capabilities)."""

    def precompile(self, cases: Sequence[Case] = (), *, sources: Sequence[KernelSource] = (),
                   features: bool = True) -> list[dict[str, Any] | None]:
        """Only with ``capabilities.precompile``: compile ``cases`` and ``sources`` ahead of time; with
        ``features``, each case's static-feature columns (else ``None`` per case)."""

    def ptx(self, source: KernelSource) -> str:
        """Only with ``capabilities.ptx``: the PTX of ``source`` for this device."""


def check_feasible(case: Case, dev: DeviceInfo, free_bytes: int | None = None) -> None:
    """Raise :class:`Infeasible` when ``case`` cannot launch on ``dev`` (checked before compiling)."""
    nt = case.threads_per_block
    if nt > dev.max_threads_per_block:
        raise Infeasible(f"{nt} threads per block > device limit {dev.max_threads_per_block}")
    for axis, (b, g, mb, mg) in enumerate(zip(case.block, case.grid, dev.max_block_dim, dev.max_grid_dim)):
        if b < 1 or g < 1:
            raise Infeasible(f"block {case.block} / grid {case.grid} has a zero extent")
        if b > mb:
            raise Infeasible(f"block extent {b} on axis {'xyz'[axis]} > device limit {mb}")
        if g > mg:
            raise Infeasible(f"grid extent {g} on axis {'xyz'[axis]} > device limit {mg}")
    if case.shared_mem_bytes > dev.smem_per_block_optin_bytes:
        raise Infeasible(
            f"{case.shared_mem_bytes} B dynamic shared memory > device limit {dev.smem_per_block_optin_bytes} B"
        )
    if free_bytes is not None and case.memory_bytes > free_bytes:
        raise Infeasible(f"needs {case.memory_bytes} B of device memory, {free_bytes} B free")


__all__ = [
    "INFEASIBLE_CODES", "STICKY_CODES", "Backend", "Capabilities", "CaptureUnsupported", "CaseFailure", "CompileFailed",
    "ContextLostError", "DeviceInfo", "HostClock", "Infeasible", "LaunchFailed", "check_feasible", "failure_for_code",
    "uuid_hash",
]
