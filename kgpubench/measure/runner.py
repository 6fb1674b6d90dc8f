"""The run loop: every case of a suite becomes one row, appended to the shard as soon as it is done.

Entry points: :func:`run_suite` / :func:`collect_suite` (a whole suite, resumable, with progress; every suite,
npb included) and :func:`measure_case` (one case, returning the measurement columns; a suite that measures
itself is called through :func:`measure_by_suite`). The order of work per case is documented in
:mod:`kgpubench.measure.suite`; how a case is timed (measurement protocol 2) in
:mod:`kgpubench.measure.timing`, its power window in :mod:`kgpubench.measure.power`.
"""

from __future__ import annotations

import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kgpubench.errors import ContractError, OptionError, UnknownNameError, unknown_name
from kgpubench.measure import features_link
from kgpubench.measure.backends.base import Backend, CaptureUnsupported, ContextLostError, check_feasible
from kgpubench.measure.outcome import CaseOutcome
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.power import MIN_WINDOW_MS, THROTTLE_MASK, idle_power, measure_power
from kgpubench.measure.provenance import gpu_columns, process_run_id, provenance_columns
from kgpubench.measure.settings import CaseSettings
from kgpubench.measure.stored import StoredRows
from kgpubench.measure.suite import Case, SuiteBase, as_suite, launch_columns
from kgpubench.measure.timing import (
    L2_METHOD,
    ClockWatch,
    StopRule,
    TimingResult,
    cold_method,
    relative_standard_error,
    summarize,
    time_samples,
    timed_alike,
)
from kgpubench.schema import Table, get_table, row_id_of
from kgpubench.schema.common import static_feature_columns

