"""Seed 001 strategy Max: every kernel gets the largest threads per block measured.

Outputs are scores (``-tpb``), not times: the task's per-kernel argmin picks the largest TPB.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator


class MaxTPB(BaseEstimator):
    predicts_target = False

    def __init__(self) -> None:
        pass

    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return -np.asarray(X["tpb"], dtype=float)


def make_model(task, seed):
    return MaxTPB()
