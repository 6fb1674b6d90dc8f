"""Shared input handling for models: numeric imputation, optional min-max scaling, one-hot strings, a
standardised (log) target with clipped outputs, and the thread count the evaluation allows.

Baselines (and user submissions) may use these so that every model sees the task's features the same way.
"""

from __future__ import annotations

import math
import os

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, OrdinalEncoder
from sklearn.utils.validation import check_is_fitted

# How far outside the training targets a prediction may go: a factor of 10 on the log scale, one training
# range on the linear scale. Keeps a wild extrapolation (a new kernel, a new GPU) finite and bounded.
LOG_CLIP_FACTOR = 10.0


def thread_count() -> int:
    """Threads a model may use: ``KGPUBENCH_THREADS`` (set by the evaluation's Limits), else
    ``OMP_NUM_THREADS``, else 1."""
    for name in ("KGPUBENCH_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


def stable_log(y) -> np.ndarray:
    """Natural log through the C library, element by element: the same bits on every x86-64 CPU (NumPy's
    vectorised ``log`` takes another code path on AVX-512 machines, which moved tree splits between CPUs)."""
    return np.asarray([math.log(v) for v in np.asarray(y, dtype=np.float64).ravel()], dtype=np.float64)


def stable_exp(z) -> np.ndarray:
    """``exp`` through the C library, element by element (see :func:`stable_log`)."""
    return np.asarray([math.exp(v) for v in np.asarray(z, dtype=np.float64).ravel()], dtype=np.float64)


def tabular_preprocessor(*, scale: bool = False, one_hot: bool = True):
    """A ``ColumnTransformer``: numbers -> median-imputed (and min-max scaled to [0, 1] when ``scale``, values
    outside the training range clipped to it); strings -> one-hot (unknown categories at predict time become all
    zeros) or ordinal codes.

    Parameters
    ----------
    scale : bool
        Min-max scale numeric columns (seed 000's normalisation).
    one_hot : bool
        One-hot encode strings (else ordinal codes, unknown -> -1; enough for trees).
    """
    numeric = [SimpleImputer(strategy="median", keep_empty_features=True)]
    if scale:
        numeric.append(MinMaxScaler(clip=True))
    if one_hot:
        strings = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    else:
        strings = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    return ColumnTransformer(
        [("num", make_pipeline(*numeric), make_column_selector(dtype_include=np.number)),
         ("str", strings, make_column_selector(dtype_include=[object, "string"]))],
        sparse_threshold=0.0,
    )


class ScaledTarget(RegressorMixin, BaseEstimator):
    """Fit ``regressor`` on the standardised target (its natural log when ``log``) and map predictions back,
    clipped to the training range widened by :data:`LOG_CLIP_FACTOR` (log) or by one range (linear).

    ``z = (t(y) - mean) / std`` with ``t = ln`` or the identity; ``predict = t^-1(clip(z_hat) * std + mean)``.
    Standardising keeps neural networks and random-feature models in their working range; the clip keeps
    every prediction finite, so a model never returns NaN or overflows on a row unlike its training rows.
    """

    def __init__(self, regressor=None, *, log: bool = True) -> None:
        self.regressor = regressor
        self.log = log

    def _forward(self, y) -> np.ndarray:
        y = np.asarray(y, dtype=np.float64).ravel()
        if self.log:
            if np.any(y <= 0):
                raise ValueError(f"log target needs positive values; got min {y.min()!r}")
            return stable_log(y)
        return y

    def fit(self, X, y):
        t = self._forward(y)
        self.mean_ = float(np.mean(t))
        std = float(np.std(t))
        self.std_ = std if std > 0 else 1.0
        lo, hi = float(np.min(t)), float(np.max(t))
        widen = math.log(LOG_CLIP_FACTOR) if self.log else max(hi - lo, abs(hi), 1e-12)
        self.bounds_ = (lo - widen, hi + widen)
        self.regressor_ = clone(self.regressor).fit(X, (t - self.mean_) / self.std_)
        return self

    def predict(self, X):
        check_is_fitted(self, "regressor_")
        z = np.asarray(self.regressor_.predict(X), dtype=np.float64).ravel()
        t = np.clip(np.nan_to_num(z * self.std_ + self.mean_, nan=self.mean_), *self.bounds_)
        return stable_exp(t) if self.log else t


def tabular_model(estimator, *, scale: bool = False, one_hot: bool = True, log: bool = True):
    """``preprocessor -> estimator`` as one pipeline, learning the standardised target (its log when ``log``)
    with clipped outputs."""
    return ScaledTarget(make_pipeline(tabular_preprocessor(scale=scale, one_hot=one_hot), estimator), log=log)

