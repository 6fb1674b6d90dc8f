"""Seed 002: the slice power model ``P = b0 x1 + b1 x2^b2`` fitted per GPU by nonlinear least squares.

``x1`` is the SM saturation, ``x2`` the power-weighted compute density. Seed 002 weights the memory spaces
by measured power factors ``r_i``; here arithmetic is weighted too, by precision: fp64 instructions count
``r64`` times an fp32/int one, ``x2 = A (1 + (r64 - 1) f64)`` with ``A`` the task's compute density and ``f64``
the fp64 share of the executed arithmetic (``mix_fp64`` over int + fp32 + fp64 + sfu). ``r64`` is fitted with
``b0, b1, b2`` per GPU (as the seed measures its factors per GPU), so an fp64 kernel with the density of its
fp32 twin gets its own power. Without the mix columns ``f64 = 0`` and the model is the seed's. A GPU unseen in
training (leave one GPU out) gets the fit over all training GPUs.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

GPU_KEY = ("gpu_sm_count", "gpu_peak_fp32_gflops", "gpu_memory_bandwidth_gbs")
ARITH = ("mix_int", "mix_fp32", "mix_fp64", "mix_sfu")
START = (50.0, 50.0, 0.2, 1.0)
LOWER = (-np.inf, -np.inf, 0.0, 0.1)
UPPER = (np.inf, np.inf, 3.0, 10.0)


def power_model(b: np.ndarray, x1: np.ndarray, x2: np.ndarray, f64: np.ndarray | None = None) -> np.ndarray:
    """``b0 x1 + b1 (x2 (1 + (r64 - 1) f64))^b2`` with ``r64 = b[3]`` (1 when absent or ``f64`` is None)."""
    r64 = b[3] if len(b) > 3 else 1.0
    dens = np.maximum(x2, 0.0) * (1.0 + (r64 - 1.0) * (0.0 if f64 is None else f64))
    return b[0] * x1 + b[1] * np.power(np.maximum(dens, 0.0), b[2])


def fit_power(x1: np.ndarray, x2: np.ndarray, y: np.ndarray, f64: np.ndarray | None = None) -> np.ndarray:
    """Least-squares ``(b0, b1, b2, r64)`` from (50, 50, 0.2, 1) with ``0 <= b2 <= 3``, ``0.1 <= r64 <= 10``;
    ``r64`` stays 1 when no row has fp64 arithmetic."""
    from scipy.optimize import least_squares

    if f64 is None or not np.any(f64 > 0):
        res = least_squares(lambda b: power_model(b, x1, x2) - y, x0=np.array(START[:3]), bounds=(LOWER[:3],
                            UPPER[:3]), method="trf")
        return np.append(res.x, 1.0)
    res = least_squares(lambda b: power_model(b, x1, x2, f64) - y, x0=np.array(START),
                        bounds=(LOWER, UPPER), method="trf")
    return res.x


def fp64_share(X) -> np.ndarray:
    """Fraction of the executed arithmetic in fp64 (0 where the mix columns are absent or empty)."""
    if not all(c in X.columns for c in ARITH):
        return np.zeros(len(X))
    mix = np.nan_to_num(np.asarray(X[list(ARITH)], dtype=float))
    total = mix.sum(axis=1)
    return np.divide(mix[:, ARITH.index("mix_fp64")], total, out=np.zeros(len(X)), where=total > 0)


class SlicePowerModel(RegressorMixin, BaseEstimator):
    """Per-GPU ``P = b0 * sm_saturation + b1 * (compute_density (1 + (r64 - 1) f64)) ** b2``."""

    def __init__(self, *, x1: str = "sm_saturation", x2: str = "compute_density", precision: bool = True) -> None:
        self.x1 = x1
        self.x2 = x2
        self.precision = precision

    def _gpu(self, X) -> list[tuple]:
        cols = [c for c in GPU_KEY if c in X.columns]
        return [tuple(r) for r in np.asarray(X[cols], dtype=float)] if cols else [()] * len(X)

    def _inputs(self, X):
        x1, x2 = np.asarray(X[self.x1], float), np.asarray(X[self.x2], float)
        return x1, x2, (fp64_share(X) if self.precision else None)

    def fit(self, X, y):
        y = np.asarray(y, dtype=float)
        x1, x2, f64 = self._inputs(X)
        gpus = self._gpu(X)
        self.global_ = fit_power(x1, x2, y, f64)
        self.per_gpu_ = {}
        for g in sorted(set(gpus)):
            m = np.array([k == g for k in gpus])
            self.per_gpu_[g] = fit_power(x1[m], x2[m], y[m], None if f64 is None else f64[m]) if m.sum() >= 4 \
                else self.global_
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "global_")
        x1, x2, f64 = self._inputs(X)
        coefs = np.array([self.per_gpu_.get(g, self.global_) for g in self._gpu(X)]).reshape(-1, 4)
        dens = np.maximum(x2, 0.0) * (1.0 + (coefs[:, 3] - 1.0) * (0.0 if f64 is None else f64))
        return coefs[:, 0] * x1 + coefs[:, 1] * np.power(np.maximum(dens, 0.0), coefs[:, 2])


def make_model(task, seed):
    return SlicePowerModel()
