"""Launching and timing the kernels of one application run.

A :class:`Launcher` holds the compiled kernels of one threads-per-block assignment, launches them on 1-D
grids (``ceil(work / tpb)`` blocks of ``tpb`` threads), counts calls, and, with an event factory, brackets
every launch with a pair of device events so each call's time is known after the run (no extra sync: the
NPB-GPU ``timer.flag`` mode adds a sync per kernel, which we avoid).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Protocol


class Event(Protocol):
    def record(self) -> None: ...


class EventClock(Protocol):
    """Makes device events and reads the milliseconds between two recorded ones (after a sync)."""

    def event(self) -> Event: ...

    def elapsed_ms(self, start: Event, end: Event) -> float: ...


class CupyEventClock:
    """CUDA events through CuPy."""

    def __init__(self) -> None:
        import cupy

        self._cupy = cupy

    def event(self) -> Event:
        return self._cupy.cuda.Event()

    def elapsed_ms(self, start: Event, end: Event) -> float:
        return float(self._cupy.cuda.get_elapsed_time(start, end))


class Launcher:
    """Launch kernels by name under one assignment; count calls and (optionally) time each call.

    Parameters
    ----------
    kernels : mapping
        Kernel name -> compiled kernel, callable as ``kernel(grid, block, args)``.
    tpb : mapping
        Kernel name -> threads per block (the value the module was compiled with).
    clock : EventClock, optional
        Device events for per-call timing; ``None`` launches without events.
    """

    def __init__(self, kernels: Mapping[str, Callable[..., None]], tpb: Mapping[str, int],
                 clock: EventClock | None = None) -> None:
        self.kernels = dict(kernels)
        self.tpb = dict(tpb)
        self.clock = clock
        self.calls: Counter = Counter()
        self._records: list[tuple[str, Any, Any]] = []

    def blocks(self, name: str, work: int) -> int:
        """Blocks of a 1-D launch covering ``work`` threads."""
        t = self.tpb[name]
        return max(1, -(-int(work) // t))

    def __call__(self, name: str, work: int, args: tuple) -> int:
        """Launch ``name`` over ``work`` threads with ``args``; returns the number of blocks."""
        nb = self.blocks(name, work)
        if self.clock is not None:
            start = self.clock.event()
            start.record()
        self.kernels[name]((nb, 1, 1), (self.tpb[name], 1, 1), args)
        if self.clock is not None:
            end = self.clock.event()
            end.record()
            self._records.append((name, start, end))
        self.calls[name] += 1
        return nb

    def reset(self) -> None:
        """Forget the calls and events of the previous run."""
        self.calls = Counter()
        self._records = []

    def call_times_ms(self) -> dict[str, list[float]]:
        """Per kernel, the time of every call of the run, in launch order (call after a device sync)."""
        out: dict[str, list[float]] = {}
        if self.clock is None:
            return out
        for name, start, end in self._records:
            out.setdefault(name, []).append(self.clock.elapsed_ms(start, end))
        return out
