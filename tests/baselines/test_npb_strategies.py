"""Seed 001's Profiling and Exhausting on the crafted 3-kernel MG problem, worked out by hand, and on the board.

GPU A (task_fixtures.CRAFTED_TIMES; ms per call x calls per run; defaults psinv 1024, resid 512, zero3 128):

    psinv 100 x {128: 2.0, 512: 1.5, 1024: 1.8}   default 180 ms   share 180/485 = 37.1 %
    resid 100 x {128: 1.2, 512: 1.0, 1024: 0.9}   default 100 ms   share 100/485 = 20.6 %
    zero3  10 x {128: 0.5, 512: 0.4, 1024: 0.6}   default   5 ms   share   5/485 =  1.0 %

remainder of the default run 0.2 s: default 0.485 s; best 0.2 + (150 + 90 + 4) / 1000 = 0.444 s.
Profiling: psinv 512, resid 1024, zero3 512 -> 0.444 s (ratio 1), 1 + 2 + 2 + 2 = 7 measurements.
Exhausting: hot = psinv, resid (>= 10 %); 3 x 3 combinations, zero3 at 128 -> psinv 512, resid 1024:
0.2 + (150 + 90 + 5) / 1000 = 0.445 s (ratio 0.445 / 0.444), 1 + 9 - 1 (the default combination) = 9.
Max (all 1024): 0.476 s; Warp (32 not measured: nearest, 128): 0.2 + (200 + 120 + 5) / 1000 = 0.525 s.
GPU B doubles every time and the remainder: same choices, same ratios, same counts.
"""

import json
import textwrap

import numpy as np
import pytest
from task_fixtures import autotune_table, make_store, npb_crafted_table

from kgpubench.board import leaderboard as lb
from kgpubench.models.evaluation import SubmissionError, evaluate, load_model_module
from kgpubench.tasks import feature_frame, get_task, task_rows
from kgpubench.tasks.npb import MeasurementError, npb_problems
from kgpubench.tasks.scoring import score_fold, with_scoring_columns

TASK = get_task("npb-tpb")
BEST_A = 0.444


def _module(name):
    return load_model_module(next(p for p in lb.baseline_files() if p.stem == name))


def _gpu_a():
    table = npb_crafted_table()
    rows = with_scoring_columns(TASK, table, task_rows(TASK, table))
    rows = rows.filter(np.asarray([g == "GPU A" for g in rows["gpu_name"].to_pylist()]))
    return rows, feature_frame(TASK, rows), np.asarray(rows["time_ms_mean"].to_pylist(), dtype=float)


def _run(model):
    rows, X, y = _gpu_a()
    (problem,) = npb_problems(TASK, rows, y)
    scores = model.fit(X, y).predict(X, problems=[problem])
    chosen = {k: t for k, t, s in zip(rows["kernel"].to_pylist(), rows["tpb"].to_pylist(), scores) if s == 0}
    ratio = score_fold(TASK, rows, y, scores, predicts_target=False)["app_time_ratio"]
    return chosen, ratio, problem


def test_profiling_by_hand():
    chosen, ratio, problem = _run(_module("npb_profiling").ProfilingTPB())
    assert chosen == {"psinv": 512, "resid": 1024, "zero3": 512}
    assert problem.measurements == 7  # the combination it picks is never run as a whole
    assert problem.measure(chosen).app_time_s == pytest.approx(BEST_A)
    assert ratio == pytest.approx(1.0)


def test_exhausting_by_hand():
    mod = _module("npb_exhausting")
    rows, _, y = _gpu_a()
    assert mod.hot_kernels(npb_problems(TASK, rows, y)[0]) == ["psinv", "resid"]
    chosen, ratio, problem = _run(mod.ExhaustingTPB())
    assert chosen == {"psinv": 512, "resid": 1024, "zero3": 128}
    assert problem.measurements == 9
    assert problem.measure(chosen).app_time_s == pytest.approx(0.445)
    assert ratio == pytest.approx(0.445 / BEST_A)


def test_exhausting_threshold_sets_the_hot_kernels_and_the_cost():
    mod = _module("npb_exhausting")
    # 1 %: zero3 (5/485 = 1.03 %) is hot too: 27 combinations (the default among them), the best one
    chosen, ratio, problem = _run(mod.ExhaustingTPB(share=0.01))
    assert chosen == {"psinv": 512, "resid": 1024, "zero3": 512} and ratio == pytest.approx(1.0)
    assert problem.measurements == 27
    # 25 %: psinv only: 3 runs (one is the default) -> 0.2 + (150 + 100 + 5) / 1000 = 0.455 s
    chosen, ratio, problem = _run(mod.ExhaustingTPB(share=0.25))
    assert chosen == {"psinv": 512, "resid": 512, "zero3": 128} and ratio == pytest.approx(0.455 / BEST_A)
    assert problem.measurements == 3


