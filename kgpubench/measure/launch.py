"""One prepared kernel launch: :class:`LaunchCase`, what a suite's ``prepare`` returns for a one-launch case.

It holds the compiled kernel, its arguments, the launch configuration (grid, block, dynamic shared memory) and
the device buffers: the outputs poisoned before the verification launch, and the check that compares them
with the reference. The harness times and power-measures it alike (``launch()`` is the unit of work); a suite
only says how to build the arguments and how to check the outputs. It follows
:class:`~kgpubench.measure.suite.PreparedCase`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from kgpubench.measure.suite import Case, CompiledKernel, Dim3
from kgpubench.measure.verify import poison

Check = Callable[[], tuple[bool, str]]


def _released() -> tuple[bool, str]:
    return False, "case already released"


class LaunchCase:
    """A kernel bound to its device arguments and launch configuration, with what to poison and check.

    Parameters
    ----------
    kernel : CompiledKernel
        The compiled kernel (``kernel(grid, block, args, shared_mem=...)``).
    grid, block : Dim3
        Launch configuration.
    args : tuple
        Device arrays and NumPy scalars of the exact C types.
    check : callable
        ``check() -> (ok, detail)``: compare the outputs of the last launch with the reference
        (:func:`kgpubench.measure.verify.compare` has the per-dtype tolerances).
    shared_mem : int
        Dynamic shared memory per block (bytes).
    outputs : sequence of arrays
        Device buffers a correct launch writes in full: :meth:`poison` fills them with values a correct kernel
        never leaves (:func:`kgpubench.measure.verify.poison`: NaN, all-ones bits).
    reset : callable, optional
        Restores inputs a kernel updates in place, before :meth:`poison` (such buffers are not in ``outputs``:
        the reference of an in-place update tells an unwritten element apart).
    on_release : callable, optional
        Called once by :meth:`release` (e.g. to tell the suite's problem cache that this case is done).
    """

    def __init__(self, kernel: CompiledKernel, grid: Dim3, block: Dim3, args: tuple, check: Check, *,
                 shared_mem: int = 0, outputs: Sequence[Any] = (), reset: Callable[[], None] | None = None,
                 on_release: Callable[[], None] | None = None) -> None:
        self.kernel = kernel
        self.grid = tuple(int(v) for v in grid)
        self.block = tuple(int(v) for v in block)
        self.shared_mem = int(shared_mem)
        self.args = tuple(args)
        self.outputs = list(outputs)
        self.check = check
        self.reset = reset
        self.on_release = on_release

    @classmethod
    def of(cls, case: Case, kernel: CompiledKernel, args: tuple, check: Check, **kwargs: Any) -> LaunchCase:
        """The launch of ``case``: its grid, block and dynamic shared memory; ``kwargs`` as in the class."""
        return cls(kernel, case.grid, case.block, args, check, shared_mem=case.shared_mem_bytes, **kwargs)

    def launch(self) -> None:
        """Enqueue one launch of the kernel (no sync)."""
        self.kernel(self.grid, self.block, self.args, shared_mem=self.shared_mem)

    def poison(self) -> None:
        """Restore in-place inputs (``reset``), then poison every output."""
        if self.reset is not None:
            self.reset()
        for out in self.outputs:
            poison(out)

    def verify(self) -> tuple[bool, str]:
        """``(ok, detail)`` of the outputs of the last launch against the reference."""
        return self.check()

    def release(self) -> None:
        """Drop every reference to the device arrays; call ``on_release`` once."""
        self.args = ()
        self.outputs = []
        self.check = _released
        self.reset = None
        if self.on_release is not None:
            self.on_release()
            self.on_release = None


__all__ = ["Check", "LaunchCase"]
