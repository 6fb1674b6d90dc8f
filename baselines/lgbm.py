"""Seed 003: LightGBM gradient-boosted trees (single thread, deterministic); regress time, pick argmin."""

from __future__ import annotations

from kgpubench.tasks.preprocess import tabular_model

TASKS = ("kernel-time", "kernel-time-compute", "kernel-time-memory", "stencil-tile", "autotune-config")


def make_model(task, seed):
    from lightgbm import LGBMRegressor

    booster = LGBMRegressor(n_estimators=100, num_leaves=63, learning_rate=0.1, n_jobs=1, deterministic=True,
                            force_row_wise=True, random_state=seed, verbose=-1)
    return tabular_model(booster, one_hot=False)
