"""CUPTI's kernel records turned into cold sample times (no GPU): grouping, refusals, the collector's errors."""

import random
import sys
import types

import pytest

from kgpubench.errors import LaunchFailed, MissingDependencyError, OptionError, ToolchainError
from kgpubench.measure.backends.cupti_clock import (
    Activity,
    CuptiActivity,
    PairedSample,
    round_samples,
    same_samples,
    sample_spans_ms,
)


def k(name, start, end, stream=3, kind="kernel"):
    return Activity(kind, name, start, end, stream)


ROUND = [  # the blocking kernel, then 3 samples of [flush, unit]; the unit is two kernels and a memset between
    k("kg_block_stream", 0, 50_000),
    k("kg_l2_read", 50_100, 80_000), k("fan1", 81_500, 82_000), k("memset", 82_400, 82_600, kind="memset"),
    k("fan2", 83_000, 83_850),
    k("kg_l2_read", 84_000, 114_000), k("fan1", 115_000, 117_000), k("memset", 117_400, 117_600, kind="memset"),
    k("fan2", 118_000, 121_000),
    k("kg_l2_read", 122_000, 152_000), k("fan1", 153_000, 154_000), k("memset", 154_200, 154_300, kind="memset"),
    k("fan2", 154_500, 155_400),
]


def test_each_sample_is_the_span_of_its_unit_between_two_flush_kernels():
    assert sample_spans_ms(ROUND, 3) == pytest.approx([0.00235, 0.006, 0.0024])


def test_the_order_records_arrive_in_does_not_matter():
    shuffled = ROUND[:]
    random.Random(4).shuffle(shuffled)
    assert sample_spans_ms(shuffled, 3) == sample_spans_ms(ROUND, 3)


def test_the_flush_gap_is_from_the_flush_kernels_end_to_the_units_first_start():
    got = round_samples(ROUND, 3)
    assert [s.flush_gap_ms for s in got] == pytest.approx([0.0015, 0.001, 0.001])
    assert [s.flush.start_ns for s in got] == [50_100, 84_000, 122_000] and all(s.wait == () for s in got)
    assert [len(s.unit) for s in got] == [3, 3, 3]


DRAINED = [  # the cupti-drained timer's round: [flush, 15 us spin, unit] per sample
    k("kg_block_stream", 0, 50_000),
    k("kg_l2_read", 50_100, 80_000), k("kg_drain", 80_500, 95_500), k("vector_add", 96_500, 98_850),
    k("kg_l2_read", 99_000, 129_000), k("kg_drain", 129_400, 144_400), k("vector_add", 145_600, 148_000),
]


def test_a_wait_kernel_after_the_flush_belongs_to_the_sample_but_not_to_its_span():
    got = round_samples(DRAINED, 2)
    assert [s.span_ms for s in got] == pytest.approx([0.00235, 0.0024])  # the unit only
    assert [[w.name for w in s.wait] for s in got] == [["kg_drain"], ["kg_drain"]]
    assert [s.flush_gap_ms for s in got] == pytest.approx([0.0165, 0.0166])  # the gap holds the wait
    late_wait = DRAINED[:-2] + [k("vector_add", 129_400, 131_000), k("kg_drain", 131_500, 146_500)]
    with pytest.raises(LaunchFailed, match="recorded the wait kernel 'kg_drain' inside a sample of the unit"):
        round_samples(late_wait, 2)
    no_wait = DRAINED[:-2] + [k("vector_add", 145_600, 148_000)]  # one sample without its wait: refused
    with pytest.raises(LaunchFailed, match=r"sample 1 holds \[kernel vector_add\], sample 0 \[kernel kg_drain"):
        round_samples(no_wait, 2)


def test_a_lost_record_is_a_failed_configuration_not_a_wrong_time():
    without_last_unit = ROUND[:-3]  # the third flush ran, its unit's records were dropped
    with pytest.raises(LaunchFailed, match=r"make 2 samples of the unit on 1 streams, not 3 on one \(records lost\?\)"):
        sample_spans_ms(without_last_unit, 3)
    with pytest.raises(LaunchFailed, match="not 4 on one"):
        sample_spans_ms(ROUND, 4)
    one_lost = ROUND[:-1]  # the last sample lost one of its unit's kernels: it would read too short
    with pytest.raises(LaunchFailed, match=r"sample 2 holds \[kernel fan1, memset\], sample 0 \[kernel fan1, "
                                           r"memset, kernel fan2\]"):
        sample_spans_ms(one_lost, 3)