DEFAULT_RULE = StopRule()
L2_POLICIES = tuple(L2_METHOD)


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
    rule : StopRule
        Protocol 2's sample sizing and stopping rule.
    l2_policy : {"warm", "flushed"}, optional
        L2 policy for every case; ``None`` takes the suite's declared ``l2_policy`` (``warm`` if it has none).
    power_window_ms : float
        Minimum power window.
    seed : int
        Base seed of the input generator (each case's seed also depends on its row id).
    clocks_locked : bool
        Whether the SM clock is locked for this collection (recorded on every row).
    row_ids : set of str, optional
        Only the cases with these row ids (a repeat of chosen configurations); ``None``: all.
    stored : StoredRows, optional
        The rows a dataset store already holds for this collection (:func:`kgpubench.measure.stored.stored_rows`):
        their cases are skipped. ``None``: skip only the rows of the output folder.
    """

    quick: bool = False
    kernels: Sequence[str] | None = None
    max_minutes: float | None = None
    rule: StopRule = field(default_factory=StopRule)
    l2_policy: str | None = None
    power_window_ms: float = MIN_WINDOW_MS
    seed: int = 0
    clocks_locked: bool = False
    row_ids: frozenset[str] | None = None
    stored: StoredRows | None = None

    def policy_for(self, suite: Any) -> str:
        """The L2 policy for ``suite``: this option's, else the suite's declared one, else ``warm``."""
        policy = self.l2_policy or as_suite(suite).l2_policy or "warm"
        if policy not in L2_POLICIES:
            raise unknown_name("L2 policy", policy, L2_POLICIES)
        return policy


@dataclass
class CollectSummary:
    """What the collection of one suite did: what :func:`kgpubench.collect` returns, what ``kgpubench collect``
    prints, and what each Ray partition reports.

    Attributes
    ----------
    total : int
        Cases selected.
    written : int
        Rows written now.
    skipped : int
        Cases whose row was already in the output (resume).
    stored : int
        Cases skipped because a dataset store holds their row (:attr:`CollectOptions.stored`), not counting
        those already in the output.
    statuses : Counter
        Rows written now, by ``status``.
    stopped_early : bool
        ``max_minutes`` stopped it before the last case.
    measured_ms : float
        GPU time spent measuring (ms).
    wall_s : float
        Wall time of the run loop (s).
    cvs : list of float
        ``time_cv`` of every row written now that has one.
    run_id : str
        This process's run id on this device.
    out : str
        The suite's shard folder (empty where no single folder is written to).
    """

    total: int = 0
    written: int = 0
    skipped: int = 0
    stored: int = 0
    statuses: Counter = field(default_factory=Counter)
    stopped_early: bool = False
    measured_ms: float = 0.0
    wall_s: float = 0.0
    cvs: list[float] = field(default_factory=list)
    run_id: str = ""
    out: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The summary as ``kgpubench collect --json`` prints it (and the collect bundle stores it)."""
        return {"written": self.written, "skipped": self.skipped, "stored": self.stored, "total": self.total,
                "statuses": dict(self.statuses), "stopped_early": self.stopped_early, "wall_s": self.wall_s,
                "measured_ms": self.measured_ms, "run_id": self.run_id, "out": self.out}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CollectSummary:
        """The summary :meth:`to_dict` gave (a Ray collection's merged report); the keys :meth:`line` does not
        print may be missing (zero, empty)."""
        return cls(written=data["written"], skipped=data["skipped"], statuses=Counter(data["statuses"]),
                   stopped_early=data["stopped_early"], out=data["out"], stored=data.get("stored", 0),
                   total=data.get("total", 0), measured_ms=data.get("measured_ms", 0.0),
                   wall_s=data.get("wall_s", 0.0), run_id=data.get("run_id", ""))

    def line(self, suite: str) -> str:
        """One line for the log: rows written and skipped, statuses, an early stop, the folder."""
        statuses = ", ".join(f"{k}={v}" for k, v in sorted(self.statuses.items())) or "nothing new"
        in_store = f", {self.stored} already in the store" if self.stored else ""
        return (f"{suite}: {self.written} rows written, {self.skipped} already there{in_store} ({statuses})"
                f"{'; stopped at --max-minutes' if self.stopped_early else ''} -> {self.out}")


def measure_case(case: Case, suite: Any, backend: Backend, *, rule: StopRule = DEFAULT_RULE,
                 l2_policy: str = "warm", seed: int = 0, power_window_ms: float = MIN_WINDOW_MS,
                 idle_w: float | None = None, reference_mhz: float | None = None) -> CaseOutcome:
    """Measure one case: its status (+ detail) and timing, protocol, conditions and power columns.

    Per-case failures (compile, feasibility, launch, verification) come back as a status; a sticky CUDA
    error is returned as a ``launch_error`` outcome with ``sticky=True`` so the caller can stop. ``reference_mhz``
    is the SM clock samples are held against (the locked clock; else the clock when timing starts). The power
    window runs for a case with ``power=True`` on a backend with the ``power`` capability; the condition columns
    come with the ``clocks`` capability.
    """
    dev = backend.device()
    caps = backend.capabilities
    prepared = None
    sampler = None
    try:
        check_feasible(case, dev, backend.free_memory_bytes() if case.memory_bytes else None)
        kernel = backend.compile(case.source)
        nreg = kernel.registers  # None where the backend does not know it
        if case.threads_per_block > kernel.max_threads_per_block:
            return CaseOutcome.failed("infeasible", f"{case.threads_per_block} threads per block > "
                                      f"{kernel.max_threads_per_block} allowed by the compiled kernel (registers)")
        prepared = suite.prepare(case, kernel, backend.xp, np.random.default_rng(seed))
        prepared.poison()
        prepared.launch()
        backend.synchronize()
        ok, detail = prepared.verify()
        if not ok:
            return CaseOutcome.failed("verification_failed", detail)
        clocks = _clocks(backend)
        before = clocks.state() if clocks is not None else None
        unit_ms = _pilot_unit_ms(backend, prepared.launch, rule)
        sampler = _sampler(backend, prepared.launch, l2_policy, rule.launches_for(unit_ms))
        divisor = max(1, case.time_divisor)
        columns: dict[str, Any] = {}
        if case.power and caps.power:
            result = measure_power(backend.nvml(), sampler, unit_ms * sampler.launches,
                                   min_window_ms=power_window_ms, clock_ns=backend.clock.ns, sleep=backend.clock.sleep)
            timing = _timing_from_window(result, sampler, divisor)
            columns.update(result.columns())
            columns["energy_j"] = result.energy_j / divisor
            columns["power_idle_w"] = idle_w
        else:
            timing = time_samples(sampler, rule, divisor=divisor, watch=_watch(clocks, reference_mhz))
        after = clocks.state() if clocks is not None else None
        columns.update(timing.columns(l2_policy))
        if before is not None and after is not None:
            columns.update(_conditions(before, after, timing.reasons_seen))
        return CaseOutcome("ok", columns=columns, nreg=nreg, measured_ms=timing.gpu_ms,
                           reasons_seen=timing.reasons_seen)
    except Exception as exc:
        failure = backend.classify(exc)
        if failure is None:
            raise
        return CaseOutcome.of_failure(failure)
    finally:
        if sampler is not None:
            sampler.close()
        if prepared is not None:
            prepared.release()


def measure_by_suite(case: Case, suite: SuiteBase, backend: Backend, how: CaseSettings) -> CaseOutcome:
    """Measure one case of a suite that measures itself (``suite.measure``, which returns a
    :class:`~kgpubench.measure.outcome.CaseOutcome`): the harness's feasibility check before, GPU conditions
    around it, and its exceptions classified into the outcome's status, as in :func:`measure_case`."""
    clocks = _clocks(backend)
    before = None
    try:
        check_feasible(case, backend.device(), backend.free_memory_bytes() if case.memory_bytes else None)
        before = clocks.state() if clocks is not None else None
        outcome = suite.measure(case, backend, how)
    except Exception as exc:
        failure = backend.classify(exc)
        if failure is None:
            raise
        return CaseOutcome.of_failure(failure)
    if not isinstance(outcome, CaseOutcome):
        raise ContractError(f"suite {suite.name!r}: measure() returned a {type(outcome).__name__} for "
                            f"{case.label()}; return a kgpubench.measure.outcome.CaseOutcome.")
    if before is not None and outcome.ok:  # conditions describe a measurement, as in measure_case
        outcome = outcome.with_columns(_conditions(before, clocks.state(), outcome.reasons_seen))
    return outcome


def _clocks(backend: Backend) -> Any:
    """The NVML device that reads clocks and GPU state, when the backend has the ``clocks`` capability."""
    return backend.nvml() if backend.capabilities.clocks else None


def _conditions(before: Any, after: Any, reasons_seen: int) -> dict[str, Any]:
    """The condition columns around a measurement (NVML states before and after) and ``throttled``: a power or
    thermal reason before, after, or among ``reasons_seen`` while timing."""
    seen = reasons_seen | before.throttle_reasons | after.throttle_reasons
    return {**before.columns("before"), **after.columns("after"), "throttled": bool(seen & THROTTLE_MASK)}


def time_unit(backend: Backend, unit: Any, *, l2_policy: str = "warm", rule: StopRule = DEFAULT_RULE,
              divisor: int = 1, reference_mhz: float | None = None) -> TimingResult:
    """Protocol-2 timing of any unit of work (``unit()`` enqueues it; no sync): pilot, sampler, stop rule.

    The building block for suites that time their own units (npb times each kernel's recorded calls).
    """
    sampler = _sampler(backend, unit, l2_policy, rule.launches_for(_pilot_unit_ms(backend, unit, rule)))
    try:
        return time_samples(sampler, rule, divisor=divisor, watch=_watch(_clocks(backend), reference_mhz))
    finally:
        sampler.close()


def _watch(nvml: Any, reference_mhz: float | None) -> ClockWatch:
    if nvml is None:
        return ClockWatch()
    return ClockWatch(nvml.sm_clock_mhz, nvml.throttle_reasons, reference_mhz)


def _pilot_unit_ms(backend: Backend, launch: Any, rule: StopRule) -> float:
    """A first estimate of one unit's time (ms): one launch; if short, one sample of enough launches."""
    one = backend.sampler(launch, method="batch", launches=1)
    try:
        t1 = one.run(1)[0]
    finally:
        one.close()
    if t1 >= rule.target_sample_ms:
        return t1
    k = rule.launches_for(t1)
    many = backend.sampler(launch, method="batch", launches=k)
    try:
        return many.run(1)[0] / k
    finally:
        many.close()


def _sampler(backend: Backend, launch: Any, l2_policy: str, launches: int) -> Any:
    """The sampler of the policy's method; a unit that a CUDA graph cannot capture, or a backend without the
    ``graphs`` capability, is timed in batches."""
    method = L2_METHOD[l2_policy]
    if method == "graph" and not backend.capabilities.graphs:
        method = "batch"
    try:
        return backend.sampler(launch, method=method, launches=launches)
    except CaptureUnsupported:
        return backend.sampler(launch, method="batch", launches=launches)


def _timing_from_window(result: Any, sampler: Any, divisor: int) -> TimingResult:
    """Timing statistics from the samples a power window ran (they are protocol-2 samples too)."""
    samples = list(result.sample_times_ms)
    per_unit = [t / (sampler.launches * divisor) for t in samples]
    return TimingResult(stats=summarize(per_unit), method=sampler.method, launches=sampler.launches,
                        rse=relative_standard_error(samples), cap_hit=False, dropped=0, gpu_ms=sum(samples),
                        reasons_seen=result.reasons_seen, per_unit_ms=per_unit)


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


def select_cases(suite: Any, options: CollectOptions, device: Any = None) -> list[Case]:
    """The cases of ``suite`` that ``options`` select (quick, kernels; an unknown kernel is an error); ``device``
    is the DeviceInfo measured on (None: a plan without a GPU)."""
    kernels = list(options.kernels) if options.kernels else None
    if kernels:
        known = set(suite_kernels(suite))
        for name in kernels:
            if name not in known:
                raise UnknownNameError(f"suite {suite.name!r}: {unknown_name('kernel', name, known)}")
    return list(as_suite(suite).cases(quick=options.quick, kernels=kernels, device=device))


def suite_kernels(suite: Any) -> list[str]:
    """Kernel names of a suite: ``suite.kernels()`` (by default those of its full case list)."""
    return list(as_suite(suite).kernels())


def run_suite(suite: Any, backend: Backend, writer: ShardWriter, options: CollectOptions = CollectOptions(), *,
              progress: Callable[[int, int, str], None] | None = None,
              notice: Callable[[str], None] | None = None) -> CollectSummary:
    """Collect one suite with the harness (:func:`collect_suite`): what ``kgpubench collect`` and the Ray
    actors call for every suite."""
    return collect_suite(as_suite(suite), backend, writer, options, progress=progress, notice=notice)


def check_shard_timing(writer: ShardWriter, policy: str, cold_timer: str | None) -> None:
    """Refuse to resume a shard whose protocol-2 rows were timed another way (another L2 policy, or for a flushed
    collection another cold timer): a row already there is skipped by its row id alone, so the shard would end up
    mixing two ways of timing under one collection (e.g. ``cold`` rows, which read the launch too, among
    ``cupti`` ones).

    "Timed another way" is :func:`kgpubench.measure.timing.timed_alike`, the rule that also decides which rows of a
    dataset store skip a configuration (:mod:`kgpubench.measure.stored`): a flushed row timed ``stream`` or
    ``app`` is alike under every cold timer, in both places. A writer with ``rows()`` is checked (the serial
    :class:`~kgpubench.measure.output.ShardWriter`, and a Ray partition's writer, which reads its own folder's)."""
    rows = getattr(writer, "rows", None)
    if rows is None:
        return
    other = Counter()
    for row in rows():
        if (row.get("measurement_protocol") or 0) < 2 or row.get("source") not in ("measured", "fake"):
            continue
        if not timed_alike(row.get("l2_policy"), row.get("timing_method"), policy, cold_timer):
            other[(row.get("l2_policy"), row.get("timing_method"))] += 1
    if other:
        (l2, method), n = other.most_common(1)[0]
        now = f"{policy}" + (f", timing_method {cold_method(cold_timer)}" if policy == "flushed" else "")
        raise OptionError(f"{writer.folder}: {sum(other.values()):,} row(s) there were timed another way ({n:,} "
                          f"{l2}, timing_method {method}) than this collection times ({now}); resuming would mix "
                          "them in one shard. Collect into another --out, or give the options of the first run "
                          "(--l2, --cold-timer)")


def collect_suite(suite: Any, backend: Backend, writer: ShardWriter, options: CollectOptions = CollectOptions(),
                  *, progress: Callable[[int, int, str], None] | None = None,
                  features: Callable[[Case, Any], dict[str, Any]] | None = None,
                  clock: Callable[[], float] = time.monotonic,
                  notice: Callable[[str], None] | None = None) -> CollectSummary:
    """Measure every case of ``suite`` not yet in ``writer``'s shard (nor, with ``options.stored``, in a dataset
    store) and append each row as it finishes.

    Each case is measured by :func:`measure_case`, or by the suite itself (:func:`measure_by_suite`) when it
    declares ``measures_itself``. ``progress(done, total, label)`` is called after each case;
    ``features(case, device)`` returns the static-feature columns (default: computed ahead of time with the
    compilation when the backend has ``precompile``, else :func:`kgpubench.measure.features_link.static_features`;
    none for a table without static-feature columns). Before the loop, the cases still to measure are compiled
    ahead of time (``backend.precompile``, when there is one). The suite's caches are dropped at the end, also
    when a case raises. Raises :class:`ContextLostError` after writing the row of a case that left a sticky
    CUDA error. ``notice(line)`` gets one line before the loop: how many of the cases the store holds.
    """
    suite = as_suite(suite)
    table = get_table(suite.table)
    has_features = bool(_FEATURE_NAMES & set(table.column_names))
    compute_features = features is None and has_features  # in the compile workers, with the compilation
    if features is None:
        features = _default_features(backend) if has_features else (lambda case, dev: {})
    dev = backend.device()
    gpu = gpu_columns(dev)
    cases = select_cases(suite, options, dev)
    run_id = process_run_id(dev.uuid_hash)  # a resume in another process or on another board is a new run
    summary = CollectSummary(total=len(cases), run_id=run_id)
    policy = options.policy_for(suite)
    check_shard_timing(writer, policy, getattr(backend, "cold_timer", None))
    reference_mhz = _reference_clock(backend, options)
    start = clock()
    keyed = keyed_cases(cases, table, gpu)
    wanted = [(c, b, rid) for c, b, rid in keyed if options.row_ids is None or rid in options.row_ids]
    in_store = options.stored.row_ids if options.stored is not None else frozenset()
    if options.stored is not None and notice is not None:
        notice(options.stored.line(suite.name, sum(rid in in_store for _c, _b, rid in wanted), len(wanted),
                                   gpu.get("gpu_name"), policy))
    features = _precompile(backend, [c for c, _b, rid in wanted if not writer.has(rid) and rid not in in_store],
                           features, compute_features)
    idle_w = _idle_power(backend, cases)
    try:
        for i, (case, base, rid) in enumerate(wanted):
            if writer.has(rid):
                summary.skipped += 1
            elif rid in in_store:
                summary.stored += 1
            else:
                if options.max_minutes is not None and (clock() - start) / 60.0 >= options.max_minutes:
                    summary.stopped_early = True
                    break
                how = CaseSettings(l2_policy=policy, rule=options.rule, reference_mhz=reference_mhz,
                                   seed=(options.seed * 1_000_003 + zlib.crc32(rid.encode())) % 2**32,
                                   power_window_ms=options.power_window_ms, idle_w=idle_w)
                outcome = _measure(case, suite, backend, how)
                row = _assemble(base, outcome, case, dev, features, backend, suite, run_id, table)
                if row.get("status") == "ok" and "clocks_locked" in table.column_names:
                    row["clocks_locked"] = options.clocks_locked
                writer.append(row)
                summary.written += 1
                summary.statuses[row["status"]] += 1
                summary.measured_ms += outcome.measured_ms
                if row.get("time_cv") is not None:
                    summary.cvs.append(row["time_cv"])
                if outcome.sticky:
                    raise ContextLostError(
                        f"{case.label()}: {outcome.detail}; the CUDA context is unusable. The row is "
                        "saved; rerun the same command to resume after it.")
            if progress:
                progress(i + 1, len(wanted), case.label())
    finally:
        summary.wall_s = clock() - start
        suite.drop_caches()
    return summary


_FEATURE_NAMES = frozenset(c.name for c in static_feature_columns())


def _default_features(backend: Backend) -> Callable[[Case, Any], dict[str, Any]]:
    """The static features of a case, one at a time (nvcc, or the backend's PTX when it has that capability)."""
    ptx_source = backend.ptx if backend.capabilities.ptx else None

    def features(case: Case, dev: Any) -> dict[str, Any]:
        return features_link.static_features(case, dev, ptx_source)
    return features


def _measure(case: Case, suite: SuiteBase, backend: Backend, how: CaseSettings) -> CaseOutcome:
    if suite.measures_itself:
        return measure_by_suite(case, suite, backend, how)
    return measure_case(case, suite, backend, rule=how.rule, l2_policy=how.l2_policy, seed=how.seed,
                        power_window_ms=how.power_window_ms, idle_w=how.idle_w, reference_mhz=how.reference_mhz)


def keyed_cases(cases: Sequence[Case], table: Table, gpu: dict[str, Any]) -> list[tuple[Case, dict, str]]:
    """``(case, row base, row id)`` of every case, computed once (the resume check is a set lookup)."""
    out = []
    for case in cases:
        base = case_row_base(case, table, gpu)
        out.append((case, base, row_id_of(table.name, {k: base.get(k) for k in table.key_columns})))
    return out


def _precompile(backend: Backend, todo: Sequence[Case], features: Callable, compute: bool) -> Callable:
    """Compile the cases still to measure ahead of time (and, with ``compute``, their features) when the backend
    can; the returned function looks the features up."""
    return features_link.with_precompiled(backend, todo, features, compute=compute)


def _assemble(base: dict[str, Any], outcome: CaseOutcome, case: Case, dev: Any, features: Callable,
              backend: Backend, suite: Any, run_id: str, table: Table) -> dict[str, Any]:
    row = dict(base)
    names = set(table.column_names)
    for k, v in features(case, dev).items():
        if k in names and row.get(k) is None:
            row[k] = v
    if "nreg" in names and row.get("nreg") is None and outcome.nreg is not None:
        row["nreg"] = int(outcome.nreg)  # from the compiled kernel when ptxas was not there
    if "sm_saturation" in names and row.get("sm_saturation") is None:
        # Without the features' occupancy model: the share of SMs that get at least one block.
        row["sm_saturation"] = min(1.0, case.blocks / dev.sm_count)
    row.update(outcome.row_columns())
    if "smem_dynamic_bytes" in names and row.get("smem_dynamic_bytes") is None:
        row["smem_dynamic_bytes"] = int(case.shared_mem_bytes)
    row.update(provenance_columns(dev, row_source=backend.row_source, run_id=run_id,
                                  collector_version=suite.collector_version))
    return {k: v for k, v in row.items() if k in names}


def _reference_clock(backend: Backend, options: CollectOptions) -> float | None:
    """The SM clock samples are held against: the locked clock, else the device's maximum clock (``None``
    without the ``clocks`` capability)."""
    clocks = _clocks(backend)
    if clocks is None:
        return None
    if options.clocks_locked:
        return clocks.sm_clock_mhz()
    return backend.device().clock_sm_mhz


def _idle_power(backend: Backend, cases: Iterable[Case]) -> float | None:
    """Idle board power before the suite, when some case has a power window and the backend the ``power``
    capability."""
    if not backend.capabilities.power or not any(c.power for c in cases):
        return None
    backend.synchronize()
    return idle_power(backend.nvml(), sleep=backend.clock.sleep)
