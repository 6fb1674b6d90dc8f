"""Kernel times from CUPTI's activity records: the start and end that the GPU itself stamps on each kernel.

Why: a CUDA event pair around one launch reads the launch, not the kernel. On an H200 (2026-11-26,
``benchmarks/results/h200-2026-11-26``) flushed kernels timed between their own event pair read 1.9 to 3.0 us
above Nsight Compute's ``gpu__time_duration`` however long the kernel was, and an empty kernel read 3.5 us.
CUPTI's activity API (NVIDIA's Python binding ``cupti-python``, an optional dependency: ``pip install
cupti-python``) records, for every kernel, memcpy and memset the process runs while collection is on, the GPU
timestamps of its start and end in ns: what Nsight Systems shows, and the interval Nsight Compute's
``gpu__time_duration`` counts.

The ``cupti`` timer of cold samples (:class:`kgpubench.measure.backends.cupy_timing.CupySampler`, rows
``timing_method = cupti``) enqueues each sample as ``[L2 flush kernel, the unit]`` behind the blocking kernel, as
the ``cold`` method does; a sample's time is the span from the first start to the last end of the unit's records
between one flush kernel and the next (:func:`sample_spans_ms`). Gaps between the kernels of a unit of several
launches are inside the span, as they are inside an event pair; the launch before the first kernel is not.

CUPTI is process-wide and its buffers are filled on its own thread: :class:`CuptiActivity` is one object per
process, and records are copied out of CUPTI's buffers inside the callback (the buffers are reused after it).
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kgpubench.errors import LaunchFailed, MissingDependencyError, ToolchainError

# The names cupy_timing loads its read-flush and blocking kernels by (a source that lacks one fails to load)
FLUSH_KERNEL = "kg_l2_read"  # the marker between samples
BLOCKING_KERNEL = "kg_block_stream"  # recorded, never part of a sample
DRAIN_KERNEL = "kg_drain"  # the cupti-drained timer's wait after the flush: in a sample, not in its span
INSTALL_HINT = ("install NVIDIA's CUPTI binding matching the CUDA driver (`pip install cupti-python`), or time "
                "flushed samples with CUDA events (`--cold-timer events`)")
BUFFER_BYTES = 8 << 20  # one CUPTI activity buffer (a cold round of at most 600 queue entries fills a few kB)


@dataclass(frozen=True)
class Activity:
    """One CUPTI activity record: ``kind`` (``kernel``, ``memcpy`` or ``memset``), the kernel's name (the kind
    for copies and sets), GPU start and end timestamps (ns) and CUPTI's stream id."""

    kind: str
    name: str
    start_ns: int
    end_ns: int
    stream_id: int


@dataclass(frozen=True)
class Sample:
    """One sample of a round: the flush kernel that opened it, the records of the wait after the flush (the
    ``cupti-drained`` timer's spin kernel), and the unit's own records, in the order the GPU ran them."""

    flush: Activity
    wait: tuple[Activity, ...]
    unit: tuple[Activity, ...]

    @property
    def span_ms(self) -> float:
        """The sample's time: first start to last end of the unit's records (ms)."""
        return (max(r.end_ns for r in self.unit) - min(r.start_ns for r in self.unit)) / 1e6

    @property
    def flush_gap_ms(self) -> float:
        """From the flush kernel's end to the unit's first start (ms): the wait, if any, and the launch."""
        return (min(r.start_ns for r in self.unit) - self.flush.end_ns) / 1e6


def _refuse(what: str) -> LaunchFailed:
    return LaunchFailed(f"CUPTI {what}; time this configuration with --cold-timer events")


def _composition(records: Sequence[Activity]) -> list[str]:
    return [f"{r.kind} {r.name}" if r.kind == "kernel" else r.kind for r in records]


