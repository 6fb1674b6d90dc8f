"""The NPB sweep: for each benchmark and class, every kernel at every TPB (others at the NPB-GPU default),
plus whole runs under the uniform ``max``, ``warp`` and the ``default`` assignments.

Built from the harness's pieces (compile through the backend, repeat rule, statistics, GPU and provenance
columns, resumable shard writer); NPB's whole-application flow does not fit the per-case loop, so it is
driven from here. Every measured run is verified with the official NPB check; a failing assignment gives
``verification_failed`` rows without times.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .apps import NpbApp
from .launcher import CupyEventClock, EventClock, Launcher
from .sources import full_assignment, kernel_source
from .spec import TPB_CHOICES, check_benchmark, check_class, default_tpb, kernel_names, uniform_tpb

COLLECTOR_VERSION = "1.0.0"
DEFAULT_CLASSES = ("S", "W", "A", "B")
UNIFORM = {"max": 1024, "warp": 32}


@dataclass
class RunMeasurement:
    """Timed whole runs of one assignment: app times (ms), every call's time per kernel, verification."""

    assignment: dict[str, int]
    app_ms: list[float] = field(default_factory=list)
    call_ms: dict[str, list[float]] = field(default_factory=dict)
    kernel_ms_per_run: list[float] = field(default_factory=list)
    calls_per_run: dict[str, int] = field(default_factory=dict)
    values: list[float] = field(default_factory=list)
    verified: bool = False
    error: float | None = None
    status: str = "ok"
    detail: str = ""

    @property
    def runs(self) -> int:
        return len(self.app_ms)


@dataclass(frozen=True)
class SweepRule:
    """Whole runs per assignment: one warm-up (verified), then at least ``min_runs`` and ``min_total_ms``."""

    warmup: int = 1
    min_runs: int = 3
    min_total_ms: float = 1000.0
    max_runs: int = 20

    def done(self, runs: int, total_ms: float) -> bool:
        return runs >= self.max_runs or (runs >= self.min_runs and total_ms >= self.min_total_ms)


def _one_run(app: NpbApp, launcher: Launcher, sync: Callable[[], None],
             now: Callable[[], float]) -> tuple[float, list[float]]:
    app.reset()
    sync()
    launcher.reset()
    t0 = now()
    values = app.run(launcher)
    sync()
    return (now() - t0) * 1e3, values


def measure_assignment(app: NpbApp, kernels: Mapping[str, Callable[..., None]], tpb: Mapping[str, int], *,
                       clock: EventClock | None, sync: Callable[[], None], rule: SweepRule = SweepRule(),
                       now: Callable[[], float] = time.perf_counter) -> RunMeasurement:
    """Warm up, then time whole runs until ``rule`` is met; every run is verified."""
    out = RunMeasurement(assignment=dict(tpb))
    launcher = Launcher(kernels, tpb, clock)
    for _ in range(rule.warmup):
        _, values = _one_run(app, launcher, sync, now)
        ok, err = app.verify(values)
        if not ok:
            out.status, out.values, out.error = "verification_failed", values, err
            out.detail = f"warm-up run failed the official {app.benchmark} check (relative error {err:.3g})"
            return out
    out.verified = True
    while not rule.done(out.runs, sum(out.app_ms)):
        ms, values = _one_run(app, launcher, sync, now)
        ok, err = app.verify(values)
        out.values, out.error = values, max(err, out.error or 0.0)
        if not ok:
            out.status, out.verified = "verification_failed", False
            out.detail = f"run {out.runs + 1} failed the official {app.benchmark} check (relative error {err:.3g})"
            return out
        out.app_ms.append(ms)
        times = launcher.call_times_ms()
        for name, ts in times.items():
            out.call_ms.setdefault(name, []).extend(ts)
        out.kernel_ms_per_run.append(sum(sum(ts) for ts in times.values()))
        out.calls_per_run = dict(launcher.calls)
    return out


def _params(assignment: Mapping[str, int]) -> list[dict[str, float]]:
    return [{"name": k, "value": float(v)} for k, v in sorted(assignment.items())]


def _stats(times: Sequence[float]) -> dict[str, Any]:
    from kgpubench.measure.timing import summarize

    s = summarize(times)
    return {"time_ms_median": s.median, "time_ms_min": s.min, "time_ms_mean": s.mean, "time_ms_std": s.std,
            "repeats": s.count, "time_cv": s.cv}


def _common(meas: RunMeasurement) -> dict[str, Any]:
    row: dict[str, Any] = {"status": meas.status, "verified": meas.verified, "tpb_assignment": _params(meas.assignment),
                           "verification_value": [float(v) for v in meas.values] or None,
                           "verification_error": meas.error}
    if meas.status == "ok" and meas.runs:
        app_mean = statistics.fmean(meas.app_ms)
        row.update(app_time_s=statistics.median(meas.app_ms) / 1e3, runs=meas.runs,
                   remainder_s=(app_mean - statistics.fmean(meas.kernel_ms_per_run)) / 1e3)
    return row