def test_strategies_refuse_to_predict_without_the_oracle():
    _, X, y = _gpu_a()
    for name, cls in (("npb_profiling", "ProfilingTPB"), ("npb_exhausting", "ExhaustingTPB")):
        model = getattr(_module(name), cls)().fit(X, y)
        with pytest.raises(MeasurementError, match="predict\\(X, problems=...\\)"):
            model.predict(X)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return make_store(tmp_path_factory.mktemp("npb") / "store", npb_crafted_table(), autotune_table(("GPU A", "GPU B")))


@pytest.fixture(scope="module")
def board(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("npb-board") / "results"
    models = [p for p in lb.baseline_files() if p.stem in ("npb_profiling", "npb_exhausting", "npb_max", "npb_warp")]
    lb.run(data_dir=store.path, out_dir=out, models=models, tasks=["npb-tpb"])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("model,ratio,measurements", [
    ("npb_profiling", 1.0, 7.0), ("npb_exhausting", 0.445 / BEST_A, 9.0), ("npb_max", 0.476 / BEST_A, 0.0),
    ("npb_warp", 0.525 / BEST_A, 0.0)])
def test_board_records_ratio_and_measurements(board, model, ratio, measurements):
    res = json.loads((board / f"npb-tpb/by-gpu/{model}.json").read_text())
    assert sorted(res["folds"]) == ["GPU A", "GPU B"]
    for fold in res["folds"].values():
        assert fold["scores"]["app_time_ratio"] == pytest.approx(ratio, rel=1e-5)
        assert fold["scores"]["measurements"] == measurements
    # both folds measure alike: every resampled mean, so the interval, is that one value
    assert res["aggregate"]["measurements"] == {"mean": measurements, "std": 0.0, "median": measurements, "folds": 2,
                                                "ci95": [measurements, measurements]}


@pytest.mark.slow
def test_board_shows_measurements_next_to_the_scores(board, store):
    readme = (board.parent / "README.md").read_text()
    section = readme[readme.index("### npb-tpb — `by-gpu`"):]
    assert "| rank | model | app_time_ratio ↓ | male ↓ | app_time_s ↓ (seed) | measurements | folds |" in section
    # application seconds: GPU A 0.444 (best), GPU B twice that; mean over the two folds [95 % bootstrap interval:
    # with two folds the resampled means are the two folds' values and their mean, so the interval spans both]
    # the caption: the problems counted on the run's store (kgpubench.board.counts), then the folds
    assert "2 problems (gpu_name, benchmark, npb_class, variant), each in one test fold. Test folds: 2." in section
    assert ("| — | oracle — upper bound (measures the test rows) | 1 [1, 1] | 0 [0, 0] | 0.666 [0.444, 0.888] "
            "| 0 [0, 0] | 2 |") in section
    # the strategies that measure the test problem are shown apart, unranked, however good their score
    assert ("| — | npb_profiling (measures the target) | 1 [1, 1] | — | 0.666 [0.444, 0.888] | 7 [7, 7] "
            "| 2 |") in section
    assert ("| — | npb_exhausting (measures the target) | 1.002 [1, 1] | — | 0.6675 [0.445, 0.89] | 9 [9, 9] "
            "| 2 |") in section
    assert "| 1 | npb_max | 1.072 [1.07, 1.07] | — | 0.714 [0.476, 0.952] | 0 [0, 0] | 2 |" in section
    assert "| 2 | npb_warp | 1.182 [1.18, 1.18] | — | 0.7875 [0.525, 1.05] | 0 [0, 0] | 2 |" in section
    assert "measurements" not in readme[readme.index("## autotune-config"):]  # only for the task with an oracle
    assert lb.verify(root=board, data_dir=store.path, only=["npb_profiling", "npb_exhausting"]) >= 2


def test_measuring_is_refused_on_a_task_without_an_oracle(tmp_path, store):
    path = tmp_path / "peek.py"
    path.write_text(textwrap.dedent("""
        import numpy as np
        class Peek:
            uses_measurements = True
            def fit(self, X, y): return self
            def predict(self, X, problems=None): return np.zeros(len(X))
        def make_model(task, seed):
            return Peek()
        """))
    with pytest.raises(SubmissionError, match="no measurement oracle"):
        evaluate(path, "autotune-config", "by-gpu", data_dir=store.path)
