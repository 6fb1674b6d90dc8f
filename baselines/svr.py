"""Seed 000: support vector regression (RBF kernel) on min-max scaled inputs, learning the standardised log time."""

from __future__ import annotations

from sklearn.svm import SVR

from kgpubench.tasks.preprocess import tabular_model

# Not on rodinia-time: at its 10,000 training rows one fold took 60-110 s to fit and predict (the board's 5-minute
# budget for the task is about 12 s per fold for every baseline together).


def make_model(task, seed):
    return tabular_model(SVR(C=10.0, epsilon=0.01, gamma="scale"), scale=True,
                         log=task.target.startswith("time"))
