"""baselines/kernel_scaling.py: per-kernel scaling over GPU figures, hyper-parameters from inner folds only."""

import numpy as np
import pandas as pd
import pytest

from kgpubench.board.leaderboard import baseline_files
from kgpubench.features.occupancy import occupancy
from kgpubench.models.evaluation import load_model_module, run_folds
from kgpubench.tasks.data import TaskData, hashed_order, task_data


def _module():
    return load_model_module(next(p for p in baseline_files() if p.stem == "kernel_scaling"))


# GPU: architecture, clock (MHz), SMs, bandwidth (GB/s)
GPUS = {"G1": ("maxwell2", 1000.0, 8, 150.0), "G2": ("maxwell2", 1200.0, 12, 200.0),
        "G3": ("maxwell2", 900.0, 16, 250.0), "G4": ("maxwell2", 1100.0, 20, 300.0),
        "G5": ("maxwell2", 1300.0, 28, 400.0), "G6": ("maxwell2", 1050.0, 40, 350.0)}


def _frame(gpus=GPUS):
    """Two kernels x sizes on every GPU, each launch three times: ``memory_kernel`` time = n^2 x 8 bytes /
    bandwidth, ``compute_kernel`` time = n^2 x 2000 cycles / (clock x SMs): each follows a different GPU figure."""
    rows, times = [], []
    for gpu, (arch, clock, sms, bw) in gpus.items():
        for kernel in ("memory_kernel", "compute_kernel"):
            for n in (256, 384, 512, 768, 1024, 1536, 2048) * 3:
                work = float(n * n)
                t = work * 8 / (bw * 1e6) if kernel == "memory_kernel" else work * 2000 / (clock * 1e3 * sms * 1e3)
                times.append(t)
                rows.append(dict(application="app", kernel=kernel, input_size_1=n, input_size_2=0.0,
                                 launch_index=0.0, grid_x=n / 16, grid_y=n / 16, grid_z=1.0, block_x=16.0,
                                 block_y=16.0, block_z=1.0, registers_per_thread=32, static_smem_bytes=0.0,
                                 gpu_architecture=arch, gpu_sm_count=sms, gpu_cores=128.0 * sms,
                                 gpu_memory_bandwidth_gbs=bw, gpu_clock_sm_mhz=clock, gpu=gpu))
    frame = pd.DataFrame(rows)
    return frame.drop(columns="gpu"), np.asarray(times), frame["gpu"].to_numpy()


@pytest.mark.slow
def test_each_kernel_follows_its_own_figure_on_an_unseen_gpu():
    X, y, gpu = _frame()
    model_class = _module().KernelScaling
    for held_out in ("G3", "G5"):
        train, test = gpu != held_out, gpu == held_out
        model = model_class(seed=0, shrinkage=(0.01, 10.0), mix=(0.0,)).fit(X[train].reset_index(drop=True),
                                                                           y[train])
        pred = model.predict(X[test].reset_index(drop=True))
        ape = np.abs(pred / y[test] - 1)
        assert np.median(ape) < 0.05, (held_out, np.median(ape))
        # the slopes say which figure each kernel follows: bandwidth for one, clock and SMs for the other
        slopes = {k: beta / model.z_scale_ for (k, s), (beta, _) in model.core_["slopes"].items()}
        assert slopes["memory_kernel"][2] < -0.5 and abs(slopes["memory_kernel"][0]) < 0.3
        assert slopes["compute_kernel"][0] < -0.5 and abs(slopes["compute_kernel"][2]) < 0.3


