"""Helpers for learning-to-rank models of the recommendation tasks: choice groups, graded relevance, and a
ranker (LightGBM ``LGBMRanker`` or XGBoost ``XGBRanker``) that the ranking baselines wrap.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.preprocess import stable_log, tabular_preprocessor, thread_count


def row_keys(X, columns) -> np.ndarray:
    """One 64-bit key per row of the DataFrame ``X`` from the values of ``columns`` (pandas' row hash, so
    equal values give equal keys in any frame); 0 for every row when ``columns`` is empty."""
    columns = list(columns)
    if not columns:
        return np.zeros(len(X), dtype=np.uint64)
    return pd.util.hash_pandas_object(X[columns], index=False).to_numpy(dtype=np.uint64)


def choice_groups(task, X) -> np.ndarray:
    """For a recommendation task, the group of every row of ``X``: the rows among which one is chosen
    (same GPU figures, same problem columns and choice columns present in ``X``), as integer codes 0..k-1 in
    order of first appearance. Regression tasks: every row in group 0."""
    cols = [c for c in X.columns if c.startswith("gpu_")]
    cols += [c for c in (*task.problem_columns, *task.choice_columns) if c in X.columns and c not in cols]
    if task.kind != "recommendation" or not cols:
        return np.zeros(len(X), dtype=np.int64)
    return pd.factorize(row_keys(X, cols))[0].astype(np.int64)


def relevance(y, groups, *, step: float = 0.02, levels: int = 30) -> np.ndarray:
    """Graded relevance for learning to rank: ``levels - floor(ln(y / min_group y) / ln(1 + step))``, at least
    0. The fastest row of a group gets ``levels``; every ``step`` (2 %) slower loses one level."""
    y = np.asarray(y, dtype=np.float64)
    groups = np.asarray(groups)
    best = np.full(groups.max(initial=-1) + 1, np.inf)
    np.minimum.at(best, groups, y)
    ratio = stable_log(y / best[groups]) / math.log1p(step)
    return np.clip(levels - np.floor(ratio + 1e-9), 0, levels).astype(np.int64)


def split_queries(groups: np.ndarray, max_query: int, rng: np.random.Generator) -> np.ndarray:
    """Query id of every row: its group, with groups above ``max_query`` rows dealt into random equal parts."""
    out = np.empty(groups.size, dtype=np.int64)
    next_id = 0
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        parts = -(-idx.size // max_query)
        out[idx] = next_id + (rng.permutation(idx.size) % parts)
        next_id += parts
    return out


class RankerModel(BaseEstimator):
    """A ranker (LightGBM or XGBoost) trained per choice group on graded relevance."""

    predicts_target = False

    def __init__(self, *, task=None, library: str = "lightgbm", n_estimators: int = 100, max_query: int = 2000,
                 random_state: int = 0) -> None:
        self.task = task
        self.library = library
        self.n_estimators = n_estimators
        self.max_query = max_query
        self.random_state = random_state

    def _ranker(self):
        if self.library == "lightgbm":
            from lightgbm import LGBMRanker

            return LGBMRanker(objective="lambdarank", n_estimators=self.n_estimators, num_leaves=63,
                              learning_rate=0.1, subsample=0.8, subsample_freq=1, colsample_bytree=0.9,
                              min_child_samples=5, n_jobs=thread_count(), deterministic=True, force_row_wise=True,
                              random_state=self.random_state, verbose=-1)
        from xgboost import XGBRanker

        return XGBRanker(objective="rank:ndcg", lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=8,
                         n_estimators=self.n_estimators, max_depth=8, learning_rate=0.1, subsample=0.8,
                         colsample_bytree=0.9, tree_method="hist", n_jobs=thread_count(),
                         random_state=self.random_state)

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        groups = choice_groups(self.task, X)
        rel = relevance(y, groups)
        query = split_queries(groups, self.max_query, rng)
        order = np.argsort(query, kind="mergesort")
        self.prep_ = tabular_preprocessor(one_hot=False)
        Z = self.prep_.fit_transform(X.iloc[order])
        self.ranker_ = self._ranker()
        if self.library == "lightgbm":
            self.ranker_.fit(Z, rel[order], group=np.bincount(query[order])[np.unique(query[order])])
        else:
            self.ranker_.fit(Z, rel[order], qid=query[order])
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "ranker_")
        return -np.asarray(self.ranker_.predict(self.prep_.transform(X)), dtype=np.float64)
