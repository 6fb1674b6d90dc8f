"""Measurement protocol 2 on the fake backend: launch-free samples, noise-based stopping, caps, the L2 policy,
graph fallback, clock drops, throttling, clock locks, run ids and provenance. Expected values by hand."""

from __future__ import annotations

import math
import os
import signal

import pyarrow as pa
import pytest
from measure_fakes import DoubleSuite, double_impl, no_features

from kgpubench.measure.backends.fake import FakeNvml, VirtualClock
from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.conditions import ClockLock, ClockLockError, parse_lock_mode
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.power import measure_power
from kgpubench.measure.runner import CollectOptions, collect_suite
from kgpubench.measure.timing import StopRule, relative_standard_error


def _rows(tmp_path, backend, suite=None, **opts):
    suite = suite or DoubleSuite(sizes=(16,), blocks=(32,))
    writer = ShardWriter(tmp_path / "shard", "kernels")
    summary = collect_suite(suite, backend, writer, CollectOptions(**opts), features=no_features)
    writer.close()
    return summary, ShardWriter(tmp_path / "shard", "kernels").rows()


def _alternating(name, i):
    return 1.1 if i % 2 else 0.9


# -- the stop rule, by hand ----------------------------------------------------------------------------------
def test_launches_per_sample_reach_the_target_sample_length():
    rule = StopRule(target_sample_ms=1.0, max_launches=1000)
    assert rule.launches_for(2.0) == 1
    assert rule.launches_for(0.3) == 4  # ceil(1 / 0.3)
    assert rule.launches_for(0.0001) == 1000  # capped
    assert rule.launches_for(0.0) == 1000 and rule.launches_for(float("nan")) == 1000


def test_relative_standard_error_by_hand():
    # mean 2, sample stdev sqrt(((1)^2 + 0 + 1^2) / 2) = 1 -> 1 / sqrt(3) / 2
    assert relative_standard_error([1.0, 2.0, 3.0]) == pytest.approx(1 / math.sqrt(3) / 2)
    assert relative_standard_error([5.0]) == math.inf


def test_next_round_asks_for_what_the_noise_needs():
    rule = StopRule(target_rse=0.005, min_samples=10, max_round=200, max_gpu_ms=2000.0)
    assert rule.next_round([]) == 10 and rule.next_round([1.0] * 4) == 6
    samples = [0.9, 1.1] * 5  # cv = sqrt(10 * 0.01 / 9) / 1 = 0.10541
    need = math.ceil((math.sqrt(0.1 / 9) / 0.005) ** 2 * 1.1) - 10  # 479
    assert need == 479 and rule.next_round(samples) == 200  # within max_round
    small_budget = StopRule(max_gpu_ms=50.0)
    assert small_budget.next_round(samples) == 40  # (50 - 10) ms left at 1 ms a sample
    assert rule.next_round([1.0] * 10) == 5  # noise already met: at least min_samples // 2


@pytest.mark.parametrize("kwargs", [dict(target_rse=0.0), dict(min_samples=1), dict(max_gpu_ms=math.inf),
                                    dict(max_wall_s=float("nan")), dict(clock_floor=1.0), dict(max_round=5)])
def test_stop_rule_refuses_inconsistent_values(kwargs):
    with pytest.raises(ValueError, match="inconsistent stop rule"):
        StopRule(**kwargs)


# -- the launch is not in the label ----------------------------------------------------------------------------
def test_launch_overhead_is_excluded(tmp_path):
    # 1 us kernels behind a 9 us launch: one event pair per launch (protocol 1) reads 10 us
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=0.001,
                          launch_overhead_ms=0.009)
    assert backend.time_launches(lambda: None, 1) == [pytest.approx(0.009)]
    _summary, rows = _rows(tmp_path, backend)
    r = rows[0]
    # the pilot finds 1 us; a sample is 1000 launches (1 ms, the target), timed as one graph
    assert r["launches_per_sample"] == 1000 and r["timing_method"] == "graph"
    assert r["time_ms_median"] == pytest.approx(0.001) and r["repeats"] == 10


