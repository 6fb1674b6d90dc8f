"""Wave/tile model in the spirit of NeuSight (ASPLOS '25), written from the paper's description only; sees the
operator, its shape and nominal work, and the GPU's catalogue figures (SMs, peak fp32, bandwidth, ...).

Each call is cut into tiles that the GPU runs in waves of one tile per SM:

- bmm / linear / conv2d (implicit GEMM): the output [rows x cols] is cut into 128 x 128 tiles (smaller when the
  output is smaller, powers of two down to 16), each reducing over the full inner size; bmm rows = M per batch,
  cols = K, inner = N; linear rows = B M, cols = K, inner = N; conv2d rows = B O^2, cols = out_channels,
  inner = in_channels k^2 (O the output size).
- LayerNorm / softmax: one row of H elements per tile; elementwise: 4,096 elements per tile.

``waves = ceil(tiles / SMs)``; a tile's roofline time on one SM is ``max(tile_flops / (peak / SMs),
tile_bytes / (bandwidth / SMs))`` and the call's bound is ``t_roof = waves x tile time``. A LightGBM model
learns the utilisation ``u = t_roof / t`` (on the log scale) from the tile and wave features, the operator and the
GPU; the prediction is ``t_roof / u`` with ``u`` clipped to (1e-6, 1], so it never beats the roofline.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

OPERATORS = ("bmm", "linear", "conv2d", "layernorm", "softmax", "add", "addu", "mul", "mulu", "div", "divu",
             "pow", "powu", "relu", "gelu", "tanh")
BINARY = ("add", "mul", "div", "pow")
GPU = ("gpu_sm_count", "gpu_peak_fp32_gflops", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes", "gpu_clock_sm_mhz",
       "gpu_smem_per_sm_bytes")
ELEMENTS_PER_TILE = 4096.0
MAX_TILE = 128.0


def _col(X, name) -> np.ndarray:
    return np.asarray(X[name], dtype=float) if name in X.columns else np.full(len(X), np.nan)


def _tile_side(n: np.ndarray) -> np.ndarray:
    """The tile side for an output side ``n``: 128, or the next power of two >= n (at least 16) when smaller."""
    side = 2.0 ** np.ceil(np.log2(np.maximum(n, 1.0)))
    return np.clip(side, 16.0, MAX_TILE)


def wave_features(X) -> pd.DataFrame:
    """Tiles, waves, per-tile work and the roofline bound ``t_roof_ms`` of every row (see the module doc)."""
    op = np.asarray(X["operator"], dtype=object)
    b, m, n, k, h = (np.nan_to_num(_col(X, c), nan=1.0) for c in ("dim_b", "dim_m", "dim_n", "dim_k", "dim_h"))
    ci, co, ks, ins, st, pad = (np.nan_to_num(_col(X, c), nan=1.0) for c in (
        "in_channels", "out_channels", "kernel_size", "input_size", "stride", "padding"))
    pad = np.nan_to_num(_col(X, "padding"), nan=0.0)
    osz = np.maximum(np.floor((ins + 2 * pad - ks) / np.maximum(st, 1)) + 1, 1)
    gemm = np.isin(op, ("bmm", "linear", "conv2d"))
    rows = np.select([op == "bmm", op == "linear", op == "conv2d"], [m, b * m, b * osz * osz], default=1.0)
    cols = np.select([op == "bmm", op == "linear", op == "conv2d"], [k, k, co], default=1.0)
    inner = np.select([op == "bmm", op == "linear", op == "conv2d"], [n, n, ci * ks * ks], default=1.0)
    batch = np.where(op == "bmm", b, 1.0)
    tm, tn = _tile_side(rows), _tile_side(cols)
    gemm_tiles = batch * np.ceil(rows / tm) * np.ceil(cols / tn)
    gemm_flops = 2 * tm * tn * inner
    gemm_bytes = 4 * (tm * inner + inner * tn + tm * tn)
    rowwise = np.isin(op, ("layernorm", "softmax"))
    elements = b * h
    vec_tiles = np.where(rowwise, b, np.ceil(elements / ELEMENTS_PER_TILE))
    per_tile = np.where(rowwise, h, np.minimum(elements, ELEMENTS_PER_TILE))
    bytes_per_el = np.where(np.isin(op, BINARY), 12.0, 8.0)
    flops_per_el = np.select([op == "layernorm", op == "softmax"], [8.0, 5.0], default=1.0)
    tiles = np.where(gemm, gemm_tiles, vec_tiles)
    tile_flops = np.where(gemm, gemm_flops, flops_per_el * per_tile)
    tile_bytes = np.where(gemm, gemm_bytes, bytes_per_el * per_tile)
    sms = np.maximum(np.nan_to_num(_col(X, "gpu_sm_count"), nan=80.0), 1.0)
    peak = np.maximum(np.nan_to_num(_col(X, "gpu_peak_fp32_gflops"), nan=1e4), 1.0) * 1e9 / sms
    bw = np.maximum(np.nan_to_num(_col(X, "gpu_memory_bandwidth_gbs"), nan=500.0), 1.0) * 1e9 / sms
    waves = np.ceil(tiles / sms)
    tile_s = np.maximum(tile_flops / peak, tile_bytes / bw)
    codes = pd.Categorical(op, categories=OPERATORS).codes.astype(float)
    out = {
        "operator": codes, "log_tiles": np.log(tiles), "waves": waves, "log_waves": np.log(waves),
        "wave_fill": tiles / (waves * sms), "log_tile_flops": np.log(tile_flops), "log_tile_bytes": np.log(tile_bytes),
        "tile_intensity": np.log(tile_flops / tile_bytes), "tile_m": np.where(gemm, tm, 0.0),
        "tile_n": np.where(gemm, tn, 0.0), "log_inner": np.log(np.where(gemm, inner, per_tile)),
        "log_flops": np.log1p(np.nan_to_num(_col(X, "flops"))),
        "log_bytes": np.log1p(np.nan_to_num(_col(X, "bytes_min"))),
        **{c: _col(X, c) for c in GPU},
        "t_roof_ms": np.maximum(waves * tile_s * 1e3, 1e-9),
    }
    return pd.DataFrame(out)


class WaveUtilisation(RegressorMixin, BaseEstimator):
    """``t_roof / u`` with the utilisation ``u`` learnt by gradient-boosted trees from tile and wave features."""

    def __init__(self, *, seed: int = 0, threads: int = 1) -> None:
        self.seed = seed
        self.threads = threads

    def fit(self, X, y):
        from lightgbm import LGBMRegressor

        f = wave_features(X)
        roof = f.pop("t_roof_ms").to_numpy()
        log_u = np.minimum(np.log(roof / np.asarray(y, dtype=float)), 0.0)
        self.model_ = LGBMRegressor(n_estimators=200, num_leaves=63, learning_rate=0.1, subsample=0.8,
                                    subsample_freq=1, colsample_bytree=0.9, n_jobs=self.threads,
                                    deterministic=True, force_row_wise=True, random_state=self.seed, verbose=-1)
        self.model_.fit(f, log_u)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        f = wave_features(X)
        roof = f.pop("t_roof_ms").to_numpy()
        u = np.clip(np.exp(self.model_.predict(f)), 1e-6, 1.0)
        return roof / u


def make_model(task, seed):
    from kgpubench.tasks.preprocess import thread_count

    return WaveUtilisation(seed=seed, threads=thread_count())
