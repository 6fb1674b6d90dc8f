"""Every baseline on a small fixture: fit, predict, determinism, and scikit-learn conventions."""

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from task_fixtures import TABLES

from kgpubench.board.baselines import planned_tasks
from kgpubench.board.leaderboard import baseline_files
from kgpubench.models.evaluation import load_model_module, model_factory
from kgpubench.tasks import feature_frame, get_task, task_rows
from kgpubench.tasks.npb import npb_problems
from kgpubench.tasks.reference import ORACLE
from kgpubench.tasks.scoring import with_scoring_columns

ROOT = Path(__file__).resolve().parents[2]

_CACHE = {}


def _data(task_name):
    task = get_task(task_name)
    if task_name not in _CACHE:
        table = TABLES[task.config]()
        rows = with_scoring_columns(task, table, task_rows(task, table))
        _CACHE[task_name] = (feature_frame(task, rows), np.asarray(rows[task.target].to_pylist(), float), rows)
    return task, *_CACHE[task_name][:2]


def _cases():
    for path in baseline_files():
        # one task per baseline keeps the suite quick: the first it runs on, in registry order
        yield pytest.param(path, planned_tasks(path)[0].name, id=path.stem)


def test_every_baseline_declares_tasks_and_a_factory():
    # no list of names to edit when a baseline is added: the committed board says which baselines exist, so a
    # lost or renamed file (or a new one without results) shows up here
    names = {p.stem for p in baseline_files()}
    scored = {json.loads(f.read_text())["model"] for f in (ROOT / "leaderboard" / "results").glob("*/*/*.json")
              if not f.name.startswith("_")} - {ORACLE.name}
    assert len(names) >= 37 and names == scored, (sorted(names - scored), sorted(scored - names))
    for path in baseline_files():
        module = load_model_module(path)
        assert planned_tasks(path), path.name
        assert callable(model_factory(module, path))


@pytest.mark.parametrize("path,task_name", list(_cases()))
def test_fit_predict_deterministic(path, task_name):
    task, X, y = _data(task_name)
    factory = model_factory(load_model_module(path), path)
    half = np.arange(len(y)) % 2 == 0
    test, kwargs = ~half, {}
    if getattr(factory(task=task, seed=0), "uses_measurements", False):
        # a measuring strategy (npb-tpb) needs whole test problems: every row, with a fresh oracle per call
        test = np.ones(len(y), dtype=bool)
        kwargs = {"problems": lambda: npb_problems(task, _CACHE[task_name][2], y)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = (factory(task=task, seed=0).fit(X[half].reset_index(drop=True), y[half]).predict(
            X[test].reset_index(drop=True), **{k: v() for k, v in kwargs.items()}) for _ in range(2))
    assert a.shape == (int(test.sum()),)
    assert np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)  # same seed, same machine: identical to the last digit


def _module(name):
    from kgpubench.board.leaderboard import baseline_files

    return load_model_module(next(p for p in baseline_files() if p.stem == name))


