"""A program's time on an unseen GPU from its times on the training GPUs: a per-program level plus a sensitivity
to the GPU's figures that depends on the program's size (small programs sit on the host's launch floor and hardly
move between GPUs; large ones follow bandwidth and compute), with the program's own deviations from the nearest
training GPUs added.

Model, in natural-log milliseconds, for a program key ``k`` = (set, level, problem, compile mode) of program
``P`` = (set, level, problem) on GPU ``g``::

    log t(k, g) = a_k + (beta(a_k) + delta_P) . phi(g) + e_k(g)

- ``phi(g)`` = (ln memory bandwidth GB/s, ln peak fp32 GFLOP/s), centred on the training GPUs' mean.
- ``a_k``: the key's level (ln ms on a GPU with the mean figures).
- ``beta(s)``: one piecewise-linear curve in the level ``s`` (knots every ln 3 from 0.01 ms to 197 ms) shared by
  every program: near 0 at the launch floor, the roofline-like sensitivity on large programs.
- ``delta_P``: the program's own sensitivity (shared by its compile modes, so a mode that one training GPU ran
  borrows it from the modes many GPUs ran), ridge-shrunk to 0 with weight ``program_ridge``; only programs run
  on at least ``MIN_GPUS`` training GPUs get one.
- ``e_k(g)``: the key's residuals on the training GPUs, averaged with weights ``exp(-d2 / tau)`` (``d2``: mean
  squared difference of standardised ln(1 + figure) over every ``gpu_*`` figure, plus ``arch_gap`` where the
  architectures differ) and shrunk by ``sum(w) / (sum(w) + w0)``: a near twin (A100 40 GB / 80 GB, L4 / L40S)
  passes on the program's quirks, a distant GPU not.

``a``, ``beta`` and ``delta`` are fit by alternating least squares on the median ln time of each (key, training
GPU). A key no training GPU ran falls back to the program's other modes (median level), else to the median level
of its set and mode, else of all keys.

Hyper-parameters: the knots, ridges and rounds are fixed here. ``program_ridge`` (on or off) and the residual
weighting (none, by figures, or mostly by architecture: ``CANDIDATES``) are chosen in ``fit`` by
leave-one-GPU-out over the TRAINING GPUs only (the mean over inner held-out GPUs of their median APE), never on
the test GPU; with ``select=False`` (or under ``MIN_INNER_GPUS`` training GPUs) the given values are used.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

PROGRAM = ("problem_set", "level", "problem", "compile_mode")
FIGURES = ("gpu_memory_bandwidth_gbs", "gpu_peak_fp32_gflops")
KNOTS = np.log(0.01) + np.log(3.0) * np.arange(10)  # ln ms: 0.01, 0.03, 0.09, ... 197 ms
RIDGE = 1e-3    # on the curve's coefficients, per cell
ROUNDS = 30     # alternating least-squares rounds
MIN_GPUS = 3    # training GPUs a program needs for its own sensitivity delta_P
# the inner leave-one-GPU-out candidates: (program_ridge or None = no delta_P, residual weighting or None = no
# residuals); the weighting is (tau, w0, arch_gap): by figures alone, or mostly from the same architecture
RESIDUALS = (None, (0.5, 0.2, 0.0), (0.5, 0.05, 2.0))
CANDIDATES = tuple((ridge, res) for ridge in (None, 1.0) for res in RESIDUALS)
MIN_INNER_GPUS = 3  # fewer training GPUs: no inner selection, the given values


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


def _figures(X) -> np.ndarray:
    """Every numeric ``gpu_*`` catalogue figure of the rows (n, figures); NaN where missing."""
    cols = [c for c in X.columns if c.startswith("gpu_") and c not in ("gpu_vendor", "gpu_architecture")]
    return np.asarray(X[cols], dtype=float) if cols else np.zeros((len(X), 0))


def _architectures(X) -> np.ndarray:
    """The rows' GPU architecture names ("" where the column is absent)."""
    col = X["gpu_architecture"] if "gpu_architecture" in X.columns else None
    return np.full(len(X), "", dtype=object) if col is None else col.astype(str).to_numpy(dtype=object)


def gpu_ids(X) -> np.ndarray:
    """One integer per distinct GPU (its vendor and figures) of the rows, in sorted order of first sight."""
    vendor = X["gpu_vendor"].astype(str).to_numpy() if "gpu_vendor" in X.columns else np.full(len(X), "")
    ident = [(v, *np.nan_to_num(f, nan=-1.0)) for v, f in zip(vendor, _figures(X))]
    order = {g: i for i, g in enumerate(sorted(set(ident), key=repr))}
    return np.array([order[g] for g in ident], dtype=int)


