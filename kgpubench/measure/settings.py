"""How a collection measures: protocol 2's stop rule and the settings every case of a collection is handed.

Plain records at the bottom of the harness: the suites (:mod:`kgpubench.measure.suite`), the timing loop
(:mod:`kgpubench.measure.timing`) and the runner all read them, and they import none of those.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgpubench.measure.power import MIN_WINDOW_MS


def relative_standard_error(samples: Sequence[float]) -> float:
    """``stdev / sqrt(n) / mean`` (sample standard deviation); infinity with fewer than two samples."""
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean if mean > 0 else math.inf


@dataclass(frozen=True)
class StopRule:
    """When protocol 2 stops timing a configuration (protocol 2 is described in :mod:`kgpubench.measure.timing`).

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


@dataclass(frozen=True)
class CaseSettings:
    """How every case of a collection is measured: what a suite that measures itself is handed.

    Parameters
    ----------
    l2_policy : {"warm", "flushed"}
        The collection's L2 policy.
    rule : StopRule
        Protocol 2's sample sizing and stopping rule.
    reference_mhz : float, optional
        The SM clock samples are held against (None without NVML).
    seed : int
        The case's input seed (from the base seed and its row id).
    power_window_ms : float
        Minimum power window.
    idle_w : float, optional
        Idle board power measured before the suite.
    """

    l2_policy: str = "warm"
    rule: StopRule = field(default_factory=StopRule)
    reference_mhz: float | None = None
    seed: int = 0
    power_window_ms: float = MIN_WINDOW_MS
    idle_w: float | None = None
