"""npb-tpb: the default run's remainder, the default TPB per kernel and the measurement oracle, by hand.

The crafted MG problem (task_fixtures.CRAFTED_TIMES), GPU A, times per call in ms x calls per run:
psinv 100 x {128: 2.0, 512: 1.5, 1024: 1.8}, resid 100 x {128: 1.2, 512: 1.0, 1024: 0.9},
zero3 10 x {128: 0.5, 512: 0.4, 1024: 0.6}; defaults psinv 1024, resid 512, zero3 128; default run remainder
0.2 s, kernel rows' remainder 0.3 s. Default app time = 0.2 + (180 + 100 + 5) / 1000 = 0.485 s; best =
0.2 + (150 + 90 + 4) / 1000 = 0.444 s.
"""

import numpy as np
import pytest
from task_fixtures import npb_crafted_table, npb_run_row

from kgpubench.schema import get_table
from kgpubench.tasks import get_task, task_rows
from kgpubench.tasks.npb import (
    DEFAULT_REMAINDER,
    NPB_GPU_DEFAULT_TPB,
    MeasurementError,
    assignment_scores,
    npb_problems,
    problem_remainder_s,
)
from kgpubench.tasks.scoring import score_fold, with_scoring_columns

TASK = get_task("npb-tpb")


def _rows(table):
    rows = with_scoring_columns(TASK, table, task_rows(TASK, table))
    return rows, np.asarray(rows["time_ms_mean"].to_pylist(), dtype=float)


def _gpu_a(rows, y):
    keep = np.asarray([g == "GPU A" for g in rows["gpu_name"].to_pylist()])
    return rows.filter(keep), y[keep]


def test_default_tpb_table_mirrors_the_collector_spec():
    from collectors.npb import spec

    assert NPB_GPU_DEFAULT_TPB == {b: spec.default_tpb(b) for b in spec.BENCHMARKS}
    assert NPB_GPU_DEFAULT_TPB["CG"]["kernel_three"] == 64 and NPB_GPU_DEFAULT_TPB["MG"]["zero3"] == 128


def test_remainder_is_the_default_runs_not_the_kernel_rows():
    rows, y = _rows(npb_crafted_table())
    assert rows[DEFAULT_REMAINDER].to_pylist() == [0.2] * 9 + [0.4] * 9
    a_rows, a_y = _gpu_a(rows, y)
    assert problem_remainder_s(a_rows, np.arange(9)) == 0.2
    # Max (every kernel at 1024): 0.2 + (180 + 90 + 6) / 1000 = 0.476 s against the best 0.444 s
    s = score_fold(TASK, a_rows, a_y, -np.asarray(a_rows["tpb"].to_pylist(), float), predicts_target=False)
    assert s["app_time_ratio"] == pytest.approx(0.476 / 0.444)
    # with no default run row the kernel rows' median (0.3 s) is the fallback: 0.576 / 0.544
    b_rows, b_y = _gpu_a(*_rows(npb_crafted_table(run_rows=False)))
    assert b_rows[DEFAULT_REMAINDER].to_pylist() == [None] * 9
    s = score_fold(TASK, b_rows, b_y, -np.asarray(b_rows["tpb"].to_pylist(), float), predicts_target=False)
    assert s["app_time_ratio"] == pytest.approx(0.576 / 0.544)


def test_remainder_follows_the_drivers_run_row():
    """The npb driver's default run row (remainder = mean app time - replayed kernel time per run) is what counts."""
    from collectors.npb.driver import RunMeasurement, run_row
    from kgpubench.measure.timing import TimingResult, summarize

    meas = RunMeasurement(assignment={"psinv": 1024, "resid": 512, "zero3": 128}, app_ms=[500.0, 520.0],
                          calls_per_run={"psinv": 100, "resid": 100, "zero3": 10}, verified=True)
    kernels = TimingResult(stats=summarize([300.0, 310.0]), method="graph", launches=1, rse=0.01, cap_hit=False,
                           dropped=0, gpu_ms=610.0)
    row = run_row("MG", "B", "default", meas, kernels)
    assert row["remainder_s"] == pytest.approx((510.0 - 305.0) / 1000)
    kernel_rows = [r for r in npb_crafted_table(run_rows=False).to_pylist() if r["gpu_name"] == "GPU A"]
    run = npb_run_row("GPU A", "MG", "B", meas.assignment, row["remainder_s"])
    table = get_table("npb").from_rows(kernel_rows + [run])
    rows, _ = _rows(table)
    assert rows[DEFAULT_REMAINDER].to_pylist() == pytest.approx([0.205] * 9)


