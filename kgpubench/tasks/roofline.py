"""The roofline bound of one call from its nominal work and its GPU's catalogue figures, and the GPU similarity that
the transfer baselines use: shared by the baselines of the operator tasks (`gemm-latency`, `attention-latency`,
`conv-time`, `conv-solver`) and by `kgpubench predict`.

``t_roof = max(flops / peak, bytes_min / bandwidth)`` in ms, with ``peak`` the GPU's dense tensor peak for the
call's compute dtype (``peak_tensor_tflops``) where the row has a cited one, else its fp32 peak; a row without
a bandwidth or a peak gets NaN (callers fill it). Pure functions of a feature frame: no file, no state.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# The catalogue figures the transfer baselines compare GPUs by (in standardised log space).
GPU_FIGURES = ("gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
               "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops")
# Columns that describe the GPU rather than the work (never part of a workload key).
GPU_COLUMNS = (*GPU_FIGURES, "gpu_vendor", "gpu_architecture", "peak_tensor_tflops")


def _column(X: pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(X[name], dtype=float) if name in X.columns else np.full(len(X), np.nan)


def peak_flops(X: pd.DataFrame) -> np.ndarray:
    """FLOP/s of every row: the tensor peak of its compute dtype where cited, else the fp32 peak (NaN: neither)."""
    tensor = _column(X, "peak_tensor_tflops") * 1e12
    fp32 = _column(X, "gpu_peak_fp32_gflops") * 1e9
    return np.where(np.isfinite(tensor) & (tensor > 0), tensor, np.where(fp32 > 0, fp32, np.nan))


def roofline_ms(X: pd.DataFrame) -> np.ndarray:
    """``max(flops / peak, bytes_min / bandwidth)`` in ms for every row (NaN where a figure is missing)."""
    bandwidth = _column(X, "gpu_memory_bandwidth_gbs") * 1e9
    bandwidth = np.where(bandwidth > 0, bandwidth, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = np.maximum(_column(X, "flops") / peak_flops(X), _column(X, "bytes_min") / bandwidth) * 1e3
    return np.where(bound > 0, bound, np.nan)


def filled_roofline_ms(X: pd.DataFrame, fallback: float | None = None) -> tuple[np.ndarray, float]:
    """:func:`roofline_ms` with missing bounds replaced by ``fallback`` (default: the median bound of ``X``, 1 ms
    when it has none); returns the bounds and the fallback used."""
    bound = roofline_ms(X)
    if fallback is None:
        finite = bound[np.isfinite(bound)]
        fallback = float(np.median(finite)) if finite.size else 1.0
    return np.where(np.isfinite(bound), bound, fallback), fallback


def workload_keys(X: pd.DataFrame, leave_out: tuple[str, ...] = ()) -> np.ndarray:
    """One string per row naming its workload: every column that is not a GPU column (``gpu_*`` or
    :data:`GPU_COLUMNS`) nor in ``leave_out``, so two rows with the same key are the same call measured on different
    GPUs."""
    cols = [c for c in X.columns if c not in GPU_COLUMNS and not c.startswith("gpu_") and c not in leave_out]
    return joined_text(X, cols)


def joined_text(X: pd.DataFrame, columns) -> np.ndarray:
    """One string per row: the values of ``columns`` as text joined by ``|`` (a missing value as the empty text);
    the same values give the same text in any frame (column-wise, not row by row)."""
    key = np.full(len(X), "", dtype=object)
    for i, col in enumerate(columns):
        text = X[col].astype(object).where(X[col].notna(), "").astype(str).to_numpy(dtype=object)
        key = text if i == 0 else key + "|" + text
    return key


def gpu_matrix(X: pd.DataFrame) -> np.ndarray:
    """Log catalogue figures of every row (missing figures as 0 in log space), for GPU distances."""
    cols = [c for c in GPU_FIGURES if c in X.columns]
    values = X[cols].to_numpy(dtype=float) if cols else np.zeros((len(X), 0))
    return np.log(np.maximum(np.nan_to_num(values, nan=1.0), 1e-9))
