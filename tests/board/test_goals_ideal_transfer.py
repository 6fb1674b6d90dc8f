"""The gemm-latency next-generation goal as issue 43 words it: below the ideal single-factor transfer on every Blackwell
GPU (kgpubench.tasks.roofline.ideal_single_factor_transfer, kgpubench.board.fewshot.ideal_transfer, judge).

The reference is recomputed here from the shipped rows with plain pandas merges on the workload's columns, not
through the library's workload keys."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kgpubench.board.baselines import SEES
from kgpubench.board.fewshot import ideal_transfer, judge, newest_generation
from kgpubench.tasks import Goal, get_task, goals_of, list_tasks
from kgpubench.tasks.data import task_data
from kgpubench.tasks.extras import goals
from kgpubench.tasks.goals import IDEAL_TRANSFER
from kgpubench.tasks.roofline import SINGLE_FACTORS, ideal_single_factor_transfer

ROOT = Path(__file__).resolve().parents[2]
GOALS_FILE = ROOT / "leaderboard" / "results" / "gemm-latency" / "goals.json"
WORKLOAD = ["framework", "kernel_source", "dtype", "compute_dtype", "m", "n", "k"]
GPU_FIGURES = ["peak_tensor_tflops", "gpu_memory_bandwidth_gbs", "gpu_peak_fp32_gflops", "gpu_sm_count",
               "gpu_clock_sm_mhz"]
B200 = "NVIDIA B200"
GB200 = "NVIDIA GB200"


@pytest.fixture(scope="module")
def shipped():
    """gemm-latency's rows under next-generation in the shipped data, and the library's ideal transfer of them."""
    data = task_data(get_task("gemm-latency"), "next-generation", ROOT / "kgpubench" / "data")
    return data, ideal_transfer(data)


def _by_hand(frame: pd.DataFrame, target: str, source: str, factor: str) -> tuple[float, int]:
    """The median APE (percent) and the covered rows of one source and factor, by a pandas merge."""
    fig = {"tensor_peak": frame["peak_tensor_tflops"], "memory_bandwidth": frame["gpu_memory_bandwidth_gbs"],
           "fp32_peak": frame["gpu_peak_fp32_gflops"],
           "sm_count_x_clock": frame["gpu_sm_count"] * frame["gpu_clock_sm_mhz"]}[factor]
    frame = frame.assign(fig=fig)
    tgt = frame[(frame.gpu_name == target) & (frame.fold == "test")]
    src = frame[frame.gpu_name == source]
    both = tgt.merge(src[[*WORKLOAD, "time_ms", "fig"]], on=WORKLOAD, suffixes=("", "_src"))
    both = both[(both.fig > 0) & (both.fig_src > 0)]
    pred = both.time_ms_src * both.fig_src / both.fig
    return float(np.median(100 * np.abs(pred - both.time_ms) / both.time_ms)), len(both)


@pytest.mark.slow
def test_the_ideal_transfer_to_b200_is_the_best_single_factor_recomputed_from_the_shipped_rows(shipped):
    data, ideal = shipped
    frame = data.rows.select(["gpu_name", "time_ms", *WORKLOAD, *GPU_FIGURES]).to_pandas().assign(fold=data.folds)
    # the newest training generation: the Hopper GPUs (compute capability 9.0), never a Blackwell one
    assert newest_generation(data.rows, data.folds == "train") == ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
    hand = {(s, f): _by_hand(frame, B200, s, f) for s in ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
            for f in SINGLE_FACTORS}
    (source, factor), (figure, covered) = min(hand.items(), key=lambda kv: kv[1][0])
    ref = ideal[B200]
    assert (ref.source, ref.factor) == (source, factor)
    assert ref.mdape == pytest.approx(figure, rel=1e-12)
    assert ref.covered.size == covered and ref.rows == int(((frame.gpu_name == B200) & (frame.fold == "test")).sum())
    assert 0 < covered < ref.rows  # nvfp4 has no Hopper source: rows left out, counted
    assert ref.candidates == {k: pytest.approx(v[0], rel=1e-12) for k, v in hand.items()}
    # the covered rows are B200's test rows with a same-workload Hopper row
    assert set(np.asarray(data.rows["gpu_name"].to_pylist(), dtype=object)[ref.covered]) == {B200}
    assert set(data.folds[ref.covered]) == {"test"}


@pytest.mark.slow
def test_the_committed_goal_line_is_the_librarys_reference_and_the_rule(shipped):
    _, ideal = shipped
    doc = json.loads(GOALS_FILE.read_text())
    (rec,) = [g for g in doc["goals"] if g.get("beats") == IDEAL_TRANSFER]
    assert set(rec["baseline_figures"]) == set(ideal) == {"NVIDIA B200", "NVIDIA GB200",
                                                          "NVIDIA RTX PRO 6000 Blackwell Server Edition"}
    for gpu, ref in ideal.items():
        assert rec["baseline_figures"][gpu] == pytest.approx(ref.mdape, rel=1e-9)
        assert rec["reference"][gpu]["source"] == ref.source and rec["reference"][gpu]["factor"] == ref.factor
        assert rec["reference"][gpu]["covered_rows"] == ref.covered.size
    # met exactly when the best model is below the reference on every GPU; the reference is never the best
    assert rec["best_model"] != IDEAL_TRANSFER and IDEAL_TRANSFER in rec["per_model"]
    below = [g for g, v in rec["figures"].items() if v < rec["baseline_figures"][g]]
    assert rec["met"] == (len(below) == 3)
    assert any(rec["met"] == all(v < rec["baseline_figures"][g] for g, v in figs.items())
               for m, figs in rec["per_model"].items() if m == rec["best_model"])
    # the board shows it, each GPU's best-model figure beside the reference's; docs/FEWSHOT.md quotes them
    board = (ROOT / "leaderboard" / "README.md").read_text()
    fewshot_doc = " ".join((ROOT / "docs" / "FEWSHOT.md").read_text().split())
    for gpu, v in rec["figures"].items():
        assert f"{gpu} {v:.1f} ({IDEAL_TRANSFER} {rec['baseline_figures'][gpu]:.1f}: " in board
        ref = ideal[gpu]
        assert f"{ref.mdape:.1f} % ({ref.covered.size:,} of {ref.rows:,}" in fewshot_doc, gpu
        assert f"({v:.1f})" in fewshot_doc, gpu
    assert f"The best model, {rec['best_model']}, is below it" in fewshot_doc


def _frame(times: dict[str, dict[str, float]], figures: dict[str, dict[str, float]]):
    """A feature frame of GPUs x workloads (column ``m``), with catalogue figures per GPU."""
    rows = [{"m": w, "gpu": g, "time": t, **figures[g]} for g, per in times.items() for w, t in per.items()]
    df = pd.DataFrame(rows)
    return df.drop(columns=["gpu", "time"]), df["time"].to_numpy(float), df["gpu"].to_numpy(dtype=object)


FIGS = {"S1": {"peak_tensor_tflops": 100.0, "gpu_memory_bandwidth_gbs": 1000.0},
        "S2": {"peak_tensor_tflops": 400.0, "gpu_memory_bandwidth_gbs": 1000.0},
        "T": {"peak_tensor_tflops": 200.0, "gpu_memory_bandwidth_gbs": 4000.0}}


def test_the_ideal_transfer_picks_with_the_test_labels_and_counts_the_rows_it_cannot_cover():
    src = {"w1": 8.0, "w2": 4.0, "w3": 2.0}
    # T's times are S1's moved by bandwidth (x 1000 / 4000); w4 has no source row
    X, y, gpu = _frame({"S1": src, "S2": src, "T": {"w1": 2.0, "w2": 1.0, "w4": 5.0}}, FIGS)
    test = gpu == "T"
    (ref,) = ideal_single_factor_transfer(X, y, gpu, test, ("S1", "S2")).values()
    assert (ref.source, ref.factor, ref.mdape, ref.covered.size, ref.rows) == ("S1", "memory_bandwidth", 0.0, 2, 3)
    # S1 by tensor peak predicts 8 * 100 / 200 = 4 for a label of 2: APE 100 %; S2 by tensor peak 16, 8: 700 %
    assert ref.candidates[("S1", "tensor_peak")] == pytest.approx(100.0)
    assert ref.candidates[("S2", "tensor_peak")] == pytest.approx(700.0)
    assert "fp32_peak" not in {f for _, f in ref.candidates}  # no figure: no candidate
    # other test labels (S2 moved by tensor peak: x 400 / 200), another choice: chosen in hindsight
    X, y, gpu = _frame({"S1": src, "S2": src, "T": {"w1": 16.0, "w2": 8.0, "w4": 5.0}}, FIGS)
    (ref,) = ideal_single_factor_transfer(X, y, gpu, gpu == "T", ("S1", "S2")).values()
    assert (ref.source, ref.factor, ref.mdape) == ("S2", "tensor_peak", 0.0)


def test_a_gpu_without_any_source_has_no_reference_and_the_goal_is_not_met_there():
    X, y, gpu = _frame({"S1": {"w1": 1.0}, "T": {"w9": 1.0}}, FIGS)
    (ref,) = ideal_single_factor_transfer(X, y, gpu, gpu == "T", ("S1",)).values()
    assert (ref.source, ref.mdape, ref.covered.size, ref.rows) == (None, None, 0, 1)
    goal = Goal("below", "next-generation", None, source="predict", beats=IDEAL_TRANSFER)
    assert judge(goal, {IDEAL_TRANSFER: {}, "m": {"T": 1.0}})["met"] is False


@pytest.mark.parametrize(("model", "met", "losses"), [
    ({"A": 9.0, "B": 19.0}, True, []),       # below on both groups
    ({"A": 9.0, "B": 21.0}, False, ["B"]),   # below on one only
    ({"A": 10.0, "B": 19.0}, False, ["A"]),  # a tie is not below
])
def test_the_goal_is_met_exactly_when_the_best_model_is_below_the_reference_on_every_group(model, met, losses):
    goal = Goal("below the ideal transfer", "next-generation", None, source="predict", beats=IDEAL_TRANSFER)
    reference = {"A": 10.0, "B": 20.0}
    rec = judge(goal, {IDEAL_TRANSFER: reference, "m": model, "worse": {"A": 50.0, "B": 50.0}})
    assert (rec["best_model"], rec["met"], rec["losses"]) == ("m", met, losses)
    assert rec["baseline_figures"] == reference and rec["groups_met"] == 2 - len(losses)
    # the reference is never a candidate, even when nothing is below it
    rec = judge(goal, {IDEAL_TRANSFER: {"A": 1.0, "B": 1.0}, "m": model})
    assert rec["best_model"] == "m" and rec["met"] is False


def test_a_model_that_wins_on_more_groups_is_the_best_even_with_a_worse_worst_figure():
    goal = Goal("below", "next-generation", None, source="predict", beats=IDEAL_TRANSFER)
    rec = judge(goal, {IDEAL_TRANSFER: {"A": 10.0, "B": 20.0}, "wins_both": {"A": 9.0, "B": 19.5},
                       "small_worst": {"A": 11.0, "B": 11.0}})
    assert rec["best_model"] == "wins_both" and rec["met"] is True


def test_the_goal_line_shows_each_groups_figure_beside_the_reference_and_its_choice():
    goal = Goal("below the ideal transfer", "next-generation", None, source="predict", beats=IDEAL_TRANSFER,
                scaling="w")
    rec = judge(goal, {IDEAL_TRANSFER: {"A": 10.0, "B": 20.0}, "w": {"A": 9.0, "B": 21.0}})
    rec["reference"] = {"A": {"source": "H200", "factor": "memory_bandwidth", "covered_rows": 1500, "rows": 2000},
                        "B": {"source": "H100", "factor": "tensor_peak", "covered_rows": 5, "rows": 9}}
    table = goals({"goals": [rec], "note": ""})
    row = dict(zip(table.header, table.rows[0]))
    assert row["target"] == "below ideal_transfer on each of 2"
    assert row[table.header[3]] == ("below ideal_transfer on 1 of 2; A 9.0 (ideal_transfer 10.0: H200 x memory "
                                    "bandwidth, 1,500 of 2,000 rows), B 21.0 (ideal_transfer 20.0: H100 x tensor "
                                    "peak, 5 of 9 rows)")
    assert row["scaling-aware model"] == "w: median 15.0, below ideal_transfer on 1 of 2"
    assert row["met"] == "not met"


def test_the_reference_is_never_offered_as_a_model():
    assert not (ROOT / "baselines" / f"{IDEAL_TRANSFER}.py").exists() and IDEAL_TRANSFER not in SEES
    for path in [*(ROOT / "baselines").glob("*.py"), ROOT / "kgpubench" / "board" / "predict.py"]:
        text = path.read_text()
        assert "ideal_single_factor_transfer" not in text and "ideal_transfer" not in text, path
    # predict reads a goal with a target, never the reference's
    (goal,) = [g for g in goals_of("gemm-latency") if g.beats == IDEAL_TRANSFER]
    assert goal.target_pct is None and goal.source == "predict" and goal.scheme == "next-generation"
    assert sum(g.beats == IDEAL_TRANSFER for t in list_tasks() for g in t.goals) == 1


@pytest.mark.slow
def test_with_gb200s_cited_bandwidth_the_reference_on_gb200_and_the_goal_is_met(shipped):
    """Data 0.14.0 gives every GB200 row NVIDIA's 8 TB/s (kgpubench/vendor_figures.csv): the reference may now carry a
    Hopper time to GB200 by the bandwidth as well as by the tensor peak (recomputed here by hand; the figures no NVIDIA
    document gives stay null, so those factors are not candidates), and the committed goal is met with no 'why'."""
    data, ideal = shipped
    frame = data.rows.select(["gpu_name", "time_ms", *WORKLOAD, *GPU_FIGURES]).to_pandas().assign(fold=data.folds)
    gb200 = frame[frame.gpu_name == GB200]
    assert len(gb200) and (gb200.gpu_memory_bandwidth_gbs == 8000.0).all() and gb200.peak_tensor_tflops.notna().all()
    assert gb200[["gpu_peak_fp32_gflops", "gpu_sm_count", "gpu_clock_sm_mhz"]].isna().all().all()
    hand = {(s, f): _by_hand(frame, GB200, s, f) for s in ("NVIDIA H100 80GB HBM3", "NVIDIA H200")
            for f in ("tensor_peak", "memory_bandwidth")}
    (source, factor), (figure, covered) = min(hand.items(), key=lambda kv: kv[1][0])
    ref = ideal[GB200]
    assert (ref.source, ref.factor) == (source, factor) and factor == "memory_bandwidth"
    assert ref.mdape == pytest.approx(figure, rel=1e-12) and ref.covered.size == covered
    assert ref.candidates == {k: pytest.approx(v[0], rel=1e-12) for k, v in hand.items()}
    (goal,) = [g for g in goals_of("gemm-latency") if g.beats == IDEAL_TRANSFER]
    assert goal.why == ""
    (rec,) = [g for g in json.loads(GOALS_FILE.read_text())["goals"] if g.get("beats") == IDEAL_TRANSFER]
    assert "why" not in rec and rec["met"] is True and rec["losses"] == []
    assert rec["figures"] == rec["per_model"][rec["best_model"]]
    assert all(rec["figures"][gpu] < rec["baseline_figures"][gpu] for gpu in ideal)
