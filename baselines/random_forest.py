"""Seed 003: random forest (23 trees, as tuned in the seed) on log time; regress, pick the argmin.

Each tree grows on a bootstrap sample of half the training rows (the seed does not say; half keeps the board
inside its time budget on the 150k auto-tuning rows). Bootstrap samples and feature draws come from ``seed``;
the trees do not depend on the thread count.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters
(on rodinia-time-counters also the launch's own prof_* counters).
"""

from __future__ import annotations

from sklearn.ensemble import RandomForestRegressor

from kgpubench.tasks.preprocess import tabular_model, thread_count


def make_model(task, seed):
    forest = RandomForestRegressor(n_estimators=23, max_samples=0.5, n_jobs=thread_count(), random_state=seed)
    return tabular_model(forest, one_hot=False, log=task.target.startswith("time"))
