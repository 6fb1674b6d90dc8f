"""Floor: NeuSight's roofline baseline on our side; sees the operator's nominal flops and bytes and the GPU's peak
fp32 and memory bandwidth.

``t_roof = max(flops / peak_fp32, bytes_min / bandwidth)`` (ms); one scale is fitted,
``k = exp(median(ln(y / t_roof)))`` over the training rows, and ``predict = k t_roof``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

NEEDED = ("flops", "bytes_min", "gpu_peak_fp32_gflops", "gpu_memory_bandwidth_gbs")


def roofline_ms(X) -> np.ndarray:
    """``max(flops / peak, bytes / bandwidth)`` in ms for every row of ``X`` (a frame with :data:`NEEDED`)."""
    missing = [c for c in NEEDED if c not in X.columns]
    if missing:
        raise ValueError(f"roofline needs feature columns {missing}")
    f = {c: np.nan_to_num(np.asarray(X[c], dtype=float)) for c in NEEDED}
    peak = np.maximum(f["gpu_peak_fp32_gflops"], 1e-9) * 1e9
    bw = np.maximum(f["gpu_memory_bandwidth_gbs"], 1e-9) * 1e9
    return np.maximum(np.maximum(f["flops"] / peak, f["bytes_min"] / bw) * 1e3, 1e-9)


class OperatorRoofline(RegressorMixin, BaseEstimator):
    """Roofline time (ms) of an operator call times one fitted scale."""

    def fit(self, X, y):
        ratio = np.asarray(y, dtype=float) / roofline_ms(X)
        self.scale_ = float(np.exp(np.median(np.log(ratio))))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "scale_")
        return self.scale_ * roofline_ms(X)


def make_model(task, seed):
    return OperatorRoofline()
