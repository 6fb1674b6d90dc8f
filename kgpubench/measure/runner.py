"""The run loop: every case of a suite becomes one row, appended to the shard as soon as it is done.

Entry points: :func:`collect_suite` (a whole suite, resumable, with progress) and :func:`measure_case`
(one case, returning the measurement columns). The order of work per case is documented in
:mod:`kgpubench.measure.suite`.
"""

from __future__ import annotations

import inspect
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgpubench.measure.backend import Backend, CaseFailure, ContextLostError, LaunchFailed, check_feasible
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.power import MIN_WINDOW_MS, idle_power, measure_power
from kgpubench.measure.provenance import gpu_columns, new_run_id, provenance_columns
from kgpubench.measure.suite import Case, launch_columns
from kgpubench.measure.timing import RepeatRule, repeat_until, summarize
from kgpubench.schema import Table, get_table, row_id_of

DEFAULT_RULE = RepeatRule()


@dataclass(frozen=True)
class CollectOptions:
    """How a suite is collected.

    Parameters
    ----------
    quick : bool
        A few sizes per kernel (the suite decides which).
    kernels : sequence of str, optional
        Only these kernels.
    max_minutes : float, optional
        Start no new case after this many minutes (the case in flight finishes).
    rule : RepeatRule
        Warm-up and repeat rule.
    power_window_ms : float
        Minimum power window.
    seed : int
        Base seed of the input generator (each case's seed also depends on its row id).
    """

    quick: bool = False
    kernels: Sequence[str] | None = None
    max_minutes: float | None = None
    rule: RepeatRule = field(default_factory=RepeatRule)
    power_window_ms: float = MIN_WINDOW_MS
    seed: int = 0


@dataclass
class CollectSummary:
    """What a collection did: rows written or skipped (already in the output), statuses, times."""

    total: int = 0
    written: int = 0
    skipped: int = 0
    statuses: Counter = field(default_factory=Counter)
    stopped_early: bool = False
    measured_ms: float = 0.0
    wall_s: float = 0.0
    cvs: list[float] = field(default_factory=list)
    run_id: str = ""


def measure_case(case: Case, suite: Any, backend: Backend, *, rule: RepeatRule = DEFAULT_RULE,
                 seed: int = 0, power_window_ms: float = MIN_WINDOW_MS, idle_w: float | None = None
                 ) -> dict[str, Any]:
    """Measure one case: ``status`` (+ ``status_detail``), timing and power columns, ``_measured_ms``.

    Per-case failures (compile, feasibility, launch, verification) come back as a status; a sticky CUDA
    error is returned as a ``launch_error`` with ``_sticky=True`` so the caller can stop.
    """
    dev = backend.device()
    prepared = None
    try:
        check_feasible(case, dev, backend.free_memory_bytes() if case.memory_bytes else None)
        kernel = backend.compile(case.source)
        nreg = getattr(kernel, "registers", None)
        if case.threads_per_block > kernel.max_threads_per_block:
            return _status("infeasible", f"{case.threads_per_block} threads per block > "
                           f"{kernel.max_threads_per_block} allowed by the compiled kernel (registers)")
        prepared = suite.prepare(case, kernel, backend.xp, np.random.default_rng(seed))
        prepared.poison()
        prepared.launch()
        backend.synchronize()
        ok, detail = prepared.verify()
        if not ok:
            return _status("verification_failed", detail)
        times = repeat_until(lambda k: backend.time_launches(prepared.launch, k), rule,
                             divisor=max(1, case.time_divisor))
        if not all(t > 0 for t in times):  # never seen in practice; a row that says so beats a crash
            return _status("launch_error", f"CUDA events gave non-positive times ({min(times)} ms); rerun")
        stats = summarize(times)
        out: dict[str, Any] = {"status": "ok", **stats.columns(), "_nreg": nreg,
                               "_measured_ms": sum(times) * max(1, case.time_divisor)}
        nvml = backend.nvml()
        if case.power and nvml is not None:
            def run_launches(k: int) -> None:
                for _ in range(k):
                    prepared.launch()
                backend.synchronize()

            clock = getattr(backend, "clock", None)
            kwargs = {"clock_ns": clock.ns, "sleep": clock.sleep} if clock is not None else {}
            result = measure_power(nvml, run_launches, stats.median * max(1, case.time_divisor),
                                   min_window_ms=power_window_ms, **kwargs)
            out.update(result.columns())
            out["energy_j"] = result.energy_j / max(1, case.time_divisor)
            out["power_idle_w"] = idle_w
        return out
    except Exception as exc:
        failure = backend.classify(exc)
        if failure is None:
            raise
        return _failure(failure)
    finally:
        if prepared is not None:
            prepared.release()


