"""Seed 003: k-nearest neighbours (k = 2) on min-max scaled inputs; regress time, pick the argmin."""

from __future__ import annotations

from sklearn.neighbors import KNeighborsRegressor

from kgpubench.tasks.preprocess import tabular_model

TASKS = ("kernel-time", "kernel-time-compute", "kernel-time-memory", "stencil-tile", "autotune-config")


def make_model(task, seed):
    return tabular_model(KNeighborsRegressor(n_neighbors=2, n_jobs=1), scale=True)