def kernel_row(benchmark: str, npb_class: str, kernel: str, tpb: int, meas: RunMeasurement) -> dict[str, Any]:
    """The ``kernel`` row of ``kernel`` at ``tpb`` from the runs of its one-kernel assignment."""
    row = {"row_kind": "kernel", "benchmark": benchmark, "npb_class": npb_class, "kernel": kernel, "tpb": tpb,
           "variant": "kgpubench", "assignment": "one-kernel", "tpb_effective": tpb, **_common(meas)}
    times = meas.call_ms.get(kernel, [])
    if meas.status == "ok" and meas.runs:
        row["calls_per_run"] = meas.calls_per_run.get(kernel, 0)
        row["kernel_time_s"] = sum(times) / meas.runs / 1e3
        if times:
            row.update(_stats(times))
        else:
            row.update(status="infeasible", status_detail="the kernel is never called in this class")
    return row


def run_row(benchmark: str, npb_class: str, assignment: str, meas: RunMeasurement) -> dict[str, Any]:
    """The ``run`` row of a named assignment (``default``, ``max``, ``warp``)."""
    row = {"row_kind": "run", "benchmark": benchmark, "npb_class": npb_class, "kernel": "app",
           "tpb": UNIFORM.get(assignment), "variant": "kgpubench", "assignment": assignment, **_common(meas)}
    if meas.status == "ok" and meas.runs:
        row.update(_stats(meas.app_ms), calls_per_run=sum(meas.calls_per_run.values()),
                   kernel_time_s=statistics.fmean(meas.kernel_ms_per_run) / 1e3)
    return row


@dataclass(frozen=True)
class PlanItem:
    """One row to produce: its key columns and the assignment whose runs measure it."""

    key: dict[str, Any]
    assignment: dict[str, int]

    @property
    def label(self) -> str:
        k = self.key
        return f"{k['benchmark']}.{k['npb_class']} {k['kernel']} tpb={k['tpb']} ({k['assignment']})"


def plan(benchmark: str, npb_class: str, tpbs: Iterable[int] = TPB_CHOICES,
         kernels: Sequence[str] | None = None) -> list[PlanItem]:
    """The rows of one benchmark and class: run rows (default, max, warp) first, then kernel rows."""
    bench, cls = check_benchmark(benchmark), check_class(npb_class)
    base = {"benchmark": bench, "npb_class": cls, "variant": "kgpubench"}
    items = [PlanItem({**base, "row_kind": "run", "kernel": "app", "tpb": UNIFORM.get(a), "assignment": a},
                      default_tpb(bench) if a == "default" else uniform_tpb(bench, UNIFORM[a]))
             for a in ("default", "max", "warp")]
    for name in kernel_names(bench):
        if kernels and name not in kernels:
            continue
        for t in tpbs:
            items.append(PlanItem({**base, "row_kind": "kernel", "kernel": name, "tpb": int(t),
                                   "assignment": "one-kernel"}, full_assignment(bench, {name: int(t)})))
    return items


def compile_assignment(backend: Any, benchmark: str, assignment: Mapping[str, int]) -> dict[str, Any]:
    """Compile a benchmark's module under ``assignment`` once; every kernel of it by name."""
    names = kernel_names(benchmark)
    first = backend.compile(kernel_source(benchmark, names[0], assignment))
    return {n: (first if n == names[0] else first.function(n)) for n in names}


def precompile_assignments(backend: Any, work: Iterable[tuple[str, Mapping[str, int]]]) -> int:
    """Compile the module of every distinct (benchmark, assignment) in ``work`` ahead of time, in parallel,
    when the backend can (``backend.precompile``); :func:`compile_assignment` then only loads them.
    Returns how many distinct modules were handed over (0 without ``precompile``)."""
    pre = getattr(backend, "precompile", None)
    if pre is None:
        return 0
    sources = {}
    for bench, assignment in work:
        key = (bench, tuple(sorted(assignment.items())))
        if key not in sources:
            sources[key] = kernel_source(bench, kernel_names(bench)[0], assignment)
    if sources:
        pre(sources=list(sources.values()), features=False)
    return len(sources)


def event_clock(backend: Any) -> EventClock | None:
    """The backend's device-event clock (``backend.event_clock`` if it has one; CUDA events for CuPy)."""
    clock = getattr(backend, "event_clock", None)
    if clock is not None:
        return clock
    return CupyEventClock() if getattr(backend, "name", "") == "cupy" else None
