"""The contract between the harness and a suite (``collectors/<suite>/``).

A suite says *what* is measured: the configurations (:class:`Case`), how to build inputs, launch and check
them (:class:`PreparedCase`). The harness says *how* it is measured: compile, poison, verify, time, power,
features, provenance, resumable shard. Nothing suite-specific goes into the harness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class KernelSource:
    """A CUDA source file and the kernel entry to launch from it.

    ``defines`` become ``-D NAME=VALUE`` options for NVRTC (and for nvcc when features are extracted).
    Kernels are declared ``extern "C"`` so their names are not mangled.
    """

    path: Path
    kernel: str
    defines: Mapping[str, int | float | str] = field(default_factory=dict)


@dataclass(frozen=True)
class Case:
    """One configuration of a suite: the row it will become and how to launch it.

    Parameters
    ----------
    key : mapping
        Values of the table's key columns other than ``gpu_name`` (the harness adds that).
    columns : mapping
        Further descriptive columns of the row known before running (``program``, ``bound``, ``n``...).
    source : KernelSource
        What to compile.
    grid, block : Dim3
        Launch configuration.
    shared_mem_bytes : int
        Dynamic shared memory per block.
    sizes : mapping
        Named size parameters; they and the launch (``nb``, ``nt``, grid/block names) are the variables of
        ``trip_counts`` expressions.
    trip_counts : mapping
        Loop name -> trip-count expression, in the features API's loop naming.
    power : bool
        Whether the harness measures a power window for this case.
    """

    key: Mapping[str, Any]
    columns: Mapping[str, Any]
    source: KernelSource
    grid: Dim3
    block: Dim3
    shared_mem_bytes: int = 0
    sizes: Mapping[str, float] = field(default_factory=dict)
    trip_counts: Mapping[str, str] = field(default_factory=dict)
    power: bool = False


class PreparedCase(Protocol):
    """Inputs allocated on the device for one case; made by :meth:`Suite.prepare`."""

    def launch(self) -> None:
        """Enqueue one timed unit of work (one kernel launch, or one run of several steps)."""

    def poison(self) -> None:
        """Overwrite every output with a value a correct kernel never leaves (NaN, 0xFF bytes)."""

    def verify(self) -> tuple[bool, str]:
        """Compare the outputs of the last :meth:`launch` with the NumPy reference: (ok, detail)."""

    def release(self) -> None:
        """Free device memory."""


class Suite(Protocol):
    """A suite of kernels under ``collectors/<name>/``."""

    name: str
    table: str
    collector_version: str

    def cases(self, *, quick: bool, kernels: Sequence[str] | None = None) -> Iterable[Case]:
        """All configurations (a few per kernel when ``quick``), optionally only the named kernels."""

    def prepare(self, case: Case, compiled: Callable[..., None], xp: Any, rng: Any) -> PreparedCase:
        """Allocate fresh random inputs with ``xp`` (CuPy), bind ``compiled`` (the kernel) to them."""
