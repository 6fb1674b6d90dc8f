"""Seed 003: random forest (23 trees, as tuned in the seed); regress time, pick the argmin."""

from __future__ import annotations

from sklearn.ensemble import RandomForestRegressor

from kgpubench.tasks.preprocess import tabular_model

TASKS = ("kernel-time", "kernel-time-compute", "kernel-time-memory", "stencil-tile", "autotune-config")


def make_model(task, seed):
    return tabular_model(RandomForestRegressor(n_estimators=23, n_jobs=1, random_state=seed), one_hot=False)
