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
    One launch per sample, after an L2 flush (a buffer larger than L2 is written between samples), queued
    behind a blocking kernel so the launch itself is not timed. Flushed L2.

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

from kgpubench.measure.backend import LaunchFailed

METHODS = ("graph", "batch", "cold", "stream")
L2_METHOD = {"warm": "graph", "flushed": "cold"}
PROTOCOL_VERSION = 2
CV_HIGH = 0.05


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
class StopRule:
    """When protocol 2 stops timing a configuration (see the module docstring).

    Parameters
    ----------
    target_rse : float
        Relative standard error of the mean to reach.
    min_samples : int
        Samples before the noise target may stop timing.
    min_samples_long, long_sample_ms : int, float
        When the mean sample lasts at least ``long_sample_ms``, ``min_samples_long`` samples suffice (long
        samples of large kernels vary little; ten of them would dominate a sweep's time).
    min_gpu_ms : float
        Summed sample time before the noise target may stop timing.
    max_gpu_ms : float
        Cap on the summed sample time of one configuration.
    max_wall_s : float
        Cap on the wall time spent timing one configuration.
    target_sample_ms : float
        A sample lasts at least this long (``launches`` is chosen for it).
    max_launches : int
        Most units in one sample (the size of a graph).
    max_round : int
        Most samples in one round behind the blocking kernel.
    clock_floor : float
        Rounds whose SM clock fell under this share of the starting clock are dropped.
    warmup_samples : int
        Samples run and discarded before timing (after the verification launch).
    """

    target_rse: float = 0.005
    min_samples: int = 10
    min_samples_long: int = 5
    long_sample_ms: float = 10.0
    min_gpu_ms: float = 5.0
    max_gpu_ms: float = 2000.0
    max_wall_s: float = 10.0
    target_sample_ms: float = 1.0
    max_launches: int = 1000
    max_round: int = 200
    clock_floor: float = 0.75
    warmup_samples: int = 1

    def __post_init__(self) -> None:
        bad = []
        if not (0 < self.target_rse < 1):
            bad.append(f"target_rse={self.target_rse} (need 0 < x < 1)")
        if self.min_samples < 2 or self.min_samples_long < 2:
            bad.append(f"min_samples={self.min_samples}, min_samples_long={self.min_samples_long} (need >= 2: "
                       "an RSE needs two samples)")
        if not (0 <= self.min_gpu_ms <= self.max_gpu_ms) or not math.isfinite(self.max_gpu_ms):
            bad.append(f"min_gpu_ms={self.min_gpu_ms}, max_gpu_ms={self.max_gpu_ms} (need 0 <= min <= max < inf)")
        if not (self.max_wall_s > 0 and math.isfinite(self.max_wall_s)):
            bad.append(f"max_wall_s={self.max_wall_s} (need a finite value > 0)")
        if not (self.target_sample_ms > 0) or self.max_launches < 1 or self.max_round < self.min_samples:
            bad.append("target_sample_ms > 0, max_launches >= 1 and max_round >= min_samples are needed")
        if not (0 <= self.clock_floor < 1) or self.warmup_samples < 0:
            bad.append(f"clock_floor={self.clock_floor} (need 0 <= x < 1), warmup_samples >= 0")
        if bad:
            raise ValueError("inconsistent stop rule: " + "; ".join(bad))

    def launches_for(self, unit_ms: float) -> int:
        """Units per sample for a unit of about ``unit_ms``: the fewest reaching ``target_sample_ms``."""
        if not (unit_ms > 0 and math.isfinite(unit_ms)):
            return self.max_launches
        return max(1, min(self.max_launches, math.ceil(self.target_sample_ms / unit_ms)))

    def minimum(self, samples: Sequence[float]) -> int:
        """The fewest samples for ``samples``: ``min_samples``, or ``min_samples_long`` for long samples."""
        if samples and statistics.fmean(samples) >= self.long_sample_ms:
            return min(self.min_samples_long, self.min_samples)
        return self.min_samples

    def done(self, samples: Sequence[float]) -> bool:
        """Whether ``samples`` (sample times, ms) meet the noise target."""
        return (len(samples) >= self.minimum(samples) and sum(samples) >= self.min_gpu_ms - 1e-9
                and relative_standard_error(samples) <= self.target_rse)

    def next_round(self, samples: Sequence[float], expected_ms: float | None = None) -> int:
        """Samples to take in the next round: ``min_samples`` first, then what the noise so far needs.

        With coefficient of variation ``cv``, the target needs ``n = (cv / target_rse)^2`` samples; the round
        asks for the missing ones plus 10 %, at least ``min_samples // 2``, within ``max_round`` and the
        remaining GPU-time budget (estimated from the mean sample). ``expected_ms`` (the warm-up sample) sizes
        the first round: ``min_samples_long`` when it is long.
        """
        n = len(samples)
        if n == 0:
            long = expected_ms is not None and expected_ms >= self.long_sample_ms
            return min(self.min_samples_long, self.min_samples) if long else self.min_samples
        if n < self.minimum(samples):
            return self.minimum(samples) - n
        mean = statistics.fmean(samples)
        cv = statistics.stdev(samples) / mean if mean > 0 else 0.0
        need = math.ceil((cv / self.target_rse) ** 2 * 1.1) - n
        if mean > 0 and sum(samples) < self.min_gpu_ms:
            need = max(need, math.ceil((self.min_gpu_ms - sum(samples)) / mean))
        budget = max(1, math.floor((self.max_gpu_ms - sum(samples)) / mean)) if mean > 0 else self.max_round
        return max(1, min(max(need, self.min_samples // 2), self.max_round, budget))


def relative_standard_error(samples: Sequence[float]) -> float:
    """``stdev / sqrt(n) / mean`` (sample standard deviation); infinity with fewer than two samples."""
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean if mean > 0 else math.inf


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