def test_oracle_measures_assignments_and_counts_distinct_ones():
    rows, y = _gpu_a(*_rows(npb_crafted_table()))
    (problem,) = npb_problems(TASK, rows, y)
    assert problem.kernels == ("psinv", "resid", "zero3")
    assert problem.default == {"psinv": 1024, "resid": 512, "zero3": 128}
    assert problem.choices["zero3"] == (128, 512, 1024)
    base = problem.measure()
    assert base.app_time_s == pytest.approx(0.485)
    assert base.kernel_time_s == pytest.approx({"psinv": 0.18, "resid": 0.1, "zero3": 0.005})
    assert base.share("psinv") == pytest.approx(0.18 / 0.485)
    assert problem.measure({"psinv": 512}).app_time_s == pytest.approx(0.2 + (150 + 100 + 5) / 1000)
    problem.measure({"psinv": 1024})  # the default again: no new measurement
    problem.measure({"psinv": 512, "zero3": 128})  # same full assignment as {"psinv": 512}
    assert problem.measurements == 2
    with pytest.raises(MeasurementError, match="psinv@256"):
        problem.measure({"psinv": 256})
    with pytest.raises(MeasurementError, match="no kernel 'comm3'"):
        problem.measure({"comm3": 32})
    scores = assignment_scores([problem], [{"resid": 1024}], rows.num_rows)
    chosen = {(k, t) for k, t, s in zip(rows["kernel"].to_pylist(), rows["tpb"].to_pylist(), scores) if s == 0}
    assert chosen == {("psinv", 1024), ("resid", 1024), ("zero3", 128)}


def test_oracle_time_equals_the_scored_time():
    rows, y = _gpu_a(*_rows(npb_crafted_table()))
    (problem,) = npb_problems(TASK, rows, y)
    pick = {"psinv": 128, "resid": 1024, "zero3": 512}
    scores = assignment_scores([problem], [pick], rows.num_rows)
    s = score_fold(TASK, rows, y, scores, predicts_target=False)
    assert s["app_time_ratio"] * 0.444 == pytest.approx(problem.measure(pick).app_time_s)
    assert problem.measure(pick).app_time_s == pytest.approx(0.2 + (200 + 90 + 4) / 1000)


def test_default_tpb_comes_from_the_default_run_else_the_npb_gpu_table():
    kernels = [r for r in npb_crafted_table(run_rows=False).to_pylist() if r["gpu_name"] == "GPU A"]
    run = npb_run_row("GPU A", "MG", "B", {"psinv": 1024, "resid": 512, "zero3": 512}, 0.2)
    rows, y = _rows(get_table("npb").from_rows(kernels + [run]))
    assert npb_problems(TASK, rows, y)[0].default["zero3"] == 512  # what the default run ran
    rows, y = _rows(get_table("npb").from_rows(kernels))
    assert npb_problems(TASK, rows, y)[0].default == {"psinv": 1024, "resid": 512, "zero3": 128}  # NPB-GPU's
    odd = get_table("npb").from_rows([{**r, "kernel": "mystery"} for r in kernels if r["kernel"] == "zero3"])
    rows, y = _rows(odd)
    with pytest.raises(MeasurementError, match="'mystery' has no default threads per block"):
        npb_problems(TASK, rows, y)


def test_the_sandbox_rebuilds_a_problem_from_its_description_and_measures_through_the_parent():
    """What the child gets (the JSON of ``describe()``) holds no time; its ``measure`` asks the real problem."""
    import json

    from kgpubench.tasks.scoring import ORACLES, REMOTE_ORACLES, remote_oracle_of

    assert set(REMOTE_ORACLES) == set(ORACLES)
    rows, y = _gpu_a(*_rows(npb_crafted_table()))
    (real,) = npb_problems(TASK, rows, y)
    wire = json.loads(json.dumps(real.describe()))
    assert "time" not in json.dumps(wire) and wire["default"] == {"psinv": 1024, "resid": 512, "zero3": 128}
    asked = []

    def ask(assignment):
        asked.append(assignment)
        return json.loads(json.dumps(real.measure(assignment).to_wire()))

    remote = remote_oracle_of(TASK)(wire, ask)
    assert isinstance(remote, type(real)) and remote.kernels == real.kernels and remote.rows == real.rows
    assert (remote.choices, remote.default) == (real.choices, real.default)
    assert remote.measure({"psinv": 512}).app_time_s == pytest.approx(0.2 + (150 + 100 + 5) / 1000)
    assert remote.measure({"psinv": 512, "zero3": 128}).kernel_time_s == pytest.approx(
        {"psinv": 0.15, "resid": 0.1, "zero3": 0.005})  # the same full assignment: asked once
    assert asked == [{"psinv": 512, "resid": 512, "zero3": 128}] and remote.measurements == real.measurements == 1
    with pytest.raises(MeasurementError, match="no kernel 'comm3'"):  # refused in the child, nothing asked
        remote.measure({"comm3": 32})
    assert len(asked) == 1
