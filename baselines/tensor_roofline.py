"""Floor: the roofline with the dtype's tensor peak; sees the call's nominal flops and bytes, its compute dtype
(and operator), the GPU's dense tensor peak for that dtype (its fp32 peak where none is cited) and its bandwidth.

``t_roof = max(flops / peak, bytes_min / bandwidth)`` (ms, :func:`kgpubench.tasks.roofline.roofline_ms`); one
scale per (operator, compute dtype), ``k = exp(median(ln(y / t_roof)))`` over its training rows (the overall
scale for a pair not trained on), and ``predict = k t_roof``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.roofline import filled_roofline_ms, joined_text

GROUP = ("operator", "compute_dtype", "direction")


def _groups(X) -> np.ndarray:
    return joined_text(X, [c for c in GROUP if c in X.columns])


class TensorRoofline(RegressorMixin, BaseEstimator):
    """Roofline time (ms) of a call times one fitted scale per (operator, compute dtype)."""

    def fit(self, X, y):
        bound, self.fallback_ = filled_roofline_ms(X)
        log_ratio = np.log(np.asarray(y, dtype=float) / bound)
        groups = _groups(X)
        self.scale_ = {g: float(np.exp(np.median(log_ratio[groups == g]))) for g in np.unique(groups)}
        self.overall_ = float(np.exp(np.median(log_ratio)))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "scale_")
        bound, _ = filled_roofline_ms(X, self.fallback_)
        scale = np.asarray([self.scale_.get(g, self.overall_) for g in _groups(X)], dtype=float)
        return scale * bound


def make_model(task, seed):
    return TensorRoofline()