# -- stopping on noise -----------------------------------------------------------------------------------------
def test_noise_decides_the_number_of_samples(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=_alternating)
    _summary, rows = _rows(tmp_path, backend)
    r = rows[0]
    # rounds of 10, 200 and 200 samples: after 410 the RSE is sqrt(4.1 / 409) / sqrt(410) = 0.00494 <= 0.005
    assert r["repeats"] == 410 and r["launches_per_sample"] == 1
    assert r["time_rse"] == pytest.approx(math.sqrt(4.1 / 409) / math.sqrt(410))
    assert r["time_cap_hit"] is False and r["time_ms_mean"] == pytest.approx(1.0)
    assert backend.samplers[-1].rounds == [1, 10, 200, 200]  # warm-up sample, then the three rounds


def test_the_cap_stops_and_flags(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=_alternating)
    _summary, rows = _rows(tmp_path, backend, rule=StopRule(max_gpu_ms=50.0))
    r = rows[0]
    assert r["time_cap_hit"] is True and r["repeats"] == 50  # 10, then the 40 the budget allows
    assert r["time_rse"] > 0.005 and r["status"] == "ok"


# -- L2 policy and methods -------------------------------------------------------------------------------------
def test_flushed_policy_times_cold_single_launches(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=0.001)
    _summary, rows = _rows(tmp_path, backend, l2_policy="flushed")
    r = rows[0]
    assert (r["timing_method"], r["l2_policy"], r["launches_per_sample"]) == ("cold", "flushed", 1)
    assert backend.flushes == 1 + r["repeats"]  # the warm-up sample and every timed one follow a flush


def test_suite_declares_its_policy_and_the_option_overrides_it(tmp_path):
    class Flushed(DoubleSuite):
        l2_policy = "flushed"

    backend = get_backend("fake", implementations={"double": double_impl})
    _s, rows = _rows(tmp_path / "a", backend, Flushed(sizes=(16,), blocks=(32,)))
    assert rows[0]["l2_policy"] == "flushed"
    _s, rows = _rows(tmp_path / "b", backend, Flushed(sizes=(16,), blocks=(32,)), l2_policy="warm")
    assert rows[0]["l2_policy"] == "warm" and rows[0]["timing_method"] == "graph"
    from kgpubench.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="L2 policy"):
        _rows(tmp_path / "c", backend, l2_policy="lukewarm")


def test_a_unit_that_cannot_be_captured_is_timed_in_batches(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, capture_fails={"double"})
    _summary, rows = _rows(tmp_path, backend)
    assert rows[0]["timing_method"] == "batch" and rows[0]["status"] == "ok"


# -- conditions ------------------------------------------------------------------------------------------------
def test_rounds_under_the_clock_floor_are_dropped(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=2.0)
    reads = iter([1500.0, 600.0])  # the state read before timing, then the first round: 600 < 0.75 * 1000
    backend.nvml().sm_mhz = lambda now: next(reads, 1500.0)
    _summary, rows = _rows(tmp_path, backend)
    r = rows[0]
    assert r["samples_dropped"] == 10 and r["repeats"] == 10 and r["time_ms_median"] == 2.0


def test_throttle_reasons_flag_the_row(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl})
    backend.nvml().reasons = 0x4  # SW power cap
    _summary, rows = _rows(tmp_path, backend)
    assert rows[0]["throttled"] is True and rows[0]["throttle_reasons_after"] == 4
    idle = get_backend("fake", implementations={"double": double_impl})
    idle.nvml().reasons = 0x1  # GPU idle is not throttling
    _summary, rows = _rows(tmp_path / "idle", idle)
    assert rows[0]["throttled"] is False


def test_locked_clocks_are_recorded(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl})
    _summary, rows = _rows(tmp_path, backend, clocks_locked=True)
    assert rows[0]["clocks_locked"] is True


# -- provenance ------------------------------------------------------------------------------------------------
def test_rows_carry_version_commit_and_a_run_per_process_and_device(tmp_path, monkeypatch):
    from kgpubench.buildinfo import package_version, project_commit
    from kgpubench.measure import provenance

    backend = get_backend("fake", implementations={"double": double_impl})
    _s, rows = _rows(tmp_path, backend, DoubleSuite(sizes=(16,), blocks=(32, 64)))
    assert {r["kgpubench_version"] for r in rows} == {package_version()} != {"0.0.0+unknown"}
    assert {r["kgpubench_commit"] for r in rows} == {project_commit()} and project_commit()
    first = rows[0]["run_id"]
    assert provenance.process_run_id("0123456789abcdef") == first
    assert provenance.process_run_id("fedcba9876543210") != first  # another board
    monkeypatch.setattr(os, "getpid", lambda: -1)  # another process resuming the same shard
    _s, rows = _rows(tmp_path, backend, DoubleSuite(sizes=(16, 32), blocks=(32, 64)))
    assert len(rows) == 4 and len({r["run_id"] for r in rows}) == 2


