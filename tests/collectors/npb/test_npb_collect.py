"""NPB collected by the harness's run loop (``run_suite``, as every suite) on the fake backend, with the kernels
emulated in NumPy: rows, resume, failures, ``--max-minutes`` and the one application per benchmark and class."""

import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from emulated import Emulator


def _collect(npb, backend, writer, *, benchmarks, classes=("S",), tpbs, kernels=None, runs=None, **options):
    from kgpubench.measure.runner import CollectOptions, run_suite

    driver = importlib.import_module(npb.__name__ + ".driver")
    rule = runs or driver.SweepRule()
    suite = npb.NpbSuite(classes, benchmarks=benchmarks, tpbs=tpbs, rule=rule)
    return run_suite(suite, backend, writer, CollectOptions(kernels=kernels, **options))


def _adapt(f):
    def impl(grid, block, args, shared_mem=0):
        f(grid, block, args)

    return impl


def _backend(npb, **kw):
    from kgpubench.measure.backends.fake import FakeBackend

    emu = Emulator(importlib.import_module(npb.__name__ + ".ref_mg"),
                   importlib.import_module(npb.__name__ + ".randlc")).kernels()
    impl = {k: _adapt(f) for k, f in emu.items()}
    return FakeBackend(implementations=impl, **kw)



@pytest.mark.slow
def test_cg_rows_resume_and_never_validate(npb, tmp_path):
    from kgpubench.measure.output import ShardWriter
    from kgpubench.store.validation import validate_table

    rule = importlib.import_module(npb.__name__ + ".driver").SweepRule(warmup=1, min_runs=2, min_total_ms=0)
    writer = ShardWriter(tmp_path / "npb", "npb")
    s = _collect(npb, _backend(npb), writer, benchmarks=["CG"], tpbs=[32, 1024], kernels=["kernel_three"],
                 runs=rule)
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
    again = _collect(npb, _backend(npb), writer, benchmarks=["CG"], tpbs=[32, 1024], kernels=["kernel_three"],
                     runs=rule)
    assert (again.written, again.skipped) == (0, 5)
    writer.close()
    # a fake backend's rows are never data: validation rejects their source
    table = writer.table.from_rows(writer.rows(), fill_row_id=False)
    bad = validate_table(table, "npb")
    assert bad and {v.column for v in bad} == {"source"}


def test_compile_error_becomes_rows(npb, tmp_path):
    from kgpubench.measure.output import ShardWriter

    writer = ShardWriter(tmp_path / "npb", "npb")
    s = _collect(npb, _backend(npb, compile_errors={"comm3"}), writer, benchmarks=["MG"], tpbs=[32],
                 kernels=["zero3"])
    assert s.statuses == {"compile_error": 4}
    assert all("fake compile error" in r["status_detail"] for r in writer.rows())


def _counting_apps(npb, monkeypatch, fail=None):
    """Count application setups per (benchmark, class); ``fail``: a benchmark whose setup runs out of memory."""
    apps = importlib.import_module(npb.__name__ + ".apps")
    setups = []
    for bench, cls in list(apps.APPS.items()):
        def make(cls=cls, bench=bench):
            class Counting(cls):
                def setup(self):
                    setups.append((bench, self.npb_class))
                    if bench == fail:
                        raise MemoryError("fake: no room for the class")
                    super().setup()
            return Counting
        monkeypatch.setitem(apps.APPS, bench, make())
    return setups


@pytest.mark.slow
def test_one_application_per_benchmark_and_class_and_failed_setup_not_retried(npb, tmp_path, monkeypatch):
    from kgpubench.measure.output import ShardWriter

    setups = _counting_apps(npb, monkeypatch, fail="MG")
    writer = ShardWriter(tmp_path / "npb", "npb")
    driver = importlib.import_module(npb.__name__ + ".driver")
    labels = []
    from kgpubench.measure.runner import CollectOptions, run_suite

    suite = npb.NpbSuite(("S",), benchmarks=["CG", "MG"], tpbs=[32],
                         rule=driver.SweepRule(warmup=0, min_runs=1, min_total_ms=0))
    s = run_suite(suite, _backend(npb), writer, CollectOptions(kernels=["kernel_three", "zero3"]),
                  progress=lambda done, total, label: labels.append(label))
    # CG: three run rows and kernel_three at 32 on one application; MG's setup fails once for its four rows
    assert setups == [("CG", "S"), ("MG", "S")]
    assert s.statuses == {"ok": 4, "infeasible": 4} and s.total == 8
    rows = list(writer.rows())
    mg = [r for r in rows if r["benchmark"] == "MG"]
    assert len(mg) == 4 and all("out of memory" in r["status_detail"] for r in mg)
    assert all(r["time_ms_median"] is None and r["clock_sm_mhz_before"] is None for r in mg)
    assert labels[0] == "CG.S run (default)" and labels[3] == "CG.S kernel_three tpb=32"
    assert suite._state.app is None and suite._state.group is None  # dropped after the suite


