"""Launching the kernels of one application run, and replaying them for timing.

A :class:`Launcher` holds the compiled kernels of one threads-per-block assignment, launches them on 1-D
grids (``ceil(work / tpb)`` blocks of ``tpb`` threads), counts calls and records every call (kernel, grid,
block, arguments), so that protocol 2 can time a kernel afterwards by replaying exactly the calls the
application made (:meth:`Launcher.replay`) as a CUDA graph, without the host's launch cost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping


class Launcher:
    """Launch kernels by name under one assignment; count and record the calls.

    Parameters
    ----------
    kernels : mapping
        Kernel name -> compiled kernel, callable as ``kernel(grid, block, args)``.
    tpb : mapping
        Kernel name -> threads per block (the value the module was compiled with).
    """

    def __init__(self, kernels: Mapping[str, Callable[..., None]], tpb: Mapping[str, int]) -> None:
        self.kernels = dict(kernels)
        self.tpb = dict(tpb)
        self.calls: Counter = Counter()
        self.recorded: list[tuple[str, tuple[int, int, int], tuple[int, int, int], tuple]] = []

    def blocks(self, name: str, work: int) -> int:
        """Blocks of a 1-D launch covering ``work`` threads."""
        t = self.tpb[name]
        return max(1, -(-int(work) // t))

    def __call__(self, name: str, work: int, args: tuple) -> int:
        """Launch ``name`` over ``work`` threads with ``args``; returns the number of blocks."""
        nb = self.blocks(name, work)
        self.kernels[name]((nb, 1, 1), (self.tpb[name], 1, 1), args)
        self.recorded.append((name, (nb, 1, 1), (self.tpb[name], 1, 1), tuple(args)))
        self.calls[name] += 1
        return nb

    def reset(self) -> None:
        """Forget the calls and events of the previous run."""
        self.calls = Counter()
        self.recorded = []

    def replay(self, name: str | None = None) -> Callable[[], None] | None:
        """A unit that launches again every recorded call of ``name`` (all kernels: ``None``) in order, on the
        same arguments (the device arrays are still alive); ``None`` when there is no such call."""
        calls = [c for c in self.recorded if name is None or c[0] == name]
        if not calls:
            return None
        kernels = self.kernels

        def unit() -> None:
            for kname, grid, block, args in calls:
                kernels[kname](grid, block, args)

        unit.queue_entries = len(calls)  # launches one call enqueues (the samplers size their rounds by it)
        return unit
