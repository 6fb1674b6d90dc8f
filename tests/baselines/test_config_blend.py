"""baselines/config_blend.py: a similarity-weighted consensus of ln(t / best t) whose tau is chosen by
leave-one-GPU-out over the training GPUs only; tau -> 0 is transfer, tau -> inf is config_consensus."""

import math

import numpy as np
import pandas as pd
import pytest

from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module
from kgpubench.tasks import get_task

TASK = get_task("autotune-config")


def _module(name="config_blend"):
    return load_model_module(next(p for p in baseline_files() if p.stem == name))


def _frame(hw: dict, configs, problem="n", kernel="k"):
    return pd.DataFrame([{"gpu_vendor": "nvidia", "gpu_architecture": "ampere", "gpu_sm_count": sm,
                          "gpu_memory_bandwidth_gbs": bw, "kernel": kernel, "problem_size": problem,
                          "param.bx": c} for (sm, bw) in hw.values() for c in configs])


def _blend(**kw):
    return _module().ConfigBlend(problem_columns=tuple(TASK.problem_columns), **kw)


# Three training GPUs; the test GPU D is nearest to C. C's best configuration (64) is the others' worst, and the
# consensus (16: within 50 % everywhere) is not C's best: transfer and the consensus disagree.
HW = {"A": (10.0, 100.0), "B": (20.0, 200.0), "C": (40.0, 400.0)}
TEST = {"D": (80.0, 800.0)}
CONFIGS = [16.0, 32.0, 64.0]
Y = np.array([1.0, 1.2, 3.0,    # A
              1.0, 1.3, 3.0,    # B
              1.5, 1.4, 1.0])   # C


def test_small_tau_is_transfer_and_large_tau_is_config_consensus():
    X, test = _frame(HW, CONFIGS), _frame(TEST, CONFIGS)
    transfer = _module("transfer").make_model(TASK, 0).fit(X, Y).predict(test)
    consensus = _module("config_consensus").make_model(TASK, 0).fit(X, Y).predict(test)
    assert np.argmin(transfer) == 2 and np.argmin(consensus) == 0  # the two disagree here
    # tau = 0 is transfer's source exactly: C's log time above its best; a tiny tau is the same choice
    np.testing.assert_allclose(_blend(tau=0.0).fit(X, Y).predict(test), np.log(transfer))
    np.testing.assert_allclose(_blend(tau=1e-3).fit(X, Y).predict(test), np.log([1.5, 1.4, 1.0]), atol=1e-12)
    # tau = inf is the plain mean over the training GPUs; a huge tau comes within its weights' spread
    np.testing.assert_allclose(_blend(tau=math.inf).fit(X, Y).predict(test), consensus)
    np.testing.assert_allclose(_blend(tau=1e6).fit(X, Y).predict(test), consensus, rtol=1e-5)
    # in between, C weighs more than A and B but not alone: 64's score lies strictly between the two
    mid = _blend(tau=1.0).fit(X, Y).predict(test)
    assert np.log(transfer)[2] < mid[2] < consensus[2]
    # another vendor is farther than any figure: with a small tau, same-vendor C stays the source
    amd = _frame({"E": (41.0, 410.0)}, CONFIGS).assign(gpu_vendor="amd")
    X2 = pd.concat([X, amd], ignore_index=True)
    y2 = np.concatenate([Y, [1.0, 2.0, 3.0]])
    np.testing.assert_allclose(_blend(tau=1e-3).fit(X2, y2).predict(test), np.log([1.5, 1.4, 1.0]), atol=1e-12)


def test_untimed_configurations_and_unknown_problems_fall_back_like_the_consensus():
    X, test = _frame(HW, CONFIGS), _frame(TEST, [*CONFIGS, 128.0])
    scores = _blend(tau=1.0).fit(X, Y).predict(test)
    assert scores[3] == _module().UNTIMED and np.all(scores[:3] < 1.0)
    # a problem no training GPU timed: the same kernel's problems, so the same scores as the kernel's one problem
    other = _frame(TEST, CONFIGS, problem="big")
    np.testing.assert_allclose(_blend(tau=1.0).fit(X, Y).predict(other), scores[:3])


# Three pairs of near-twin training GPUs; each pair has its own best configuration, which the other two pairs time
# at 2x. Scored by the others, a GPU gets its twin's best (regret 0) from a small tau and another pair's best
# (regret 1.0) from the plain mean: the inner folds must choose a finite tau.
TWINS = {"A1": (10.0, 100.0), "A2": (11.0, 110.0), "B1": (40.0, 400.0), "B2": (44.0, 440.0),
         "C1": (160.0, 1600.0), "C2": (176.0, 1760.0)}
