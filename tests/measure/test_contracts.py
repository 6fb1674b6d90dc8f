"""Declared contracts: every built-in suite and the fake backend pass the public conformance checks; a suite
plugged in through the ``kgpubench.suites`` entry points is registered, planned and collected by default."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import textwrap

import pytest

from kgpubench.errors import ContractError
from kgpubench.measure import suites as suites_mod
from kgpubench.measure.backends.fake import FakeBackend
from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.runner import CollectOptions, run_suite, select_cases
from kgpubench.measure.suite import SuiteBase, as_suite
from kgpubench.measure.timing import StopRule
from kgpubench.testing import check_backend, check_suite

BUILT_IN = ("regular", "power", "stencil", "npb")


@pytest.mark.slow
@pytest.mark.parametrize("name", BUILT_IN)
def test_every_built_in_suite_passes_check_suite(name):
    suite = suites_mod.load_suite(name)
    assert isinstance(suite, SuiteBase) and as_suite(suite) is suite
    counts = check_suite(suite)
    assert counts["quick"] == len(select_cases(suite, CollectOptions(quick=True)))
    assert counts["full"] == len(select_cases(suite, CollectOptions(quick=False)))
    assert suite.measures_itself is (name == "npb")


def test_the_fake_backend_passes_check_backend(tmp_path):
    backend = get_backend("fake")
    check_backend(backend, workdir=tmp_path)
    # 3 timed; 4 samples of 2; then the declared graphs: one capture and 2 samples of 2
    assert [name for name, *_ in backend.launches] == ["kgpubench_check"] * (3 + 4 * 2 + 1 + 2 * 2)


@pytest.mark.gpu
def test_the_cupy_backend_passes_check_backend(tmp_path):
    check_backend(get_backend("cupy"), workdir=tmp_path)


def test_check_backend_names_a_broken_part(tmp_path):
    class ShortTimes(FakeBackend):
        def time_launches(self, fn, count):
            return super().time_launches(fn, count)[:-1]

    with pytest.raises(ContractError, match="backend 'fake': time_launches\\(fn, 3\\) gave 2 times for 3 calls"):
        check_backend(ShortTimes(), workdir=tmp_path)

    class Grabby(FakeBackend):
        def classify(self, exc):
            return super().classify(MemoryError())

    with pytest.raises(ContractError, match="classify\\(\\) must return None"):
        check_backend(Grabby(), workdir=tmp_path)


def _toy_module(tmp_path, *, duplicate: bool = False) -> str:
    """A third-party suite module on sys.path, following the protocol only (no SuiteBase)."""
    (tmp_path / "toy.cu").write_text('extern "C" __global__ void toy_add(float* x, int n) {}\n')
    sizes = "(1024, 1024)" if duplicate else "(1024, 4096)"
    (tmp_path / "toy_suite.py").write_text(textwrap.dedent(f'''
        from pathlib import Path
        import numpy as np
        from kgpubench.measure.suite import Case, KernelSource

        class Prepared:
            def __init__(self, kernel, xp, n):
                self.kernel, self.n, self.x = kernel, n, xp.zeros(n, dtype="float32")
            def launch(self):
                self.kernel((self.n // 256, 1, 1), (256, 1, 1), (self.x, np.int32(self.n)))
            def poison(self):
                self.x[:] = np.nan
            def verify(self):
                return bool(np.all(self.x == 1.0)), ""
            def release(self):
                self.x = None

        class ToySuite:
            name = "toy"
            table = "kernels"
            collector_version = "0.1"

            def cases(self, *, quick, kernels=None):
                src = KernelSource(Path({str(tmp_path / "toy.cu")!r}), "toy_add")
                return [Case(key={{"suite": "toy", "kernel": "toy_add", "variant": "",
                                   "size_params": {{"n": n}}}},
                             columns={{"program": "toy", "bound": "memory", "n": float(n)}}, source=src,
                             grid=(n // 256, 1, 1), block=(256, 1, 1), sizes={{"n": n}})
                        for n in {sizes}[: 1 if quick else 2]]

            def prepare(self, case, kernel, xp, rng):
                return Prepared(kernel, xp, case.sizes["n"])

        SUITE = ToySuite()
    '''))
    sys.modules.pop("toy_suite", None)
    return "toy_suite:SUITE"


@pytest.fixture
def plugged(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    value = _toy_module(tmp_path)
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        if kw.get("group") == suites_mod.ENTRY_POINT_GROUP:
            return [importlib.metadata.EntryPoint(name="toy", value=value, group=suites_mod.ENTRY_POINT_GROUP)]
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    suites_mod.SUITES.reload()  # read the entry points again, now and after the test
    yield tmp_path
    suites_mod.SUITES.reload()


@pytest.mark.slow
def test_an_entry_point_suite_is_registered_checked_and_planned_by_default(plugged, capsys):
    assert suites_mod.available_suites() == [*BUILT_IN, "toy"]
    toy = suites_mod.load_suite("toy")
    assert type(toy).__name__ == "ToySuite" and not as_suite(toy).measures_itself
    assert check_suite(toy) == {"quick": 1, "full": 2}
    assert as_suite(toy).kernels() == ["toy_add"]  # the default: the kernels of the full plan
    from kgpubench.cli import app

    with pytest.raises(SystemExit) as stop:
        app(["collect", "--dry-run", "--json"])
    assert stop.value.code == 0
    plan = json.loads(capsys.readouterr().out)
    assert sorted(plan) == sorted([*BUILT_IN, "toy"])  # printed with sorted keys
    assert plan["toy"] == {"table": "kernels", "out": "kgpubench-shards/toy", "cases": 2, "kernels": {"toy_add": 2}}


def test_a_plugged_in_suite_runs_through_the_same_harness(plugged, tmp_path):
    def add_one(grid, block, args, smem):
        x, n = args
        x[:n] = 1.0

    backend = get_backend("fake", implementations={"toy_add": add_one}, time_ms=0.25)
    writer = ShardWriter(tmp_path / "out", "kernels")
    options = CollectOptions(quick=False, rule=StopRule(min_samples=3, min_gpu_ms=1.0, max_round=10))
    summary = run_suite(suites_mod.load_suite("toy"), backend, writer, options)
    writer.close()
    rows = list(ShardWriter(tmp_path / "out", "kernels").rows())
    assert summary.statuses == {"ok": 2} and summary.written == 2
    assert sorted(r["n"] for r in rows) == [1024.0, 4096.0] and {r["source"] for r in rows} == {"fake"}
    assert all(r["time_ms_median"] == pytest.approx(0.25) for r in rows)


def _self_measured_cases(tmp_path):
    from kgpubench.measure.suite import Case, KernelSource

    (tmp_path / "whole.cu").write_text('extern "C" __global__ void whole() {}\n')
    src = KernelSource(tmp_path / "whole.cu", "whole")

    def case(tag, block=256):
        return Case(key={"suite": "whole", "kernel": tag, "variant": "", "size_params": {"n": 1}},
                    columns={"program": "whole", "bound": "memory", "n": 1.0}, source=src, grid=(1, 1, 1),
                    block=(block, 1, 1), title=f"whole {tag}")
    # ok, too large a block for the device (never handed to measure), out of memory, a sticky error, never reached
    return [case("ok"), case("big", 2048), case("oom"), case("sticky"), case("after")]


class _Whole(SuiteBase):
    """A suite that measures its cases itself (as npb does), on the kernels table."""

    name, table, collector_version, measures_itself = "whole", "kernels", "3.1", True

    def __init__(self, cases):
        self._cases, self.seen, self.dropped = cases, [], 0

    def cases(self, *, quick, kernels=None, device=None):
        return list(self._cases)

    def measure(self, case, backend, how):
        from kgpubench.measure.backends.fake import FakeCudaError

        self.seen.append((case.label(), how.l2_policy, how.reference_mhz, how.rule.min_samples))
        tag = case.key["kernel"]
        if tag == "oom":
            raise MemoryError("no room")
        if tag == "sticky":
            raise FakeCudaError(700)
        from kgpubench.measure.outcome import CaseOutcome

        backend.clock.advance_ms(40.0)
        columns = {"time_ms_median": 4.0, "time_ms_min": 3.5, "time_ms_mean": 4.25, "repeats": 8,
                   "measurement_protocol": 2, "timing_method": "app", "launches_per_sample": 1,
                   "l2_policy": how.l2_policy}
        return CaseOutcome("ok", columns=columns, measured_ms=34.0, reasons_seen=0x40)

    def drop_caches(self):
        self.dropped += 1


def test_a_suite_that_measures_itself_gets_the_harness_rows(tmp_path):
    from kgpubench.measure.backends.base import ContextLostError
    from kgpubench.schema import TABLES

    suite = _Whole(_self_measured_cases(tmp_path))
    assert check_suite(suite)["full"] == 5
    backend = get_backend("fake")
    writer = ShardWriter(tmp_path / "out", "kernels")
    options = CollectOptions(l2_policy="flushed", clocks_locked=False, rule=StopRule(min_samples=7))
    with pytest.raises(ContextLostError, match="whole sticky: CUDA error 700: illegal address"):
        run_suite(suite, backend, writer, options)
    writer.close()
    # the device limit is the harness's: the 2048-thread case never reached measure; nothing after the sticky one
    assert [s[0] for s in suite.seen] == ["whole ok", "whole oom", "whole sticky"]
    # unlocked clocks: samples are held against the device's maximum SM clock (the fake's 1000 MHz)
    assert suite.seen[0][1:] == ("flushed", 1000.0, 7) and suite.dropped == 1  # caches dropped despite the raise
    rows = {r["kernel"]: r for r in ShardWriter(tmp_path / "out", "kernels").rows()}
    assert {k: r["status"] for k, r in rows.items()} == {"ok": "ok", "big": "infeasible", "oom": "infeasible",
                                                          "sticky": "launch_error"}
    ok = rows["ok"]
    assert (ok["time_ms_median"], ok["repeats"], ok["timing_method"], ok["l2_policy"]) == (4.0, 8, "app", "flushed")
    # the harness's columns: GPU, provenance with the suite's version, conditions, throttle from the suite's reasons
    assert ok["collector_version"] == "3.1" and ok["source"] == "fake" and ok["gpu_name"] == backend.device().name
    assert ok["clock_sm_mhz_before"] == 1500.0 and ok["throttled"] is True and ok["clocks_locked"] is False
    assert ok["row_id"] and ok["run_id"] and set(ok) <= set(TABLES["kernels"].column_names)
    assert "_measured_ms" not in ok and rows["oom"]["time_ms_median"] is None
    assert "out of memory" in rows["oom"]["status_detail"] and "2048 threads per block" in rows["big"]["status_detail"]
    # resume: the rows written are skipped, the sticky one too; the last case is measured now
    suite.seen.clear()
    writer = ShardWriter(tmp_path / "out", "kernels")
    summary = run_suite(suite, backend, writer, options)
    writer.close()
    assert [s[0] for s in suite.seen] == ["whole after"] and (summary.skipped, summary.written) == (4, 1)
    assert summary.measured_ms == 34.0 and summary.statuses == {"ok": 1}


def test_check_suite_refuses_two_cases_of_one_row(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _toy_module(tmp_path, duplicate=True)
    import toy_suite

    with pytest.raises(ContractError, match="suite 'toy': cases toy_add.* and toy_add.* are the same row"):
        check_suite(toy_suite.SUITE)
