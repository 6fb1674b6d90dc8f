"""The sweep over the harness's fake backend (kernels emulated in NumPy) and its resumable shard writer."""

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from emulated import Emulator


@pytest.fixture(scope="module")
def sweep(npb):
    return importlib.import_module(npb.__name__ + ".sweep")


def _adapt(f):
    def impl(grid, block, args, shared_mem=0):
        f(grid, block, args)

    return impl


def _backend(npb, **kw):
    from kgpubench.measure.fake import FakeBackend

    emu = Emulator(importlib.import_module(npb.__name__ + ".ref_mg"),
                   importlib.import_module(npb.__name__ + ".randlc")).kernels()
    impl = {k: _adapt(f) for k, f in emu.items()}
    return FakeBackend(implementations=impl, **kw)



def test_cg_sweep_rows_resume_and_never_validate(npb, sweep, tmp_path):
    from kgpubench.measure.output import ShardWriter
    from kgpubench.validation import validate_table

    rule = importlib.import_module(npb.__name__ + ".driver").SweepRule(warmup=1, min_runs=2, min_total_ms=0)
    writer = ShardWriter(tmp_path / "npb", "npb")
    s = sweep.collect_npb(_backend(npb), writer, benchmarks=["CG"], classes=["S"], tpbs=[32, 1024],
                          kernels=["kernel_three"], rule=rule)
    assert (s.total, s.written, s.skipped) == (5, 5, 0) and s.statuses == {"ok": 5}
    rows = sorted(writer.rows(), key=lambda r: (r["row_kind"], r["assignment"], r["tpb"] or 0))
    kinds = [(r["row_kind"], r["assignment"], r["tpb"]) for r in rows]
    assert kinds == [("kernel", "one-kernel", 32), ("kernel", "one-kernel", 1024), ("run", "default", None),
                     ("run", "max", 1024), ("run", "warp", 32)]
    k32 = rows[0]
    # a kernel row: one verified run, then replays of the run's 375 calls (1 ms each on the fake, and the fake's
    # launch cost is never in a replay): 3 samples of one replay each, 1 ms per call
    assert k32["calls_per_run"] == 375 and k32["runs"] == 1 and k32["verified"] is True
    assert (k32["repeats"], k32["launches_per_sample"], k32["time_ms_median"]) == (3, 375, 1.0)
    assert k32["kernel_time_s"] == pytest.approx(0.375) and k32["remainder_s"] is None
    assert k32["source"] == "fake" and k32["verification_error"] < 1e-10 and k32["measurement_protocol"] == 2
    assert {p["name"]: p["value"] for p in k32["tpb_assignment"]}["kernel_three"] == 32.0
    default = rows[2]
    calls = 15 * (1 + 1 + 5 * 25 + 4)
    assert default["calls_per_run"] == calls and default["runs"] == 2 and default["timing_method"] == "app"
    assert default["kernel_time_s"] == pytest.approx(calls * 1e-3)  # every recorded call replayed
    assert default["remainder_s"] == pytest.approx(default["time_ms_mean"] / 1e3 - calls * 1e-3)
    assert default["clock_sm_mhz_before"] == 1500.0 and default["throttled"] is False
    again = sweep.collect_npb(_backend(npb), writer, benchmarks=["CG"], classes=["S"], tpbs=[32, 1024],
                              kernels=["kernel_three"], rule=rule)
    assert (again.written, again.skipped) == (0, 5)
    writer.close()
    # a fake backend's rows are never data: validation rejects their source
    table = writer.table.from_rows(writer.rows(), fill_row_id=False)
    bad = validate_table(table, "npb")
    assert bad and {v.column for v in bad} == {"source"}


def test_compile_error_becomes_rows(npb, sweep, tmp_path):
    from kgpubench.measure.output import ShardWriter

    writer = ShardWriter(tmp_path / "npb", "npb")
    s = sweep.collect_npb(_backend(npb, compile_errors={"comm3"}), writer, benchmarks=["MG"], classes=["S"],
                          tpbs=[32], kernels=["zero3"])
    assert s.statuses == {"compile_error": 4}
    assert all("fake compile error" in r["status_detail"] for r in writer.rows())
