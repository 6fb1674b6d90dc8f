"""baselines/roofline_util.py: roofline bound x learnt utilisation on a frame with a known roofline structure."""

import numpy as np
import pandas as pd
from task_fixtures import make_store, profiles_table

from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module, run_folds
from kgpubench.tasks.data import task_data

# Six GPUs: bandwidth (GB/s), peak fp32 (GFLOP/s), SMs.
GPUS = {"G1": (150.0, 3000.0, 8), "G2": (200.0, 4000.0, 12), "G3": (250.0, 5000.0, 16),
        "G4": (300.0, 6000.0, 20), "G5": (400.0, 7500.0, 28), "G6": (500.0, 9000.0, 40)}


def _module():
    return load_model_module(next(p for p in baseline_files() if p.stem == "roofline_util"))


def _frame(gpus=GPUS):
    """Two kernels x sizes x register counts on every GPU: time = bytes / bandwidth / utilisation (ms), the
    utilisation falling with the registers per thread (0.9 at 16, 0.45 at 64), the same on every GPU."""
    rows, times = [], []
    for gpu, (bw, peak, sms) in gpus.items():
        for kernel, app, per_element in (("calculate_temp", "hotspot", 12.0), ("lud_diagonal", "lud", 8.0)):
            for n in (256, 512, 1024, 2048):
                for regs in (16, 32, 48, 64):
                    util = 0.9 - 0.45 * (regs - 16) / 48
                    moved = per_element * n * n
                    times.append(moved / (bw * 1e6) / util)
                    rows.append(dict(application=app, kernel=kernel, input_size_1=n, input_size_2=0.0,
                                     launch_index=0.0, grid_x=n / 16, grid_y=n / 16, grid_z=1.0, block_x=16.0,
                                     block_y=16.0, block_z=1.0, registers_per_thread=regs, static_smem_bytes=0.0,
                                     gpu_architecture="arch", gpu_sm_count=sms, gpu_cores=128.0 * sms,
                                     gpu_memory_bandwidth_gbs=bw, gpu_peak_fp32_gflops=peak,
                                     gpu_clock_sm_mhz=1000.0, gpu=gpu))
    frame = pd.DataFrame(rows)
    return frame.drop(columns="gpu"), np.asarray(times), frame["gpu"].to_numpy()


def test_recovers_an_unseen_gpus_times_and_never_predicts_below_the_bound():
    X, y, gpu = _frame()
    model_class = _module().RooflineUtilisation
    for held_out in ("G3", "G4"):
        train, test = gpu != held_out, gpu == held_out
        model = model_class(seed=0).fit(X[train].reset_index(drop=True), y[train])
        Xt = X[test].reset_index(drop=True)
        pred = model.predict(Xt)
        ape = np.abs(pred / y[test] - 1)
        assert np.median(ape) < 0.03 and ape.max() < 0.10, (held_out, np.median(ape), ape.max())
        assert np.all(np.log(pred) >= model.log_bound(Xt) - 1e-12)


def test_the_bound_is_a_roofline_of_gpu_independent_work():
    """Same launches on a GPU with twice the bandwidth and peak: the bound halves (the work is GPU-independent);
    with twice the bandwidth only, it falls by at most half (the compute roof may hold it)."""
    X, y, gpu = _frame()
    model = _module().RooflineUtilisation(seed=0).fit(X, y)
    one = X[gpu == "G2"].reset_index(drop=True)
    faster_memory = one.assign(gpu_memory_bandwidth_gbs=2 * one["gpu_memory_bandwidth_gbs"])
    faster = faster_memory.assign(gpu_peak_fp32_gflops=2 * one["gpu_peak_fp32_gflops"])
    np.testing.assert_allclose(model.log_bound(one) - model.log_bound(faster), np.log(2.0))
    drop = model.log_bound(one) - model.log_bound(faster_memory)
    assert np.all(drop >= -1e-12) and np.all(drop <= np.log(2.0) + 1e-12)


def test_the_learnt_work_ignores_per_binary_columns():
    """Registers and shared memory differ between the per-architecture binaries; the GPU-independent work (so the
    bound) does not read them, only the utilisation does."""
    X, y, _ = _frame()
    model = _module().RooflineUtilisation(seed=0).fit(X, y)
    other = X.assign(registers_per_thread=X["registers_per_thread"] + 7, static_smem_bytes=4096.0)
    np.testing.assert_array_equal(model.log_bound(X), model.log_bound(other))


def test_counters_give_the_roofline_of_counted_bytes_and_flops():
    """With counters, the bound is max(32 x transactions / bandwidth, flops / peak) up to the per-kernel offset."""
    X, y, _ = _frame()
    X = X.assign(prof_device_memory_read_transactions=y * 1e6 * X["gpu_memory_bandwidth_gbs"] / 32 * 0.5,
                 prof_l2_write_transactions=0.0, prof_floating_point_operations_single_precision=1.0,
                 prof_floating_point_operations_double_precision=0.0)
    model = _module().RooflineUtilisation(seed=0).fit(X, y)
    assert model.counters_
    raw = np.log(y * 0.5)  # bytes / bandwidth; the flops term is negligible
    offset = model.log_bound(X) - raw
    assert np.ptp(offset[X["kernel"] == "lud_diagonal"]) < 1e-9
    assert np.all(model.predict(X) >= np.exp(model.log_bound(X)) * (1 - 1e-12))


def test_same_seed_same_predictions():
    X, y, gpu = _frame()
    make = _module().make_model
    train = gpu != "G5"
    a, b = (make(None, 3).fit(X[train], y[train]).predict(X[~train]) for _ in range(2))
    np.testing.assert_array_equal(a, b)


class _Recording:
    """Wraps the model and records the GPU figures of every row its fit sees."""

    seen: list = []

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        _Recording.seen.append(set(X["gpu_memory_bandwidth_gbs"].astype(float)))
        self.model.fit(X, y)
        return self

    def predict(self, X):
        return self.model.predict(X)


def test_no_row_of_the_held_out_gpu_reaches_fit(tmp_path):
    """Leave-one-GPU-out through the board's own fold loop: fit sees only the training GPUs' bandwidths."""
    store = make_store(tmp_path / "store", profiles_table())
    data = task_data("rodinia-time", "by-gpu", store.path)
    make = _module().make_model
    _Recording.seen = []
    folds, _ = run_folds(data, lambda task, seed: _Recording(make(task, seed)))
    bandwidth = {"GPU A": 320.0, "GPU B": 900.0, "GPU C": 1555.0}
    assert sorted(folds) == sorted(bandwidth) and len(_Recording.seen) == 3
    for fold, seen in zip(folds, _Recording.seen):
        assert seen == {b for g, b in bandwidth.items() if g != fold}
