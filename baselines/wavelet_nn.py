"""Seed 002: wavelet neural network with Morlet hidden units, fitted by nonlinear least squares.

Inputs (min-max scaled): SM saturation, compute density, lines of code and the GPU (its peak fp32 rate), as in
the seed, plus the fp64 share of the executed arithmetic (``mix_fp64`` over int + fp32 + fp64 + sfu), which tells
an fp64 kernel from its fp32 twin of equal density (0 when the mix columns are absent).
Hidden unit j: ``h_j = psi((x . w_j - t_j) / a_j)`` with the Morlet ``psi(u) = cos(1.67 u) exp(-u^2 / 2)``;
output ``s(sum_j v_j h_j + c)`` with ``s(x) = 1.716 (1 - e^{-0.667 x}) / (1 + e^{-0.667 x})``, on the target
min-max scaled to [-1, 1].
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

INPUTS = ("sm_saturation", "compute_density", "source_lines", "gpu_peak_fp32_gflops")
ARITH = ("mix_int", "mix_fp32", "mix_fp64", "mix_sfu")


def morlet(u: np.ndarray) -> np.ndarray:
    """``cos(1.67 u) exp(-u^2 / 2)``."""
    return np.cos(1.67 * u) * np.exp(-0.5 * u * u)


def squash(x: np.ndarray) -> np.ndarray:
    """``1.716 (1 - e^{-0.667 x}) / (1 + e^{-0.667 x})`` (= 1.716 tanh(0.3335 x))."""
    return 1.716 * np.tanh(0.3335 * x)


class WaveletNNRegressor(RegressorMixin, BaseEstimator):
    """Wavelet network ``y = s(sum_j v_j psi((x w_j - t_j) / a_j) + c)`` on min-max scaled x and y.

    Parameters
    ----------
    n_units : int
        Morlet hidden units (the seed used 11).
    max_nfev : int
        Function evaluations for ``scipy.optimize.least_squares``.
    random_state : int or None
        Seed of the initial weights.
    """

    def __init__(self, *, n_units: int = 11, max_nfev: int = 100, random_state: int | None = 0) -> None:
        self.n_units = n_units
        self.max_nfev = max_nfev
        self.random_state = random_state

    def _unpack(self, theta: np.ndarray, d: int):
        k = self.n_units
        w = theta[: d * k].reshape(d, k)
        t, a, v = theta[d * k: d * k + k], theta[d * k + k: d * k + 2 * k], theta[d * k + 2 * k: d * k + 3 * k]
        return w, t, a, v, theta[-1]

    def _forward(self, theta: np.ndarray, Z: np.ndarray) -> np.ndarray:
        w, t, a, v, c = self._unpack(theta, Z.shape[1])
        a = np.where(np.abs(a) < 1e-3, 1e-3, a)
        return squash(morlet((Z @ w - t) / a) @ v + c)

    def _scale_x(self, X: np.ndarray) -> np.ndarray:
        return (X - self.x_min_) / self.x_span_

    def fit(self, X, y):
        from scipy.optimize import least_squares

        X, y = validate_data(self, X, y, y_numeric=True)
        self.x_min_ = X.min(axis=0)
        self.x_span_ = np.where(X.max(axis=0) > self.x_min_, X.max(axis=0) - self.x_min_, 1.0)
        self.y_min_, y_max = float(np.min(y)), float(np.max(y))
        self.y_span_ = y_max - self.y_min_ if y_max > self.y_min_ else 1.0
        Z = self._scale_x(X)
        target = 2.0 * (y - self.y_min_) / self.y_span_ - 1.0
        rng = check_random_state(self.random_state)
        d, k = Z.shape[1], self.n_units
        theta0 = np.concatenate([rng.normal(0, 1, d * k), rng.uniform(0, 1, k), np.ones(k),
                                 rng.normal(0, 0.5, k), [0.0]])
        res = least_squares(lambda th: self._forward(th, Z) - target, theta0, method="trf",
                            max_nfev=self.max_nfev)
        self.theta_ = res.x
        return self

    def predict(self, X):
        check_is_fitted(self, "theta_")
        X = validate_data(self, X, reset=False)
        out = self._forward(self.theta_, self._scale_x(X))
        return (out + 1.0) / 2.0 * self.y_span_ + self.y_min_


class _Columns(BaseEstimator):
    """Selects the wavelet network's inputs (the seed's four and the fp64 share) from the task's feature frame."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        base = np.asarray(X[list(INPUTS)], dtype=float)
        mix = [c for c in ARITH if c in X.columns]
        if len(mix) < len(ARITH):
            return np.column_stack([base, np.zeros(len(X))])
        m = np.nan_to_num(np.asarray(X[list(ARITH)], dtype=float))
        total = m.sum(axis=1)
        share = np.divide(m[:, ARITH.index("mix_fp64")], total, out=np.zeros(len(X)), where=total > 0)
        return np.column_stack([base, share])


def make_model(task, seed):
    from sklearn.pipeline import make_pipeline

    return make_pipeline(_Columns(), WaveletNNRegressor(random_state=seed))