@pytest.mark.slow
def test_elm_solves_a_linear_target_and_passes_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    elm = _module("elm").ELMRegressor
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    y = 2 * X[:, 0] - X[:, 1] + 0.5
    model = elm(n_hidden=50, alpha=0.0, random_state=1).fit(X, y)
    assert np.max(np.abs(model.predict(X) - y)) < 1e-3
    assert model.weights_.shape == (3, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(elm())


@pytest.mark.slow
def test_wavelet_passes_check_estimator_and_median_is_the_median():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(_module("wavelet_nn").WaveletNNRegressor(max_nfev=5))
    # the median floor accepts string columns (so no check_estimator): its value is checked by hand
    X = np.zeros((4, 1))
    assert _module("median").MedianRegressor().fit(X, [1.0, 5.0, 2.0, 9.0]).predict(X[:2]).tolist() == [3.5, 3.5]


def test_wavelet_pieces_follow_the_seed_formulas():
    mod = _module("wavelet_nn")
    assert mod.morlet(np.array([0.0]))[0] == 1.0
    assert mod.morlet(np.array([1.0]))[0] == pytest.approx(np.cos(1.67) * np.exp(-0.5))
    x = 0.7
    assert mod.squash(np.array([x]))[0] == pytest.approx(1.716 * (1 - np.exp(-0.667 * x)) / (1 + np.exp(-0.667 * x)),
                                                        rel=1e-4)


def test_power_model_recovers_the_seed_coefficients():
    mod = _module("power_nonlinear")
    x1 = np.array([0.3, 0.6, 0.8, 1.0] * 4)
    x2 = np.repeat([0.5, 1.0, 2.0, 4.0], 4)
    y = 65.6 * x1 + 29.4 * x2 ** 0.2  # seed 002's GTX260 fit
    b = mod.fit_power(x1, x2, y)
    np.testing.assert_allclose(b, [65.6, 29.4, 0.2, 1.0], rtol=1e-4)


def test_power_model_fits_an_fp64_weight_that_separates_equal_density_twins():
    import pandas as pd

    mod = _module("power_nonlinear")
    x1 = np.tile([0.3, 0.6, 0.8, 1.0], 8)
    x2 = np.tile(np.repeat([0.5, 1.0, 2.0, 4.0], 4), 2)
    f64 = np.repeat([0.0, 1.0], 16)  # the same densities, once all fp32, once all fp64
    y = 65.6 * x1 + 29.4 * (x2 * (1 + (1.8 - 1) * f64)) ** 0.2
    np.testing.assert_allclose(mod.fit_power(x1, x2, y, f64), [65.6, 29.4, 0.2, 1.8], rtol=1e-3)
    X = pd.DataFrame({"sm_saturation": x1, "compute_density": x2, "mix_int": 0.0, "mix_sfu": 0.0,
                      "mix_fp32": 10 * (1 - f64), "mix_fp64": 10 * f64, "gpu_sm_count": 1.0})
    np.testing.assert_array_equal(mod.fp64_share(X), f64)
    pred = mod.SlicePowerModel().fit(X, y).predict(X)
    np.testing.assert_allclose(pred, y, rtol=1e-4)
    assert pred[16] > pred[0]  # fp64 twin of the first row draws more


def test_roofline_is_the_max_of_compute_and_memory_time():
    import pandas as pd

    mod = _module("roofline")
    X = pd.DataFrame({"lc": [1e3, 1.0], "ldpu": [0.0, 0.0], "lsfu": [0.0, 0.0], "lmr": [1.0, 1e3], "lmw": [0.0, 0.0],
                      "nb": [1000, 1000], "nt": [1000, 1000], "gpu_peak_fp32_gflops": [1000.0, 1000.0],
                      "gpu_memory_bandwidth_gbs": [100.0, 100.0]})
    t = mod.RooflineRegressor().roofline_ms(X)
    # row 0: 1e9 ops / 1e12 = 1 ms vs 4e6 B / 1e11 = 0.04 ms; row 1: 4e9 B / 1e11 = 40 ms
    np.testing.assert_allclose(t, [1.0, 40.0])
    model = mod.RooflineRegressor().fit(X, 2 * t)
    assert model.scale_ == pytest.approx(2.0)


def test_operator_baselines_on_the_roofline_fixture():
    import pandas as pd

    task, X, y = _data("operator-latency")
    roof = _module("operator_roofline")
    X1 = pd.DataFrame({"flops": [2e9, 1.0], "bytes_min": [4e6, 4e9], "gpu_peak_fp32_gflops": [1000.0, 1000.0],
                       "gpu_memory_bandwidth_gbs": [100.0, 100.0]})
    # row 0: 2e9 / 1e12 = 2 ms vs 4e6 / 1e11 = 0.04 ms; row 1: 4e9 B / 1e11 = 40 ms
    np.testing.assert_allclose(roof.roofline_ms(X1), [2.0, 40.0])
    assert roof.OperatorRoofline().fit(X1, 3 * roof.roofline_ms(X1)).scale_ == pytest.approx(3.0)
    # transfer: every shape was measured on the other GPUs, so leaving GPU C out predicts it from the nearest
    # GPU's efficiency; the fixture's efficiency differs between GPUs only through the launch floor
    gpu_c = X["gpu_peak_fp32_gflops"].to_numpy() == 19500.0
    model = _module("operator_transfer").OperatorTransfer().fit(X[~gpu_c].reset_index(drop=True), y[~gpu_c])
    pred = model.predict(X[gpu_c].reset_index(drop=True))
    assert np.median(np.abs(np.log(pred / y[gpu_c]))) < 0.5
    # wave model: never below the wave roofline bound, and the bound is positive
    wave = _module("neusight_wave")
    bound = wave.wave_features(X)["t_roof_ms"].to_numpy()
    assert np.all(bound > 0)
    fitted = wave.WaveUtilisation().fit(X, y)
    assert np.all(fitted.predict(X) >= bound * (1 - 1e-12))
    # a 4 x 128 x 256 x 64 bmm: output 128 x 64 per batch -> one 128 x 64 tile per batch, 4 tiles, 1 wave
    f = wave.wave_features(pd.DataFrame({"operator": ["bmm"], "dim_b": [4.0], "dim_m": [128.0], "dim_n": [256.0],
                                         "dim_k": [64.0], "gpu_sm_count": [40.0], "gpu_peak_fp32_gflops": [8000.0],
                                         "gpu_memory_bandwidth_gbs": [400.0]}))
    assert (f["log_tiles"].iloc[0], f["waves"].iloc[0], f["tile_m"].iloc[0], f["tile_n"].iloc[0]) == (
        pytest.approx(np.log(4)), 1.0, 128.0, 64.0)
    tile_s = max(2 * 128 * 64 * 256 / (8000e9 / 40), 4 * (128 * 256 + 256 * 64 + 128 * 64) / (400e9 / 40))
    assert f["t_roof_ms"].iloc[0] == pytest.approx(tile_s * 1e3)


def test_qlearning_with_an_exact_surrogate_picks_the_fastest_tpb():
    mod = _module("npb_qlearning")
    task, X, y = _data("npb-tpb")

    class Exact:
        def predict(self, _):
            return y

    model = mod.QLearningTPB(random_state=0)
    model.surrogate_ = Exact()
    scores = model.predict(X)
    for (gpu, bench, kernel), idx in X.groupby(["gpu_peak_fp32_gflops", "benchmark", "kernel"]).groups.items():
        idx = np.asarray(idx)
        assert y[idx[np.argmin(scores[idx])]] == y[idx].min(), (gpu, bench, kernel)


def test_max_and_warp_strategies():
    import pandas as pd

    X = pd.DataFrame({"tpb": [32, 64, 1024]})
    assert np.argmin(_module("npb_max").MaxTPB().fit(X, None).predict(X)) == 2
    assert np.argmin(_module("npb_warp").WarpTPB().fit(X, None).predict(X)) == 0


def test_transfer_ranks_by_the_nearest_gpu_that_measured_the_problem():
    import pandas as pd

    mod = _module("transfer")
    task = get_task("autotune-config")
    hw = {"A": (10.0, 100.0), "B": (20.0, 200.0), "C": (40.0, 400.0)}

    def frame(gpus, configs):
        rows = [{"gpu_sm_count": hw[g][0], "gpu_memory_bandwidth_gbs": hw[g][1], "kernel": "k",
                 "problem_size": "n", "param.bx": c} for g in gpus for c in configs]
        return pd.DataFrame(rows)

    X = frame(["A", "C"], [16.0, 32.0, 64.0])
    y = np.array([3.0, 1.0, 2.0,    # A: 32 best, then 64
                  1.0, 2.0, 4.0])   # C: 16 best
    model = mod.TransferBest(problem_columns=task.problem_columns).fit(X, y)
    near_a = pd.DataFrame([{"gpu_sm_count": 11.0, "gpu_memory_bandwidth_gbs": 110.0, "kernel": "k",
                            "problem_size": "n", "param.bx": c} for c in (16.0, 32.0, 64.0, 128.0)])
    # nearest GPU is A: relative times 3, 1, 2; 128 was never measured there
    np.testing.assert_allclose(model.predict(near_a), [3.0, 1.0, 2.0, mod.UNMEASURED])
    near_c = near_a.assign(gpu_sm_count=39.0, gpu_memory_bandwidth_gbs=390.0)
    np.testing.assert_allclose(model.predict(near_c)[:3], [1.0, 2.0, 4.0])
    other = near_a.assign(problem_size="m")  # no GPU has it: the median relative time of each configuration
    np.testing.assert_allclose(model.predict(other), [2.0, 1.5, 3.0, mod.UNMEASURED])


def test_program_transfer_scales_the_nearest_gpus_time_by_its_figures():
    import pandas as pd

    mod = _module("program_transfer")
    key = {"problem_set": "v0.1", "level": 1.0, "problem": "1_Mm.py"}
    hw = {"A": (100.0, 1000.0), "B": (400.0, 4000.0), "C": (50.0, 500.0)}  # bandwidth GB/s, peak GFLOP/s

    def row(g, mode, **extra):
        return {**key, "compile_mode": mode, "gpu_vendor": "nvidia", "gpu_sm_count": hw[g][0] / 10,
                "gpu_memory_bandwidth_gbs": hw[g][0], "gpu_peak_fp32_gflops": hw[g][1], **extra}

    X = pd.DataFrame([row("A", "eager"), row("B", "eager"), row("A", "inductor-default")])
    model = mod.ProgramTransfer().fit(X, np.array([2.0, 0.6, 1.0]))
    # C is nearest to A (half of A's figures): sqrt(2 * 2) = 2 -> 2.0 * 2 = 4.0
    np.testing.assert_allclose(model.predict(pd.DataFrame([row("C", "eager")])), [4.0])
    # a mode no training GPU ran (cudagraphs) takes the program's other modes on the nearest GPU: median(2, 1) * 2
    np.testing.assert_allclose(model.predict(pd.DataFrame([row("C", "cudagraphs")])), [3.0])
    # an unknown program: the median of its set and mode over the training rows (eager: 2.0, 0.6 -> 1.3)
    other = pd.DataFrame([{**row("C", "eager"), "problem": "2_Other.py"}])
    np.testing.assert_allclose(model.predict(other), [1.3])


def test_relevance_grades_by_two_percent_steps_within_a_group():
    from kgpubench.tasks.ranking import relevance, row_keys

    y = np.array([1.0, 1.01, 1.03, 2.0, 5.0, 5.0 * 1.021])
    groups = np.array([0, 0, 0, 0, 1, 1])
    # ln(1.01)/ln(1.02) = 0.50 -> 30; ln(1.03)/ln(1.02) = 1.49 -> 29; 2x -> 30 - 35 < 0 -> 0; 1.021 -> 29
    assert relevance(y, groups).tolist() == [30, 30, 29, 0, 30, 29]
    import pandas as pd

    X = pd.DataFrame({"a": [1.0, 1.0, np.nan], "b": ["x", "x", None]})
    k = row_keys(X, ["a", "b"])
    assert k[0] == k[1] != k[2] and row_keys(X, []).tolist() == [0, 0, 0]


@pytest.mark.parametrize("name", ["elm", "mlp", "svr"])
def test_neural_and_kernel_baselines_stay_finite_far_outside_the_training_data(name):
    task, X, y = _data("kernel-time")
    factory = model_factory(load_model_module(next(p for p in baseline_files() if p.stem == name)), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = factory(task=task, seed=0).fit(X, y)
    wild = X.copy()
    numeric = wild.select_dtypes("number").columns
    wild[numeric] = wild[numeric] * 1e6 + 1e9  # every input a million times its training range
    pred = model.predict(wild)
    assert np.all(np.isfinite(pred))
    assert pred.min() >= y.min() / 10 * (1 - 1e-12) and pred.max() <= y.max() * 10 * (1 + 1e-12)


def test_nearest_gpu_transfers_the_same_launch_scaled_by_bandwidth():
    """A launch on an unseen GPU: its time on the nearest training GPU x bandwidth ratio; the fall-backs keep the
    first-launch class apart."""
    import pandas as pd

    model = _module("nearest_gpu").NearestGpuTransfer
    base = {"gpu_architecture": "hopper", "gpu_sm_count": 100.0, "gpu_peak_fp32_gflops": 1000.0}
    rows = [dict(base, kernel="k", input_size_1=64, input_size_2=0, launch_index=i, gpu_memory_bandwidth_gbs=bw)
            for bw in (100.0, 400.0) for i in (0, 1)]
    y = [0.01, 1.0, 0.005, 0.5]  # the 100 GB/s GPU is twice as slow as the 400 GB/s one
    fitted = model().fit(pd.DataFrame(rows), y)
    test = pd.DataFrame([dict(base, kernel="k", input_size_1=64, input_size_2=0, launch_index=1,
                              gpu_memory_bandwidth_gbs=200.0),   # nearest in log bandwidth: tie -> first, 100 GB/s
                         dict(base, kernel="k", input_size_1=64, input_size_2=0, launch_index=7,
                              gpu_memory_bandwidth_gbs=390.0),   # no launch 7: median of the launches > 0 there
                         dict(base, kernel="other", input_size_1=1, input_size_2=0, launch_index=0,
                              gpu_memory_bandwidth_gbs=400.0)])  # unknown kernel: the training median
    pred = fitted.predict(test)
    assert pred[0] == pytest.approx(1.0 * 100 / 200)
    assert pred[1] == pytest.approx(0.5 * 400 / 390)
    assert pred[2] == pytest.approx(float(np.median(y)))


@pytest.mark.parametrize("path", [p for p in baseline_files() if "rodinia-time" in {t.name for t in planned_tasks(p)}],
                         ids=lambda p: p.stem)
def test_every_rodinia_baseline_fits_the_profiles_features(path):
    """Each baseline declared on rodinia-time works on its features (strings, nulls in catalogue figures)."""
    task, X, y = _data("rodinia-time")
    assert not [c for c in X.columns if c.startswith("prof_")]
    X = X.assign(gpu_sm_count=np.where(X["gpu_sm_count"] > 50, np.nan, X["gpu_sm_count"]))  # as Kepler's
    half = np.arange(len(y)) % 2 == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = model_factory(load_model_module(path), path)(task=task, seed=0).fit(
            X[half].reset_index(drop=True), y[half]).predict(X[~half].reset_index(drop=True))
    assert pred.shape == (int((~half).sum()),) and np.all(np.isfinite(pred)) and np.all(pred > 0)
