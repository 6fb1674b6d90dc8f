"""Seed 003: LightGBM gradient-boosted trees on log time (deterministic at any thread count); regress, pick argmin.

Rows and features are subsampled per tree (bagging 0.8, features 0.9) from ``seed``, so ``--seed`` changes the
model; ``deterministic=True`` keeps a given seed's trees identical at any thread count.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters
(on rodinia-time-counters also the launch's own prof_* counters).
"""

from __future__ import annotations

from kgpubench.tasks.preprocess import tabular_model, thread_count


def make_model(task, seed):
    from lightgbm import LGBMRegressor

    booster = LGBMRegressor(n_estimators=100, num_leaves=63, learning_rate=0.1, subsample=0.8, subsample_freq=1,
                            colsample_bytree=0.9, n_jobs=thread_count(), deterministic=True, force_row_wise=True,
                            random_state=seed, verbose=-1)
    return tabular_model(booster, one_hot=False, log=task.target.startswith("time"))
