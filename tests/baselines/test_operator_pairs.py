"""baselines/operator_pairs.py: per-class wave models mixed with same-shape GPU-pair ratios; tau and w from inner
folds over the training GPUs only."""

import math

import numpy as np
import pandas as pd
import pytest

from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module, run_folds
from kgpubench.tasks.data import TaskData, task_data
from kgpubench.tasks.roofline import workload_keys


def _module():
    return load_model_module(next(p for p in baseline_files() if p.stem == "operator_pairs"))


# GPU: SMs, fp32 peak (GFLOP/s), bandwidth (GB/s); G3 sits inside the others' figures
GPUS = {"G1": (20, 4000.0, 200.0), "G2": (40, 8000.0, 400.0), "G3": (56, 11000.0, 550.0),
        "G4": (80, 16000.0, 800.0), "G5": (108, 20000.0, 1000.0), "G6": (132, 30000.0, 1500.0)}


def _frame(gpus=GPUS, shapes=150, seed=0):
    """linear calls on every GPU: ``t = own(shape) x flops / (0.6 peak) + 0.001 ms``, ``own`` a factor per shape
    (0.5-2) that no feature tells, the same on every GPU."""
    rng = np.random.default_rng(seed)
    b, m, n, k = (rng.choice([16, 32, 64, 128, 256, 512, 1024], shapes).astype(float) for _ in range(4))
    own = np.exp(rng.uniform(np.log(0.5), np.log(2.0), shapes))
    rows, times = [], []
    for gpu, (sms, peak, bw) in gpus.items():
        for i in range(shapes):
            flops = 2 * b[i] * m[i] * n[i] * k[i]
            rows.append(dict(operator="linear", operator_class="linear", dim_b=b[i], dim_m=m[i], dim_n=n[i],
                             dim_k=k[i], flops=flops, bytes_min=4 * (b[i] * m[i] * (n[i] + k[i]) + n[i] * k[i]),
                             gpu_sm_count=float(sms), gpu_peak_fp32_gflops=peak, gpu_memory_bandwidth_gbs=bw,
                             gpu_l2_bytes=sms * 2.0 ** 18, gpu_clock_sm_mhz=1400.0, gpu=gpu))
            times.append(own[i] * flops / (0.6 * peak * 1e9) * 1e3 + 0.001)
    frame = pd.DataFrame(rows)
    return frame.drop(columns="gpu"), np.asarray(times), frame["gpu"].to_numpy()


def _split(X, y, gpu, held_out):
    train, test = gpu != held_out, gpu == held_out
    return X[train].reset_index(drop=True), y[train], X[test].reset_index(drop=True), y[test]


def _mdape(pred, y):
    return float(np.median(np.abs(pred / y - 1)) * 100)


def test_the_pairs_carry_a_shape_factor_no_feature_tells_and_the_inner_folds_choose_them():
    X, y, gpu = _frame()
    X_train, y_train, X_test, y_test = _split(X, y, gpu, "G3")
    mod = _module()
    model = mod.OperatorPairs().fit(X_train, y_train)
    wave_only = mod.OperatorPairs(w=(0.0,)).fit(X_train, y_train)
    assert wave_only.chosen_[1] == 0.0 and model.chosen_[1] >= 0.75
    assert _mdape(wave_only.predict(X_test), y_test) > 25  # the shape factor is invisible to the wave model
    assert _mdape(model.predict(X_test), y_test) < 3
    # inner scores: one per training GPU for every (tau, w) of the grid, and the chosen one has the smallest median
    assert len(model.inner_scores_) == len(mod.TAU) * len(mod.W)
    assert all(len(v) == 5 for v in model.inner_scores_.values())
    medians = {c: np.median(list(v.values())) for c, v in model.inner_scores_.items()}
    assert model.chosen_ == min(medians, key=medians.get)


def test_sources_are_weighted_by_nearness_and_rows_without_one_get_the_wave_model():
    combine = _module().OperatorPairs._combine
    wave = np.log(np.array([1.0, 2.0, 4.0]))
    est = np.log(np.array([[2.0, 8.0, np.nan], [np.nan, np.nan, np.nan], [1.0, np.nan, 16.0]]))
    d = np.array([[0.5, 0.1, 0.0], [0.0, 0.1, 0.2], [1.0, 0.0, 0.3]])
    # tau = 0: the nearest source that measured the call; w mixes it with the wave model on the log scale
    np.testing.assert_allclose(combine(wave, est, d, 0.0, 1.0), np.log([8.0, 2.0, 16.0]))
    np.testing.assert_allclose(combine(wave, est, d, 0.0, 0.5), np.log([np.sqrt(8.0), 2.0, np.sqrt(64.0)]))
    # tau = inf: every source alike
    np.testing.assert_allclose(combine(wave, est, d, math.inf, 1.0), np.log([4.0, 2.0, 4.0]))
    # finite tau: exp(-d / tau), normalised over the sources that measured the call
    w = np.exp(-np.array([0.5, 0.1]) / 0.25)
    expected = (w @ np.log([2.0, 8.0])) / w.sum()
    assert combine(wave, est, d, 0.25, 1.0)[0] == pytest.approx(expected)


