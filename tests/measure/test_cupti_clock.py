"""CUPTI's kernel records turned into cold sample times (no GPU): grouping, refusals, the collector's errors."""

import random
import sys
import types

import pytest

from kgpubench.errors import LaunchFailed, MissingDependencyError, OptionError, ToolchainError
from kgpubench.measure.backends.cupti_clock import Activity, CuptiActivity, sample_spans_ms


def k(name, start, end, stream=3, kind="kernel"):
    return Activity(kind, name, start, end, stream)


ROUND = [  # the blocking kernel, then 3 samples of [flush, unit]; the second unit is two kernels and a memset
    k("kg_block_stream", 0, 50_000),
    k("kg_l2_read", 50_100, 80_000), k("vector_add", 81_500, 83_850),
    k("kg_l2_read", 84_000, 114_000), k("fan1", 115_000, 117_000), k("memset", 117_400, 117_600, kind="memset"),
    k("fan2", 118_000, 121_000),
    k("kg_l2_read", 122_000, 152_000), k("vector_add", 153_000, 155_400),
]


def test_each_sample_is_the_span_of_its_unit_between_two_flush_kernels():
    assert sample_spans_ms(ROUND, 3) == pytest.approx([0.00235, 0.006, 0.0024])


def test_the_order_records_arrive_in_does_not_matter():
    shuffled = ROUND[:]
    random.Random(4).shuffle(shuffled)
    assert sample_spans_ms(shuffled, 3) == sample_spans_ms(ROUND, 3)


def test_a_lost_record_is_a_failed_configuration_not_a_wrong_time():
    without_last_unit = ROUND[:-1]  # the third flush ran, its unit's record was dropped
    with pytest.raises(LaunchFailed, match=r"make 2 samples of the unit on 1 streams, not 3 on one \(records lost\?\)"):
        sample_spans_ms(without_last_unit, 3)
    with pytest.raises(LaunchFailed, match="not 4 on one"):
        sample_spans_ms(ROUND, 4)


def test_unit_work_before_the_first_flush_is_refused():
    with pytest.raises(LaunchFailed, match="CUPTI recorded kernel 'vector_add' before the first L2 flush"):
        sample_spans_ms([k("vector_add", 0, 10)] + ROUND, 3)


def test_records_on_two_streams_are_refused():
    other = ROUND[:-1] + [k("vector_add", 153_000, 155_400, stream=4)]
    with pytest.raises(LaunchFailed, match="on 2 streams"):
        sample_spans_ms(other, 3)


def test_a_sample_of_zero_length_is_refused():
    flat = ROUND[:-1] + [k("vector_add", 153_000, 153_000)]
    with pytest.raises(LaunchFailed, match="zero or negative length"):
        sample_spans_ms(flat, 3)


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
    with pytest.raises(OptionError, match="unknown cold timer 'nsys' \\(--cold-timer\\); use one of events, cupti"):
        check_cold_timer("nsys")
    with pytest.raises(OptionError, match="the cupti cold timer needs the read L2 flush, not 'write'"):
        check_cold_timer("cupti", "write")