def test_protocol_columns_validate_on_measured_rows(tmp_path):
    from kgpubench.store.validation import validate_table

    backend = get_backend("fake", implementations={"double": double_impl})
    _rows(tmp_path, backend)
    import pyarrow.parquet as pq

    table = pq.read_table(next((tmp_path / "shard").glob("*.parquet")))
    measured = table.set_column(table.column_names.index("source"), "source", pa.array(["measured"]))
    protocol = {"measurement_protocol", "timing_method", "launches_per_sample", "l2_policy", "time_rse",
                "kgpubench_commit", "pstate_before", "throttled", "clock_sm_mhz_before"}
    assert [v for v in validate_table(measured, "kernels") if v.column in protocol] == []
    # protocol 2 without its method is a violation (required_when on an integer column)
    broken = measured.set_column(measured.column_names.index("timing_method"), "timing_method",
                                 pa.array([None], pa.string()))
    assert any(v.column == "timing_method" for v in validate_table(broken, "kernels"))


# -- power windows ---------------------------------------------------------------------------------------------
def test_power_by_sampling_without_an_energy_counter():
    from pathlib import Path

    from kgpubench.measure.suite import KernelSource

    backend = get_backend("fake", time_ms=2.0, energy_counter=False, power_w=150.0)
    kernel = backend.compile(KernelSource(Path("k.cu"), "k"))
    sampler = backend.sampler(lambda: kernel((1, 1, 1), (32, 1, 1), ()), method="batch", launches=1)
    nvml = backend.nvml()
    result = measure_power(nvml, sampler, 2.0, min_window_ms=1000.0, clock_ns=backend.clock.ns,
                           sleep=backend.clock.sleep)
    assert result.method == "sampling" and result.power_w_avg == pytest.approx(150.0)
    assert result.window_ms >= 1000.0 and result.samples >= 1
    # energy per launch = average power x mean launch time (2 ms)
    assert result.energy_j == pytest.approx(150.0 * 0.002)


# -- clock locks -----------------------------------------------------------------------------------------------
def test_lock_modes_parse():
    assert parse_lock_mode("AUTO") == "auto" and parse_lock_mode("none") == "none"
    assert parse_lock_mode("1755") == 1755.0
    for bad in ("fast", "20", "nan"):
        with pytest.raises(ClockLockError, match="--lock-clocks"):
            parse_lock_mode(bad)


def test_clock_lock_as_root_locks_and_always_resets():
    nvml = FakeNvml(VirtualClock(), 100.0)
    with ClockLock(nvml, "auto", is_root=True) as lock:
        assert lock.locked and lock.mhz == 1755.0
    assert nvml.locks == [None, 1755.0, None]  # reset a stale lock, lock, reset
    nvml = FakeNvml(VirtualClock(), 100.0)
    with pytest.raises(RuntimeError), ClockLock(nvml, 1410.0, is_root=True):
        raise RuntimeError("a crash inside the collection")
    assert nvml.locks == [None, 1410.0, None]


def test_clock_lock_is_undone_on_sigterm():
    nvml = FakeNvml(VirtualClock(), 100.0)
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or e.g. Ray's handler when ray.init ran in this process
    with pytest.raises(SystemExit) as exc, ClockLock(nvml, "auto", is_root=True):
        os.kill(os.getpid(), signal.SIGTERM)
    assert exc.value.code == 128 + signal.SIGTERM and nvml.locks[-1] is None
    assert signal.getsignal(signal.SIGTERM) is before  # the previous handler is back


def test_clock_lock_without_root_or_nvml():
    nvml = FakeNvml(VirtualClock(), 100.0)
    with ClockLock(nvml, "auto", is_root=False) as lock:
        assert not lock.locked and "not running as root" in lock.note
    assert nvml.locks == []
    with pytest.raises(ClockLockError, match="needs root"), ClockLock(nvml, 1500.0, is_root=False):
        pass
    with ClockLock(None, "auto", is_root=True) as lock:
        assert not lock.locked and "NVML" in lock.note

    class Refusing(FakeNvml):
        def lock_sm_clock(self, mhz):
            raise RuntimeError("Not Supported")

    with ClockLock(Refusing(VirtualClock(), 1.0), "auto", is_root=True) as lock:
        assert not lock.locked and "NVML refused" in lock.note