def test_fits_are_deterministic_and_a_class_never_seen_still_gets_finite_times():
    X, y, gpu = _frame(shapes=60)
    X_train, y_train, X_test, _ = _split(X, y, gpu, "G6")
    mod = _module()
    a = mod.OperatorPairs(seed=0).fit(X_train, y_train)
    b = mod.OperatorPairs(seed=0).fit(X_train, y_train)
    assert a.chosen_ == b.chosen_ and a.inner_scores_ == b.inner_scores_
    np.testing.assert_array_equal(a.predict(X_test), b.predict(X_test))
    assert set(a.core_["wave"]) == {"gemm", "any"}  # only GEMM rows: a model over every class stands in
    other = X_test.assign(operator="softmax", operator_class="softmax", dim_h=1024.0)
    pred = a.predict(other)
    assert np.all(np.isfinite(pred) & (pred > 0))


def _real_rows(held_out: str, training: tuple[str, ...]) -> TaskData:
    """The shipped linear and softmax rows of a few GPUs, folded by GPU: the held-out GPU's and the training GPUs'
    rows of the same calls."""
    data = task_data("operator-latency", "by-gpu")
    gpu = np.asarray(data.rows.column("gpu_name").to_pylist())
    keys = workload_keys(data.X)
    calls = np.isin(data.X["operator"], ("linear", "softmax"))
    keep = np.flatnonzero(calls & ((gpu == held_out) | (np.isin(gpu, training)
                                                        & np.isin(keys, keys[calls & (gpu == held_out)]))))
    return TaskData(task=data.task, scheme="by-gpu", rows=data.rows.take(keep),
                    X=data.X.iloc[keep].reset_index(drop=True), y=data.y[keep], folds=gpu[keep].astype(object))


def _run(data: TaskData, fold: str):
    """The board's fold loop on ``data`` for ``fold``, in-process: the fitted model, the GPUs each inner fit was fitted
    on and scored on, and the fold's record."""
    base = _module().OperatorPairs
    seen = []

    class Spy(base):
        def _terms(self, core, X, gpus, table):
            seen.append((set(core["gpus"]), set(gpus)))
            return super()._terms(core, X, gpus, table)

    models = []

    def factory(task, seed):
        models.append(Spy(seed=seed, tau=(0.0, 1.0, math.inf), w=(0.0, 0.5, 1.0)))
        return models[-1]

    out, _ = run_folds(data, factory, folds=[fold])
    return models[-1], seen, out[fold]


@pytest.mark.slow
def test_tau_and_w_come_from_inner_folds_over_the_training_gpus_only():
    held_out = "NVIDIA L4"
    data = _real_rows(held_out, ("Tesla P4", "Tesla T4", "Tesla V100-PCIE-32GB", "NVIDIA A100-PCIE-40GB"))
    model, seen, record = _run(data, held_out)
    train_keys = set(model.core_["gpus"])
    assert len(train_keys) == 4 and len(model.table_) == 4  # fit never received the test GPU's rows
    inner, final = seen[:-1], seen[-1]
    assert len(inner) == 4 and all(len(held) == 1 and not held & fitted and fitted | held == train_keys
                                   for fitted, held in inner)
    assert final[0] == train_keys and not final[1] & train_keys
    assert len(model.inner_scores_) == 9 and all(set(v) == train_keys for v in model.inner_scores_.values())
    # the held-out GPU's times altered beyond recognition: the same choice, inner scores and predictions
    test = data.folds == held_out
    altered = TaskData(task=data.task, scheme=data.scheme, rows=data.rows, X=data.X,
                       y=np.where(test, data.y * 9.0, data.y), folds=data.folds)
    again, _, record_again = _run(altered, held_out)
    assert again.chosen_ == model.chosen_ and again.inner_scores_ == model.inner_scores_
    original = data.X[test].reset_index(drop=True)
    np.testing.assert_array_equal(again.predict(original), model.predict(original))
    assert record["n_train"] == record_again["n_train"] == int((~test).sum())
    assert record["scores"] != record_again["scores"]  # the altered times are scored, not fitted
