"""Floor: an analytic roofline estimate from the GPU's peak flops and memory bandwidth.

``t_roof = max(ops / peak_flops, bytes / bandwidth)`` with ``ops = (lc + ldpu + lsfu) * threads`` and
``bytes = 4 * (lmr + lmw) * threads``, ``threads = nb * nt`` (per-thread executed instruction counts, seed 000).
One scale factor is fitted: ``k = exp(median(ln(y / t_roof)))`` over the training rows; ``predict = k t_roof``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

# Not on rodinia-time: the `profiles` table has no per-thread instruction counts (lc, lmr, ...), only the
# profiler's, which a task may not use.
NEEDED = ("lc", "ldpu", "lsfu", "lmr", "lmw", "nb", "nt", "gpu_peak_fp32_gflops", "gpu_memory_bandwidth_gbs")


class RooflineRegressor(RegressorMixin, BaseEstimator):
    """Roofline time (ms) times one fitted scale; needs the columns in :data:`NEEDED`."""

    def __init__(self, *, word_bytes: float = 4.0) -> None:
        self.word_bytes = word_bytes

    def roofline_ms(self, X) -> np.ndarray:
        missing = [c for c in NEEDED if c not in X.columns]
        if missing:
            raise ValueError(f"roofline needs feature columns {missing}")
        f = {c: np.nan_to_num(np.asarray(X[c], dtype=float)) for c in NEEDED}
        threads = np.maximum(f["nb"] * f["nt"], 1.0)
        ops = (f["lc"] + f["ldpu"] + f["lsfu"]) * threads
        nbytes = self.word_bytes * (f["lmr"] + f["lmw"]) * threads
        peak = np.maximum(f["gpu_peak_fp32_gflops"], 1e-9) * 1e9
        bw = np.maximum(f["gpu_memory_bandwidth_gbs"], 1e-9) * 1e9
        return np.maximum(np.maximum(ops / peak, nbytes / bw) * 1e3, 1e-9)

    def fit(self, X, y):
        ratio = np.asarray(y, dtype=float) / self.roofline_ms(X)
        self.scale_ = float(np.exp(np.median(np.log(ratio))))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "scale_")
        return self.scale_ * self.roofline_ms(X)


def make_model(task, seed):
    return RooflineRegressor()
