"""The NPB suite: EP, CG, MG and FT on CUDA with per-kernel threads per block (seed 001).

Modules: ``spec`` (classes, verification values, NPB-GPU kernels and defaults), ``randlc`` (the NPB
generator), ``ref_ep``/``ref_cg``/``ref_mg``/``ref_ft`` (NumPy references that reproduce the official
verification values), ``kernels/*.cu`` (our CUDA kernels, one per NPB-GPU kernel role), ``sources``
(assignments -> defines), ``apps`` (the applications on the GPU), ``driver``/``sweep`` (the measurement
plan and rows), ``npbgpu`` (the adapter for a user's own NPB-GPU checkout).

``kgpubench collect --suite npb`` finds :data:`SUITE`; its :meth:`NpbSuite.collect_into` runs the whole-run
sweep (the per-case harness loop does not fit NPB's application flow).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kgpubench.measure.suite import SuiteBase

from .driver import COLLECTOR_VERSION, DEFAULT_CLASSES, plan
from .spec import BENCHMARKS, TPB_CHOICES, kernel_names


class NpbSuite(SuiteBase):
    """The ``npb`` suite object (name, table, collector version; cases for plans; ``collect_into``)."""

    name = "npb"
    table = "npb"
    collector_version = COLLECTOR_VERSION
    # Kernels are timed as the application calls them, one call after another.
    l2_policy = "warm"
    # The unit of work is a whole application run, not one case: collect_into runs the sweep.
    runs_itself = True

    def __init__(self, classes: Sequence[str] = DEFAULT_CLASSES) -> None:
        self.classes = tuple(classes)

    def kernels(self) -> list[str]:
        """Every kernel name of the four benchmarks."""
        return [k for b in BENCHMARKS for k in kernel_names(b)]

    def cases(self, *, quick: bool = False, kernels: Sequence[str] | None = None, device: Any = None
              ) -> Iterable[Any]:
        """One harness ``Case`` per planned row (for ``collect --dry-run``); quick: class S only."""
        from kgpubench.measure.suite import Case

        from .sources import kernel_source

        for bench in BENCHMARKS:
            for cls in ("S",) if quick else self.classes:
                for item in plan(bench, cls, TPB_CHOICES, kernels):
                    k = item.key
                    name = k["kernel"] if k["kernel"] != "app" else kernel_names(bench)[0]
                    yield Case(key=dict(k), columns={}, source=kernel_source(bench, name, item.assignment),
                               grid=(1, 1, 1), block=(int(k["tpb"] or item.assignment[name]), 1, 1))

    def collect_into(self, backend: Any, writer: Any, options: Any, *, progress=None) -> Any:
        """Run the sweep (``options``: the harness's ``CollectOptions``; quick = class S only)."""
        from .sweep import collect_npb

        classes = ("S",) if getattr(options, "quick", False) else self.classes
        policy = options.policy_for(self) if hasattr(options, "policy_for") else self.l2_policy
        return collect_npb(backend, writer, classes=classes, kernels=getattr(options, "kernels", None),
                           max_minutes=getattr(options, "max_minutes", None), l2_policy=policy,
                           clocks_locked=bool(getattr(options, "clocks_locked", False)),
                           row_ids=getattr(options, "row_ids", None), progress=progress)


SUITE = NpbSuite()