def round_samples(records: Iterable[Activity], samples: int, *, marker: str = FLUSH_KERNEL,
                  ignored: Sequence[str] = (BLOCKING_KERNEL,), wait: Sequence[str] = (DRAIN_KERNEL,)) -> list[Sample]:
    """The ``samples`` samples of one round from its records, in the order the GPU ran them.

    A sample is what ran between one ``marker`` kernel (the L2 flush before it) and the next: first the
    records named in ``wait`` (a spin kernel after the flush; not part of the unit), then the unit's records.
    Records named in ``ignored`` (the blocking kernel) are left out; they must come before the first flush.

    Every way a record of something else could fall into a sample is refused rather than timed: records on
    more than one stream, records that overlap on the stream (one stream runs one thing at a time, so an
    overlap means a record that is not this stream's, or timestamps out of order), a blocking kernel after the
    first flush (records of another round), samples that do not all hold the same records (a stray kernel,
    memset or memcpy in one of them, or a lost one), a wait record after the unit's first record.

    Raises
    ------
    LaunchFailed
        The records do not make ``samples`` samples of the unit on one stream (records lost, a unit that ran
        no GPU work, a sample of zero length, any of the above): the configuration cannot be timed this way.
    """
    records = list(records)
    ordered = sorted((r for r in records if r.name not in ignored), key=lambda r: (r.start_ns, r.end_ns))
    streams = {r.stream_id for r in records}
    if len(streams) > 1:
        raise _refuse(f"records make samples on {len(streams)} streams, not {samples} on one (records of "
                      "another stream?)")
    first_flush = next((r.start_ns for r in ordered if r.kind == "kernel" and r.name == marker), None)
    late = [r for r in records if r.name in ignored and first_flush is not None and r.end_ns > first_flush]
    if late:
        raise _refuse(f"recorded {late[0].name!r} after the first L2 flush of the round (records of another "
                      "round?)")
    for before, after in zip(ordered, ordered[1:]):
        if after.start_ns < before.end_ns:
            raise _refuse(f"records overlap on one stream: {after.kind} {after.name!r} starts "
                          f"{(before.end_ns - after.start_ns) / 1e3:.3f} us before {before.kind} {before.name!r} "
                          "ends (records of something else, or out of order)")
    groups: list[tuple[Activity, list[Activity], list[Activity]]] = []
    for record in ordered:
        if record.kind == "kernel" and record.name == marker:
            groups.append((record, [], []))
        elif not groups:
            raise _refuse(f"recorded {record.kind} {record.name!r} before the first L2 flush of the round")
        elif record.kind == "kernel" and record.name in wait:
            if groups[-1][2]:
                raise _refuse(f"recorded the wait kernel {record.name!r} inside a sample of the unit, not "
                              "right after its flush")
            groups[-1][1].append(record)
        else:
            groups[-1][2].append(record)
    if len(groups) != samples or any(not g[2] for g in groups):
        raise _refuse(f"records make {sum(1 for g in groups if g[2])} samples of the unit on {len(streams)} "
                      f"streams, not {samples} on one (records lost?)")
    first = _composition(groups[0][1] + groups[0][2])
    for i, (_flush, waited, unit) in enumerate(groups[1:], start=1):
        mine = _composition(waited + unit)
        if mine != first:
            raise _refuse(f"sample {i} holds [{', '.join(mine)}], sample 0 [{', '.join(first)}]: every sample of "
                          "one unit holds the same records (a stray or lost record)")
    out = [Sample(flush, tuple(waited), tuple(unit)) for flush, waited, unit in groups]
    spans = [s.span_ms for s in out]
    if any(s <= 0 for s in spans):
        raise _refuse(f"gave a sample of zero or negative length ({min(spans)} ms)")
    return out


def sample_spans_ms(records: Iterable[Activity], samples: int, *, marker: str = FLUSH_KERNEL,
                    ignored: Sequence[str] = (BLOCKING_KERNEL,)) -> list[float]:
    """The time (ms) of each of ``samples`` samples from one round's records, in the order the GPU ran them:
    the span of each sample's unit (:func:`round_samples`, which says what is refused)."""
    return [s.span_ms for s in round_samples(records, samples, marker=marker, ignored=ignored)]


@dataclass(frozen=True)
class PairedSample:
    """One cold sample read both ways: CUPTI's span of the unit and the event pair around the same execution
    (both ms), and the gap from the flush kernel's end to the unit's first start (ms)."""

    cupti_ms: float
    events_ms: float
    flush_gap_ms: float


