"""``kgpubench.features.operator_waves``: the NeuSight operators' tiles, waves and wave roofline. operator_pairs
imports it; neusight_wave (whose file is hashed into its committed results, so left as it is) holds the same rules
inline, and both must agree on every shipped row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kgpubench.board.leaderboard import baseline_files
from kgpubench.features.operator_waves import wave_features
from kgpubench.models.evaluation import load_model_module
from kgpubench.tasks.data import task_data


@pytest.mark.slow
def test_the_same_features_as_neusight_wave_on_every_shipped_row():
    X = task_data("operator-latency", "neusight").X
    inline = load_model_module(next(p for p in baseline_files() if p.stem == "neusight_wave")).wave_features
    assert set(X["operator"]) >= {"bmm", "linear", "conv2d", "layernorm", "softmax", "add", "gelu"}
    pd.testing.assert_frame_equal(wave_features(X), inline(X))


def test_a_gemm_is_cut_into_tiles_and_waves():
    # linear: rows = B M = 4 x 100 = 400, cols = K = 300, inner = N = 64 -> 128 x 128 tiles: 4 x 3 = 12 tiles
    X = pd.DataFrame({"operator": ["linear", "softmax", "relu"], "dim_b": [4.0, 512.0, 10.0],
                      "dim_m": [100.0, np.nan, np.nan], "dim_n": [64.0, np.nan, np.nan],
                      "dim_k": [300.0, np.nan, np.nan], "dim_h": [np.nan, 1024.0, 5000.0],
                      "gpu_sm_count": [5.0] * 3, "gpu_peak_fp32_gflops": [1000.0] * 3,
                      "gpu_memory_bandwidth_gbs": [100.0] * 3})
    f = wave_features(X)
    np.testing.assert_allclose(np.exp(f["log_tiles"]), [12, 512, 13])  # softmax: a row per tile; 50,000 / 4,096
    np.testing.assert_allclose(f["waves"], [3, 103, 3])
    np.testing.assert_allclose(f["tile_m"], [128, 0, 0])
    # one GEMM tile: 2 x 128 x 128 x 64 flops on 200 GFLOP/s per SM, 4 x (2 x 128 x 64 + 128^2) bytes on 20 GB/s
    tile_s = max(2 * 128 * 128 * 64 / 200e9, 4 * (2 * 128 * 64 + 128 * 128) / 20e9)
    assert f["t_roof_ms"][0] == pytest.approx(3 * tile_s * 1e3)
