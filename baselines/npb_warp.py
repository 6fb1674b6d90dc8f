"""Seed 001 strategy Warp: every kernel gets the warp size (32 threads per block).

Outputs are scores (``|tpb - 32|``): the task's per-kernel argmin picks 32 (or the nearest TPB measured).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

WARP = 32


class WarpTPB(BaseEstimator):
    predicts_target = False

    def __init__(self, *, warp_size: int = WARP) -> None:
        self.warp_size = warp_size

    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return np.abs(np.asarray(X["tpb"], dtype=float) - self.warp_size)


def make_model(task, seed):
    return WarpTPB()
