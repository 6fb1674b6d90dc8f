"""Measurement protocol 2: how a configuration is timed, and when timing stops.

A configuration is timed in *samples*. One sample is ``launches`` timed units (``PreparedCase.launch()``) run
back to back on the GPU between two CUDA events, so one sample's time divided by ``launches`` is the time of
one unit without the host's launch cost in it. A backend makes a :class:`Sampler` for a unit with one of the
methods of :data:`METHODS`:

``graph``
    The ``launches`` units are captured once in a CUDA graph; each sample replays the graph. Warm L2.
``batch``
    ``launches`` direct launches per sample (for units that cannot be captured in a graph). Warm L2.
``cold``
    One launch per sample, after an L2 flush (a buffer larger than L2 is read between samples), queued
    behind a blocking kernel so the host's launch is not timed; the event pair around the launch still reads
    the GPU's side of it (about 2 us on an H200). Flushed L2.
``cupti``
    As ``cold``, but a sample's time is the span of the unit's kernels from their own GPU timestamps (CUPTI's
    activity records, :mod:`kgpubench.measure.backends.cupti_clock`), not the event pair. Flushed L2. The
    ``cupti-drained`` cold timer is this method with a spin kernel between the flush and the unit
    (:data:`kgpubench.measure.backends.cupy_timing.DRAIN_US`), outside the unit's span.
``cupti-drained``
    As ``cupti``, with that wait: its rows say so, since their labels may differ from ``cupti``'s.
``stream``
    A unit whose one sample holds more launches than fit behind the blocking kernel: its samples are enqueued
    with no blocking kernel (:mod:`kgpubench.measure.backends.cupy_timing`). Warm or flushed.

(Rows may also say ``app``: a whole application run that times itself, the npb suite's run rows.)

Whether a row was timed the way a collection would time it (:func:`timed_alike`) decides both which rows of a
dataset store a collection skips (:mod:`kgpubench.measure.stored`) and which rows of an output folder stop a
resume (:func:`kgpubench.measure.runner.collect_suite`).

Every backend queues a round of samples behind a *blocking kernel* (it spins until the host releases it), so
the GPU runs the whole round back to back however slowly the host enqueues it (nvbench's method).

Stopping (:class:`StopRule`): samples are taken in rounds until the relative standard error of the mean
(``RSE = s / sqrt(n) / mean``, ``s`` the sample standard deviation) is at most ``target_rse`` (0.5 %), with at
least ``min_samples`` samples and ``min_gpu_ms`` of summed sample time, or until the per-configuration cap
(``max_gpu_ms`` of GPU time or ``max_wall_s`` of wall time), which the row flags (``time_cap_hit``). Rounds
in which the SM clock fell under ``clock_floor`` (75 %) of the clock at the start of the configuration are
dropped (``samples_dropped``), as nvbench drops throttled samples. Why this rule is cheaper than nvbench's
(0.5 s of GPU time per configuration) and still reaches the target: the sample length is chosen so that a
sample is at least ``target_sample_ms`` long (about 1 ms: event and graph-launch overhead under 0.5 %), so
the noise left is the kernel's own, and the number of samples is what that noise needs, not a fixed time.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kgpubench.errors import unknown_name
from kgpubench.measure.backends.base import LaunchFailed
from kgpubench.measure.settings import StopRule, relative_standard_error

METHODS = ("graph", "batch", "cold", "cupti", "cupti-drained", "stream")
L2_METHOD = {"warm": "graph", "flushed": "cold"}
PROTOCOL_VERSION = 2
CV_HIGH = 0.05
# --cold-timer -> the timing_method its flushed rows record
COLD_METHODS = {"events": "cold", "cupti": "cupti", "cupti-drained": "cupti-drained"}
_COLD_LABELS = frozenset(COLD_METHODS.values())  # the labels that tell the cold timers apart


def cold_method(cold_timer: str | None) -> str:
    """The ``timing_method`` a flushed collection's rows record with ``cold_timer`` (``events`` by default)."""
    timer = cold_timer or "events"
    if timer not in COLD_METHODS:
        raise unknown_name("cold timer", timer, list(COLD_METHODS))
    return COLD_METHODS[timer]


def timed_alike(row_l2: str | None, row_method: str | None, l2_policy: str, cold_timer: str | None = None) -> bool:
    """Whether a protocol-2 row with ``l2_policy`` ``row_l2`` and ``timing_method`` ``row_method`` was timed the way
    a collection with ``l2_policy`` (and, when flushed, ``cold_timer``: ``events`` by default) times it.

    The one rule for both places that ask: a dataset store's row skips the configuration
    (:func:`kgpubench.measure.stored.stored_rows`) only when it was timed alike, and an output folder's row timed
    otherwise stops a resume (:func:`kgpubench.measure.runner.collect_suite`).

    * Another L2 policy: never alike.
    * A warm collection: any method is alike (the harness picks ``graph``, ``batch``, ``stream`` or ``app`` per
      unit, not the user).
    * A flushed collection: a row of one of the cold timers' methods (:data:`COLD_METHODS`: ``cold``, ``cupti``,
      ``cupti-drained``) is alike only if it is this timer's (``cold`` rows read the launch too, about 2 us on
      an H200). A row of any other method (``stream``: a unit whose one sample needs more queue entries than
      fit behind the blocking kernel, 600; ``app``; none recorded) is alike under every cold timer: its label
      does not say which timer took it, and the launch's microseconds that set the timers apart are small next
      to such a unit.

    Raises :class:`~kgpubench.errors.UnknownNameError` for an unknown ``cold_timer`` of a flushed collection.
    """
    if row_l2 != l2_policy:
        return False
    if L2_METHOD.get(l2_policy) != "cold":
        return True
    return row_method not in _COLD_LABELS or row_method == cold_method(cold_timer)



