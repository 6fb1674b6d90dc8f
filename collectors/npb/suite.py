"""The npb suite object: every planned row of :mod:`.driver` is a case, measured by :mod:`.measure`."""


from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kgpubench.measure.outcome import CaseOutcome
from kgpubench.measure.suite import Case, SuiteBase

from .driver import COLLECTOR_VERSION, DEFAULT_CLASSES, SweepRule, plan, plan_item
from .measure import AppRuns, measure_row
from .sources import kernel_source
from .spec import BENCHMARKS, TPB_CHOICES, kernel_names


class NpbSuite(SuiteBase):
    """The ``npb`` suite: every planned row of the benchmarks and classes is a case, measured by :meth:`measure`.

    Parameters
    ----------
    classes : sequence of str
        NPB classes of the full plan (quick: class S only).
    benchmarks : sequence of str
        Benchmarks of the plan.
    tpbs : sequence of int
        Threads-per-block values of the one-kernel rows.
    rule : SweepRule
        Whole runs per assignment for the run rows.
    """

    name = "npb"
    table = "npb"
    collector_version = COLLECTOR_VERSION
    # Kernels are timed as the application calls them, one call after another.
    l2_policy = "warm"
    # The unit of work is an application's runs and replays of their recorded calls, not one kernel launch.
    measures_itself = True

    def __init__(self, classes: Sequence[str] = DEFAULT_CLASSES, *, benchmarks: Sequence[str] = BENCHMARKS,
                 tpbs: Sequence[int] = TPB_CHOICES, rule: SweepRule = SweepRule()) -> None:
        self.classes, self.benchmarks, self.tpbs, self.rule = tuple(classes), tuple(benchmarks), tuple(tpbs), rule
        self._state = AppRuns()

    def kernels(self) -> list[str]:
        """Every kernel name of the plan's benchmarks."""
        return [k for b in self.benchmarks for k in kernel_names(b)]

    def cases(self, *, quick: bool = False, kernels: Sequence[str] | None = None, device: Any = None
              ) -> Iterable[Case]:
        """One case per planned row, grouped by benchmark and class; quick: class S only. A case's source is its
        kernel compiled under the row's assignment; its block is the kernel's threads per block."""
        for bench in self.benchmarks:
            for cls in ("S",) if quick else self.classes:
                for item in plan(bench, cls, self.tpbs, kernels):
                    k = item.key
                    name = k["kernel"] if k["kernel"] != "app" else kernel_names(bench)[0]
                    yield Case(key=dict(k), columns={}, source=kernel_source(bench, name, item.assignment),
                               grid=(1, 1, 1), block=(int(k["tpb"] or item.assignment[name]), 1, 1),
                               title=item.label)

    def measure(self, case: Case, backend: Any, how: Any) -> CaseOutcome:
        """The row's runs (shared by its assignment's rows) and replays: see :mod:`.measure`."""
        return measure_row(plan_item(case.key), backend, how, self._state, self.rule)

    def drop_caches(self) -> None:
        """Free the application and the recorded runs."""
        self._state.drop()


SUITE = NpbSuite()
