"""Repeat rules and statistics of timed launches.

Defaults (documented for the card): 3 warm-up launches; repeat until **both** at least 10 timed launches and
at least 100 ms of summed kernel time, capped at 10 000 launches; a row whose coefficient of variation
(population std / mean) exceeds 0.05 is flagged (``time_cv_high``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

WARMUP_LAUNCHES = 3
MIN_REPEATS = 10
MIN_TOTAL_MS = 100.0
MAX_REPEATS = 10_000
CV_HIGH = 0.05


@dataclass(frozen=True)
class RepeatRule:
    """Stop timing once ``count >= min_count`` and ``total_ms >= min_total_ms``, or at ``max_count``."""

    min_count: int = MIN_REPEATS
    min_total_ms: float = MIN_TOTAL_MS
    max_count: int = MAX_REPEATS
    warmup: int = WARMUP_LAUNCHES

    def __post_init__(self) -> None:
        if self.min_count < 1 or self.max_count < self.min_count or self.min_total_ms < 0 or self.warmup < 0:
            raise ValueError(f"inconsistent repeat rule {self}: need 1 <= min_count <= max_count, "
                             "min_total_ms >= 0, warmup >= 0")

    def done(self, count: int, total_ms: float) -> bool:
        """Whether ``count`` launches summing to ``total_ms`` are enough."""
        return count >= self.max_count or (count >= self.min_count and total_ms >= self.min_total_ms)

    def next_batch(self, count: int, total_ms: float) -> int:
        """How many launches to enqueue next (0 when :meth:`done`).

        The first batch is ``min_count``; later batches aim at the missing time using the mean so far, plus
        10 % and at least one launch, never beyond ``max_count``.
        """
        if self.done(count, total_ms):
            return 0
        if count == 0:
            return min(self.min_count, self.max_count)
        need = max(self.min_count - count, 1)
        if total_ms < self.min_total_ms:
            mean = total_ms / count
            by_time = math.ceil((self.min_total_ms - total_ms) / mean * 1.1) if mean > 0 else self.max_count
            need = max(need, by_time)
        return min(need, self.max_count - count)


@dataclass(frozen=True)
class TimingStats:
    """Summary of timed launches (ms); ``std`` is the population standard deviation, ``cv = std / mean``."""

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


def repeat_until(time_batch: Callable[[int], list[float]], rule: RepeatRule = RepeatRule(),
                 divisor: int = 1) -> list[float]:
    """Warm up, then call ``time_batch(k)`` (returns ``k`` times in ms) until ``rule`` is satisfied.

    Each time is divided by ``divisor`` (e.g. steps per timed unit); the rule applies to the undivided
    times. Returns the divided times.
    """
    if rule.warmup:
        time_batch(rule.warmup)
    times: list[float] = []
    total = 0.0
    while (k := rule.next_batch(len(times), total)) > 0:
        batch = time_batch(k)
        if len(batch) != k:
            raise RuntimeError(f"timer returned {len(batch)} times for {k} launches")
        times.extend(batch)
        total += sum(batch)
    return [t / divisor for t in times]
