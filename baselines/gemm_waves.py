"""Wave model of a GEMM: output tiles in waves over the SMs, each wave as long as one SM takes for its tile at the
dtype's peak; sees m, n, k, the compute dtype, the nominal bytes and the GPU's SM count, dense tensor peak of the
dtype (fp32 peak where none is cited) and bandwidth.

The output is cut into 128 x 128 tiles; ``waves = ceil(ceil(m/128) ceil(n/128) / SMs)``; one wave takes
``2 x 128 x 128 x k / (peak / SMs)``; ``t_model = max(waves x wave time, bytes_min / bandwidth)`` (ms). The last,
partly filled wave costs a whole one: the quantisation that a roofline misses for small and odd shapes. Per
compute dtype, a launch floor ``a`` (the 5th percentile of the training times) and a scale
``b = exp(median(ln((y - a) / t_model)))`` over the rows at least twice the floor are fitted:
``predict = a + b t_model`` (the overall fit for a dtype not trained on).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.roofline import peak_flops

TILE = 128.0


def wave_ms(X, fallback: dict) -> np.ndarray:
    """The wave-model time (ms) of every GEMM row; missing GPU figures take ``fallback``'s medians."""
    def col(name):
        values = np.asarray(X[name], dtype=float)
        return np.where(np.isfinite(values) & (values > 0), values, fallback.get(name, np.nan))

    m, n, k = col("m"), col("n"), col("k")
    sms = col("gpu_sm_count")
    peak = peak_flops(X)
    peak = np.where(np.isfinite(peak), peak, fallback["peak"])
    bandwidth = col("gpu_memory_bandwidth_gbs") * 1e9
    waves = np.ceil(np.ceil(m / TILE) * np.ceil(n / TILE) / sms)
    compute = waves * 2 * TILE * TILE * k / (peak / sms)
    memory = col("bytes_min") / bandwidth
    return np.maximum(compute, memory) * 1e3


def _fit(y: np.ndarray, t: np.ndarray) -> tuple[float, float]:
    floor = float(np.percentile(y, 5))
    above = y >= 2 * floor
    use = above if above.any() else np.ones_like(y, dtype=bool)
    scale = float(np.exp(np.median(np.log(np.maximum(y[use] - floor, 1e-12) / t[use]))))
    return floor, scale


class GemmWaves(RegressorMixin, BaseEstimator):
    """``a + b x`` wave-model time, fitted per compute dtype."""

    def fit(self, X, y):
        y = np.asarray(y, dtype=float)
        self.fallback_ = {c: float(np.nanmedian(np.where(np.asarray(X[c], float) > 0, np.asarray(X[c], float),
                                                          np.nan)))
                          for c in ("gpu_sm_count", "gpu_memory_bandwidth_gbs")}
        peaks = peak_flops(X)
        self.fallback_["peak"] = float(np.nanmedian(peaks)) if np.isfinite(peaks).any() else 1e14
        t = wave_ms(X, self.fallback_)
        dtypes = np.asarray(X["compute_dtype"], dtype=object)
        self.fits_ = {d: _fit(y[dtypes == d], t[dtypes == d]) for d in np.unique(dtypes)}
        self.overall_ = _fit(y, t)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "fits_")
        t = wave_ms(X, self.fallback_)
        ab = np.asarray([self.fits_.get(d, self.overall_) for d in np.asarray(X["compute_dtype"], dtype=object)])
        return ab[:, 0] + ab[:, 1] * t


def make_model(task, seed):
    return GemmWaves()
