"""Run the NPB plan on a backend and append rows to a resumable shard (``kgpubench collect --suite npb``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .apps import APPS
from .driver import (
    COLLECTOR_VERSION,
    DEFAULT_CLASSES,
    PlanItem,
    RunMeasurement,
    SweepRule,
    compile_assignment,
    event_clock,
    kernel_row,
    measure_assignment,
    plan,
    precompile_assignments,
    run_row,
)
from .spec import BENCHMARKS, TPB_CHOICES


def _failed(item: PlanItem, status: str, detail: str) -> RunMeasurement:
    return RunMeasurement(assignment=item.assignment, status=status, detail=detail)


def _measure(item: PlanItem, app: Any, backend: Any, rule: SweepRule, cache: dict, clock: Any) -> RunMeasurement:
    key = tuple(sorted(item.assignment.items()))
    if key in cache:
        return cache[key]
    try:
        kernels = compile_assignment(backend, app.benchmark, item.assignment)
        meas = measure_assignment(app, kernels, item.assignment, clock=clock,
                                  sync=backend.synchronize, rule=rule)
    except Exception as exc:
        failure = backend.classify(exc)
        if failure is None:
            raise
        status = {"CompileFailed": "compile_error", "Infeasible": "infeasible"}.get(type(failure).__name__,
                                                                                   "launch_error")
        meas = _failed(item, status, str(failure))
    cache[key] = meas
    return meas


def _row_id(table: Any, item: PlanItem, gpu_name: str) -> str:
    from kgpubench.schema import row_id_of

    key = {**item.key, "gpu_name": gpu_name}
    return row_id_of(table.name, {k: key.get(k) for k in table.key_columns})


def _row(item: PlanItem, meas: RunMeasurement) -> dict[str, Any]:
    k = item.key
    if k["row_kind"] == "run":
        row = run_row(k["benchmark"], k["npb_class"], k["assignment"], meas)
    else:
        row = kernel_row(k["benchmark"], k["npb_class"], k["kernel"], k["tpb"], meas)
    if meas.detail:
        row["status_detail"] = meas.detail
    return row


def collect_npb(backend: Any, writer: Any, *, benchmarks: Sequence[str] = BENCHMARKS,
                classes: Sequence[str] = DEFAULT_CLASSES, tpbs: Sequence[int] = TPB_CHOICES,
                kernels: Sequence[str] | None = None, rule: SweepRule | None = None,
                max_minutes: float | None = None,
                progress: Callable[[int, int, str], None] | None = None) -> Any:
    """Measure the NPB plan on ``backend`` (a harness backend with ``xp``) and append rows to ``writer``.

    Rows already in the shard are skipped (resumable). Returns the harness's ``CollectSummary``.
    """
    from kgpubench.measure.provenance import gpu_columns, new_run_id, provenance_columns
    from kgpubench.measure.runner import CollectSummary

    rule = rule or SweepRule()
    clock = event_clock(backend)
    if clock is None:
        from kgpubench.errors import NoGpuError

        raise NoGpuError(f"the {getattr(backend, 'name', '?')!r} backend has no device events, so NPB kernel calls "
                         "cannot be timed; run `kgpubench collect --suite npb` with the CuPy backend on a GPU.")
    dev = backend.device()
    gpu = gpu_columns(dev)
    run_id = writer.run_id or new_run_id()
    table = writer.table
    groups = {(b, c): [(it, _row_id(table, it, gpu["gpu_name"])) for it in plan(b, c, tpbs, kernels)]
              for b in benchmarks for c in classes}
    total = sum(len(items) for items in groups.values())
    summary = CollectSummary(total=total, run_id=run_id)
    start, done = time.monotonic(), 0
    precompile_assignments(backend, ((b, it.assignment) for (b, _c), items in groups.items() for it, rid in items
                                     if not writer.has(rid)))
    columns = set(table.column_names)
    for (bench, cls), items in groups.items():
        app, cache = None, {}
        for item, rid in items:
            done += 1
            if writer.has(rid):
                summary.skipped += 1
                continue
            if max_minutes is not None and (time.monotonic() - start) / 60 >= max_minutes:
                summary.stopped_early = True
                summary.wall_s = time.monotonic() - start
                return summary
            if app is None:
                app = APPS[bench](cls, backend.xp)
                app.setup()
            meas = _measure(item, app, backend, rule, cache, clock)
            row = {**_row(item, meas), **gpu}
            row.update(provenance_columns(dev, row_source=backend.row_source, run_id=run_id,
                                          collector_version=COLLECTOR_VERSION))
            writer.append({k: v for k, v in row.items() if k in columns})
            summary.written += 1
            summary.statuses[row["status"]] += 1
            summary.measured_ms += sum(meas.app_ms)
            if progress:
                progress(done, total, item.label)
        del app, cache
    summary.wall_s = time.monotonic() - start
    return summary
