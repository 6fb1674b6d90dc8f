"""Consensus: the solver that the training GPUs found fastest on the same problem; sees the problem's id and
each row's solver (and direction and dtype), and the training GPUs' times of that problem.

Training keeps, per training GPU and problem, each solver's time relative to the problem's fastest on that GPU.
A test row scores the median of its solver's relative times on the training GPUs that timed the same problem
(``problem_id``: the same problem on every GPU); a solver none of them timed on it, or a problem none of them
has, scores the solver's median relative time over every training problem of the same direction and dtype (over
all, failing that), and a solver never seen scores after every other. Lowest score = predicted fastest; outputs
are scores, not times (``predicts_target = False``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.roofline import joined_text

UNSEEN = 1e6
KIND = ("direction", "dtype")


class SolverConsensus(BaseEstimator):
    """Median relative time of a solver on the same problem over the training GPUs."""

    predicts_target = False

    def fit(self, X, y):
        X = X.reset_index(drop=True)
        gpu = [c for c in X.columns if c.startswith("gpu_")]
        gpus = joined_text(X, gpu)
        kind = joined_text(X, [c for c in KIND if c in X.columns])
        df = pd.DataFrame({"gpu": gpus, "problem": X["problem_id"].astype(str), "solver": X["solver"].astype(str),
                           "kind": kind, "y": np.asarray(y, dtype=float)})
        df["rel"] = df["y"] / df.groupby(["gpu", "problem"], sort=False)["y"].transform("min")
        self.same_ = df.groupby(["problem", "solver"])["rel"].median().to_dict()
        self.kind_ = df.groupby(["kind", "solver"])["rel"].median().to_dict()
        self.overall_ = df.groupby("solver")["rel"].median().to_dict()
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "same_")
        X = X.reset_index(drop=True)
        kind = joined_text(X, [c for c in KIND if c in X.columns])
        out = np.empty(len(X))
        for i, (problem, solver, k) in enumerate(zip(X["problem_id"].astype(str), X["solver"].astype(str), kind)):
            out[i] = self.same_.get((problem, solver), self.kind_.get((k, solver), self.overall_.get(solver, UNSEEN)))
        return out


def make_model(task, seed):
    return SolverConsensus()
