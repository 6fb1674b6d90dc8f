"""The regular suite object: cases from :mod:`.spec`, inputs and checks from :mod:`.prepare`.

Inputs are drawn, and the NumPy reference computed, once per problem (kernel, sizes) from the generator the
harness passes for the first case of that problem; inputs and reference outputs then stay on the device
while the following cases of the problem run (:class:`~kgpubench.measure.problems.ProblemCache`). Each case
still gets its own copies of the inputs (device to device), freshly allocated, poisoned outputs, and is
verified against the reference on the device: only counts and the first bad values cross to the host.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from kgpubench.measure.launch import LaunchCase
from kgpubench.measure.problems import ProblemCache
from kgpubench.measure.suite import Case, CompiledKernel, KernelSource, SuiteBase

from .prepare import BINDERS, MAKERS, problem_key
from .spec import SPECS, KernelSpec, Launch, trip_counts

COLLECTOR_VERSION = "1.0.0"


class RegularSuite(SuiteBase):
    """Seed 000's regular kernels: vector add, NN euclid, SRAD v2 (2), Hotspot, tiled matmul, Fan1, Fan2."""

    name = "regular"
    table = "kernels"
    collector_version = COLLECTOR_VERSION
    # Seed 000 times each kernel as one invocation on data that just arrived: every sample starts with a
    # cold L2 (a buffer twice the L2 size is written first), the way Nsight Compute times a kernel by default.
    l2_policy = "flushed"

    def __init__(self) -> None:
        self._problems: ProblemCache[dict[str, Any]] = ProblemCache()

    def kernels(self) -> list[str]:
        return [s.kernel for s in SPECS]

    def cases(self, *, quick: bool = False, kernels: Sequence[str] | None = None, device: Any = None) -> Iterable[Case]:
        out = [self._case(spec, sizes, launch) for spec in SPECS if not kernels or spec.kernel in kernels
               for sizes in (spec.quick_sizes if quick else spec.sizes) for launch in spec.launches(sizes, quick)]
        self._problems.plan(problem_key(c.key["kernel"], c.sizes) for c in out)
        return out

    def _case(self, spec: KernelSpec, sizes: dict[str, int], launch: Launch) -> Case:
        n, s, cpx = spec.measures(sizes)
        return Case(
            key={"suite": self.name, "kernel": spec.kernel, "variant": "", "size_params": dict(sizes)},
            columns={"program": spec.program, "bound": spec.bound, "n": float(n), "s": float(s),
                     "cpx": float(cpx)},
            source=KernelSource(spec.path, spec.kernel),
            grid=launch.grid, block=launch.block, shared_mem_bytes=launch.shared_mem,
            sizes=dict(sizes), trip_counts=trip_counts(spec, sizes), memory_bytes=spec.memory(sizes),
        )

    # -- inputs -----------------------------------------------------------------------------------------
    def problem_data(self, kernel: str, sizes: dict[str, int], rng: np.random.Generator, xp: Any) -> dict[str, Any]:
        """Inputs and reference outputs of ``kernel`` at ``sizes``, arrays on the device of ``xp``: drawn and
        computed (``MAKERS``) for the first case of the problem, then reused by its other cases."""
        def build() -> dict[str, Any]:
            host = MAKERS[kernel](sizes, rng)
            return {k: xp.asarray(v) if isinstance(v, np.ndarray) else v for k, v in host.items()}

        return self._problems.get(problem_key(kernel, sizes), build, where=xp.__name__)

    def prepare(self, case: Case, kernel: CompiledKernel, xp: Any, rng: Any) -> LaunchCase:
        name = case.key["kernel"]
        sizes = dict(case.sizes)
        data = self.problem_data(name, sizes, rng, xp)
        launch = Launch(tuple(case.grid), tuple(case.block), case.shared_mem_bytes)
        prepared = BINDERS[name](data, sizes, kernel, launch, xp)
        key = problem_key(name, sizes)
        prepared.on_release = lambda: self._problems.done(key)
        return prepared

    def drop_caches(self) -> None:
        """Free the current problem's inputs and references (the harness calls this after the suite)."""
        self._problems.clear()


SUITE = RegularSuite()