def test_unit_work_before_the_first_flush_is_refused():
    with pytest.raises(LaunchFailed, match="CUPTI recorded kernel 'vector_add' before the first L2 flush"):
        sample_spans_ms([k("vector_add", 0, 10)] + ROUND[1:], 3)


def test_records_on_two_streams_are_refused():
    other = ROUND[:-1] + [k("fan2", 154_500, 155_400, stream=4)]
    with pytest.raises(LaunchFailed, match="on 2 streams"):
        sample_spans_ms(other, 3)


def test_a_sample_of_zero_length_is_refused():
    flat = [k("kg_l2_read", 0, 10), k("vector_add", 20, 20), k("kg_l2_read", 30, 40), k("vector_add", 50, 60)]
    with pytest.raises(LaunchFailed, match="zero or negative length"):
        sample_spans_ms(flat, 2)


# -- records of something else falling into a sample (issue 44): each refused, never timed --------------------
def test_a_stray_kernel_memset_or_memcpy_in_one_sample_is_refused_not_timed():
    for stray in (k("vector_add", 155_600, 170_000), k("memset", 121_200, 121_500, kind="memset"),
                  k("memcpy", 155_500, 156_000, kind="memcpy")):
        with pytest.raises(LaunchFailed, match=r"sample [12] holds .*every sample of one unit holds the same "
                                               r"records \(a stray or lost record\)"):
            sample_spans_ms(sorted(ROUND + [stray], key=lambda r: r.start_ns), 3)


def test_a_blocking_kernel_after_the_first_flush_is_another_rounds_and_refused():
    # a blocking kernel is left out of every span, but only where it belongs: before the round's first flush
    second_round = ROUND + [k("kg_block_stream", 160_000, 170_000)]
    with pytest.raises(LaunchFailed, match="recorded 'kg_block_stream' after the first L2 flush of the round "
                                           "\\(records of another round\\?\\)"):
        sample_spans_ms(second_round, 3)
    # the flush kernel's records of the next round would open a fourth sample: the count says so
    with pytest.raises(LaunchFailed, match="not 3 on one"):
        sample_spans_ms(ROUND + [k("kg_l2_read", 160_000, 190_000), k("fan1", 191_000, 192_000),
                                 k("memset", 192_100, 192_200, kind="memset"), k("fan2", 192_300, 193_000)], 3)


def test_records_that_overlap_on_the_stream_are_refused():
    # one stream runs one thing at a time: a unit kernel that starts before the flush ended is not this sample's
    early = [r if r.name != "fan1" or r.start_ns != 115_000 else k("fan1", 113_000, 117_000) for r in ROUND]
    with pytest.raises(LaunchFailed, match="records overlap on one stream: kernel 'fan1' starts 1.000 us before "
                                           "kernel 'kg_l2_read' ends"):
        sample_spans_ms(early, 3)
    # a unit record that ends after the next flush started (timestamps out of order) is refused too
    late = [r if r.name != "fan2" or r.start_ns != 83_000 else k("fan2", 83_000, 84_500) for r in ROUND]
    with pytest.raises(LaunchFailed, match="records overlap on one stream: kernel 'kg_l2_read' starts 0.500 us"):
        sample_spans_ms(late, 3)


def test_same_samples_counts_cupti_spans_longer_than_their_own_event_pair():
    pairs = [PairedSample(0.0050, 0.0075, 0.0010), PairedSample(0.0052, 0.0074, 0.0012),
             PairedSample(0.0080, 0.0076, 0.0011), PairedSample(0.0051, 0.0073, 0.0009)]
    got = same_samples(pairs)
    assert got["samples"] == 4 and got["cupti_longer"] == 1
    assert got["cupti_longer_max_us"] == pytest.approx(0.4)
    assert got["cupti_median_us"] == pytest.approx(5.15) and got["events_median_us"] == pytest.approx(7.45)
    assert got["events_minus_cupti_median_us"] == pytest.approx(2.2)  # median of 2.5, 2.2, -0.4, 2.2
    assert got["flush_gap_median_us"] == pytest.approx(1.05)
    halved = same_samples(pairs, divisor=2)  # per unit: the spans halve, the gap does not
    assert halved["cupti_median_us"] == pytest.approx(2.575) and halved["flush_gap_median_us"] == pytest.approx(1.05)
    agreeing = same_samples([p for p in pairs if p.cupti_ms < p.events_ms])
    assert agreeing["cupti_longer"] == 0 and agreeing["cupti_longer_max_us"] == 0.0
    assert same_samples([]) == {"samples": 0}


