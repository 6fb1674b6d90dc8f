"""Seed 000: extreme learning machine (random hidden layer + least squares), min-max scaled inputs, learning the
standardised log time (outputs clipped to a factor of 10 around the training targets: finite on any input).

The hidden layer ``H = g(X W + b)`` has fixed random weights drawn from ``random_state``; only the output
weights are learned, by regularised least squares: ``beta = argmin ||H beta - y||^2 + alpha ||beta||^2``.
On rodinia-time it sees the task's features: launch, binary, inputs, GPU figures; no profiler counters.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from kgpubench.tasks.preprocess import tabular_model

_ACTIVATIONS = {
    "sigmoid": lambda z: 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50))),
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
}


class ELMRegressor(RegressorMixin, BaseEstimator):
    """Extreme learning machine regressor.

    Parameters
    ----------
    n_hidden : int
        Hidden units.
    activation : {"sigmoid", "tanh", "relu"}
        Hidden activation g.
    alpha : float
        Ridge penalty on the output weights (0 = plain least squares via lstsq).
    random_state : int or None
        Seed of the hidden weights (uniform in [-1, 1]) and biases (uniform in [-1, 1]).
    """

    def __init__(self, *, n_hidden: int = 100, activation: str = "sigmoid", alpha: float = 1e-6,
                 random_state: int | None = 0) -> None:
        self.n_hidden = n_hidden
        self.activation = activation
        self.alpha = alpha
        self.random_state = random_state

    def _hidden(self, X: np.ndarray) -> np.ndarray:
        return _ACTIVATIONS[self.activation](X @ self.weights_ + self.biases_)

    def fit(self, X, y):
        X, y = validate_data(self, X, y, y_numeric=True, multi_output=False)
        if self.activation not in _ACTIVATIONS:
            raise ValueError(f"activation={self.activation!r}; expected one of {sorted(_ACTIVATIONS)}")
        rng = check_random_state(self.random_state)
        self.weights_ = rng.uniform(-1.0, 1.0, size=(X.shape[1], self.n_hidden))
        self.biases_ = rng.uniform(-1.0, 1.0, size=self.n_hidden)
        H = self._hidden(X)
        y = np.asarray(y, dtype=np.float64)
        if self.alpha > 0:
            A = H.T @ H + self.alpha * np.eye(self.n_hidden)
            self.beta_ = np.linalg.solve(A, H.T @ y)
        else:
            self.beta_ = np.linalg.lstsq(H, y, rcond=None)[0]
        return self

    def predict(self, X):
        check_is_fitted(self, "beta_")
        X = validate_data(self, X, reset=False)
        return self._hidden(X) @ self.beta_


def make_model(task, seed):
    return tabular_model(ELMRegressor(n_hidden=200, alpha=1e-3, random_state=seed), scale=True,
                         log=task.target.startswith("time"))
