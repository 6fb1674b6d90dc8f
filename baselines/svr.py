"""Seed 000: support vector regression (RBF kernel) on min-max scaled inputs, learning the standardised log time."""

from __future__ import annotations

from sklearn.svm import SVR

from kgpubench.tasks.preprocess import tabular_model

TASKS = ("kernel-time", "kernel-time-compute", "kernel-time-memory", "kernel-power")


def make_model(task, seed):
    return tabular_model(SVR(C=10.0, epsilon=0.01, gamma="scale"), scale=True,
                         log=task.target.startswith("time"))
