"""The GPU apps' host logic (buffers, launch arguments, call order, host reductions) run on the CPU over a
NumPy emulation of our kernels, and must reproduce the official class S values through the same code path
the GPU takes. The CUDA kernels themselves are checked on a GPU (``@pytest.mark.gpu``)."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from emulated import Emulator


@pytest.fixture(scope="module")
def mods(npb):
    return {m: importlib.import_module(f"{npb.__name__}.{m}")
            for m in ("apps", "driver", "launcher", "ref_mg", "randlc", "spec")}



def _run(mods, bench, assignment=None):
    spec, apps = mods["spec"], mods["apps"]
    tpb = {**spec.default_tpb(bench), **(assignment or {})}
    app = apps.APPS[bench]("S", np)
    app.setup()
    kernels = Emulator(mods["ref_mg"], mods["randlc"]).kernels()
    meas = mods["driver"].measure_assignment(app, kernels, tpb, sync=lambda: None,
                                             rule=mods["driver"].SweepRule(warmup=1, min_runs=1, min_total_ms=0))
    return meas


@pytest.mark.slow
@pytest.mark.parametrize("bench", ["CG", "MG", "FT"])
def test_app_flow_reproduces_official_class_s_values(mods, bench):
    meas = _run(mods, bench)
    assert meas.status == "ok" and meas.verified, meas.detail
    assert meas.runs == 1 and meas.error < {"CG": 1e-10, "MG": 1e-8, "FT": 1e-12}[bench]


def test_cg_calls_per_run(mods):
    meas = _run(mods, "CG", {"kernel_three": 1024, "kernel_two": 32})
    # 15 outer iterations x 25 CG steps; two, eight..eleven once per outer iteration
    assert meas.calls_per_run["kernel_three"] == 375 and meas.calls_per_run["kernel_six"] == 375
    assert meas.calls_per_run["kernel_two"] == 15 and meas.calls_per_run["kernel_eleven"] == 15
    assert sum(meas.calls_per_run.values()) == 15 * (1 + 1 + 5 * 25 + 4)
    # the last run's calls are recorded in order, and a replay launches exactly those of one kernel again
    recorded = meas.launcher.recorded
    assert len(recorded) == 15 * (1 + 1 + 5 * 25 + 4) and recorded[0][0] == "kernel_one"
    three = [c for c in recorded if c[0] == "kernel_three"]
    assert len(three) == 375 and {c[2] for c in three} == {(1024, 1, 1)}
    launched = []
    meas.launcher.kernels = {name: (lambda g, b, a, name=name: launched.append((name, g, b)))
                             for name in meas.launcher.kernels}
    meas.launcher.replay("kernel_three")()
    assert launched == [(n, g, b) for n, g, b, _ in three]
    assert meas.launcher.replay("no_such_kernel") is None


def test_mg_calls_per_run(mods):
    meas = _run(mods, "MG")
    c = meas.calls_per_run
    # class S: 5 levels, 4 V-cycles; resid: 1 + 4 x (3 intermediate levels + 1 finest + 1 after) ...
    assert c["resid"] == 1 + 4 * (3 + 1 + 1)
    assert c["psinv"] == 4 * 5 and c["rprj3"] == 4 * 4 and c["interp"] == 4 * 4 and c["zero3"] == 4 * 4
    assert c["norm2u3"] == 2 and c["comm3"] == 3 * (c["resid"] + c["psinv"] + c["rprj3"])


@pytest.mark.slow
def test_ft_calls_per_run(mods):
    c = _run(mods, "FT").calls_per_run
    assert c["fftx_2"] == 7 and c["fftz_3"] == 7 and c["evolve"] == 6 and c["checksum"] == 6
    assert c["init_ui"] == c["compute_indexmap"] == c["compute_initial_conditions"] == 1


@pytest.mark.slow
def test_ep_app_flow(mods):
    meas = _run(mods, "EP", {"ep": 256})
    assert meas.verified and meas.calls_per_run == {"ep": 1}


def test_wrong_result_is_verification_failed(mods):
    spec, apps = mods["spec"], mods["apps"]
    app = apps.APPS["CG"]("S", np)
    app.setup()
    kernels = Emulator(mods["ref_mg"], mods["randlc"]).kernels()
    good = kernels["kernel_eleven"]  # a 1 % error in the normalisation of x moves zeta
    kernels["kernel_eleven"] = lambda g, b, args: good(g, b, (args[0], args[1] * 1.01, *args[2:]))
    meas = mods["driver"].measure_assignment(app, kernels, spec.default_tpb("CG"), sync=lambda: None)
    assert meas.status == "verification_failed" and not meas.verified and meas.runs == 0
    row = mods["driver"].kernel_row("CG", "S", "kernel_eleven", 512, meas)
    assert row["status"] == "verification_failed" and "time_ms_median" not in row


def test_rows_and_additivity_fields(mods):
    from kgpubench.measure.timing import TimingResult, summarize

    d = mods["driver"]
    meas = d.RunMeasurement(assignment={"a": 32, "b": 64}, app_ms=[10.0, 12.0, 14.0], calls_per_run={"a": 2, "b": 1},
                            values=[1.0], verified=True, error=0.0)

    def timing(per_unit, launches):
        return TimingResult(stats=summarize(per_unit), method="graph", launches=launches, rse=0.001,
                            cap_hit=False, dropped=0, gpu_ms=1.0)

    # kernel a: replays of its 2 calls per run give 1.5 ms per call (4 replays per sample)
    k = d.kernel_row("CG", "S", "a", 32, meas, timing([1.4, 1.5, 1.6], 4))
    assert k["time_ms_median"] == 1.5 and k["repeats"] == 3 and k["calls_per_run"] == 2
    assert k["launches_per_sample"] == 8 and k["timing_method"] == "graph" and k["measurement_protocol"] == 2
    assert k["kernel_time_s"] == pytest.approx(0.003) and k["app_time_s"] == pytest.approx(0.012)
    assert k.get("remainder_s") is None
    # the run row: all 3 calls of a run replayed take 6 ms; the runs take 10, 12, 14 ms
    r = d.run_row("CG", "S", "warp", meas, timing([6.0, 6.0, 6.0], 1))
    assert r["tpb"] == 32 and r["kernel"] == "app" and r["calls_per_run"] == 3 and r["repeats"] == 3
    assert r["timing_method"] == "app" and r["kernel_time_s"] == pytest.approx(0.006)
    assert r["remainder_s"] == pytest.approx(0.006)  # mean app 12 ms - kernels 6 ms
    # offline additivity: calls x mean per call + remainder = the measured mean app time (b: 3 ms per call)
    pred = 2 * 1.5 + 1 * 3.0 + r["remainder_s"] * 1e3
    assert pred == pytest.approx(12.0)
    assert d.kernel_row("CG", "S", "c", 32, meas)["status"] == "infeasible"  # never called in this class


def test_plan_counts(mods):
    items = mods["driver"].plan("MG", "S")
    assert len(items) == 3 + 7 * 6
    assert items[0].key["assignment"] == "default" and items[1].assignment["psinv"] == 1024
    one = next(i for i in items if i.key["kernel"] == "zero3" and i.key["tpb"] == 64)
    assert one.assignment["zero3"] == 64 and one.assignment["resid"] == 512