class Api:
    """The part of cupti-python's module the collector uses."""

    ActivityKind = types.SimpleNamespace(CONCURRENT_KERNEL=10, MEMCPY=1, MEMSET=2)

    def __init__(self, fail_enable=None):
        self.fail_enable = fail_enable
        self.calls: list = []
        self.pending: list = []

    def activity_register_callbacks(self, requested, completed):
        self.completed = completed

    def activity_enable(self, kind):
        if self.fail_enable:
            raise self.fail_enable
        self.calls.append(("enable", kind))

    def activity_disable(self, kind):
        self.calls.append(("disable", kind))

    def activity_flush_all(self, flag):
        self.calls.append(("flush", flag))
        self.completed(self.pending)
        self.pending = []


def rec(kind, start, end, name=None, stream=5):
    return types.SimpleNamespace(kind=kind, start=start, end=end, name=name, stream_id=stream)


def test_the_collector_copies_kernels_copies_and_sets_and_forgets_the_rest():
    api = Api()
    activity = CuptiActivity(api)
    activity.start()
    assert sorted(c for c in api.calls) == [("enable", 1), ("enable", 2), ("enable", 10)]
    api.pending = [rec(10, 100, 250, "vector_add"), rec(1, 300, 400), rec(2, 500, 520), rec(40, 0, 1, "other"),
                   rec(10, 600, 700, b"kg_l2_read")]  # a binding that hands names over as bytes
    got = activity.stop()
    assert got == [Activity("kernel", "vector_add", 100, 250, 5), Activity("memcpy", "memcpy", 300, 400, 5),
                   Activity("memset", "memset", 500, 520, 5), Activity("kernel", "kg_l2_read", 600, 700, 5)]
    assert api.calls[3] == ("flush", 1) and sorted(api.calls[4:]) == [("disable", 1), ("disable", 2), ("disable", 10)]
    activity.start()
    assert activity.stop() == []  # a new round starts empty
    calls = len(api.calls)
    assert activity.stop() == [] and len(api.calls) == calls  # not recording: no CUPTI call


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(CuptiActivity, "_instance", None)


def test_without_cupti_python_the_timer_is_one_line_naming_the_package(fresh, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupti", None)  # not installed
    with pytest.raises(MissingDependencyError, match=r"pip install cupti-python.*--cold-timer events"):
        CuptiActivity.get()


def test_a_driver_where_cupti_cannot_record_is_one_line(fresh, monkeypatch):
    class NotSupported(RuntimeError):
        pass

    package = types.ModuleType("cupti")
    package.cupti = Api(fail_enable=NotSupported("CUDA driver is not found"))
    monkeypatch.setitem(sys.modules, "cupti", package)
    with pytest.raises(ToolchainError, match="CUPTI cannot record kernel activity here \\(NotSupported: CUDA driver "
                                             "is not found\\); install"):
        CuptiActivity.get()


def test_the_collector_is_made_once_per_process(fresh, monkeypatch):
    package = types.ModuleType("cupti")
    package.cupti = Api()
    monkeypatch.setitem(sys.modules, "cupti", package)
    first = CuptiActivity.get()
    probe = list(package.cupti.calls)  # enabled, flushed and disabled once, to fail before any measuring
    assert [c[0] for c in probe] == ["enable"] * 3 + ["flush"] + ["disable"] * 3
    assert CuptiActivity.get() is first and package.cupti.calls == probe


def test_cold_timer_options_are_checked_before_cupy_or_cupti_is_needed():
    from kgpubench.measure.backends.cupy_backend import check_cold_timer

    check_cold_timer("events", "write")
    check_cold_timer("cupti", "read")
    check_cold_timer("cupti-drained", "read")
    with pytest.raises(OptionError, match="unknown cold timer 'nsys' \\(--cold-timer\\); use one of events, cupti, "
                                          "cupti-drained"):
        check_cold_timer("nsys")
    with pytest.raises(OptionError, match="the cupti cold timer needs the read L2 flush, not 'write'"):
        check_cold_timer("cupti", "write")
    with pytest.raises(OptionError, match="the cupti-drained cold timer needs the read L2 flush, not 'write'"):
        check_cold_timer("cupti-drained", "write")
