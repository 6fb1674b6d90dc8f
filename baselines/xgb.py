"""Seed 003: XGBoost gradient-boosted trees on log time (hist, exact-reproducible); regress, pick argmin.

Rows and features are subsampled per tree (0.8, 0.9) from ``seed``, so ``--seed`` changes the model.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters
(on rodinia-time-counters also the launch's own prof_* counters).
"""

from __future__ import annotations

from kgpubench.tasks.preprocess import tabular_model, thread_count


def make_model(task, seed):
    from xgboost import XGBRegressor

    booster = XGBRegressor(n_estimators=100, max_depth=8, learning_rate=0.1, subsample=0.8, colsample_bytree=0.9,
                           tree_method="hist", n_jobs=thread_count(), random_state=seed)
    return tabular_model(booster, one_hot=False, log=task.target.startswith("time"))