def _status(status: str, detail: str) -> dict[str, Any]:
    return {"status": status, "status_detail": detail[:500]}


def _failure(failure: CaseFailure) -> dict[str, Any]:
    out = _status(failure.status, failure.detail)
    if isinstance(failure, LaunchFailed) and failure.sticky:
        out["_sticky"] = True
    return out


def case_row_base(case: Case, table: Table, gpu: dict[str, Any]) -> dict[str, Any]:
    """The row's identity part: key, descriptive, launch and GPU columns (what ``row_id`` is made from)."""
    row: dict[str, Any] = dict(gpu)
    names = set(table.column_names)
    for k, v in launch_columns(case.grid, case.block).items():
        if k in names:
            row[k] = v
    row.update(case.columns)
    row.update(case.key)
    for col in table.columns:
        if col.type == "params" and isinstance(row.get(col.name), dict):
            row[col.name] = [{"name": str(k), "value": float(v)} for k, v in sorted(row[col.name].items())]
    return {k: v for k, v in row.items() if k in names}


def _select_cases(suite: Any, options: CollectOptions, device: Any = None) -> list[Case]:
    kernels = list(options.kernels) if options.kernels else None
    if kernels:
        known = set(suite_kernels(suite))
        for name in kernels:
            if name not in known:
                from kgpubench.errors import UnknownNameError, unknown_name

                raise UnknownNameError(f"suite {suite.name!r}: {unknown_name('kernel', name, known)}")
    kwargs: dict[str, Any] = {"quick": options.quick, "kernels": kernels}
    if device is not None and "device" in inspect.signature(suite.cases).parameters:
        kwargs["device"] = device
    return list(suite.cases(**kwargs))


def suite_kernels(suite: Any) -> list[str]:
    """Kernel names of a suite: ``suite.kernels()`` or those of its full case list."""
    if hasattr(suite, "kernels"):
        return list(suite.kernels())
    names = {c.key.get("kernel", c.source.kernel) for c in suite.cases(quick=False)}
    return sorted(names)


