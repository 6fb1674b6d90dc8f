"""Seed 003: k-nearest neighbours (k = 2) on min-max scaled inputs; regress log time, pick the argmin.

A k-d tree computes the distances directly (no BLAS), so neighbours and their ties are the same on every CPU.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters.
"""

from __future__ import annotations

from sklearn.neighbors import KNeighborsRegressor

from kgpubench.tasks.preprocess import tabular_model

# Not on autotune-config: a k-d tree over its 40-odd columns costs more than every other baseline together.


def make_model(task, seed):
    return tabular_model(KNeighborsRegressor(n_neighbors=2, algorithm="kd_tree", n_jobs=1), scale=True)
