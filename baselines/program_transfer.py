"""Sees the program's identity (set, level, file, compile mode) and the GPU figures: predicts the program's training
time on the nearest GPU that ran it, scaled by the two GPUs' peak figures.

For a test row (program P under mode M of problem set S, on GPU g), the sources are the training rows of the same
(S, level, P, M) on any GPU (the times of a program on other GPUs reach the model only through its training rows).
The source GPU is the nearest to g: same vendor first, then the smallest distance in standardised log figures
(SMs, cores, memory, bandwidth, L2, shared memory, clocks, peak fp32); ties go to the first in sorted order.
Its time (the median over its rows, e.g. two providers of one GPU) is scaled by the roofline-style ratio
``sqrt((bw_src / bw_g) * (fp32_src / fp32_g))``: the geometric mean of the bandwidth and peak-fp32 ratios, since
a program's mix of memory- and compute-bound kernels is unknown. No scaling when a figure is missing. A
program no training GPU ran in that mode falls back to the program under its other compile modes, in the same
way (the median over modes on the chosen GPU), else to the median training time of its problem set and compile
mode, else of all rows.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

PROGRAM = ("problem_set", "level", "problem", "compile_mode")
VENDOR = "gpu_vendor"
BANDWIDTH, PEAK = "gpu_memory_bandwidth_gbs", "gpu_peak_fp32_gflops"


class ProgramTransfer(RegressorMixin, BaseEstimator):
    """Nearest-GPU transfer of a program's time, scaled by peak bandwidth and fp32 figures."""

    def __init__(self) -> None:
        pass

    @staticmethod
    def _parts(X):
        gpu = [c for c in X.columns if c.startswith("gpu_")]
        figures = [c for c in gpu if c not in (VENDOR, "gpu_architecture")]
        program = [c for c in PROGRAM if c in X.columns]
        prog = [tuple(r) for r in X[program].astype(str).itertuples(index=False)]
        vendor = X[VENDOR].astype(str).to_numpy() if VENDOR in X.columns else np.full(len(X), "")
        fig = np.asarray(X[figures], dtype=float) if figures else np.zeros((len(X), 0))
        ident = [(v, *np.nan_to_num(f, nan=-1.0)) for v, f in zip(vendor, fig)]
        scale = {c: np.asarray(X[c], dtype=float) if c in X.columns else np.full(len(X), np.nan)
                 for c in (BANDWIDTH, PEAK)}
        return prog, ident, np.log1p(np.nan_to_num(fig)), scale

    def fit(self, X, y):
        import pandas as pd

        y = np.asarray(y, dtype=float)
        prog, ident, logfig, scale = self._parts(X)
        self.gpus_ = sorted(set(ident), key=repr)
        gid = {g: i for i, g in enumerate(self.gpus_)}
        first = {}
        for i, g in enumerate(ident):
            first.setdefault(g, i)
        rows = [first[g] for g in self.gpus_]
        self.vendor_ = [g[0] for g in self.gpus_]
        lf = logfig[rows] if len(rows) else np.zeros((0, logfig.shape[1]))
        self.center_ = lf.mean(axis=0) if len(lf) else np.zeros(logfig.shape[1])
        spread = lf.std(axis=0) if len(lf) else np.ones(logfig.shape[1])
        self.spread_ = np.where(spread > 0, spread, 1.0)
        self.z_ = (lf - self.center_) / self.spread_
        self.bw_ = scale[BANDWIDTH][rows]
        self.peak_ = scale[PEAK][rows]
        df = pd.DataFrame({"prog": prog, "gpu": [gid[g] for g in ident], "y": y})
        med = df.groupby(["prog", "gpu"], sort=True)["y"].median()
        self.times_: dict = {}
        for (p, g), t in med.items():
            self.times_.setdefault(p, {})[g] = float(t)
        df["any_mode"] = [p[:-1] for p in prog]
        self.any_mode_: dict = {}
        for (p, g), t in df.groupby(["any_mode", "gpu"], sort=True)["y"].median().items():
            self.any_mode_.setdefault(p, {})[g] = float(t)
        group = pd.Series([f"{p[0]}|{p[-1]}" for p in prog])
        self.mode_median_ = pd.Series(y).groupby(group).median().to_dict()
        self.median_ = float(np.median(y))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "times_")
        prog, ident, logfig, scale = self._parts(X)
        out = np.empty(len(X))
        for i, (p, g) in enumerate(zip(prog, ident)):
            have = self.times_.get(p) or self.any_mode_.get(p[:-1])
            if not have:
                out[i] = self.mode_median_.get(f"{p[0]}|{p[-1]}", self.median_)
                continue
            z = (logfig[i] - self.center_) / self.spread_

            def rank(j, vendor=g[0], z=z):
                return (self.vendor_[j] != vendor, float(np.sum((self.z_[j] - z) ** 2)), j)

            src = min(have, key=rank)
            ratio = np.sqrt((self.bw_[src] / scale[BANDWIDTH][i]) * (self.peak_[src] / scale[PEAK][i]))
            out[i] = have[src] * (ratio if np.isfinite(ratio) and ratio > 0 else 1.0)
        return out


def make_model(task, seed):
    return ProgramTransfer()
