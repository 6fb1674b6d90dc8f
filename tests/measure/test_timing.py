"""Repeat/stop rules and statistics, with hand-computed values."""

from __future__ import annotations

import math

import pytest

from kgpubench.measure.timing import CV_HIGH, StopRule, summarize, time_samples


def test_summarize_hand_values():
    st = summarize([1.0, 2.0, 3.0, 4.0])
    assert st.median == 2.5 and st.min == 1.0 and st.mean == 2.5 and st.count == 4
    # population std: sqrt(((1.5^2 + 0.5^2) * 2) / 4) = sqrt(1.25)
    assert st.std == pytest.approx(math.sqrt(1.25))
    assert st.cv == pytest.approx(math.sqrt(1.25) / 2.5)
    assert st.cv_high is True
    cols = st.columns()
    assert cols["repeats"] == 4 and cols["time_cv_high"] is True


def test_summarize_single_and_low_cv():
    st = summarize([5.0])
    assert (st.median, st.std, st.cv, st.cv_high) == (5.0, 0.0, 0.0, False)
    st = summarize([1.0, 1.02])  # std 0.01, mean 1.01
    assert st.cv == pytest.approx(0.01 / 1.01) and st.cv < CV_HIGH


@pytest.mark.parametrize("bad", [[], [0.0], [1.0, float("nan")], [-1.0]])
def test_summarize_rejects(bad):
    with pytest.raises(ValueError):
        summarize(bad)


class _ListSampler:
    """Gives the next sample times from a list; records the round sizes asked for."""

    method, launches = "graph", 4

    def __init__(self, times):
        self.times, self.rounds = list(times), []

    def run(self, samples):
        self.rounds.append(samples)
        out, self.times = self.times[:samples], self.times[samples:]
        return out

    def close(self):
        pass


def test_time_samples_divides_by_launches_and_divisor():
    sampler = _ListSampler([8.5] + [8.0] * 10)  # a warm-up sample, then ten of 8 ms
    result = time_samples(sampler, StopRule(), divisor=2)
    assert sampler.rounds == [1, 10]
    assert result.stats.median == 1.0 and result.stats.count == 10  # 8 ms / (4 launches x 2 steps)
    assert result.gpu_ms == 80.0 and result.rse == 0.0 and not result.cap_hit
    cols = result.columns("warm")
    assert (cols["launches_per_sample"], cols["timing_method"], cols["measurement_protocol"]) == (4, "graph", 2)


def test_time_samples_refuses_bad_event_times():
    from kgpubench.measure.backends.base import LaunchFailed

    with pytest.raises(LaunchFailed, match="invalid sample times"):
        time_samples(_ListSampler([1.0] + [float("nan")] * 10), StopRule())


def test_min_gpu_time_keeps_short_samples_going():
    # 0.1 ms samples without noise: 10 samples are only 1 ms < min_gpu_ms 5, so 40 more are asked for
    sampler = _ListSampler([0.1] * 200)
    result = time_samples(sampler, StopRule(warmup_samples=0))
    assert sampler.rounds == [10, 40] and result.stats.count == 50


def test_long_samples_need_only_five():
    # a 20 ms warm-up announces long samples: a first round of 5, enough without noise
    sampler = _ListSampler([20.0] * 30)
    result = time_samples(sampler, StopRule())
    assert sampler.rounds == [1, 5] and result.stats.count == 5
    # 2 ms samples keep the ten-sample minimum
    sampler = _ListSampler([2.0] * 30)
    assert time_samples(sampler, StopRule()).stats.count == 10 and sampler.rounds == [1, 10]