def collect_suite(suite: Any, backend: Backend, writer: ShardWriter, options: CollectOptions = CollectOptions(),
                  *, progress: Callable[[int, int, str], None] | None = None,
                  features: Callable[[Case, Any], dict[str, Any]] | None = None,
                  clock: Callable[[], float] = time.monotonic) -> CollectSummary:
    """Measure every case of ``suite`` not yet in ``writer``'s shard and append each row as it finishes.

    ``progress(done, total, label)`` is called after each case; ``features(case, device)`` returns the
    static-feature columns (default: computed ahead of time with the compilation when the backend has
    ``precompile``, else :func:`kgpubench.measure.features_link.static_features`). Before the loop, the cases
    still to measure are compiled ahead of time (``backend.precompile``, when there is one).
    Raises :class:`ContextLostError` after writing the row of a case that left a sticky CUDA error.
    """
    own_features = features is not None
    if features is None:
        from kgpubench.measure.features_link import static_features

        ptx_source = getattr(backend, "ptx", None)

        def features(case: Case, dev: Any) -> dict[str, Any]:
            return static_features(case, dev, ptx_source)
    table = get_table(suite.table)
    dev = backend.device()
    gpu = gpu_columns(dev)
    cases = _select_cases(suite, options, dev)
    run_id = writer.run_id or new_run_id()
    summary = CollectSummary(total=len(cases), run_id=run_id)
    start = clock()
    keyed = _keyed_cases(cases, table, gpu)
    features = _precompile(backend, [c for c, _b, rid in keyed if not writer.has(rid)], features, own_features)
    idle_w = _idle_power(backend, cases)
    for i, (case, base, rid) in enumerate(keyed):
        if writer.has(rid):
            summary.skipped += 1
        else:
            if options.max_minutes is not None and (clock() - start) / 60.0 >= options.max_minutes:
                summary.stopped_early = True
                break
            seed = (options.seed * 1_000_003 + zlib.crc32(rid.encode())) % 2**32
            result = measure_case(case, suite, backend, rule=options.rule, seed=seed,
                                  power_window_ms=options.power_window_ms, idle_w=idle_w)
            row = _assemble(base, result, case, dev, features, backend, suite, run_id, table)
            writer.append(row)
            summary.written += 1
            summary.statuses[row["status"]] += 1
            summary.measured_ms += result.get("_measured_ms", 0.0)
            if row.get("time_cv") is not None:
                summary.cvs.append(row["time_cv"])
            if result.get("_sticky"):
                summary.wall_s = clock() - start
                raise ContextLostError(
                    f"{case.label()}: {result['status_detail']}; the CUDA context is unusable. The row is "
                    "saved; rerun the same command to resume after it.")
        if progress:
            progress(i + 1, len(cases), case.label())
    summary.wall_s = clock() - start
    _drop_suite_caches(suite)
    return summary


def _keyed_cases(cases: Sequence[Case], table: Table, gpu: dict[str, Any]) -> list[tuple[Case, dict, str]]:
    """``(case, row base, row id)`` of every case, computed once (the resume check is a set lookup)."""
    out = []
    for case in cases:
        base = case_row_base(case, table, gpu)
        out.append((case, base, row_id_of(table.name, {k: base.get(k) for k in table.key_columns})))
    return out


def _precompile(backend: Backend, todo: Sequence[Case], features: Callable, own_features: bool) -> Callable:
    """Compile the cases still to measure ahead of time (and their features, unless the caller gave a features
    function) when the backend can; the returned function looks the features up."""
    from kgpubench.measure.features_link import with_precompiled

    return with_precompiled(backend, todo, features, compute=not own_features)


def _drop_suite_caches(suite: Any) -> None:
    """Let the suite free what it keeps between cases (device inputs of the last problem)."""
    drop = getattr(suite, "drop_caches", None)
    if drop is not None:
        drop()


def _assemble(base: dict[str, Any], result: dict[str, Any], case: Case, dev: Any, features: Callable,
              backend: Backend, suite: Any, run_id: str, table: Table) -> dict[str, Any]:
    row = dict(base)
    names = set(table.column_names)
    for k, v in features(case, dev).items():
        if k in names and row.get(k) is None:
            row[k] = v
    if "nreg" in names and row.get("nreg") is None and result.get("_nreg") is not None:
        row["nreg"] = int(result["_nreg"])  # from the compiled kernel when ptxas was not there
    if "sm_saturation" in names and row.get("sm_saturation") is None:
        # Without the features' occupancy model: the share of SMs that get at least one block.
        row["sm_saturation"] = min(1.0, case.blocks / dev.sm_count)
    row.update({k: v for k, v in result.items() if not k.startswith("_")})
    row.update(provenance_columns(dev, row_source=backend.row_source, run_id=run_id,
                                  collector_version=suite.collector_version))
    return {k: v for k, v in row.items() if k in names}


def _idle_power(backend: Backend, cases: Iterable[Case]) -> float | None:
    """Idle board power before the suite, when some case has a power window and NVML is there."""
    nvml = backend.nvml()
    if nvml is None or not any(c.power for c in cases):
        return None
    clock = getattr(backend, "clock", None)
    backend.synchronize()
    return idle_power(nvml, sleep=clock.sleep) if clock is not None else idle_power(nvml)
