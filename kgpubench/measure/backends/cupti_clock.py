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

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kgpubench.errors import LaunchFailed, MissingDependencyError, ToolchainError

# The names cupy_timing loads its read-flush and blocking kernels by (a source that lacks one fails to load)
FLUSH_KERNEL = "kg_l2_read"  # the marker between samples
BLOCKING_KERNEL = "kg_block_stream"  # recorded, never part of a sample
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


def sample_spans_ms(records: Iterable[Activity], samples: int, *, marker: str = FLUSH_KERNEL,
                    ignored: Sequence[str] = (BLOCKING_KERNEL,)) -> list[float]:
    """The time (ms) of each of ``samples`` samples from one round's records, in the order the GPU ran them.

    A sample is what ran between one ``marker`` kernel (the L2 flush before it) and the next; its time is
    ``max(end) - min(start)`` over its records. Records named in ``ignored`` (the blocking kernel) are left out.

    Raises
    ------
    LaunchFailed
        The records do not make ``samples`` samples of the unit on one stream (records lost, a unit that ran
        no GPU work, a sample of zero length): the configuration cannot be timed this way.
    """
    ordered = sorted((r for r in records if r.name not in ignored), key=lambda r: (r.start_ns, r.end_ns))
    groups: list[list[Activity]] = []
    streams = {r.stream_id for r in ordered}
    for record in ordered:
        if record.kind == "kernel" and record.name == marker:
            groups.append([])
        elif not groups:
            raise LaunchFailed(f"CUPTI recorded {record.kind} {record.name!r} before the first L2 flush of the round; "
                               "time this configuration with --cold-timer events")
        else:
            groups[-1].append(record)
    if len(groups) != samples or any(not g for g in groups) or len(streams) > 1:
        raise LaunchFailed(f"CUPTI records make {sum(1 for g in groups if g)} samples of the unit on "
                           f"{len(streams)} streams, not {samples} on one (records lost?); time this configuration "
                           "with --cold-timer events")
    spans = [(max(r.end_ns for r in g) - min(r.start_ns for r in g)) / 1e6 for g in groups]
    if any(s <= 0 for s in spans):
        raise LaunchFailed(f"CUPTI gave a sample of zero or negative length ({min(spans)} ms); time this "
                           "configuration with --cold-timer events")
    return spans


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
