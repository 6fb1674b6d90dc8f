"""Seed 003: XGBoost gradient-boosted trees (single thread, exact-reproducible); regress time, pick argmin."""

from __future__ import annotations

from kgpubench.tasks.preprocess import tabular_model

TASKS = ("kernel-time", "kernel-time-compute", "kernel-time-memory", "stencil-tile", "autotune-config")


def make_model(task, seed):
    from xgboost import XGBRegressor

    booster = XGBRegressor(n_estimators=100, max_depth=8, learning_rate=0.1, tree_method="hist", n_jobs=1,
                           random_state=seed)
    return tabular_model(booster, one_hot=False)
