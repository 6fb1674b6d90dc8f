"""Consensus ranker: the configuration that is close to the best on every training GPU; sees the problem (kernel,
problem size), each row's configuration, and the training GPUs' times of that problem. No parameter is fitted.

Training keeps, per training GPU and problem, each configuration's ``ln(t / t_best)``, ``t_best`` the fastest
time of that problem on that GPU (a GPU is its catalogue figures, vendor and architecture). A test row scores the
mean of its configuration's ``ln(t / t_best)`` over the training GPUs that timed it on the same problem; a problem
no training GPU has falls back to the same kernel's other problems, then to every training problem; a
configuration never timed scores after every timed one. Lowest score = predicted fastest; outputs are scores,
not times (``predicts_target = False``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.ranking import row_keys

UNTIMED = 1e6
KERNEL = "kernel"


class ConfigConsensus(BaseEstimator):
    """Mean over training GPUs of a configuration's log time above the problem's best."""

    predicts_target = False

    def __init__(self, *, problem_columns: tuple = ()) -> None:
        self.problem_columns = problem_columns

    def _keys(self, X: pd.DataFrame):
        gpu = [c for c in X.columns if c.startswith("gpu_")]
        problem = [c for c in self.problem_columns if c in X.columns and c not in gpu]
        config = [c for c in X.columns if c not in gpu and c not in problem]
        kernel = [KERNEL] if KERNEL in X.columns else []
        return row_keys(X, gpu), row_keys(X, problem), row_keys(X, kernel), row_keys(X, config)

    def fit(self, X, y):
        X = pd.DataFrame(X).reset_index(drop=True)
        gpu, problem, kernel, config = self._keys(X)
        y = np.asarray(y, dtype=float)
        df = pd.DataFrame({"gpu": gpu, "problem": problem, "kernel": kernel, "config": config, "y": y})
        df = df[np.isfinite(df["y"]) & (df["y"] > 0)]
        df["rel"] = np.log(df["y"] / df.groupby(["gpu", "problem"], sort=False)["y"].transform("min"))
        # one value per GPU, problem and configuration (a configuration timed twice: its mean), then over GPUs
        per_gpu = df.groupby(["gpu", "problem", "kernel", "config"], sort=False)["rel"].mean().reset_index()
        self.same_ = per_gpu.groupby(["problem", "config"])["rel"].mean().to_dict()
        self.kernel_ = per_gpu.groupby(["kernel", "config"])["rel"].mean().to_dict()
        self.overall_ = per_gpu.groupby("config")["rel"].mean().to_dict()
        self.problems_ = set(per_gpu["problem"])
        self.kernels_ = set(per_gpu["kernel"])
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "same_")
        X = pd.DataFrame(X).reset_index(drop=True)
        _, problem, kernel, config = self._keys(X)
        out = np.empty(len(X))
        for i, (p, k, c) in enumerate(zip(problem, kernel, config)):
            if p in self.problems_:
                out[i] = self.same_.get((p, c), UNTIMED)
            elif k in self.kernels_:
                out[i] = self.kernel_.get((k, c), UNTIMED)
            else:
                out[i] = self.overall_.get(c, UNTIMED)
        return out


def make_model(task, seed):
    return ConfigConsensus(problem_columns=tuple(task.problem_columns))
