"""Run the NPB plan on a backend and append rows to a resumable shard (``kgpubench collect --suite npb``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from .apps import APPS
from .driver import (
    COLLECTOR_VERSION,
    DEFAULT_CLASSES,
    KERNEL_RUNS,
    PlanItem,
    RunMeasurement,
    SweepRule,
    compile_assignment,
    kernel_row,
    measure_assignment,
    plan,
    precompile_assignments,
    run_row,
)
from .spec import BENCHMARKS, TPB_CHOICES


def _failed(item: PlanItem, status: str, detail: str) -> RunMeasurement:
    return RunMeasurement(assignment=item.assignment, status=status, detail=detail)


# Replays of recorded calls: long units (a class B kernel's calls take up to a second) need few samples.
def _replay_rule() -> Any:
    from kgpubench.measure.timing import StopRule

    return StopRule(min_samples=3, max_gpu_ms=3000.0, max_wall_s=15.0)


def _measure(item: PlanItem, app: Any, backend: Any, rule: SweepRule, cache: dict) -> RunMeasurement:
    key = tuple(sorted(item.assignment.items()))
    if key in cache:
        return cache[key]
    try:
        kernels = compile_assignment(backend, app.benchmark, item.assignment)
        meas = measure_assignment(app, kernels, item.assignment, sync=backend.synchronize,
                                  rule=rule if item.key["row_kind"] == "run" else KERNEL_RUNS)
    except Exception as exc:
        failure = backend.classify(exc)
        if failure is None:
            raise
        status = {"CompileFailed": "compile_error", "Infeasible": "infeasible"}.get(type(failure).__name__,
                                                                                   "launch_error")
        meas = _failed(item, status, str(failure))
    cache[key] = meas
    return meas


def _timing(item: PlanItem, meas: RunMeasurement, backend: Any, l2_policy: str, reference_mhz: Any) -> Any:
    """Protocol-2 time of the row's kernel (all kernels for a run row) from replays of the recorded calls."""
    from kgpubench.measure.runner import time_unit

    if meas.status != "ok" or meas.launcher is None:
        return None
    name = None if item.key["row_kind"] == "run" else item.key["kernel"]
    unit = meas.launcher.replay(name)
    if unit is None:
        return None
    calls = 1 if name is None else meas.calls_per_run.get(name, 0)
    return time_unit(backend, unit, l2_policy=l2_policy, rule=_replay_rule(), divisor=max(1, calls),
                     reference_mhz=reference_mhz)


def _row_id(table: Any, item: PlanItem, gpu_name: str) -> str:
    from kgpubench.schema import row_id_of

    key = {**item.key, "gpu_name": gpu_name}
    return row_id_of(table.name, {k: key.get(k) for k in table.key_columns})


def _row(item: PlanItem, meas: RunMeasurement, timing: Any, l2_policy: str) -> dict[str, Any]:
    k = item.key
    if k["row_kind"] == "run":
        row = run_row(k["benchmark"], k["npb_class"], k["assignment"], meas, timing)
    else:
        row = kernel_row(k["benchmark"], k["npb_class"], k["kernel"], k["tpb"], meas, timing, l2_policy)
    if meas.detail:
        row["status_detail"] = meas.detail
    return row


def collect_npb(backend: Any, writer: Any, *, benchmarks: Sequence[str] = BENCHMARKS,
                classes: Sequence[str] = DEFAULT_CLASSES, tpbs: Sequence[int] = TPB_CHOICES,
                kernels: Sequence[str] | None = None, rule: SweepRule | None = None,
                max_minutes: float | None = None, l2_policy: str = "warm", clocks_locked: bool = False,
                row_ids: Any = None, progress: Callable[[int, int, str], None] | None = None) -> Any:
    """Measure the NPB plan on ``backend`` (a harness backend with ``xp``) and append rows to ``writer``.

    Rows already in the shard are skipped (resumable). Returns the harness's ``CollectSummary``.
    """
    from kgpubench.measure.power import THROTTLE_MASK
    from kgpubench.measure.provenance import gpu_columns, process_run_id, provenance_columns
    from kgpubench.measure.runner import CollectSummary

    rule = rule or SweepRule()
    dev = backend.device()
    gpu = gpu_columns(dev)
    nvml = backend.nvml()
    reference_mhz = (nvml.sm_clock_mhz() if clocks_locked else dev.clock_sm_mhz) if nvml is not None else None
    run_id = process_run_id(dev.uuid_hash)
    table = writer.table
    groups = {(b, c): [(it, _row_id(table, it, gpu["gpu_name"])) for it in plan(b, c, tpbs, kernels)]
              for b in benchmarks for c in classes}
    if row_ids is not None:
        groups = {k: [(it, rid) for it, rid in items if rid in row_ids] for k, items in groups.items()}
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
            before = nvml.state() if nvml is not None else None
            meas = _measure(item, app, backend, rule, cache)
            timing = _timing(item, meas, backend, l2_policy, reference_mhz)
            row = {**_row(item, meas, timing, l2_policy), **gpu}
            if before is not None:
                after = nvml.state()
                seen = before.throttle_reasons | after.throttle_reasons | (timing.reasons_seen if timing else 0)
                row.update(before.columns("before"), **after.columns("after"), throttled=bool(seen & THROTTLE_MASK))
            if row["status"] == "ok":
                row["clocks_locked"] = clocks_locked
            row.update(provenance_columns(dev, row_source=backend.row_source, run_id=run_id,
                                          collector_version=COLLECTOR_VERSION))
            writer.append({k: v for k, v in row.items() if k in columns})
            summary.written += 1
            summary.statuses[row["status"]] += 1
            summary.measured_ms += sum(meas.app_ms) + (timing.gpu_ms if timing else 0.0)
            if progress:
                progress(done, total, item.label)
        del app, cache
    summary.wall_s = time.monotonic() - start
    return summary
