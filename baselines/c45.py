"""Seed 003: C4.5-style decision tree classifier of the best configuration (tile, variant, block size).

Training: for every training problem, the label is its fastest configuration; a decision tree with the
entropy (information gain) criterion learns problem features -> label. Prediction: each candidate row gets
the score ``-P(its configuration | problem)``, so the task's argmin picks the most probable configuration
available in the problem. Outputs are scores, not times (``predicts_target = False``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

CHOICE = ("variant", "block_size", "tile_b1", "tile_b2", "tile_b3")


class BestConfigClassifier(BaseEstimator):
    """Classifies the best configuration of a problem; scores candidate rows by its probability."""

    predicts_target = False

    def __init__(self, *, choice_columns: tuple = CHOICE, min_samples_leaf: int = 1,
                 random_state: int | None = 0) -> None:
        self.choice_columns = choice_columns
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def _split(self, X):
        choice = [c for c in self.choice_columns if c in X.columns]
        problem = [c for c in X.columns if c not in choice]
        labels = X[choice].astype(str).agg("|".join, axis=1).to_numpy()
        keys = X[problem].astype(str).agg("|".join, axis=1).to_numpy()
        return X[problem], labels, keys

    def fit(self, X, y):
        from sklearn.pipeline import make_pipeline
        from sklearn.tree import DecisionTreeClassifier

        from kgpubench.tasks.preprocess import tabular_preprocessor

        P, labels, keys = self._split(X)
        y = np.asarray(y, dtype=float)
        order = np.lexsort((y, keys))  # fastest row first within each problem
        first = np.ones(order.size, dtype=bool)
        first[1:] = keys[order][1:] != keys[order][:-1]
        best = order[first]
        self.tree_ = make_pipeline(tabular_preprocessor(one_hot=True), DecisionTreeClassifier(
            criterion="entropy", min_samples_leaf=self.min_samples_leaf, random_state=self.random_state))
        self.tree_.fit(P.iloc[best], labels[best])
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "tree_")
        P, labels, _ = self._split(X)
        proba = self.tree_.predict_proba(P)
        col = {c: i for i, c in enumerate(self.tree_.classes_)}
        return np.array([-proba[i, col[lab]] if lab in col else 0.0 for i, lab in enumerate(labels)])


def make_model(task, seed):
    return BestConfigClassifier(random_state=seed)