TWIN_Y = np.array([t for best in (0, 0, 1, 1, 2, 2) for t in np.where(np.arange(3) == best, 1.0, 2.0)])


def _inner_by_hand(X, y, gpus, taus):
    """The inner leave-one-GPU-out of the training GPUs, by fit (on the others) and predict (the held one's rows)
    at each tau; one fit per held GPU, its tau then set (fitting again at each tau gives the same tables)."""
    names = np.repeat(list(gpus), 3)
    regrets = {tau: [] for tau in taus}
    for held in gpus:
        out = names == held
        model = _blend(tau=0.0).fit(X[~out], y[~out])
        for tau in taus:
            model.tau_ = tau
            scores = model.predict(X[out].reset_index(drop=True))
            regrets[tau].append(y[out][int(np.argmin(scores))] / y[out].min() - 1)
    median = {tau: float(np.median(r)) for tau, r in regrets.items()}
    best = min(median.values())
    return max(t for t in taus if median[t] == best), median


def test_tau_is_chosen_by_leave_one_gpu_out_over_the_training_gpus():
    X = _frame(TWINS, [1.0, 2.0, 3.0])
    model = _blend().fit(X, TWIN_Y)
    chosen, median = _inner_by_hand(X, TWIN_Y, TWINS, _module().TAUS)
    assert model.tau_ == chosen and model.inner_regret_ == pytest.approx(median)
    assert median[math.inf] == pytest.approx(1.0) and median[0.0] == 0.0 and 0 < model.tau_ < math.inf
    # where every GPU agrees on a near-best configuration the consensus is as good: ties go to the larger tau
    agree = _blend().fit(_frame(HW, CONFIGS), Y)
    assert agree.tau_ == _inner_by_hand(_frame(HW, CONFIGS), Y, HW, _module().TAUS)[0] == math.inf


def test_the_test_gpus_rows_never_reach_the_choice_or_the_scores():
    X, test = _frame(TWINS, [1.0, 2.0, 3.0]), _frame({"A3": (12.0, 120.0)}, [1.0, 2.0, 3.0])
    model = _blend().fit(X, TWIN_Y)
    scores = model.predict(test)
    # the outer fold hands fit the training rows only: whatever the test GPU's labels, the same tau and scores
    full = pd.concat([X, test], ignore_index=True)
    for labels in ([1.0, 2.0, 2.0], [5.0, 1.0, 9.0]):
        y_full = np.concatenate([TWIN_Y, labels])
        train = np.arange(len(full)) < len(X)
        again = _blend().fit(full[train], y_full[train])
        assert again.tau_ == model.tau_
        np.testing.assert_array_equal(again.predict(full[~train]), scores)
    # predict reads no label and no order: the test rows shuffled give each row the same score
    order = np.array([2, 0, 1])
    np.testing.assert_array_equal(model.predict(test.iloc[order].reset_index(drop=True)), scores[order])
    # a training GPU scored again is scored by the others, never by its own times: its labels change nothing
    a1 = _frame({"A1": TWINS["A1"]}, [1.0, 2.0, 3.0])
    own = _blend(tau=model.tau_).fit(X, TWIN_Y).predict(a1)
    assert np.argmin(own) == 0  # its twin's best, which A1 shares
    perturbed = TWIN_Y.copy()
    perturbed[:3] = [9.0, 1.0, 5.0]
    np.testing.assert_array_equal(_blend(tau=model.tau_).fit(X, perturbed).predict(a1), own)


def test_fit_is_deterministic_and_ignores_the_training_rows_order():
    X = _frame(TWINS, [1.0, 2.0, 3.0])
    test = _frame({"A3": (12.0, 120.0)}, [1.0, 2.0, 3.0])
    first = _blend().fit(X, TWIN_Y)
    perm = np.random.default_rng(0).permutation(len(X))
    shuffled = _blend().fit(X.iloc[perm].reset_index(drop=True), TWIN_Y[perm])
    assert first.tau_ == shuffled.tau_ == _blend().fit(X, TWIN_Y).tau_
    np.testing.assert_array_equal(first.predict(test), shuffled.predict(test))
    assert _module().make_model(TASK, 0).get_params() == _module().make_model(TASK, 1).get_params()
