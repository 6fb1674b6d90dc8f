"""Shard writer (atomic parts, compaction, dedupe), NVML power windows, suite discovery, provenance."""

from __future__ import annotations

import datetime as dt

import pyarrow.parquet as pq
import pytest

from kgpubench.hardware import DeviceInfo
from kgpubench.measure.backends.base import check_feasible, uuid_hash
from kgpubench.measure.backends.fake import FAKE_DEVICE, FakeNvml, VirtualClock
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.power import idle_power, measure_power
from kgpubench.measure.provenance import architecture, gpu_columns, new_run_id
from kgpubench.measure.suite import Case, KernelSource, launch_columns
from kgpubench.measure.suites import SuiteLoadError, available_suites, load_suite


def _row(i: int, run: str = "run-0001") -> dict:
    return {"run_id": run, "status": "ok", "gpu_name": "G", "gpu_vendor": "nvidia", "gpu_architecture": "x",
            "gpu_sm_count": 1, "suite": "regular", "program": "p", "kernel": "k", "variant": "",
            "size_params": [{"name": "n", "value": float(i)}], "grid_x": 1, "grid_y": 1, "grid_z": 1,
            "block_x": 32, "block_y": 1, "block_z": 1, "source": "fake",
            "collected_at": dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc), "kgpubench_version": "0"}


def test_writer_appends_compacts_and_reopens(tmp_path):
    w = ShardWriter(tmp_path, "kernels", compact_every=3)
    ids = [w.append(_row(i)) for i in range(4)]
    names = sorted(p.name for p in tmp_path.iterdir())
    # journal j00000000 holds 3 rows, which become part c00000001; the 4th row starts journal j00000002
    assert names == ["c00000001.parquet", "j00000002.arrows"]
    w.close()
    files = list(tmp_path.glob("*.parquet"))
    assert len(files) == 1 and pq.read_table(files[0]).num_rows == 4
    again = ShardWriter(tmp_path, "kernels")
    assert again.row_ids == set(ids) and again.run_id == "run-0001" and len(again) == 4
    assert not list(tmp_path.glob(".*tmp"))


def test_writer_dedupes_a_row_left_in_two_files(tmp_path):
    w = ShardWriter(tmp_path, "kernels")
    w.append(_row(1))
    w.close()
    only = next(tmp_path.glob("*.parquet"))
    (tmp_path / "p00000099.parquet").write_bytes(only.read_bytes())  # a crash between compaction steps
    w = ShardWriter(tmp_path, "kernels")
    assert len(w) == 1
    w.append(_row(2))
    w.close()
    files = list(tmp_path.glob("*.parquet"))
    assert len(files) == 1 and pq.read_table(files[0]).num_rows == 2


def _unit(backend, ms):
    from pathlib import Path

    from kgpubench.measure.suite import KernelSource

    kernel = backend.compile(KernelSource(Path("k.cu"), "k"))
    backend.time_ms = ms
    return backend.sampler(lambda: kernel((1, 1, 1), (32, 1, 1), ()), method="graph", launches=1)


@pytest.mark.parametrize("unit_ms", [0.37, 3.7, 23.0])
def test_aligned_power_window_is_accurate_for_any_unit(unit_ms):
    from kgpubench.measure.backends.registry import get_backend

    backend = get_backend("fake", power_w=321.0)
    nvml = backend.nvml()
    res = measure_power(nvml, _unit(backend, unit_ms), unit_ms, clock_ns=backend.clock.ns, sleep=backend.clock.sleep)
    # both ends are counter updates seen at most one round late: error <= max(10 ms, a sample) / 1 s
    assert res.power_w_avg == pytest.approx(321.0, rel=max(0.01, unit_ms / 1000))
    assert res.method == "energy_counter" and res.window_ms >= 1000.0 and res.samples >= 10
    assert res.energy_j == pytest.approx(res.power_w_avg * unit_ms / 1000)


def test_a_frozen_energy_counter_is_a_failed_row_not_a_hang():
    from kgpubench.measure.backends.base import LaunchFailed
    from kgpubench.measure.backends.registry import get_backend

    backend = get_backend("fake", power_w=100.0)
    nvml = backend.nvml()
    nvml.total_energy_mj = lambda: 42
    with pytest.raises(LaunchFailed, match="energy counter stopped moving"):
        measure_power(nvml, _unit(backend, 1.0), 1.0, min_window_ms=100.0, clock_ns=backend.clock.ns,
                      sleep=backend.clock.sleep)


def test_idle_power_mean():
    clock = VirtualClock()
    assert idle_power(FakeNvml(clock, 60.0), 1.0, sleep=clock.sleep) == pytest.approx(60.0)


def test_feasibility_limits():
    src = KernelSource(__file__, "k")
    ok = Case(key={}, columns={}, source=src, grid=(10, 1, 1), block=(1024, 1, 1))
    check_feasible(ok, FAKE_DEVICE)
    from kgpubench.measure.backends.base import Infeasible

    for bad in ({"block": (2048, 1, 1)}, {"block": (1, 1, 128)}, {"grid": (1, 70000, 1)},
                {"shared_mem_bytes": 200_000}):
        case = Case(key={}, columns={}, source=src, **{"grid": (1, 1, 1), "block": (32, 1, 1), **bad})
        with pytest.raises(Infeasible):
            check_feasible(case, FAKE_DEVICE)


def test_launch_columns_and_labels():
    assert launch_columns((3, 2, 1), (16, 8, 1)) == {"grid_x": 3, "grid_y": 2, "grid_z": 1, "block_x": 16,
                                                     "block_y": 8, "block_z": 1, "nb": 6, "nt": 128, "w": 4}
    assert launch_columns((1, 1, 1), (33, 1, 1))["w"] == 2


def test_provenance_helpers():
    assert architecture("9.0") == "hopper" and architecture("8.6") == "ampere" and architecture("7.5") == "turing"
    assert architecture("99.0") == "unknown"
    assert uuid_hash("GPU-ABC") == uuid_hash("abc") and len(uuid_hash("x")) == 16
    rid = new_run_id(dt.datetime(2025, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc))
    assert rid.startswith("20250304T050607Z-") and len(rid) == 23
    dev = DeviceInfo(**{**FAKE_DEVICE.__dict__, "clock_mem_mhz": 1593.0, "memory_bus_width_bits": 5120,
                        "sm_count": 132, "clock_sm_mhz": 1980.0})
    cols = gpu_columns(dev)
    # H100 SXM-like: 2 x 1593 MHz x 5120 bit / 8 = 2039 GB/s; 132 SMs x 128 cores x 2 x 1.98 GHz = 66.9 TFLOP/s
    assert cols["gpu_memory_bandwidth_gbs"] == pytest.approx(2039.04)
    assert cols["gpu_cores"] == 16896 and cols["gpu_peak_fp32_gflops"] == pytest.approx(66908.16)


def test_suite_discovery(tmp_path):
    assert available_suites()[0] == "regular"
    assert load_suite("regular").name == "regular"
    from kgpubench.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="did you mean|Did you mean"):
        load_suite("regulr")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "__init__.py").write_text("X = 1\n")
    with pytest.raises(SuiteLoadError, match="neither SUITE nor get_suite"):
        load_suite("empty", root=tmp_path)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "__init__.py").write_text("import nonexistent_module_xyz\n")
    with pytest.raises(SuiteLoadError, match="ModuleNotFoundError"):
        load_suite("broken", root=tmp_path)