def test_waves_come_from_the_architectures_occupancy_and_kepler_sms_from_cores():
    mod = _module()
    X, _, _ = _frame({"K": ("kepler", 700.0, 1, 200.0)})
    X = X.assign(gpu_sm_count=np.nan, gpu_cores=2496.0)  # the catalogue has no Kepler SM count: 2496 / 192 = 13
    raw = mod.KernelScaling._raw_z(X, {"gpu_clock_sm_mhz": 1.0, "gpu_sm_count": 1.0,
                                       "gpu_memory_bandwidth_gbs": 1.0})
    np.testing.assert_allclose(raw[:, 1], np.log(13.0))
    # 256-thread blocks, 32 registers on cc 3.5: 8 blocks per SM; n = 2048 -> 128 x 128 blocks / (13 x 8) -> 158
    per_sm = occupancy("3.5", threads_per_block=256, registers_per_thread=32).blocks_per_sm
    assert per_sm == 8 == mod.resident_blocks("kepler", 256, 32, 0)
    last = X.index[(X["kernel"] == "compute_kernel") & (X["input_size_1"] == 2048)][0]
    assert raw[last, 3] == pytest.approx(np.log(np.ceil(128 * 128 / (13 * 8))))


@pytest.fixture(scope="module")
def four_gpus():
    """The shipped rodinia-time rows of four GPUs (two Kepler, two Maxwell 2), 150 hashed rows each."""
    data = task_data("rodinia-time", "by-gpu")
    keep = ("GeForce GTX TITAN", "Tesla K20c", "GeForce GTX 970", "GeForce GTX 980")
    rank = hashed_order(data.rows["row_id"].to_pylist(), "test-kernel-scaling")
    idx = np.sort(np.concatenate([(m := np.flatnonzero(data.folds == g))[np.argsort(rank[m])[:150]] for g in keep]))
    return TaskData(task=data.task, scheme="by-gpu", rows=data.rows.take(idx),
                    X=data.X.iloc[idx].reset_index(drop=True), y=data.y[idx].copy(), folds=data.folds[idx].copy())


def _run(data: TaskData, fold: str):
    """The board's fold loop on ``data`` for ``fold``, in-process; returns the fitted model and its record."""
    base = _module().KernelScaling
    seen = []

    class Spy(base):
        def _score(self, core, train, launch, z, kernels, gpus, *rest):
            seen.append((set(train["gpus"]), set(gpus)))
            return super()._score(core, train, launch, z, kernels, gpus, *rest)

    models = []

    def factory(task, seed):
        models.append(Spy(seed=seed, shrinkage=(0.1, 10.0), mix=(0.0, 1.0)))
        return models[-1]

    out, _ = run_folds(data, factory, folds=[fold])
    return models[-1], seen, out[fold]


@pytest.mark.slow
def test_hyper_parameters_come_from_inner_folds_over_the_training_gpus_only(four_gpus):
    test_gpu = "Tesla K20c"
    model, seen, record = _run(four_gpus, test_gpu)
    test_key = set(model._gpu_keys(four_gpus.X[four_gpus.folds == test_gpu].reset_index(drop=True))[0])
    train_keys = set(model.train_[0])
    assert len(train_keys) == 3 and not test_key & train_keys  # fit never received the test GPU's rows
    # every inner fit is scored on one training GPU it was not fitted on; each training GPU is held out
    assert seen and all(len(held) == 1 and not held & fitted and fitted | held == train_keys for fitted, held in seen)
    assert set().union(*(held for _, held in seen)) == train_keys
    assert all(set(v) == train_keys for v in model.inner_scores_.values())
    medians = {k: np.median(list(v.values())) for k, v in model.inner_scores_.items()}
    assert model.chosen_ == min(medians, key=lambda k: (medians[k], -k[0], k[1]))
    # the test GPU's rows altered beyond recognition: same choice, same inner scores, same predictions
    test = four_gpus.folds == test_gpu
    altered = TaskData(task=four_gpus.task, scheme="by-gpu", rows=four_gpus.rows,
                       X=four_gpus.X.assign(input_size_1=np.where(test, 7.0, four_gpus.X["input_size_1"])),
                       y=np.where(test, four_gpus.y * 9.0, four_gpus.y), folds=four_gpus.folds)
    again, _, record_again = _run(altered, test_gpu)
    assert again.chosen_ == model.chosen_ and again.inner_scores_ == model.inner_scores_
    original = four_gpus.X[test].reset_index(drop=True)
    np.testing.assert_array_equal(again.predict(original), model.predict(original))
    assert record["n_train"] == record_again["n_train"] == 450
