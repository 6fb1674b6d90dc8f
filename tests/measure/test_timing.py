"""Repeat/stop rules and statistics, with hand-computed values."""

from __future__ import annotations

import math

import pytest

from kgpubench.measure.timing import CV_HIGH, RepeatRule, repeat_until, summarize


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


def test_rule_done_needs_both_count_and_time():
    rule = RepeatRule(min_count=10, min_total_ms=100.0, max_count=1000)
    assert not rule.done(9, 500.0)
    assert not rule.done(10, 99.9)
    assert rule.done(10, 100.0)
    assert rule.done(1000, 1.0)  # the cap


def test_rule_batches_aim_at_missing_time():
    rule = RepeatRule(min_count=10, min_total_ms=100.0, max_count=1000)
    assert rule.next_batch(0, 0.0) == 10
    # 10 launches of 5 ms: 50 ms missing at 5 ms each -> 10, plus 10 % -> 11
    assert rule.next_batch(10, 50.0) == 11
    assert rule.next_batch(21, 105.0) == 0
    # never beyond the cap
    assert rule.next_batch(995, 1.0) == 5


def test_repeat_until_constant_time_counts():
    calls = []

    def batch(k):
        calls.append(k)
        return [5.0] * k

    times = repeat_until(batch, RepeatRule(min_count=10, min_total_ms=100.0, warmup=3))
    assert calls == [3, 10, 11]  # warm-up, first batch, top-up to >= 100 ms
    assert len(times) == 21 and sum(times) == 105.0


def test_repeat_until_long_kernel_stops_at_min_count_and_divides():
    calls = []

    def batch(k):
        calls.append(k)
        return [40.0] * k

    times = repeat_until(batch, RepeatRule(min_count=10, min_total_ms=100.0, warmup=0), divisor=4)
    assert calls == [10] and times == [10.0] * 10


def test_rule_rejects_inconsistent():
    with pytest.raises(ValueError):
        RepeatRule(min_count=10, max_count=5)
