"""Physically scaled trees: LightGBM on ``ln(time / t_roof)``, the call's distance above its roofline bound; sees
the task's features (the call's shape, dtypes, framework, kernel source or solver, its nominal work and the GPU's
catalogue figures with the dtype's tensor peak) and ``ln t_roof``.

``t_roof`` is :func:`kgpubench.tasks.roofline.roofline_ms` (the tensor peak of the call's compute dtype where
cited, else fp32; a missing figure: the training rows' median bound). Trees cannot extrapolate a raw time to a
faster GPU, but the ratio to the bound moves far less between GPUs than the time does: the prediction is
``t_roof x exp(model)``. Text features are coded with the categories seen in fit. Deterministic at any thread
count; rows and features are subsampled from ``seed``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.preprocess import thread_count
from kgpubench.tasks.roofline import filled_roofline_ms


class RooflineGBDT(RegressorMixin, BaseEstimator):
    """LightGBM on ``ln(y / t_roof)`` with ``ln t_roof`` among the inputs."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def _matrix(self, X: pd.DataFrame, bound: np.ndarray) -> pd.DataFrame:
        out = {}
        for col in X.columns:
            if col in self.categories_:
                known = self.categories_[col]
                out[col] = pd.Categorical(X[col].astype(object).where(X[col].isin(known), None), categories=known)
            else:
                out[col] = np.asarray(X[col], dtype=float)
        out["log_roofline_ms"] = np.log(bound)
        for col in ("flops", "bytes_min"):
            if col in X.columns:
                out[f"log_{col}"] = np.log(np.maximum(np.asarray(X[col], dtype=float), 1.0))
        return pd.DataFrame(out)

    def fit(self, X, y):
        from lightgbm import LGBMRegressor

        X = X.reset_index(drop=True)
        self.categories_ = {c: sorted(str(v) for v in X[c].dropna().unique())
                            for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])}
        bound, self.fallback_ = filled_roofline_ms(X)
        target = np.log(np.asarray(y, dtype=float) / bound)
        self.model_ = LGBMRegressor(n_estimators=300, num_leaves=63, learning_rate=0.05, subsample=0.8,
                                    subsample_freq=1, colsample_bytree=0.9, min_child_samples=20,
                                    n_jobs=thread_count(), deterministic=True, force_row_wise=True,
                                    random_state=self.seed, verbose=-1)
        self.model_.fit(self._matrix(X, bound), target)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        X = X.reset_index(drop=True)
        bound, _ = filled_roofline_ms(X, self.fallback_)
        return bound * np.exp(self.model_.predict(self._matrix(X, bound)))


def make_model(task, seed):
    return RooflineGBDT(seed=seed)