@pytest.mark.slow
def test_max_minutes_and_a_sticky_error_stop_npb_like_any_suite(npb, tmp_path, monkeypatch):
    import itertools

    from kgpubench.measure.backends.base import ContextLostError
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, collect_suite

    driver = importlib.import_module(npb.__name__ + ".driver")
    suite = npb.NpbSuite(("S",), benchmarks=["CG"], tpbs=[32, 64],
                         rule=driver.SweepRule(warmup=0, min_runs=1, min_total_ms=0))
    ticks = itertools.count()
    writer = ShardWriter(tmp_path / "npb", "npb")
    s = collect_suite(suite, _backend(npb), writer, CollectOptions(kernels=["kernel_three"], max_minutes=2.5),
                      clock=lambda: next(ticks) * 60.0)  # one minute per look at the clock
    assert s.stopped_early and s.written == 2 and [r["assignment"] for r in writer.rows()] == ["default", "max"]
    # an illegal address in the warp run: its row is written, then the collection stops
    backend = _backend(npb, launch_errors={"kernel_one": 700})
    with pytest.raises(ContextLostError, match=r"CG.S run \(warp\): CUDA error 700"):
        collect_suite(suite, backend, writer, CollectOptions(kernels=["kernel_three"]))
    rows = {r["assignment"]: r for r in writer.rows()}
    assert set(rows) == {"default", "max", "warp"} and rows["warp"]["status"] == "launch_error"


def test_plan_items_follow_from_their_row_keys(npb):
    driver = importlib.import_module(npb.__name__ + ".driver")
    spec = importlib.import_module(npb.__name__ + ".spec")
    items = [it for b in spec.BENCHMARKS for it in driver.plan(b, "S")]
    assert len(items) == 4 * 3 + sum(len(spec.kernel_names(b)) for b in spec.BENCHMARKS) * len(spec.TPB_CHOICES)
    assert all(driver.plan_item(it.key) == it for it in items)
    cg = {(it.key["assignment"], it.key["kernel"], it.key["tpb"]): it.assignment for it in driver.plan("CG", "S")}
    assert set(cg[("warp", "app", 32)].values()) == {32} and set(cg[("max", "app", 1024)].values()) == {1024}
    one = cg[("one-kernel", "kernel_three", 128)]
    assert one["kernel_three"] == 128 and {k: v for k, v in one.items() if k != "kernel_three"} == \
        {k: v for k, v in spec.default_tpb("CG").items() if k != "kernel_three"}


@pytest.mark.slow
def test_a_run_row_after_a_kernel_row_of_its_assignment_gets_its_own_runs(npb, tmp_path):
    """A repeat may measure a kernel row (one run) before the run row of the same assignment (three runs)."""
    from kgpubench.measure.output import ShardWriter
    from kgpubench.measure.runner import CollectOptions, run_suite

    driver = importlib.import_module(npb.__name__ + ".driver")
    spec = importlib.import_module(npb.__name__ + ".spec")
    default_k3 = spec.default_tpb("CG")["kernel_three"]

    class KernelFirst(npb.NpbSuite):
        def cases(self, **kw):
            return sorted(super().cases(**kw), key=lambda c: c.key["row_kind"])  # kernel rows first

    suite = KernelFirst(("S",), benchmarks=["CG"], tpbs=[default_k3],
                        rule=driver.SweepRule(warmup=0, min_runs=3, min_total_ms=0))
    writer = ShardWriter(tmp_path / "npb", "npb")
    run_suite(suite, _backend(npb), writer, CollectOptions(kernels=["kernel_three"]))
    rows = {(r["row_kind"], r["assignment"]): r for r in writer.rows()}
    assert rows[("kernel", "one-kernel")]["runs"] == 1 and rows[("run", "default")]["runs"] == 3


def test_npb_measure_gives_the_harness_a_case_outcome(npb):
    """What crosses from the suite to the run loop is a typed CaseOutcome: the row's columns, and the GPU time and
    throttle reasons in their own fields (no ``_measured_ms`` / ``_reasons_seen`` keys)."""
    from kgpubench.measure.outcome import CaseOutcome
    from kgpubench.measure.settings import CaseSettings

    rule = importlib.import_module(npb.__name__ + ".driver").SweepRule(warmup=1, min_runs=2, min_total_ms=0)
    suite = npb.NpbSuite(("S",), benchmarks=["CG"], tpbs=[32], rule=rule)
    case = next(c for c in suite.cases(kernels=["kernel_three"]) if c.key["row_kind"] == "kernel")
    out = suite.measure(case, _backend(npb), CaseSettings())
    suite.drop_caches()
    assert isinstance(out, CaseOutcome) and out.ok and out.measured_ms > 0
    assert not any(k.startswith("_") for k in out.row_columns())
    assert out.columns["time_ms_median"] > 0 and out.columns["tpb"] == 32
