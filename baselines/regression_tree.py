"""Seed 003: regression tree (depth 19, as tuned in the seed) on log time; regress, pick the argmin.

``seed`` orders the features the tree tries, which decides between equally good splits.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters
(on rodinia-time-counters also the launch's own prof_* counters).
"""

from __future__ import annotations

from sklearn.tree import DecisionTreeRegressor

from kgpubench.tasks.preprocess import tabular_model


def make_model(task, seed):
    return tabular_model(DecisionTreeRegressor(max_depth=19, random_state=seed), one_hot=False)
