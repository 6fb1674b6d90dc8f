"""Tiles, waves and the wave roofline of one NeuSight operator call (bmm, linear, conv2d, layernorm, softmax and the
elementwise operators) on its GPU, from the call's shape and the GPU's catalogue figures.

Each call is cut into tiles that the GPU runs in waves of one tile per SM:

- bmm / linear / conv2d (implicit GEMM): the output [rows x cols] is cut into 128 x 128 tiles (smaller when the
  output is smaller, powers of two down to 16), each reducing over the full inner size; bmm rows = M per batch,
  cols = K, inner = N; linear rows = B M, cols = K, inner = N; conv2d rows = B O^2, cols = out_channels,
  inner = in_channels k^2 (O the output size).
- LayerNorm / softmax: one row of H elements per tile; elementwise: 4,096 elements per tile.

``waves = ceil(tiles / SMs)``; a tile's roofline time on one SM is ``max(tile_flops / (peak / SMs),
tile_bytes / (bandwidth / SMs))`` and the call's bound is ``t_roof = waves x tile time``.

The same rules as ``baselines/neusight_wave.py`` (which keeps its own copy, so that its recorded sha256 and results
stand; ``tests/features/test_operator_waves.py`` holds the two equal on the shipped rows), here for the operator
baselines that share them. Missing figures get fixed stand-ins (80 SMs, 10 TFLOP/s, 500 GB/s).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["BINARY", "GEMM", "GPU", "NORM", "OPERATORS", "wave_features"]

OPERATORS = ("bmm", "linear", "conv2d", "layernorm", "softmax", "add", "addu", "mul", "mulu", "div", "divu",
             "pow", "powu", "relu", "gelu", "tanh")
GEMM = ("bmm", "linear", "conv2d")
NORM = ("layernorm", "softmax")
BINARY = ("add", "mul", "div", "pow")
GPU = ("gpu_sm_count", "gpu_peak_fp32_gflops", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes", "gpu_clock_sm_mhz",
       "gpu_smem_per_sm_bytes")
ELEMENTS_PER_TILE = 4096.0
MAX_TILE = 128.0


def _column(X: pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(X[name], dtype=float) if name in X.columns else np.full(len(X), np.nan)


def _tile_side(n: np.ndarray) -> np.ndarray:
    """128, or the next power of two >= ``n`` (at least 16) when ``n`` is smaller."""
    return np.clip(2.0 ** np.ceil(np.log2(np.maximum(n, 1.0))), 16.0, MAX_TILE)


def _tiles(X: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """Per row: tiles, one tile's flops and bytes, the tile's sides (0 off GEMM) and its inner size."""
    op = np.asarray(X["operator"], dtype=object)
    b, m, n, k, h = (np.nan_to_num(_column(X, c), nan=1.0) for c in ("dim_b", "dim_m", "dim_n", "dim_k", "dim_h"))
    ci, co, ks, size, stride = (np.nan_to_num(_column(X, c), nan=1.0) for c in (
        "in_channels", "out_channels", "kernel_size", "input_size", "stride"))
    pad = np.nan_to_num(_column(X, "padding"), nan=0.0)
    out_side = np.maximum(np.floor((size + 2 * pad - ks) / np.maximum(stride, 1)) + 1, 1)
    kinds = [op == "bmm", op == "linear", op == "conv2d"]
    gemm = np.isin(op, GEMM)
    rows = np.select(kinds, [m, b * m, b * out_side * out_side], default=1.0)
    cols = np.select(kinds, [k, k, co], default=1.0)
    inner = np.select(kinds, [n, n, ci * ks * ks], default=1.0)
    tm, tn = _tile_side(rows), _tile_side(cols)
    gemm_tiles = np.where(op == "bmm", b, 1.0) * np.ceil(rows / tm) * np.ceil(cols / tn)
    rowwise = np.isin(op, NORM)
    elements = b * h
    per_tile = np.where(rowwise, h, np.minimum(elements, ELEMENTS_PER_TILE))
    tiles = np.where(gemm, gemm_tiles, np.where(rowwise, b, np.ceil(elements / ELEMENTS_PER_TILE)))
    flops_per_element = np.select([op == "layernorm", op == "softmax"], [8.0, 5.0], default=1.0)
    bytes_per_element = np.where(np.isin(op, BINARY), 12.0, 8.0)
    tile_flops = np.where(gemm, 2 * tm * tn * inner, flops_per_element * per_tile)
    tile_bytes = np.where(gemm, 4 * (tm * inner + inner * tn + tm * tn), bytes_per_element * per_tile)
    return (tiles, tile_flops, tile_bytes, np.where(gemm, tm, 0.0), np.where(gemm, tn, 0.0),
            np.where(gemm, inner, per_tile))


def wave_features(X: pd.DataFrame) -> pd.DataFrame:
    """Tiles, waves, per-tile work, the GPU's figures (:data:`GPU`) and the wave roofline ``t_roof_ms`` of every row
    of ``X`` (columns ``operator``, the shape columns, ``flops``, ``bytes_min`` and the GPU's; a missing shape
    column counts as 1). ``operator`` comes back as its index in :data:`OPERATORS` (-1: another)."""
    tiles, tile_flops, tile_bytes, tile_m, tile_n, inner = _tiles(X)
    sms = np.maximum(np.nan_to_num(_column(X, "gpu_sm_count"), nan=80.0), 1.0)
    peak = np.maximum(np.nan_to_num(_column(X, "gpu_peak_fp32_gflops"), nan=1e4), 1.0) * 1e9 / sms
    bandwidth = np.maximum(np.nan_to_num(_column(X, "gpu_memory_bandwidth_gbs"), nan=500.0), 1.0) * 1e9 / sms
    waves = np.ceil(tiles / sms)
    tile_s = np.maximum(tile_flops / peak, tile_bytes / bandwidth)
    return pd.DataFrame({
        "operator": pd.Categorical(np.asarray(X["operator"], dtype=object), categories=OPERATORS).codes.astype(float),
        "log_tiles": np.log(tiles), "waves": waves, "log_waves": np.log(waves), "wave_fill": tiles / (waves * sms),
        "log_tile_flops": np.log(tile_flops), "log_tile_bytes": np.log(tile_bytes),
        "tile_intensity": np.log(tile_flops / tile_bytes), "tile_m": tile_m, "tile_n": tile_n,
        "log_inner": np.log(inner), "log_flops": np.log1p(np.nan_to_num(_column(X, "flops"))),
        "log_bytes": np.log1p(np.nan_to_num(_column(X, "bytes_min"))),
        **{c: _column(X, c) for c in GPU},
        "t_roof_ms": np.maximum(waves * tile_s * 1e3, 1e-9),
    })
