"""Physically bounded model (utilisation learnt, bounded by the roofline, in the spirit of NeuSight): for each row
a roofline time bound from the GPU's catalogue figures and the launch's work, and a LightGBM model of how far
above the bound the launch runs; sees the task's features (on rodinia-time: launch, inputs, GPU figures; on
rodinia-time-counters also the launch's prof_* counters).

Work of a launch (bytes moved, flops):

- with profiler counters (rodinia-time-counters): bytes = 32 x (device memory read transactions + L2 write
  transactions; the profiles have no device write transaction count), flops = single + double precision floating
  point operations (both against the fp32 peak: the catalogue has no fp64 figure); both measured on the launch.
- without: learnt from the training GPUs' rows. A GPU-independent LightGBM model of the launch features
  (kernel, inputs, launch index, grid, block; no GPU figure, and neither registers nor shared memory: the
  binaries were compiled per architecture, so their register counts tell the GPU family apart) predicts
  ``ln(time x bandwidth)`` (the bytes the launch would move if it were memory bound) and another
  ``ln(time x peak fp32)`` (the flops it would do if it were compute bound).

The bound is the roofline ``t_roof = max(bytes / bandwidth, flops / peak_fp32)`` (ms; a missing figure: the
training rows' median), shifted per kernel by the smallest ``ln(time / t_roof)`` of its training rows so that no
training row runs below its bound (an unseen GPU's rows may: the bound is as good as the work estimate). The
utilisation model (LightGBM on the launch features, the GPU's catalogue figures and ``ln t_roof``; the counters
too where the task has them) predicts ``ln(time / t_roof)``, clipped at 0: the prediction
``t_roof x exp(ratio)`` never falls below the bound. Hyper-parameters are fixed; one thread, deterministic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.preprocess import thread_count

# Launch columns (GPU-independent); the categorical ones are coded with the categories seen in fit.
CATEGORICAL = ("application", "kernel")
LAUNCH = ("input_size_1", "input_size_2", "launch_index", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
          "block_z", "registers_per_thread", "static_smem_bytes")
ARCH = "gpu_architecture"
# Per-binary columns (compiled per architecture): left out of the GPU-independent work model.
PER_BINARY = ("registers_per_thread", "static_smem_bytes")
BANDWIDTH = "gpu_memory_bandwidth_gbs"
PEAK = "gpu_peak_fp32_gflops"
PROF = "prof_"
# Counters: bytes = 32 x transactions; flops = floating point operations.
TRANSACTION_BYTES = 32.0
BYTE_COUNTERS = ("prof_device_memory_read_transactions", "prof_l2_write_transactions")
FLOP_COUNTERS = ("prof_floating_point_operations_single_precision",
                 "prof_floating_point_operations_double_precision")
TINY = 1e-12
WORK_PARAMS = dict(n_estimators=300, num_leaves=63, learning_rate=0.05, min_child_samples=5)
RATIO_PARAMS = dict(n_estimators=200, num_leaves=31, learning_rate=0.05, min_child_samples=20)


def _col(X: pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(X[name], dtype=float) if name in X.columns else np.full(len(X), np.nan)


def _positive(values: np.ndarray, fallback: float) -> np.ndarray:
    """``values`` with missing or non-positive entries replaced by ``fallback``."""
    return np.where(np.isfinite(values) & (values > 0), values, fallback)


class RooflineUtilisation(RegressorMixin, BaseEstimator):
    """``t_roof x exp(r)``: roofline bound from work and GPU figures, ``r >= 0`` learnt (module doc)."""

    def __init__(self, *, seed: int = 0, threads: int = 1) -> None:
        self.seed = seed
        self.threads = threads

    # ----- features ------------------------------------------------------------------------------------------
    def _launch(self, X: pd.DataFrame) -> pd.DataFrame:
        """The GPU-independent launch features: categorical codes, sizes, thread counts (log)."""
        out = {c: pd.Categorical(X[c].astype(str), categories=self.categories_[c]).codes.astype(float)
               if c in X.columns else np.full(len(X), -1.0) for c in CATEGORICAL}
        for c in LAUNCH:
            out[c] = _col(X, c)
        grid = np.nan_to_num(_col(X, "grid_x"), nan=1) * np.nan_to_num(_col(X, "grid_y"), nan=1) \
            * np.nan_to_num(_col(X, "grid_z"), nan=1)
        block = np.nan_to_num(_col(X, "block_x"), nan=1) * np.nan_to_num(_col(X, "block_y"), nan=1) \
            * np.nan_to_num(_col(X, "block_z"), nan=1)
        out["log_blocks"] = np.log(np.maximum(grid, 1.0))
        out["log_threads"] = np.log(np.maximum(grid * block, 1.0))
        return pd.DataFrame(out)

    def _gpu(self, X: pd.DataFrame) -> pd.DataFrame:
        """The GPU's catalogue figures (log) and its architecture's code."""
        out = {c: np.log(_col(X, c)) for c in self.gpu_columns_}
        out[ARCH] = pd.Categorical(X[ARCH].astype(str) if ARCH in X.columns else np.full(len(X), ""),
                                   categories=self.categories_[ARCH]).codes.astype(float)
        return pd.DataFrame(out)

    def _rates(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Peak memory bandwidth (bytes/ms) and peak fp32 (flop/ms); a missing figure: the training median."""
        bw = _positive(_col(X, BANDWIDTH), self.medians_[BANDWIDTH]) * 1e6
        peak = _positive(_col(X, PEAK), self.medians_[PEAK]) * 1e6
        return bw, peak

    def _work(self, X: pd.DataFrame, launch: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Bytes and flops of every row: counted (counters) or learnt from the training GPUs (module doc)."""
        if self.counters_:
            moved = sum(np.nan_to_num(_col(X, c)) for c in BYTE_COUNTERS) * TRANSACTION_BYTES
            flops = sum(np.nan_to_num(_col(X, c)) for c in FLOP_COUNTERS)
            return np.maximum(moved, 0.0), np.maximum(flops, 0.0)
        work = launch.drop(columns=list(PER_BINARY))
        return np.exp(self.bytes_model_.predict(work)), np.exp(self.flops_model_.predict(work))

    def _bound(self, X: pd.DataFrame, launch: pd.DataFrame) -> np.ndarray:
        """``ln t_roof`` (ms) before the per-kernel offset."""
        moved, flops = self._work(X, launch)
        bw, peak = self._rates(X)
        return np.log(np.maximum(np.maximum(moved / bw, flops / peak), TINY))

    def _ratio_features(self, X: pd.DataFrame, launch: pd.DataFrame, log_bound: np.ndarray) -> pd.DataFrame:
        parts = [launch, self._gpu(X), pd.DataFrame({"log_bound": log_bound})]
        if self.counters_:
            parts.append(X[self.prof_columns_].astype(float).reset_index(drop=True))
        return pd.concat(parts, axis=1)

    def _booster(self, params: dict):
        from lightgbm import LGBMRegressor

        return LGBMRegressor(**params, subsample=0.8, subsample_freq=1, colsample_bytree=0.9,
                             n_jobs=self.threads, deterministic=True, force_row_wise=True,
                             random_state=self.seed, verbose=-1)

    # ----- fit / predict -------------------------------------------------------------------------------------
    def fit(self, X, y):
        X = pd.DataFrame(X).reset_index(drop=True)
        y = np.asarray(y, dtype=float)
        log_y = np.log(np.maximum(y, TINY))
        self.categories_ = {c: sorted(X[c].astype(str).unique()) if c in X.columns else []
                            for c in (*CATEGORICAL, ARCH)}
        self.gpu_columns_ = [c for c in X.columns if c.startswith("gpu_") and c != ARCH]
        self.medians_ = {c: float(np.nanmedian(_positive(_col(X, c), np.nan))) if c in X.columns else 1.0
                         for c in (BANDWIDTH, PEAK)}
        self.prof_columns_ = [c for c in X.columns if c.startswith(PROF)]
        self.counters_ = all(c in X.columns for c in (*BYTE_COUNTERS, *FLOP_COUNTERS))
        launch = self._launch(X)
        if not self.counters_:
            bw, peak = self._rates(X)
            work = launch.drop(columns=list(PER_BINARY))
            self.bytes_model_ = self._booster(WORK_PARAMS).fit(work, log_y + np.log(bw))
            self.flops_model_ = self._booster(WORK_PARAMS).fit(work, log_y + np.log(peak))
        raw = self._bound(X, launch)
        gap = pd.Series(log_y - raw).groupby(launch["kernel"].to_numpy()).min()
        self.offset_ = {float(k): float(v) for k, v in gap.items()}
        self.offset_default_ = float(gap.min())
        log_bound = raw + self._offset(launch)
        self.ratio_model_ = self._booster(RATIO_PARAMS).fit(self._ratio_features(X, launch, log_bound),
                                                           log_y - log_bound)
        self.n_features_in_ = X.shape[1]
        return self

    def _offset(self, launch: pd.DataFrame) -> np.ndarray:
        return np.array([self.offset_.get(float(k), self.offset_default_) for k in launch["kernel"]])

    def log_bound(self, X) -> np.ndarray:
        """``ln t_roof`` (ms) of every row of ``X``, the per-kernel offset included: predictions never fall below."""
        check_is_fitted(self, "ratio_model_")
        X = pd.DataFrame(X).reset_index(drop=True)
        launch = self._launch(X)
        return self._bound(X, launch) + self._offset(launch)

    def predict(self, X):
        check_is_fitted(self, "ratio_model_")
        X = pd.DataFrame(X).reset_index(drop=True)
        launch = self._launch(X)
        log_bound = self._bound(X, launch) + self._offset(launch)
        ratio = self.ratio_model_.predict(self._ratio_features(X, launch, log_bound))
        return np.exp(log_bound + np.maximum(ratio, 0.0))


def make_model(task, seed):
    return RooflineUtilisation(seed=seed, threads=thread_count())
