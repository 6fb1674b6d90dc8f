"""The harness as a library: ``kgpubench.collect`` returns typed rows and one CollectSummary; measuring a case gives
a CaseOutcome (never a dict with private keys); backends declare their capabilities and the harness obeys them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from measure_fakes import DoubleSuite, double_impl

import kgpubench
from kgpubench.errors import ContractError
from kgpubench.measure import features_link
from kgpubench.measure.api import Collected, collect
from kgpubench.measure.backends.base import Capabilities
from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.outcome import CaseOutcome
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, CollectSummary, measure_case, run_suite
from kgpubench.measure.suite import SuiteBase
from kgpubench.measure.timing import StopRule
from kgpubench.schema import get_table
from kgpubench.store.shards import read_shard
from kgpubench.testing import check_backend

ROOT = Path(__file__).resolve().parents[2]
FAST = StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10)
POWER_COLUMNS = ("power_w_avg", "energy_j", "power_window_ms", "power_samples", "power_method", "power_idle_w")


@pytest.fixture
def no_per_case_features(monkeypatch):
    monkeypatch.setattr(features_link, "static_features", lambda case, dev, ptx_source=None: {})


def test_kgpubench_collect_returns_typed_rows_and_the_summary_of_the_shard(tmp_path, no_per_case_features):
    backend = FakeBackend(implementations={"double": double_impl}, time_ms=0.5)
    done = kgpubench.collect(DoubleSuite(), backend=backend, out=tmp_path, rule=FAST)
    assert kgpubench.collect is collect and isinstance(done, Collected)
    s = done.summary
    assert isinstance(s, CollectSummary) and (s.total, s.written, s.skipped) == (4, 4, 0)
    assert s.statuses == {"ok": 4} and s.out == str(tmp_path / "regular") == str(done.folder)
    assert s.measured_ms > 0 and len(s.cvs) == 4 and s.run_id
    # typed rows: an Arrow table in the kernels schema, the same rows as the shard on the disk
    assert isinstance(done.rows, pa.Table) and done.rows.num_rows == len(done) == 4
    assert done.rows.schema.names == get_table("kernels").column_names
    _config, on_disk = read_shard(tmp_path / "regular")
    assert on_disk.num_rows == s.written
    assert sorted(on_disk.column("row_id").to_pylist()) == sorted(done.rows.column("row_id").to_pylist())
    assert set(done.rows.column("status").to_pylist()) == {"ok"}
    assert done.rows.column("time_ms_median").to_pylist() == pytest.approx([0.5] * 4)
    assert s.to_dict() == {"written": 4, "skipped": 0, "stored": 0, "total": 4, "statuses": {"ok": 4},
                           "stopped_early": False,
                           "wall_s": s.wall_s, "measured_ms": s.measured_ms, "run_id": s.run_id,
                           "out": str(tmp_path / "regular")}
    # a rerun resumes: nothing written, the same four rows returned
    again = kgpubench.collect(DoubleSuite(), backend=backend, out=tmp_path, rule=FAST)
    assert (again.summary.written, again.summary.skipped, again.rows.num_rows) == (0, 4, 4)
    assert "4 already there" in again.summary.line("regular")


def test_kgpubench_collect_by_suite_name_and_backend_name(tmp_path, no_per_case_features):
    done = collect("stencil", backend="fake", out=tmp_path, quick=True, kernels=["thread-tile"], rule=FAST,
                   max_minutes=0.0)
    # max_minutes=0: no case started; the suite is found by name, the fake made by name
    assert done.suite == "stencil" and done.table == "stencil" and done.summary.stopped_early
    assert done.summary.written == 0 and done.rows.num_rows == 0 and done.folder == tmp_path / "stencil"


@pytest.mark.integration  # a fresh interpreter
def test_import_kgpubench_stays_light():
    code = ("import sys, kgpubench\nprint('LOADED', sorted(m for m in ('numpy', 'pyarrow', 'kgpubench.measure.api') "
            "if m in sys.modules))\nkgpubench.collect\nprint('AFTER', 'kgpubench.measure.api' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert "LOADED []" in res.stdout and "AFTER True" in res.stdout, res.stdout + res.stderr


# ----- the outcome is a record, not a dict with private keys ----------------------------------------------------
def test_measure_case_gives_a_case_outcome_with_no_private_columns():
    case = next(iter(DoubleSuite(sizes=(16,), blocks=(32,)).cases()))
    out = measure_case(case, DoubleSuite(), FakeBackend(implementations={"double": double_impl}), rule=FAST)
    assert isinstance(out, CaseOutcome) and out.ok and out.detail is None and not out.sticky
    assert out.measured_ms > 0 and out.columns["time_ms_median"] == pytest.approx(1.0)
    assert not any(k.startswith("_") for k in out.row_columns()) and out.row_columns()["status"] == "ok"
    failed = measure_case(case, DoubleSuite(), FakeBackend(launch_errors={"double": 700}), rule=FAST)
    assert (failed.status, failed.sticky, failed.columns) == ("launch_error", True, {})
    assert failed.row_columns() == {"status": "launch_error", "status_detail": "CUDA error 700: illegal address"}


def test_a_case_outcome_refuses_private_or_status_columns():
    with pytest.raises(ContractError, match="_measured_ms"):
        CaseOutcome("ok", columns={"time_ms_median": 1.0, "_measured_ms": 3.0})
    with pytest.raises(ContractError, match="status"):
        CaseOutcome("ok", columns={"status": "ok"})
    out = CaseOutcome.of_columns({"status": "ok", "status_detail": "3 runs", "time_ms_median": 2.0}, measured_ms=5.0)
    assert (out.status, out.detail, dict(out.columns), out.measured_ms) == ("ok", "3 runs", {"time_ms_median": 2.0},
                                                                            5.0)
    assert len(CaseOutcome.failed("compile_error", "x" * 900).detail) == 500


class _DictSuite(SuiteBase):
    name, table, collector_version, measures_itself = "dicts", "kernels", "1.0", True

    def cases(self, *, quick, kernels=None, device=None):
        return list(DoubleSuite(sizes=(16,), blocks=(32,)).cases())

    def measure(self, case, backend, how):
        return {"status": "ok", "time_ms_median": 1.0, "_measured_ms": 1.0}


def test_a_suite_measure_that_returns_a_dict_is_a_contract_error(tmp_path, no_per_case_features):
    writer = ShardWriter(tmp_path / "out", "kernels")
    with pytest.raises(ContractError, match="return a kgpubench.measure.outcome.CaseOutcome"):
        run_suite(_DictSuite(), FakeBackend(), writer, CollectOptions())
    writer.close()
    assert ShardWriter(tmp_path / "out", "kernels").rows() == []


# ----- capabilities -----------------------------------------------------------------------------------------------
def _power_case():
    return next(iter(DoubleSuite(sizes=(16,), blocks=(32,), power=True).cases()))


def test_a_backend_without_the_power_capability_measures_no_power(tmp_path, no_per_case_features):
    impl = {"double": double_impl}
    with_power = measure_case(_power_case(), DoubleSuite(), FakeBackend(implementations=impl), rule=FAST,
                              power_window_ms=200.0)
    assert with_power.ok and with_power.columns["power_w_avg"] == pytest.approx(200.0, rel=0.05)
    no_power = FakeBackend(implementations=impl, capabilities=Capabilities(graphs=True, clocks=True))
    out = measure_case(_power_case(), DoubleSuite(), no_power, rule=FAST, power_window_ms=200.0)
    assert out.ok and not set(POWER_COLUMNS) & set(out.columns)
    assert out.columns["time_ms_median"] == pytest.approx(1.0) and "clock_sm_mhz_before" in out.columns
    assert no_power.nvml().energy_reads == 0  # NVML was never asked for energy
    # through the run loop: no idle power either, the power columns of the row stay empty
    done = collect(DoubleSuite(sizes=(16,), blocks=(32,), power=True), backend=no_power, out=tmp_path, rule=FAST)
    (row,) = done.records
    assert row["status"] == "ok" and all(row[c] is None for c in POWER_COLUMNS)
    # and no power and no clocks: neither power nor conditions, as a backend without NVML today
    bare = FakeBackend(implementations=impl, capabilities=Capabilities(graphs=True))
    out = measure_case(_power_case(), DoubleSuite(), bare, rule=FAST)
    assert out.ok and not set(POWER_COLUMNS) & set(out.columns) and "clock_sm_mhz_before" not in out.columns


def test_a_backend_without_graphs_is_timed_in_batches():
    case = next(iter(DoubleSuite(sizes=(16,), blocks=(32,)).cases()))
    backend = FakeBackend(implementations={"double": double_impl}, capabilities=Capabilities(power=True, clocks=True))
    out = measure_case(case, DoubleSuite(), backend, rule=FAST, l2_policy="warm")
    assert out.ok and out.columns["timing_method"] == "batch"
    assert {s.method for s in backend.samplers} == {"batch"}
    graphs = FakeBackend(implementations={"double": double_impl})
    assert measure_case(case, DoubleSuite(), graphs, rule=FAST, l2_policy="warm").columns["timing_method"] == "graph"


def test_check_backend_checks_the_declared_capabilities(tmp_path):
    check_backend(FakeBackend(), workdir=tmp_path)
    check_backend(FakeBackend(with_nvml=False), workdir=tmp_path)
    with pytest.raises(ContractError, match="capabilities.power is declared but nvml"):
        check_backend(FakeBackend(with_nvml=False, capabilities=Capabilities(power=True)), workdir=tmp_path)
    with pytest.raises(ContractError, match="capabilities.precompile is declared but the backend has no"):
        check_backend(FakeBackend(capabilities=Capabilities(precompile=True)), workdir=tmp_path)
    undeclared = FakeBackend()
    undeclared.capabilities = {"graphs": True}
    with pytest.raises(ContractError, match="`capabilities` must be"):
        check_backend(undeclared, workdir=tmp_path)