class ProgramFloor(RegressorMixin, BaseEstimator):
    """Per-program level plus a size-dependent sensitivity to ln bandwidth and ln peak fp32, with per-program
    deviations and nearest-GPU residuals chosen by inner leave-one-GPU-out."""

    def __init__(self, program_ridge: float | None = 1.0, tau: float | None = 0.5, w0: float = 0.05,
                 arch_gap: float = 2.0, select: bool = True) -> None:
        self.program_ridge = program_ridge
        self.tau = tau
        self.w0 = w0
        self.arch_gap = arch_gap
        self.select = select

    @staticmethod
    def _parts(X):
        program = [c for c in PROGRAM if c in X.columns]
        keys = [tuple(r) for r in X[program].astype(str).itertuples(index=False)]
        fig = np.column_stack([np.asarray(X[c], dtype=float) if c in X.columns else np.full(len(X), np.nan)
                               for c in FIGURES])
        return keys, np.log(np.where(fig > 0, fig, np.nan))

    def fit(self, X, y):
        y = np.asarray(y, dtype=float)
        gid = gpu_ids(X)
        self.chosen_ = (self.program_ridge, None if self.tau is None else (self.tau, self.w0, self.arch_gap))
        if self.select and len(set(gid)) >= MIN_INNER_GPUS:
            self.inner_scores_ = self._inner_scores(X, y, gid)
            self.chosen_ = min(CANDIDATES, key=lambda c: (self.inner_scores_[c], CANDIDATES.index(c)))
        self._fit(X, y, gid, self.chosen_[0])
        self.n_features_in_ = X.shape[1]
        return self

    @staticmethod
    def _inner_scores(X, y, gid) -> dict:
        """Mean over the training GPUs (each held out in turn) of its median APE (%), per candidate."""
        per = {c: [] for c in CANDIDATES}
        for ridge in sorted({c[0] for c in CANDIDATES}, key=repr):
            for g in sorted(set(gid)):
                tr, te = gid != g, gid == g
                inner = ProgramFloor(program_ridge=ridge, select=False)
                inner._fit(X[tr].reset_index(drop=True), y[tr], gpu_ids(X[tr]), ridge)
                for c in CANDIDATES:
                    if c[0] != ridge:
                        continue
                    pred = inner._predict(X[te].reset_index(drop=True), c[1])
                    per[c].append(float(np.median(np.abs(pred - y[te]) / y[te])) * 100)
        return {c: float(np.mean(v)) for c, v in per.items()}

    def _fit(self, X, y, gid, program_ridge):
        import pandas as pd

        keys, logfig = self._parts(X)
        n_gpus = int(gid.max()) + 1 if len(gid) else 0
        first = np.array([np.flatnonzero(gid == g)[0] for g in range(n_gpus)], dtype=int)
        gfig = logfig[first] if n_gpus else np.zeros((0, len(FIGURES)))
        self.center_ = np.nan_to_num(np.nanmean(gfig, axis=0)) if n_gpus else np.zeros(len(FIGURES))
        phi_g = np.nan_to_num(gfig - self.center_)  # a missing figure: the mean GPU's
        df = pd.DataFrame({"key": keys, "gpu": gid, "ly": np.log(np.maximum(y, 1e-6))})
        cell = df.groupby(["key", "gpu"], sort=True)["ly"].median().reset_index()
        self.keys_ = sorted(set(cell["key"]))
        kid = {k: i for i, k in enumerate(self.keys_)}
        ck = cell["key"].map(kid).to_numpy(dtype=int)
        cg = cell["gpu"].to_numpy(dtype=int)
        cy = cell["ly"].to_numpy(dtype=float)
        phi = phi_g[cg] if len(cg) else np.zeros((0, len(FIGURES)))
        n_keys, n_fig = len(self.keys_), len(FIGURES)
        programs = sorted({k[:-1] for k in self.keys_})
        pid = {p: i for i, p in enumerate(programs)}
        cp = np.array([pid[self.keys_[k][:-1]] for k in ck], dtype=int)
        n_prog = len(programs)
        gpus_of = np.zeros((n_prog, n_gpus), dtype=bool)
        gpus_of[cp, cg] = True
        many = gpus_of.sum(axis=1) >= MIN_GPUS
        count = np.maximum(np.bincount(ck, minlength=n_keys), 1)
        a = np.bincount(ck, cy, n_keys) / count
        beta = np.zeros((len(KNOTS), n_fig))
        delta = np.zeros((n_prog, n_fig))
        for _ in range(ROUNDS):
            basis = hat_basis(a[ck])                                   # (cells, knots)
            design = (basis[:, :, None] * phi[:, None, :]).reshape(len(cy), -1)
            resid = cy - a[ck] - np.sum(delta[cp] * phi, axis=1)
            gram = design.T @ design + RIDGE * len(cy) * np.eye(design.shape[1])
            beta = np.linalg.solve(gram, design.T @ resid).reshape(len(KNOTS), n_fig)
            shift = np.einsum("ck,kf,cf->c", basis, beta, phi)
            if program_ridge is not None:
                r = cy - a[ck] - shift
                pp = np.zeros((n_prog, n_fig, n_fig))
                np.add.at(pp, cp, phi[:, :, None] * phi[:, None, :])
                pr = np.zeros((n_prog, n_fig))
                np.add.at(pr, cp, phi * r[:, None])
                delta = np.linalg.solve(pp + program_ridge * np.eye(n_fig), pr[:, :, None])[:, :, 0]
                delta[~many] = 0.0
                if many.any():  # the common sensitivity belongs to the curve: the programs' own ones average 0
                    delta[many] -= delta[many].mean(axis=0)
            a = np.bincount(ck, cy - shift - np.sum(delta[cp] * phi, axis=1), n_keys) / count
        self.beta_ = beta
        self.level_ = dict(zip(self.keys_, a))
        self.delta_ = {p: delta[i] for i, p in enumerate(programs)}
        fitted = a[ck] + np.einsum("ck,kf,cf->c", hat_basis(a[ck]), beta, phi) + np.sum(delta[cp] * phi, axis=1)
        self.resid_: dict = {}
        for k, g, e in zip(ck, cg, cy - fitted):
            self.resid_.setdefault(self.keys_[k], {})[int(g)] = float(e)
        zall = np.log1p(np.nan_to_num(_figures(X)))
        zg = zall[first] if n_gpus else np.zeros((0, zall.shape[1]))
        self.zcenter_ = zg.mean(axis=0) if n_gpus else np.zeros(zall.shape[1])
        spread = zg.std(axis=0) if n_gpus else np.ones(zall.shape[1])
        self.zspread_ = np.where(spread > 0, spread, 1.0)
        self.z_ = (zg - self.zcenter_) / self.zspread_
        self.arch_ = _architectures(X)[first] if n_gpus else np.zeros(0, dtype=object)
        by_program: dict = {}
        by_mode: dict = {}
        for k, v in self.level_.items():
            by_program.setdefault(k[:-1], []).append(v)
            by_mode.setdefault((k[0], k[-1]), []).append(v)
        self.program_level_ = {k: float(np.median(v)) for k, v in by_program.items()}
        self.mode_level_ = {k: float(np.median(v)) for k, v in by_mode.items()}
        self.median_level_ = float(np.median(a)) if len(a) else 0.0
        return self

    def level_of(self, key: tuple) -> float:
        """The fitted level (ln ms at the mean figures) of a program key, or its fall-back."""
        if key in self.level_:
            return self.level_[key]
        if key[:-1] in self.program_level_:
            return self.program_level_[key[:-1]]
        return self.mode_level_.get((key[0], key[-1]), self.median_level_)

    def _predict(self, X, residuals) -> np.ndarray:
        keys, logfig = self._parts(X)
        a = np.array([self.level_of(k) for k in keys], dtype=float)
        phi = np.nan_to_num(logfig - self.center_)
        zero = np.zeros(len(FIGURES))
        delta = np.array([self.delta_.get(k[:-1], zero) for k in keys]).reshape(len(keys), len(FIGURES))
        corr = np.zeros(len(keys))
        if residuals is not None:
            tau, w0, arch_gap = residuals
            z = (np.log1p(np.nan_to_num(_figures(X))) - self.zcenter_) / self.zspread_
            arch = _architectures(X)
            for i, k in enumerate(keys):
                res = self.resid_.get(k)
                if not res:
                    continue
                idx = np.fromiter(res, dtype=int)
                d2 = np.mean((self.z_[idx] - z[i]) ** 2, axis=1) + arch_gap * (self.arch_[idx] != arch[i])
                w = np.exp(-d2 / tau)
                corr[i] = float(np.dot(w, [res[j] for j in idx]) / (w.sum() + w0))
        log_t = a + np.einsum("rk,kf,rf->r", hat_basis(a), self.beta_, phi) + np.sum(delta * phi, axis=1) + corr
        return np.exp(log_t)

    def predict(self, X):
        check_is_fitted(self, "beta_")
        return self._predict(X, self.chosen_[1])


def make_model(task, seed):
    return ProgramFloor()