def same_samples(pairs: Sequence[PairedSample], divisor: int = 1) -> dict[str, Any]:
    """What the paired readings of one configuration say (us per unit, ``divisor`` units a sample).

    ``cupti_longer``: samples whose CUPTI span is longer than their own event pair. The pair is recorded on the
    stream before and after the unit, so that cannot happen when both read the same execution on one clock; a
    count above zero means records that are not the unit's fell into its samples.
    """
    if not pairs:
        return {"samples": 0}
    excess = [p.cupti_ms - p.events_ms for p in pairs]
    return {
        "samples": len(pairs),
        "cupti_median_us": statistics.median(p.cupti_ms for p in pairs) * 1000.0 / divisor,
        "events_median_us": statistics.median(p.events_ms for p in pairs) * 1000.0 / divisor,
        "events_minus_cupti_median_us": -statistics.median(excess) * 1000.0 / divisor,
        "cupti_longer": sum(1 for e in excess if e > 0),
        "cupti_longer_max_us": max(0.0, max(excess)) * 1000.0 / divisor,
        "flush_gap_median_us": statistics.median(p.flush_gap_ms for p in pairs) * 1000.0,
    }


class CuptiActivity:
    """The process's CUPTI activity collection: :meth:`start` before a round is enqueued, :meth:`stop` after the
    round has finished on the GPU (the caller synchronises) returns the round's records.

    Get it with :meth:`get` (one per process: CUPTI's callbacks are global).
    """

    _instance: CuptiActivity | None = None
    _KINDS = {"CONCURRENT_KERNEL": "kernel", "MEMCPY": "memcpy", "MEMSET": "memset"}

    def __init__(self, api: Any) -> None:
        self._api = api
        self._lock = threading.Lock()
        self._records: list[Activity] = []
        self._kinds = {int(getattr(api.ActivityKind, name)): label for name, label in self._KINDS.items()}
        self._on = False
        api.activity_register_callbacks(self._buffer_requested, self._buffer_completed)

    @classmethod
    def get(cls) -> CuptiActivity:
        """The process's collector, made on first use; one clear error when CUPTI cannot be used here."""
        if cls._instance is None:
            try:
                from cupti import cupti as api  # NVIDIA's cupti-python
            except ImportError as exc:
                raise MissingDependencyError(f"the cupti cold timer needs CUPTI's Python binding ({exc}); "
                                             f"{INSTALL_HINT}") from None
            try:
                made = cls(api)
                made.start()  # fail here, before any measuring, when CUPTI cannot collect on this driver
                made.stop()
            except Exception as exc:  # noqa: BLE001 - cuptiError, NotSupportedError: one line, not a traceback
                raise ToolchainError(f"CUPTI cannot record kernel activity here ({type(exc).__name__}: "
                                     f"{str(exc)[:200]}); {INSTALL_HINT}") from None
            cls._instance = made
        return cls._instance

    def _buffer_requested(self) -> tuple[int, int]:
        return BUFFER_BYTES, 0  # 0: as many records as fit

    def _buffer_completed(self, activities: list) -> None:
        kept = []
        for a in activities:
            kind = self._kinds.get(int(a.kind))
            if kind is None:
                continue
            raw = a.name if kind == "kernel" else kind
            name = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
            kept.append(Activity(kind, name, int(a.start), int(a.end), int(a.stream_id)))
        with self._lock:
            self._records.extend(kept)

    def start(self) -> None:
        """Forget earlier records and record every kernel, memcpy and memset from now on."""
        self.stop()
        with self._lock:
            self._records = []
        for kind in self._kinds:
            self._api.activity_enable(kind)
        self._on = True

    def stop(self) -> list[Activity]:
        """Flush CUPTI's buffers, stop recording, and return what was recorded since :meth:`start` (nothing, and no
        CUPTI call, when it is not recording)."""
        if not self._on:
            return []
        try:
            self._api.activity_flush_all(1)  # 1: CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, incomplete buffers too
        finally:
            for kind in self._kinds:
                self._api.activity_disable(kind)
            self._on = False
        with self._lock:
            out, self._records = self._records, []
        return out
