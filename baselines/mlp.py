"""Seed 000: multi-layer perceptron on min-max scaled inputs (scikit-learn), learning the standardised log time.

Inputs are clipped to the training range and outputs to a factor of 10 around the training targets
(:class:`kgpubench.tasks.preprocess.ScaledTarget`), so an unseen kernel or GPU cannot produce NaN or overflow.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters.
"""

from __future__ import annotations

from sklearn.neural_network import MLPRegressor

from kgpubench.tasks.preprocess import tabular_model


def make_model(task, seed):
    mlp = MLPRegressor(hidden_layer_sizes=(64, 32), max_iter=500, early_stopping=True, random_state=seed)
    return tabular_model(mlp, scale=True, log=task.target.startswith("time"))
