"""The NPB sweep: for each benchmark and class, every kernel at every TPB (others at the NPB-GPU default),
plus whole runs under the uniform ``max``, ``warp`` and the ``default`` assignments.

Built from the harness's pieces (compile through the backend, protocol-2 timing, statistics, GPU and
provenance columns, resumable shard writer); NPB's whole-application flow does not fit the per-case loop, so
it is driven from here. Every measured run is verified with the official NPB check; a failing assignment
gives ``verification_failed`` rows without times.

Measurement protocol 2 for npb:

- *Whole runs* (``run`` rows: ``app_time_s`` and the timing columns, ``timing_method = app``) are host-timed
  between two device synchronisations, at least :attr:`SweepRule.min_runs` runs and ``min_total_ms``.
- *Kernel times* never include the host's launch cost: the :class:`~.launcher.Launcher` records every call of
  the last verified run, and the calls of one kernel (a ``kernel`` row: per call) or of all kernels (a ``run``
  row's ``kernel_time_s``) are replayed as a CUDA graph with the harness's sampler and stop rule
  (:func:`kgpubench.measure.runner.time_unit`). A ``kernel`` row's ``launches_per_sample`` counts calls;
  its ``remainder_s`` is null (the offline sum takes the ``default`` run row's remainder).
- ``kernel`` rows need one verified run of their assignment (:data:`KERNEL_RUNS`); ``run`` rows three.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgpubench.measure.timing import relative_standard_error, summarize

from .apps import NpbApp
from .launcher import Launcher
from .sources import full_assignment, kernel_source
from .spec import TPB_CHOICES, check_benchmark, check_class, default_tpb, kernel_names, uniform_tpb

COLLECTOR_VERSION = "1.0.0"
DEFAULT_CLASSES = ("S", "W", "A", "B")
UNIFORM = {"max": 1024, "warp": 32}


@dataclass
class RunMeasurement:
    """Timed whole runs of one assignment: app times (ms), calls per kernel, verification, and the launcher
    holding the last run's recorded calls (for replays)."""

    assignment: dict[str, int]
    app_ms: list[float] = field(default_factory=list)
    calls_per_run: dict[str, int] = field(default_factory=dict)
    launcher: Launcher | None = None
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


# A kernel row needs one verified run of its assignment (its time comes from replays, not from the runs).
KERNEL_RUNS = SweepRule(warmup=0, min_runs=1, min_total_ms=0.0)


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
                       sync: Callable[[], None], rule: SweepRule = SweepRule(),
                       now: Callable[[], float] = time.perf_counter) -> RunMeasurement:
    """Warm up, then time whole runs until ``rule`` is met; every run is verified and its calls recorded."""
    out = RunMeasurement(assignment=dict(tpb))
    launcher = Launcher(kernels, tpb)
    out.launcher = launcher
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
        out.calls_per_run = dict(launcher.calls)
    return out


def _params(assignment: Mapping[str, int]) -> list[dict[str, float]]:
    return [{"name": k, "value": float(v)} for k, v in sorted(assignment.items())]


def _stats(times: Sequence[float]) -> dict[str, Any]:
    s = summarize(times)
    rse = relative_standard_error(times)
    return {"time_ms_median": s.median, "time_ms_min": s.min, "time_ms_mean": s.mean, "time_ms_std": s.std,
            "repeats": s.count, "time_cv": s.cv, "time_rse": rse if rse != float("inf") else None,
            "measurement_protocol": 2, "timing_method": "app", "launches_per_sample": 1, "l2_policy": "warm",
            "time_cap_hit": False, "samples_dropped": 0}


def _common(meas: RunMeasurement) -> dict[str, Any]:
    row: dict[str, Any] = {"status": meas.status, "verified": meas.verified, "tpb_assignment": _params(meas.assignment),
                           "verification_value": [float(v) for v in meas.values] or None,
                           "verification_error": meas.error}
    if meas.status == "ok" and meas.runs:
        row.update(app_time_s=statistics.median(meas.app_ms) / 1e3, runs=meas.runs)
    return row


