"""The power suite object: cases from :mod:`.spec` (grids sized by the SM count), inputs and checks from
:mod:`.prepare`."""


from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from kgpubench.measure.problems import ProblemCache
from kgpubench.measure.suite import Case, KernelSource, SuiteBase

from . import spec
from .prepare import prepare as _prepare
from .prepare import problem_key

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
COLLECTOR_VERSION = "1.0.0"
PLAN_SM_COUNT = 132  # H100 SXM: grids for plans (--dry-run) made where no GPU can be asked
_warned: set[str] = set()
_ROLLED = re.compile(r"^\s*#pragma\s+unroll\s+1\s*$")
_FOR = re.compile(r"^\s*for\s*\(")


@cache
def rolled_loop_lines(source: str) -> tuple[int, ...]:
    """1-based source lines of the loops kept rolled (``#pragma unroll 1`` then ``for``) in ``kernels/source``.

    These are the loops left in the PTX; the features API names each ``line:N`` after its ``for`` line.
    """
    lines = (KERNEL_DIR / source).read_text().splitlines()
    found = []
    for i, text in enumerate(lines[:-1]):
        if _ROLLED.match(text):
            if not _FOR.match(lines[i + 1]):
                raise ValueError(f"{source}:{i + 1}: '#pragma unroll 1' must be followed by a for loop")
            found.append(i + 2)
    return tuple(found)


def trip_counts(pk: spec.PowerKernel) -> dict[str, str]:
    """``{"line:N": expression}`` for the rolled loops of ``pk`` (source order matches ``pk.loops``)."""
    lines = rolled_loop_lines(pk.source)
    if len(lines) != len(pk.loops):
        raise ValueError(f"{pk.source} keeps {len(lines)} loops rolled but the spec of {pk.name} gives "
                         f"{len(pk.loops)} trip counts; update spec.KERNELS")
    return {f"line:{n}": expr for n, expr in zip(lines, pk.loops)}


def device_sm_count() -> int | None:
    """SM count of the current CUDA device (through CuPy), or ``None`` when CuPy or a device is missing."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["multiProcessorCount"])
    except (ImportError, RuntimeError, KeyError):  # no CuPy, no device or driver
        return None


def _planning_sm_count() -> int:
    if "planning" not in _warned:
        _warned.add("planning")
        print(f"warning: power suite: no CUDA device to read the SM count from; grids are planned for "
              f"{PLAN_SM_COUNT} SMs. A collection on a GPU sizes them from that GPU.", file=sys.stderr)
    return PLAN_SM_COUNT


def make_case(pk: spec.PowerKernel, sizes: dict, block: spec.Dim3, grid: spec.GridChoice) -> Case:
    """The :class:`Case` of one kernel, problem size, block shape and block count."""
    source = KernelSource(path=KERNEL_DIR / pk.source, kernel=pk.kernel, defines=pk.defines(sizes, block))
    # sm_saturation is left to the harness, which computes min(1, nb / SMs) from the device it measures on.
    columns = {"program": pk.program, "bound": pk.bound, **pk.derived(sizes)}
    return Case(
        key={"suite": "power", "kernel": pk.kernel, "variant": pk.variant, "size_params": dict(sizes)},
        columns=columns,
        source=source,
        grid=(grid.nb, 1, 1),
        block=tuple(block),
        sizes=dict(sizes),
        trip_counts=trip_counts(pk),
        power=True,
        memory_bytes=int(pk.memory(sizes, grid.nb)),
    )


class PowerSuite(SuiteBase):
    """The power suite; see the package doc and :mod:`spec` for what it sweeps."""

    name = "power"
    table = "kernels"
    collector_version = COLLECTOR_VERSION
    # Power needs seconds of back-to-back launches: samples run warm, as they do inside the power window.
    l2_policy = "warm"

    def __init__(self) -> None:
        self._problems: ProblemCache = ProblemCache()

    def kernels(self) -> Sequence[str]:
        """Names accepted by ``--kernel`` (``madd`` covers fp32 and fp64; ``madd/fp64`` picks one)."""
        return spec.kernel_names()

    def cases(self, *, quick: bool, kernels: Sequence[str] | None = None, device: Any = None,
              sm_count: int | None = None) -> Iterable[Case]:
        """Every configuration (quick: first size, middle block shape, Sa 0.5 and 1.0).

        The grids depend on the SM count: ``sm_count``, else ``device.sm_count`` (a harness ``DeviceInfo``),
        else the current CUDA device's; without any (a plan on a machine without a GPU) ``PLAN_SM_COUNT``,
        with a warning.
        """
        if sm_count is None:
            sm_count = getattr(device, "sm_count", None) or device_sm_count() or _planning_sm_count()
        out = list(self._iter(quick, spec.select(kernels), int(sm_count)))
        self._problems.plan(problem_key(c) for c in out)
        return out

    def _iter(self, quick: bool, chosen: list, sm_count: int) -> Iterator[Case]:
        grids = spec.grid_choices(sm_count, quick=quick)
        for pk in chosen:
            sizes = pk.sizes[:1] if quick else pk.sizes
            blocks = pk.blocks[len(pk.blocks) // 2:][:1] if quick else pk.blocks
            for size in sizes:
                for block in blocks:
                    for grid in grids:
                        yield make_case(pk, dict(size), block, grid)

    def prepare(self, case: Case, kernel: Any, xp: Any, rng: Any):
        """The problem's inputs (drawn for its first case) copied for ``case``, bound to ``kernel``, with fresh
        outputs (see :mod:`prepare`)."""
        return _prepare(case, kernel, xp, rng, self._problems)

    def drop_caches(self) -> None:
        """Free the current problem's device inputs (the harness calls this after the suite)."""
        self._problems.clear()


SUITE = PowerSuite()
