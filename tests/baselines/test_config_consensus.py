"""baselines/config_consensus.py: mean over training GPUs of ln(t / best t) per configuration, worked by hand."""

import math

import numpy as np
import pandas as pd

from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module
from kgpubench.tasks import get_task

HW = {"A": (10.0, 100.0), "B": (20.0, 200.0), "C": (40.0, 400.0), "D": (80.0, 800.0)}


def _module():
    return load_model_module(next(p for p in baseline_files() if p.stem == "config_consensus"))


def _frame(gpus, configs, problem="n", kernel="k"):
    return pd.DataFrame([{"gpu_sm_count": HW[g][0], "gpu_memory_bandwidth_gbs": HW[g][1], "kernel": kernel,
                          "problem_size": problem, "param.bx": c} for g in gpus for c in configs])


def _fitted():
    X = _frame(["A", "B", "C"], [16.0, 32.0, 64.0])
    y = np.array([1.0, 1.1, 2.0,    # A: 16 best, 32 within 10 %
                  1.5, 1.0, 1.2,    # B: 32 best, 16 at 1.5 x
                  2.0, 2.1, 6.0])   # C: 16 best, 32 within 5 %
    return _module().make_model(get_task("autotune-config"), 0).fit(X, y), X, y


def test_scores_are_the_mean_log_time_above_each_gpus_best():
    model, _, _ = _fitted()
    assert model.predicts_target is False
    test = _frame(["D"], [16.0, 32.0, 64.0, 128.0])
    expected = [math.log(1.5) / 3, (math.log(1.1) + math.log(1.05)) / 3,
                (math.log(2.0) + math.log(1.2) + math.log(3.0)) / 3, _module().UNTIMED]
    np.testing.assert_allclose(model.predict(test), expected)
    # 32 is never the fastest on A or C, yet it is the consensus: within 10 % everywhere
    assert np.argmin(model.predict(test)) == 1


def test_each_gpus_scale_does_not_matter_and_fallbacks_follow_the_kernel():
    model, X, y = _fitted()
    slower = _module().make_model(get_task("autotune-config"), 0).fit(X, y * np.repeat([1.0, 100.0, 0.01], 3))
    test = _frame(["D"], [16.0, 32.0, 64.0])
    np.testing.assert_allclose(slower.predict(test), model.predict(test))
    # another problem size of the same kernel: that kernel's problems; another kernel: every problem
    X2 = pd.concat([X, _frame(["A"], [16.0, 32.0], problem="m", kernel="other")], ignore_index=True)
    both = _module().make_model(get_task("autotune-config"), 0).fit(X2, np.concatenate([y, [4.0, 1.0]]))
    np.testing.assert_allclose(both.predict(_frame(["D"], [16.0, 32.0, 64.0], problem="big")),
                               model.predict(test))
    np.testing.assert_allclose(both.predict(_frame(["D"], [16.0, 32.0], problem="new", kernel="new")),
                               [(math.log(1.5) + math.log(4.0)) / 4, (math.log(1.1) + math.log(1.05)) / 4])