def kernel_row(benchmark: str, npb_class: str, kernel: str, tpb: int, meas: RunMeasurement,
               timing: Any = None, l2_policy: str = "warm") -> dict[str, Any]:
    """The ``kernel`` row of ``kernel`` at ``tpb``: its assignment's runs, and ``timing`` (a protocol-2
    :class:`~kgpubench.measure.timing.TimingResult` of the kernel's recorded calls, per call)."""
    row = {"row_kind": "kernel", "benchmark": benchmark, "npb_class": npb_class, "kernel": kernel, "tpb": tpb,
           "variant": "kgpubench", "assignment": "one-kernel", "tpb_effective": tpb, **_common(meas)}
    if meas.status == "ok" and meas.runs:
        calls = meas.calls_per_run.get(kernel, 0)
        row["calls_per_run"] = calls
        if not calls:
            row.update(status="infeasible", status_detail="the kernel is never called in this class")
        elif timing is not None:
            row.update(timing.columns(l2_policy))
            row["launches_per_sample"] = timing.launches * calls
            row["kernel_time_s"] = timing.stats.mean * calls / 1e3
    return row


def run_row(benchmark: str, npb_class: str, assignment: str, meas: RunMeasurement,
            timing: Any = None) -> dict[str, Any]:
    """The ``run`` row of a named assignment (``default``, ``max``, ``warp``); ``timing``: the replay of every
    recorded call of a run (per run), which gives ``kernel_time_s`` and ``remainder_s``."""
    row = {"row_kind": "run", "benchmark": benchmark, "npb_class": npb_class, "kernel": "app",
           "tpb": UNIFORM.get(assignment), "variant": "kgpubench", "assignment": assignment, **_common(meas)}
    if meas.status == "ok" and meas.runs:
        row.update(_stats(meas.app_ms), calls_per_run=sum(meas.calls_per_run.values()))
        if timing is not None:
            row["kernel_time_s"] = timing.stats.mean / 1e3
            row["remainder_s"] = (statistics.fmean(meas.app_ms) - timing.stats.mean) / 1e3
    return row


@dataclass(frozen=True)
class PlanItem:
    """One row to produce: its key columns and the assignment whose runs measure it."""

    key: dict[str, Any]
    assignment: dict[str, int]

    @property
    def label(self) -> str:
        k = self.key
        if k["row_kind"] == "run":
            return f"{k['benchmark']}.{k['npb_class']} run ({k['assignment']})"
        return f"{k['benchmark']}.{k['npb_class']} {k['kernel']} tpb={k['tpb']}"


def plan(benchmark: str, npb_class: str, tpbs: Iterable[int] = TPB_CHOICES,
         kernels: Sequence[str] | None = None) -> list[PlanItem]:
    """The rows of one benchmark and class: run rows (default, max, warp) first, then kernel rows."""
    bench, cls = check_benchmark(benchmark), check_class(npb_class)
    base = {"benchmark": bench, "npb_class": cls, "variant": "kgpubench"}
    keys = [{**base, "row_kind": "run", "kernel": "app", "tpb": UNIFORM.get(a), "assignment": a}
            for a in ("default", "max", "warp")]
    for name in kernel_names(bench):
        if kernels and name not in kernels:
            continue
        keys += [{**base, "row_kind": "kernel", "kernel": name, "tpb": int(t), "assignment": "one-kernel"}
                 for t in tpbs]
    return [plan_item(k) for k in keys]


def plan_item(key: Mapping[str, Any]) -> PlanItem:
    """The plan item of a row key: its threads-per-block assignment follows from the key alone (run rows: the
    named assignment; kernel rows: that kernel at ``tpb``, the others at the NPB-GPU default)."""
    bench = check_benchmark(key["benchmark"])
    if key["row_kind"] == "run":
        name = key["assignment"]
        assignment = default_tpb(bench) if name == "default" else uniform_tpb(bench, UNIFORM[name])
    else:
        assignment = full_assignment(bench, {key["kernel"]: int(key["tpb"])})
    return PlanItem(dict(key), assignment)


def compile_assignment(backend: Any, benchmark: str, assignment: Mapping[str, int]) -> dict[str, Any]:
    """Compile a benchmark's module under ``assignment`` once; every kernel of it by name."""
    names = kernel_names(benchmark)
    first = backend.compile(kernel_source(benchmark, names[0], assignment))
    return {n: (first if n == names[0] else first.function(n)) for n in names}


def precompile_assignments(backend: Any, work: Iterable[tuple[str, Mapping[str, int]]]) -> int:
    """Compile the module of every distinct (benchmark, assignment) in ``work`` ahead of time, in parallel,
    when the backend has the ``precompile`` capability; :func:`compile_assignment` then only loads them.
    Returns how many distinct modules were handed over (0 without it)."""
    if not backend.capabilities.precompile:
        return 0
    sources = {}
    for bench, assignment in work:
        key = (bench, tuple(sorted(assignment.items())))
        if key not in sources:
            sources[key] = kernel_source(bench, kernel_names(bench)[0], assignment)
    if sources:
        backend.precompile(sources=list(sources.values()), features=False)
    return len(sources)
