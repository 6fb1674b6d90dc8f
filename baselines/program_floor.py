"""A program's time on an unseen GPU from its times on the training GPUs: a per-program level plus a sensitivity
to the GPU's figures that depends on the program's size (small programs sit on the launch floor and hardly move
between GPUs; large ones follow bandwidth and compute).

Model, in natural-log milliseconds, for a program key ``p`` = (set, level, problem, compile mode) on GPU ``g``::

    log t(p, g) = a_p + beta(a_p) . phi(g)

``phi(g)`` = (log memory bandwidth, log peak fp32), centred on the training GPUs' mean. ``a_p`` is the
program's level (its log time on a GPU with the mean figures) and ``beta(s)`` a piecewise-linear curve in the
level ``s`` (knots every ln 3 from 0.01 ms to 100 ms), the same for every program: at the floor ``beta`` is
near 0 (the time is the host's launch floor), on large programs it is the roofline-like sensitivity learned
from the training GPUs. ``a_p`` and ``beta`` are fit by alternating least squares on the median log time of
each (program, GPU) of the training rows only; so a program run on a single training GPU (e.g. a compile mode
only one host ran) keeps that GPU's floor. A program key no training GPU ran falls back to the same program's
other compile modes (the median level), else to the median level of its set and mode, else of all keys.
Every constant (knots, ridge, iterations) is fixed here; nothing is tuned on the test GPU.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

TASKS = ("program-time",)
PROGRAM = ("problem_set", "level", "problem", "compile_mode")
FIGURES = ("gpu_memory_bandwidth_gbs", "gpu_peak_fp32_gflops")
KNOTS = np.log(0.01) + np.log(3.0) * np.arange(10)  # ln ms: 0.01, 0.03, 0.09, ... 197 ms
RIDGE = 1e-3   # on the curve's coefficients (per unit of squared centred log figures)
ROUNDS = 30    # alternating least-squares rounds
PROGRAM_RIDGE = 1.0
MIN_GPUS = 3
TAU = 0.5
W0 = 0.2


def hat_basis(s: np.ndarray, knots: np.ndarray = KNOTS) -> np.ndarray:
    """Piecewise-linear (hat) basis of the levels ``s`` (ln ms) on ``knots``; constant beyond the ends.
    Returns an (len(s), len(knots)) array whose rows sum to 1."""
    s = np.clip(np.asarray(s, dtype=float), knots[0], knots[-1])
    j = np.clip(np.searchsorted(knots, s, side="right") - 1, 0, len(knots) - 2)
    w = (s - knots[j]) / (knots[j + 1] - knots[j])
    out = np.zeros((len(s), len(knots)))
    out[np.arange(len(s)), j] = 1.0 - w
    out[np.arange(len(s)), j + 1] = w
    return out


class ProgramFloor(RegressorMixin, BaseEstimator):
    """Per-program level plus a size-dependent sensitivity to log bandwidth and log peak fp32."""

    def __init__(self) -> None:
        pass

    @staticmethod
    def _parts(X):
        program = [c for c in PROGRAM if c in X.columns]
        keys = [tuple(r) for r in X[program].astype(str).itertuples(index=False)]
        fig = np.column_stack([np.asarray(X[c], dtype=float) if c in X.columns else np.full(len(X), np.nan)
                               for c in FIGURES])
        return keys, np.log(np.where(fig > 0, fig, np.nan))

    @staticmethod
    def _all_figures(X):
        cols = [c for c in X.columns if c.startswith("gpu_") and c not in ("gpu_vendor", "gpu_architecture")]
        return np.asarray(X[cols], dtype=float) if cols else np.zeros((len(X), 0))

    def fit(self, X, y):
        import pandas as pd

        y = np.asarray(y, dtype=float)
        keys, logfig = self._parts(X)
        gpu_ids = [tuple(np.nan_to_num(f, nan=-1.0)) for f in logfig]
        gpus = sorted(set(gpu_ids))
        gid = np.array([gpus.index(g) for g in gpu_ids]) if gpus else np.zeros(0, int)
        gfig = np.array(gpus, dtype=float).reshape(len(gpus), len(FIGURES))
        gfig = np.where(gfig == -1.0, np.nan, gfig)
        self.center_ = np.nanmean(gfig, axis=0) if len(gfig) else np.zeros(len(FIGURES))
        self.center_ = np.nan_to_num(self.center_)
        phi_g = np.nan_to_num(gfig - self.center_)  # a missing figure: the mean GPU's
        df = pd.DataFrame({"key": keys, "gpu": gid, "ly": np.log(np.maximum(y, 1e-6))})
        cell = df.groupby(["key", "gpu"], sort=True)["ly"].median().reset_index()
        self.keys_ = sorted(set(cell["key"]))
        kid = {k: i for i, k in enumerate(self.keys_)}
        ck = cell["key"].map(kid).to_numpy()
        cg = cell["gpu"].to_numpy()
        cy = cell["ly"].to_numpy()
        phi = phi_g[cg] if len(cg) else np.zeros((0, len(FIGURES)))
        n_keys, n_fig = len(self.keys_), len(FIGURES)
        programs = sorted({k[:-1] for k in self.keys_})
        pid = {p: i for i, p in enumerate(programs)}
        cp = np.array([pid[self.keys_[k][:-1]] for k in ck], dtype=int)
        n_prog = len(programs)
        count = np.maximum(np.bincount(ck, minlength=n_keys), 1)
        a = np.bincount(ck, cy, n_keys) / count
        beta = np.zeros((len(KNOTS), n_fig))
        delta = np.zeros((n_prog, n_fig))
        gpus_of = np.zeros((n_prog, len(gpus)), dtype=bool)
        gpus_of[cp, cg] = True
        many = gpus_of.sum(axis=1) >= MIN_GPUS
        for _ in range(ROUNDS):
            basis = hat_basis(a[ck])                                   # (cells, knots)
            design = (basis[:, :, None] * phi[:, None, :]).reshape(len(cy), -1)
            resid = cy - a[ck] - np.sum(delta[cp] * phi, axis=1)
            gram = design.T @ design + RIDGE * len(cy) * np.eye(design.shape[1])
            beta = np.linalg.solve(gram, design.T @ resid).reshape(len(KNOTS), n_fig)
            shift = np.einsum("ck,kf,cf->c", basis, beta, phi)
            if PROGRAM_RIDGE is not None:
                r = cy - a[ck] - shift
                pp = np.zeros((n_prog, n_fig, n_fig))
                np.add.at(pp, cp, phi[:, :, None] * phi[:, None, :])
                pr = np.zeros((n_prog, n_fig))
                np.add.at(pr, cp, phi * r[:, None])
                delta = np.linalg.solve(pp + PROGRAM_RIDGE * np.eye(n_fig), pr[:, :, None])[:, :, 0]
                delta[~many] = 0.0
            a = np.bincount(ck, cy - shift - np.sum(delta[cp] * phi, axis=1), n_keys) / count
        self.delta_ = {p: delta[i] for i, p in enumerate(programs)}
        fitted = a[ck] + np.einsum("ck,kf,cf->c", hat_basis(a[ck]), beta, phi) + np.sum(delta[cp] * phi, axis=1)
        self.resid_: dict = {}
        for k, g, e in zip(ck, cg, cy - fitted):
            self.resid_.setdefault(self.keys_[k], {})[int(g)] = float(e)
        zall = np.log1p(np.nan_to_num(self._all_figures(X)))
        first = {}
        for i, g in enumerate(gid):
            first.setdefault(int(g), i)
        zg = zall[[first[i] for i in range(len(gpus))]] if len(gpus) else np.zeros((0, zall.shape[1]))
        self.zcenter_ = zg.mean(axis=0) if len(zg) else np.zeros(zall.shape[1])
        spread = zg.std(axis=0) if len(zg) else np.ones(zall.shape[1])
        self.zspread_ = np.where(spread > 0, spread, 1.0)
        self.z_ = (zg - self.zcenter_) / self.zspread_
        self.beta_ = beta
        self.level_ = dict(zip(self.keys_, a))
        by_program: dict = {}
        for k, v in self.level_.items():
            by_program.setdefault(k[:-1], []).append(v)
        self.program_level_ = {k: float(np.median(v)) for k, v in by_program.items()}
        by_mode: dict = {}
        for k, v in self.level_.items():
            by_mode.setdefault((k[0], k[-1]), []).append(v)
        self.mode_level_ = {k: float(np.median(v)) for k, v in by_mode.items()}
        self.median_level_ = float(np.median(a)) if len(a) else 0.0
        self.n_features_in_ = X.shape[1]
        return self

    def level_of(self, key: tuple) -> float:
        """The fitted level (ln ms at the mean figures) of a program key, or its fall-back."""
        if key in self.level_:
            return self.level_[key]
        if key[:-1] in self.program_level_:
            return self.program_level_[key[:-1]]
        return self.mode_level_.get((key[0], key[-1]), self.median_level_)

    def predict(self, X):
        check_is_fitted(self, "beta_")
        keys, logfig = self._parts(X)
        a = np.array([self.level_of(k) for k in keys])
        phi = np.nan_to_num(logfig - self.center_)
        zero = np.zeros(len(FIGURES))
        delta = np.array([self.delta_.get(k[:-1], zero) for k in keys]).reshape(len(keys), len(FIGURES))
        z = (np.log1p(np.nan_to_num(self._all_figures(X))) - self.zcenter_) / self.zspread_
        corr = np.zeros(len(keys))
        for i, k in enumerate(keys):
            res = self.resid_.get(k)
            if not res:
                continue
            idx = np.fromiter(res, dtype=int)
            w = np.exp(-np.mean((self.z_[idx] - z[i]) ** 2, axis=1) / TAU)
            corr[i] = float(np.dot(w, [res[j] for j in idx]) / (w.sum() + W0))
        return np.exp(a + np.einsum("rk,kf,rf->r", hat_basis(a), self.beta_, phi) + np.sum(delta * phi, axis=1) + corr)


def make_model(task, seed):
    return ProgramFloor()