class Sampler(Protocol):
    """Times one configuration's unit of work in samples (made by ``backend.sampler``).

    Attributes
    ----------
    method : str
        One of :data:`METHODS` (what the rows record as ``timing_method``).
    launches : int
        Units per sample.
    """

    method: str
    launches: int

    def run(self, samples: int) -> list[float]:
        """Take ``samples`` samples (one round) and return each sample's whole time in ms."""

    def close(self) -> None:
        """Free the graph, events and buffers."""



@dataclass(frozen=True)
class TimingStats:
    """Summary of per-unit times (ms); ``std`` is the population standard deviation, ``cv = std / mean``."""

    median: float
    min: float
    mean: float
    std: float
    count: int
    cv: float

    @property
    def cv_high(self) -> bool:
        """Whether the coefficient of variation exceeds :data:`CV_HIGH`."""
        return self.cv > CV_HIGH

    def columns(self) -> dict[str, float | int | bool]:
        """The timing columns of a row."""
        return {"time_ms_median": self.median, "time_ms_min": self.min, "time_ms_mean": self.mean,
                "time_ms_std": self.std, "repeats": self.count, "time_cv": self.cv, "time_cv_high": self.cv_high}


def summarize(times_ms: Sequence[float]) -> TimingStats:
    """Statistics of ``times_ms`` (at least one value, all finite and > 0)."""
    if not times_ms:
        raise ValueError("no timed launches to summarise; at least one is needed")
    bad = [t for t in times_ms if not (math.isfinite(t) and t > 0)]
    if bad:
        raise ValueError(f"timings must be finite and > 0 ms; got {bad[:3]}")
    mean = statistics.fmean(times_ms)
    std = statistics.pstdev(times_ms, mu=mean) if len(times_ms) > 1 else 0.0
    return TimingStats(median=statistics.median(times_ms), min=min(times_ms), mean=mean, std=std,
                       count=len(times_ms), cv=std / mean)


@dataclass
class TimingResult:
    """What protocol 2 measured for one configuration: per-unit statistics and how they were taken."""

    stats: TimingStats
    method: str
    launches: int
    rse: float
    cap_hit: bool
    dropped: int
    gpu_ms: float
    reasons_seen: int = 0
    per_unit_ms: list[float] = field(default_factory=list)

    def columns(self, l2_policy: str) -> dict[str, object]:
        """The timing and protocol columns of a row."""
        return {**self.stats.columns(), "measurement_protocol": PROTOCOL_VERSION, "timing_method": self.method,
                "launches_per_sample": self.launches, "l2_policy": l2_policy,
                "time_rse": self.rse if math.isfinite(self.rse) else None,
                "time_cap_hit": self.cap_hit, "samples_dropped": self.dropped}


@dataclass
class ClockWatch:
    """Reads the SM clock (MHz) and throttle reasons between rounds; ``None`` readers mean "unknown"."""

    sm_mhz: Callable[[], float] | None = None
    reasons: Callable[[], int] | None = None
    reference_mhz: float | None = None

    def start(self) -> None:
        if self.sm_mhz is not None and self.reference_mhz is None:
            self.reference_mhz = self.sm_mhz()

    def below(self, floor: float) -> bool:
        """Whether the clock now is under ``floor`` times the reference."""
        if self.sm_mhz is None or not self.reference_mhz:
            return False
        return self.sm_mhz() < floor * self.reference_mhz

    def reason_bits(self) -> int:
        return int(self.reasons()) if self.reasons is not None else 0


def time_samples(sampler: Sampler, rule: StopRule, *, divisor: int = 1, watch: ClockWatch | None = None,
                 wall: Callable[[], float] = time.monotonic) -> TimingResult:
    """Warm up, then take rounds of samples from ``sampler`` until ``rule`` stops; per-unit statistics.

    Each sample time is divided by ``sampler.launches * divisor`` (``divisor``: e.g. time steps per unit).
    """
    watch = watch or ClockWatch()
    warm = sampler.run(rule.warmup_samples) if rule.warmup_samples else []
    expected = statistics.fmean(warm) if warm else None
    watch.start()
    t0 = wall()
    kept: list[float] = []
    dropped = reasons = 0
    spent = 0.0
    cap_hit = False
    while not rule.done(kept):
        if spent >= rule.max_gpu_ms or wall() - t0 >= rule.max_wall_s:
            cap_hit = True
            break
        batch = sampler.run(rule.next_round(kept, expected))
        if not batch or any(not (math.isfinite(t) and t > 0) for t in batch):
            raise LaunchFailed(f"CUDA events gave invalid sample times {batch[:3]}; rerun the configuration")
        spent += sum(batch)
        reasons |= watch.reason_bits()
        if watch.below(rule.clock_floor):
            dropped += len(batch)
            continue
        kept.extend(batch)
    if not kept:
        raise LaunchFailed("every timing round ran under the clock floor (the GPU is throttling); let it cool "
                           "and rerun to measure this configuration")
    per_unit = [t / (sampler.launches * max(1, divisor)) for t in kept]
    return TimingResult(stats=summarize(per_unit), method=sampler.method, launches=sampler.launches,
                        rse=relative_standard_error(kept), cap_hit=cap_hit, dropped=dropped, gpu_ms=spent,
                        reasons_seen=reasons, per_unit_ms=per_unit)
