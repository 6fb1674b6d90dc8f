"""How the harness measures one npb row (:meth:`NpbSuite.measure <collectors.npb.NpbSuite.measure>`).

The harness's run loop (:func:`kgpubench.measure.runner.collect_suite`) drives npb like every suite: the plan's
rows are its cases, in plan order, with resume, ``--max-minutes``, feasibility, conditions, failure
classification, GPU and provenance columns and the shard all the harness's. What is npb's own is the unit of
work, measured here:

- the application of the row's benchmark and class, set up on the device once for all its rows
  (:class:`AppRuns`; rows of one benchmark and class come one after another);
- the timed, verified whole runs of the row's threads-per-block assignment, measured once and shared by every
  row of that assignment (:func:`kgpubench_collectors.npb.driver.measure_assignment`);
- protocol-2 replays of the recorded calls of the row's kernel (all kernels for a run row) through
  :func:`kgpubench.measure.runner.time_unit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from kgpubench.errors import LaunchFailed
from kgpubench.measure.outcome import CaseOutcome
from kgpubench.measure.runner import time_unit

from .apps import APPS, NpbApp
from .driver import (
    KERNEL_RUNS,
    PlanItem,
    RunMeasurement,
    SweepRule,
    compile_assignment,
    kernel_row,
    measure_assignment,
    run_row,
)


@dataclass
class AppRuns:
    """The application being measured (one benchmark and class) and the runs of each assignment on it."""

    group: tuple[str, str] | None = None
    app: NpbApp | None = None
    runs: dict[tuple, RunMeasurement] = field(default_factory=dict)
    setup_error: BaseException | None = None

    def app_for(self, benchmark: str, npb_class: str, xp: Any) -> NpbApp:
        """The set-up application of ``benchmark`` at ``npb_class`` (another one's is dropped first). A setup
        that failed (out of memory for a large class) fails again for every row of its group without being
        retried."""
        if self.group != (benchmark, npb_class):
            self.drop()
            self.group = (benchmark, npb_class)
        if self.setup_error is not None:
            raise self.setup_error
        if self.app is None:
            app = APPS[benchmark](npb_class, xp)
            try:
                app.setup()
            except Exception as exc:
                self.setup_error = exc
                raise
            self.app = app
        return self.app

    def drop(self) -> None:
        """Free the application's device arrays and the recorded runs (their launchers hold arguments)."""
        self.group, self.app, self.runs, self.setup_error = None, None, {}, None


def measure_row(item: PlanItem, backend: Any, how: Any, state: AppRuns, rule: SweepRule) -> CaseOutcome:
    """The outcome of one planned row (``how``: the harness's
    :class:`~kgpubench.measure.runner.CaseSettings`). A compile, launch or out-of-memory failure of the
    assignment's runs is that assignment's status for all its rows; a sticky CUDA error is raised for the
    harness to record and stop on."""
    key = item.key
    app = state.app_for(key["benchmark"], key["npb_class"], backend.xp)
    meas, fresh = _runs(item, app, backend, rule, state)
    timing = _replay_timing(item, meas, backend, how)
    if key["row_kind"] == "run":
        row = run_row(key["benchmark"], key["npb_class"], key["assignment"], meas, timing)
    else:
        row = kernel_row(key["benchmark"], key["npb_class"], key["kernel"], key["tpb"], meas, timing, how.l2_policy)
    if meas.detail:
        row["status_detail"] = meas.detail
    measured_ms = (sum(meas.app_ms) if fresh else 0.0) + (timing.gpu_ms if timing is not None else 0.0)
    return CaseOutcome.of_columns(row, measured_ms=measured_ms,
                                  reasons_seen=timing.reasons_seen if timing is not None else 0)


def _runs(item: PlanItem, app: NpbApp, backend: Any, rule: SweepRule, state: AppRuns
          ) -> tuple[RunMeasurement, bool]:
    """The runs of the item's assignment (measured now when ``True``), and for a run row at least ``rule``'s."""
    key = tuple(sorted(item.assignment.items()))
    wanted = rule if item.key["row_kind"] == "run" else KERNEL_RUNS
    known = state.runs.get(key)
    if known is not None and (known.status != "ok" or known.runs >= wanted.min_runs):
        return known, False
    try:
        kernels = compile_assignment(backend, app.benchmark, item.assignment)
        meas = measure_assignment(app, kernels, item.assignment, sync=backend.synchronize, rule=wanted)
    except Exception as exc:
        failure = backend.classify(exc)
        if failure is None or (isinstance(failure, LaunchFailed) and failure.sticky):
            raise
        meas = RunMeasurement(assignment=dict(item.assignment), status=failure.status, detail=failure.detail)
    state.runs[key] = meas
    return meas, True


# Replays of recorded calls are long units (a class B kernel's calls take up to a second): few samples suffice.
REPLAY_LIMITS = {"min_samples": 3, "max_gpu_ms": 3000.0, "max_wall_s": 15.0}


def _replay_timing(item: PlanItem, meas: RunMeasurement, backend: Any, how: Any) -> Any:
    """Protocol-2 time of the row's kernel (all kernels for a run row) from replays of the recorded calls."""
    if meas.status != "ok" or meas.launcher is None:
        return None
    name = None if item.key["row_kind"] == "run" else item.key["kernel"]
    unit = meas.launcher.replay(name)
    if unit is None:
        return None
    calls = 1 if name is None else meas.calls_per_run.get(name, 0)
    rule = replace(how.rule, min_samples=min(how.rule.min_samples, REPLAY_LIMITS["min_samples"]),
                   max_gpu_ms=REPLAY_LIMITS["max_gpu_ms"], max_wall_s=REPLAY_LIMITS["max_wall_s"])
    return time_unit(backend, unit, l2_policy=how.l2_policy, rule=rule, divisor=max(1, calls),
                     reference_mhz=how.reference_mhz)
