"""The contract between the harness and a suite (``collectors/<suite>/``).

A suite says *what* is measured: the configurations (:class:`Case`) and how to build inputs, launch and check
them (:class:`PreparedCase`). The harness (:mod:`kgpubench.measure.runner`) says *how* it is measured:
compile, feasibility, poison, verify, warm up, time, power, features, provenance, resumable shard. Nothing
suite-specific goes into the harness.

How a suite is found
--------------------
``kgpubench collect --suite NAME`` loads ``collectors/NAME/__init__.py`` by file path (see
:func:`kgpubench.measure.suites.load_suite`) as the package ``kgpubench_collectors.NAME``, so modules inside
the suite folder may import each other relatively (``from .spec import CASES``). The package must expose
``SUITE`` (an object following :class:`Suite`) or a function ``get_suite()`` returning one.

What the harness does with a case, in order
-------------------------------------------
1. Feasibility against the device limits (threads per block, block/grid dimensions, shared memory,
   ``memory_bytes`` against free memory): otherwise a row with ``status=infeasible``.
2. Compile ``case.source`` (NVRTC, cached per source text + defines + options + arch); a failure is a
   ``compile_error`` row. A block larger than the compiled kernel allows (registers) is ``infeasible``.
3. ``suite.prepare(case, kernel, xp, rng)``: fresh random inputs on the device.
4. ``poison()``, ``launch()``, ``verify()``: a mismatch is a ``verification_failed`` row with no time.
5. Measurement protocol 2 (:mod:`kgpubench.measure.timing`): samples of ``launch()`` replayed as a CUDA graph
   or batched behind a blocking kernel, without the host's launch cost, until the noise target or a cap; each
   time is divided by ``case.time_divisor``.
6. If ``case.power``: an NVML power window of at least
   :data:`~kgpubench.measure.power.MIN_WINDOW_MS` (1 s), whose samples are the timing samples.
7. ``release()``; the row gets the launch columns, static features, GPU and provenance columns and is
   appended to the shard at once.
Exceptions classified as launch errors (by CUDA error code) give ``launch_error`` rows.

A suite whose unit of work is not one kernel launch (npb: whole application runs, replayed recorded calls)
declares ``measures_itself = True`` and defines ``measure(case, backend, how)``, which returns the case's
:class:`~kgpubench.measure.outcome.CaseOutcome` (status, measurement columns, GPU time; steps 2 to 6 are its
own; ``how`` is the collection's :class:`~kgpubench.measure.settings.CaseSettings`: L2 policy, stop rule,
reference clock). Everything else stays
the harness's: the case list, row ids and resume, ``--max-minutes``, feasibility, conditions before and after,
failure classification (an exception ``measure`` raises becomes the row's status), features, GPU and provenance
columns, the shard, the summary and the progress callback. Such a suite times with the harness's building blocks
(``backend.compile``, :func:`~kgpubench.measure.runner.time_unit`, :func:`~kgpubench.measure.timing.summarize`).

Columns the harness fills
-------------------------
``gpu_*`` and provenance columns, ``run_id``, ``status``, timing, power, ``source``; and, when the table
declares them and the case does not set them: ``grid_x/y/z``, ``block_x/y/z``, ``nb``, ``nt``, ``w``,
``sm_saturation`` and the static features (``l``, ``lc``, ... ``nreg``, ``alpha``, ``dpc``...). Everything
else (the table's other key and descriptive columns) comes from ``case.key`` and ``case.columns``.
Keys the table does not declare are dropped, so one harness serves every table.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from kgpubench.measure.outcome import CaseOutcome
from kgpubench.measure.settings import CaseSettings

Dim3 = tuple[int, int, int]


@dataclass(frozen=True)
class KernelSource:
    """A CUDA source file and the kernel entry to launch from it.

    Parameters
    ----------
    path : Path
        The ``.cu`` file. It must compile on its own with NVRTC (no host code, no ``#include`` of CUDA
        headers other than what NVRTC provides).
    kernel : str
        Entry point, declared ``extern "C"`` so its name is not mangled.
    defines : mapping
        Become ``-D NAME=VALUE`` options for NVRTC (and for nvcc when features are extracted).
    options : tuple of str
        Further compiler options (e.g. ``"--use_fast_math"``), passed to NVRTC and nvcc alike.
    """

    path: Path
    kernel: str
    defines: Mapping[str, int | float | str] = field(default_factory=dict)
    options: tuple[str, ...] = ()

    def define_options(self) -> tuple[str, ...]:
        """The ``-DNAME=VALUE`` options, sorted by name (the same for NVRTC and nvcc)."""
        return tuple(f"-D{k}={v}" for k, v in sorted(self.defines.items()))


@dataclass(frozen=True)
class Case:
    """One configuration of a suite: the row it will become and how to launch it.

    Parameters
    ----------
    key : mapping
        Values of the table's key columns other than ``gpu_name`` (the harness adds that, and the launch
        columns ``grid_x``... ``block_z`` when the table has them and they are absent here).
    columns : mapping
        Further descriptive columns of the row known before running (``program``, ``bound``, ``n``, ``s``,
        ``cpx``...).
    source : KernelSource
        What to compile; the static features are those of this kernel.
    grid, block : Dim3
        Launch configuration (what ``nb``, ``nt``, ``w`` and feasibility are computed from).
    shared_mem_bytes : int
        Dynamic shared memory per block.
    sizes : mapping
        Named size parameters; they and the launch variables (``nb``, ``nt``, ``grid_x``..., ``block_z``)
        are the variables of ``trip_counts`` expressions.
    trip_counts : mapping
        Loop name -> trip count (a number, or an expression over ``sizes`` and the launch variables), in the
        features API's loop naming.
    power : bool
        Whether the harness measures a power window for this case.
    memory_bytes : int
        Device memory the inputs and outputs need (0: unknown); more than the free memory is ``infeasible``.
    time_divisor : int
        The timed unit (one :meth:`PreparedCase.launch`) is divided by this before statistics, e.g. the
        number of time steps when times are recorded per step.
    title : str
        The case's name in progress and messages; empty: kernel, sizes and launch (:meth:`label`).
    """

    key: Mapping[str, Any]
    columns: Mapping[str, Any]
    source: KernelSource
    grid: Dim3
    block: Dim3
    shared_mem_bytes: int = 0
    sizes: Mapping[str, float] = field(default_factory=dict)
    trip_counts: Mapping[str, str | float] = field(default_factory=dict)
    power: bool = False
    memory_bytes: int = 0
    time_divisor: int = 1
    title: str = ""

    @property
    def threads_per_block(self) -> int:
        """``block_x * block_y * block_z``."""
        return int(self.block[0]) * int(self.block[1]) * int(self.block[2])

    @property
    def blocks(self) -> int:
        """``grid_x * grid_y * grid_z``."""
        return int(self.grid[0]) * int(self.grid[1]) * int(self.grid[2])

    def label(self) -> str:
        """A short human-readable name, for progress and messages."""
        if self.title:
            return self.title
        sizes = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.sizes.items())
        return f"{self.source.kernel}[{sizes}] grid={self.grid} block={self.block}"


@runtime_checkable
class CompiledKernel(Protocol):
    """A compiled kernel, callable like ``cupy.RawKernel``: ``kernel(grid, block, args, shared_mem=0)``.

    ``args`` is a tuple of device arrays and NumPy scalars (``numpy.int32(n)``, ``numpy.float32(x)``): pass
    scalars with the exact C type of the parameter. ``registers`` is the registers per thread of the compiled
    kernel, or ``None`` where the backend does not know it (the ``nreg`` column then comes from the features).
    """

    name: str
    max_threads_per_block: int
    registers: int | None

    def __call__(self, grid: Dim3, block: Dim3, args: tuple, shared_mem: int = 0) -> None: ...

    def function(self, name: str) -> CompiledKernel:
        """Another ``extern "C"`` kernel from the same compiled module (same source, defines, options)."""


class PreparedCase(Protocol):
    """Inputs allocated on the device for one case; made by :meth:`Suite.prepare`."""

    def launch(self) -> None:
        """Enqueue one timed unit of work (one kernel launch, or one run of several steps); do not sync."""

    def poison(self) -> None:
        """Overwrite every output with a value a correct kernel never leaves (NaN, 0xFF bytes)."""

    def verify(self) -> tuple[bool, str]:
        """Compare the outputs of the last :meth:`launch` with the NumPy reference: (ok, detail).

        Use :func:`kgpubench.measure.verify.compare` for the per-dtype tolerances.
        """

    def release(self) -> None:
        """Free device memory (drop references to the arrays)."""


class Suite(Protocol):
    """A suite of kernels under ``collectors/<name>/``.

    Attributes
    ----------
    name : str
        The suite name (``--suite``), also the folder name.
    table : str
        The table its rows belong to (``kernels``, ``npb``, ``stencil``).
    collector_version : str
        Version of the suite's kernels/spec; bump it whenever a kernel or size list changes.
    """

    name: str
    table: str
    collector_version: str

    def kernels(self) -> Sequence[str]:
        """Names accepted by ``--kernel``. Optional: without it the harness takes the ``kernel`` key (or the
        source's kernel name) of all non-quick cases."""

    def cases(self, *, quick: bool, kernels: Sequence[str] | None = None) -> Iterable[Case]:
        """All configurations (a few per kernel when ``quick``), optionally only the named kernels.

        A suite whose configurations depend on the GPU (e.g. grids sized by the SM count) may add a keyword
        ``device=None``: the harness then passes the :class:`~kgpubench.hardware.DeviceInfo` it measures
        on (``None`` for a plan without a GPU, ``kgpubench collect --dry-run``).
        """

    def prepare(self, case: Case, kernel: CompiledKernel, xp: Any, rng: Any) -> PreparedCase:
        """Allocate fresh random inputs with ``xp`` (CuPy, or NumPy under the fake backend) and bind ``kernel``.

        ``rng`` is a ``numpy.random.Generator``: draw inputs on the host with it and copy them with
        ``xp.asarray`` so the reference sees the same values.
        """


class SuiteBase(ABC):
    """The declared form of :class:`Suite`: the optional parts of the contract with their defaults.

    Every built-in suite derives from it, so the harness calls each part directly (no probing).

    Attributes
    ----------
    name, table, collector_version : str
        As in :class:`Suite`.
    l2_policy : {"warm", "flushed"}
        How samples treat the L2 cache unless ``kgpubench collect --l2`` says otherwise (default ``warm``).
    measures_itself : bool
        True for a suite whose unit of work is not one kernel launch (npb): the harness calls :meth:`measure`
        for each case in place of its own compile / prepare / verify / time steps.
    """

    name: ClassVar[str]
    table: ClassVar[str]
    collector_version: ClassVar[str]
    l2_policy: ClassVar[str] = "warm"
    measures_itself: ClassVar[bool] = False

    @abstractmethod
    def cases(self, *, quick: bool, kernels: Sequence[str] | None = None, device: Any = None) -> Iterable[Case]:
        """All configurations (a few per kernel when ``quick``), optionally only the named kernels; ``device``
        is the :class:`~kgpubench.hardware.DeviceInfo` measured on (None for a plan without a GPU)."""

    def kernels(self) -> Sequence[str]:
        """Names accepted by ``--kernel`` (default: the ``kernel`` key, or source kernel, of the full plan)."""
        return sorted({c.key.get("kernel", c.source.kernel) for c in self.cases(quick=False)})

    def prepare(self, case: Case, kernel: CompiledKernel, xp: Any, rng: Any) -> PreparedCase:
        """Inputs for one case (see :class:`Suite`); a suite that measures itself has none."""
        raise NotImplementedError(f"suite {self.name!r} measures its cases itself (measure); it prepares none")

    def drop_caches(self) -> None:
        """Free what the suite keeps between cases (called after the suite); default: nothing kept."""
        return None

    def measure(self, case: Case, backend: Any, how: CaseSettings) -> CaseOutcome:
        """Measure ``case`` (only for ``measures_itself`` suites) and return its :class:`CaseOutcome`.

        The outcome holds the status (``ok`` or a failure status, with its detail), the timing columns and any
        other column of the table the measurement gives, and for the harness alone ``measured_ms`` (GPU time
        measured, for the summary) and ``reasons_seen`` (throttle reasons seen while timing). An exception the
        backend classifies (compile, launch, out of memory) becomes the row's status; a sticky CUDA error stops
        the collection after its row, as for any suite.
        """
        raise NotImplementedError(f"suite {self.name!r} is measured case by case by the harness")


class _ProtocolSuite(SuiteBase):
    """A suite object that follows :class:`Suite` without deriving from :class:`SuiteBase` (a third-party
    suite written against the protocol): its optional parts are looked up once, here."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.table = inner.table  # type: ignore[misc]
        self.collector_version = inner.collector_version  # type: ignore[misc]
        self.l2_policy = getattr(inner, "l2_policy", None) or "warm"  # type: ignore[misc]
        self.measures_itself = bool(getattr(inner, "measures_itself", False))  # type: ignore[misc]
        self._takes_device = "device" in inspect.signature(inner.cases).parameters

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["inner"], name)

    def cases(self, *, quick: bool, kernels: Sequence[str] | None = None, device: Any = None) -> Iterable[Case]:
        extra = {"device": device} if device is not None and self._takes_device else {}
        return self.inner.cases(quick=quick, kernels=kernels, **extra)

    def kernels(self) -> Sequence[str]:
        own = getattr(self.inner, "kernels", None)
        return list(own()) if own is not None else super().kernels()

    def prepare(self, case: Case, kernel: CompiledKernel, xp: Any, rng: Any) -> PreparedCase:
        return self.inner.prepare(case, kernel, xp, rng)

    def drop_caches(self) -> None:
        drop = getattr(self.inner, "drop_caches", None)
        if drop is not None:
            drop()

    def measure(self, case: Case, backend: Any, how: CaseSettings) -> CaseOutcome:
        return self.inner.measure(case, backend, how)


def as_suite(suite: Any) -> SuiteBase:
    """``suite`` as a :class:`SuiteBase` (built-in suites are one already; a protocol-only suite is wrapped)."""
    return suite if isinstance(suite, SuiteBase) else _ProtocolSuite(suite)


def launch_columns(grid: Dim3, block: Dim3) -> dict[str, int]:
    """The launch columns of a row: ``grid_x/y/z``, ``block_x/y/z``, ``nb``, ``nt``, ``w`` (warps of 32)."""
    nt = int(block[0]) * int(block[1]) * int(block[2])
    return {
        "grid_x": int(grid[0]), "grid_y": int(grid[1]), "grid_z": int(grid[2]),
        "block_x": int(block[0]), "block_y": int(block[1]), "block_z": int(block[2]),
        "nb": int(grid[0]) * int(grid[1]) * int(grid[2]), "nt": nt, "w": -(-nt // 32),
    }
