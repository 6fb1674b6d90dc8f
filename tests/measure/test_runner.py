"""The run loop against the fake backend: statuses, protocol-2 timing, power, conditions, provenance, resume."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from measure_fakes import DoubleSuite, double_impl, no_features

from kgpubench.measure.backends.base import ContextLostError
from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, collect_suite
from kgpubench.measure.timing import StopRule

FAST = StopRule()


def _run(tmp_path, backend, suite=None, **opts):
    suite = suite or DoubleSuite()
    writer = ShardWriter(tmp_path / "shard", "kernels")
    summary = collect_suite(suite, backend, writer, CollectOptions(rule=FAST, **opts), features=no_features)
    writer.close()
    rows = ShardWriter(tmp_path / "shard", "kernels").rows()
    return summary, sorted(rows, key=lambda r: (r["grid_x"], r["block_x"]))


def test_ok_rows_have_timing_launch_gpu_and_provenance(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=2.0)
    summary, rows = _run(tmp_path, backend)
    assert summary.written == 4 and summary.statuses == {"ok": 4}
    r = rows[0]
    # 2 ms per launch >= the 1 ms target sample: one launch per sample; no noise, so the first round of
    # min_samples = 10 samples (20 ms >= min_gpu_ms 5) meets the 0.5 % target
    assert r["repeats"] == 10 and r["time_ms_median"] == 2.0 and r["time_cv"] == 0.0
    assert r["time_cv_high"] is False
    assert (r["measurement_protocol"], r["timing_method"], r["launches_per_sample"]) == (2, "graph", 1)
    assert (r["l2_policy"], r["time_rse"], r["time_cap_hit"], r["samples_dropped"]) == ("warm", 0.0, False, 0)
    assert r["clock_sm_mhz_before"] == 1500.0 and r["pstate_before"] == 0 and r["throttled"] is False
    assert r["clocks_locked"] is False and r["smem_dynamic_bytes"] == 0
    assert r["source"] == "fake" and r["gpu_name"].startswith("Fake GPU")
    assert r["gpu_architecture"] == "hopper" and r["gpu_cores"] == 4 * 128
    assert r["gpu_uuid_hash"] == "0123456789abcdef" and r["collector_version"] == "0.0.1"
    assert (r["nb"], r["nt"], r["w"], r["block_y"], r["grid_y"]) == (1, 32, 1, 1, 1)
    assert r["size_params"] == [{"name": "n", "value": 16.0}]
    assert r["sm_saturation"] == pytest.approx(1 / 4)  # 1 block on 4 SMs (no features model)
    assert r["power_w_avg"] is None
    assert summary.measured_ms == pytest.approx(4 * 10 * 2.0)


def test_unwritten_output_fails_verification_and_has_no_time(tmp_path):
    backend = get_backend("fake", time_ms=1.0)  # no implementation: the poisoned output stays NaN
    summary, rows = _run(tmp_path, backend)
    assert summary.statuses == {"verification_failed": 4}
    assert all(r["time_ms_median"] is None and "values differ" in r["status_detail"] for r in rows)


def test_compile_error_rows(tmp_path):
    backend = get_backend("fake", compile_errors={"double"})
    summary, _rows = _run(tmp_path, backend)
    assert summary.statuses == {"compile_error": 4}


def test_infeasible_by_device_limit_kernel_limit_and_memory(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl},
                          max_threads={"double": 32}).with_device(max_threads_per_block=48)
    summary, rows = _run(tmp_path, backend, DoubleSuite(sizes=(16,), blocks=(32, 40, 64)))
    by_nt = {r["nt"]: r for r in rows}
    assert by_nt[32]["status"] == "ok"
    assert by_nt[40]["status"] == "infeasible" and "compiled kernel" in by_nt[40]["status_detail"]
    assert by_nt[64]["status"] == "infeasible" and "device limit 48" in by_nt[64]["status_detail"]
    backend = get_backend("fake", implementations={"double": double_impl}, free_bytes=100)
    summary, _ = _run(tmp_path / "mem", backend, DoubleSuite(memory_bytes=101))
    assert summary.statuses == {"infeasible": 4}


def test_launch_error_non_sticky_is_a_row(tmp_path):
    backend = get_backend("fake", launch_errors={"double": 98})
    summary, rows = _run(tmp_path, backend)
    assert summary.statuses == {"launch_error": 4}
    assert rows[0]["status_detail"] == "CUDA error 98"


def test_out_of_resources_code_is_infeasible(tmp_path):
    backend = get_backend("fake", launch_errors={"double": 701})
    summary, _ = _run(tmp_path, backend)
    assert summary.statuses == {"infeasible": 4}


def test_sticky_error_writes_row_then_stops_and_resume_continues(tmp_path):
    backend = get_backend("fake", launch_errors={"double": 700})
    writer = ShardWriter(tmp_path / "shard", "kernels")
    with pytest.raises(ContextLostError, match="rerun the same command"):
        collect_suite(DoubleSuite(), backend, writer, CollectOptions(rule=FAST), features=no_features)
    writer.close()
    assert len(ShardWriter(tmp_path / "shard", "kernels")) == 1
    ok = get_backend("fake", implementations={"double": double_impl})
    summary, rows = _run(tmp_path, ok)
    assert (summary.skipped, summary.written) == (1, 3)
    assert sorted(r["status"] for r in rows) == ["launch_error", "ok", "ok", "ok"]


def test_resume_skips_measured_keys(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl})
    _run(tmp_path, backend, DoubleSuite(sizes=(16,)))
    compiled_before = len(backend.compiled)
    summary, rows = _run(tmp_path, backend, DoubleSuite(sizes=(16, 32)))
    assert (summary.skipped, summary.written, len(rows)) == (2, 2, 4)
    assert len(backend.compiled) - compiled_before == 2  # only the new keys were compiled


def test_max_minutes_stops_before_next_case(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl})
    ticks = iter([0.0, 0.0, 30.0, 61.0, 200.0, 200.0])
    writer = ShardWriter(tmp_path / "shard", "kernels")
    summary = collect_suite(DoubleSuite(), backend, writer, CollectOptions(rule=FAST, max_minutes=1.0),
                            features=no_features, clock=lambda: next(ticks))
    # clock reads: start 0, case 1 check 0, case 2 check 30 s, case 3 check 61 s -> stop
    assert summary.written == 2 and summary.stopped_early


def test_power_window_with_energy_counter(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=2.0, power_w=200.0)
    _summary, rows = _run(tmp_path, backend, DoubleSuite(sizes=(16,), blocks=(32,), power=True))
    r = rows[0]
    assert r["power_method"] == "energy_counter" and r["power_windows"] == 1
    # the window runs between two observed counter updates (every 100 ms of fake time); each is seen up to
    # one 10 ms round late (the fake runs a round at once), so the error is at most 10 ms / 1000 ms
    assert r["power_w_avg"] == pytest.approx(200.0, rel=0.01)
    assert 1000.0 <= r["power_window_ms"] <= 1020.0 and r["power_samples"] == 10
    assert r["energy_j"] == pytest.approx(r["power_w_avg"] * 0.002)  # average power x 2 ms per launch
    assert r["power_idle_w"] == pytest.approx(200.0)
    assert r["temperature_c_after"] > r["temperature_c_before"]
    # the window's samples are the row's timing samples: no separate timing pass
    assert r["repeats"] * 2.0 == pytest.approx(r["power_launches"] * 2.0) and r["time_ms_median"] == 2.0


def test_kernel_filter_and_unknown_kernel(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl})
    from kgpubench.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="double"):
        _run(tmp_path, backend, kernels=["doubel"])


def test_fake_rows_never_validate(tmp_path):
    from kgpubench.store.validation import validate_table

    backend = get_backend("fake", implementations={"double": double_impl})
    _run(tmp_path, backend, DoubleSuite(sizes=(16,), blocks=(32,)))
    table = pq.read_table(next((tmp_path / "shard").glob("*.parquet")))
    violations = validate_table(table, "kernels")
    assert any(v.column == "source" for v in violations)
    # the same rows marked measured pass, so `source` is the only thing keeping them out
    import pyarrow as pa

    measured = table.set_column(table.column_names.index("source"), "source",
                                pa.array(["measured"] * table.num_rows))
    assert [v for v in validate_table(measured, "kernels") if v.column == "source"] == []


def test_device_is_passed_to_suites_that_ask_for_it(tmp_path):
    seen = []

    class SizedByDevice(DoubleSuite):
        def cases(self, *, quick=False, kernels=None, device=None):
            seen.append(device)
            self.sizes = (device.sm_count * 8,)
            return super().cases(quick=quick, kernels=kernels)

    backend = get_backend("fake", implementations={"double": double_impl})
    _summary, rows = _run(tmp_path, backend, SizedByDevice(blocks=(32,)))
    assert seen[0].sm_count == 4 and [r["size_params"] for r in rows] == [[{"name": "n", "value": 32.0}]]


def test_zero_event_time_is_a_status_not_a_crash(tmp_path):
    backend = get_backend("fake", implementations={"double": double_impl}, time_ms=lambda name, i: 0.0)
    summary, rows = _run(tmp_path, backend, DoubleSuite(sizes=(16,), blocks=(32,)))
    assert summary.statuses == {"launch_error": 1} and "invalid sample times" in rows[0]["status_detail"]


def test_resuming_a_shard_timed_another_way_is_refused_before_any_case(tmp_path):
    """A row already in the shard is skipped by its row id alone: a resume with another L2 policy, or another
    cold timer, would mix two ways of timing in one shard (cold rows read the launch too). It is refused in one
    line naming the folder, and nothing is added."""
    from kgpubench.errors import OptionError

    backend = get_backend("fake", implementations={"double": double_impl})
    _run(tmp_path, backend, DoubleSuite(sizes=(16,)), l2_policy="flushed")  # rows timing_method cold
    with pytest.raises(OptionError, match=r"shard: 2 row\(s\) there were timed another way \(2 flushed, "
                                          r"timing_method cold\) than this collection times \(warm\)"):
        _run(tmp_path, backend, DoubleSuite(sizes=(16, 32)), l2_policy="warm")
    backend.cold_timer = "cupti"  # as CupyBackend(cold_timer="cupti") says it
    with pytest.raises(OptionError, match=r"than this collection times \(flushed, timing_method cupti\); resuming "
                                          r"would mix them in one shard\. Collect into another --out"):
        _run(tmp_path, backend, DoubleSuite(sizes=(16, 32)), l2_policy="flushed")
    backend.cold_timer = "events"  # the first run's own way: the resume goes on
    summary, rows = _run(tmp_path, backend, DoubleSuite(sizes=(16, 32)), l2_policy="flushed")
    assert (summary.skipped, summary.written, len(rows)) == (2, 2, 4)
    assert {r["timing_method"] for r in rows} == {"cold"}
