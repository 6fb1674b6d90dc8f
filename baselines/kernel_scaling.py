"""Per-kernel scaling: how each kernel's time moves with the GPU's clock, SMs, bandwidth and waves, learnt from the
training GPUs and carried to an unseen one; sees the task's launch columns (kernel, inputs, launch index, grid,
block, registers, static shared memory) and the GPU's architecture and catalogue figures.

``ln t = h(launch) + c_k + z . b_k + w r_k(source)`` for a row of kernel ``k``:

- ``h``: a GPU-independent LightGBM model of the launch (application, kernel, inputs, launch index, grid, block,
  their log block and thread counts; no GPU figure, and neither registers nor shared memory, which differ per
  architecture's binary), fitted to ``ln t - z . b_k`` (two rounds of backfitting with the slopes).
- ``z``: standardised ``ln`` SM clock, ``ln`` SM count, ``ln`` memory bandwidth and ``ln`` waves, where waves =
  ``ceil(blocks / (SMs x resident blocks per SM))`` and the resident blocks come from the theoretical occupancy of
  the launch (threads per block, registers, static shared memory) under the limits of the row's architecture
  (:mod:`kgpubench.features.occupancy`; an architecture outside the table: Maxwell 2's limits).
- ``b_k``: the kernel's slopes, a ridge fit on its rows shrunk toward the slopes pooled over every kernel with
  strength ``shrinkage`` (per row; ``b_k = (Z'Z + s n I)^-1 (Z'e + s n b_pooled)`` on the kernel's centred rows);
  ``c_k`` the kernel's mean residual.
- ``r_k(source)``: the mean residual of kernel ``k`` on the nearest training GPU of the same architecture (in
  standardised log catalogue figures; the GPU itself when it is a training GPU), times the mix weight ``w``;
  none without a same-architecture training GPU.

``shrinkage`` and ``w`` are chosen by leave-one-GPU-out over the GPUs of the rows ``fit`` receives (the training
GPUs only): each candidate pair is fitted without one GPU and scored on it (median absolute percentage error),
and the pair with the smallest median over those GPUs wins; ``chosen_`` and ``inner_scores_`` record it.
A kernel never seen in training gets the pooled slopes and no residual. One thread, deterministic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.features.occupancy import occupancy
from kgpubench.tasks.preprocess import thread_count

CATEGORICAL = ("application", "kernel")
LAUNCH = ("input_size_1", "input_size_2", "launch_index", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
          "block_z")
ARCH = "gpu_architecture"
FIGURES = ("gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
           "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops")
CLOCK, SMS, BANDWIDTH = "gpu_clock_sm_mhz", "gpu_sm_count", "gpu_memory_bandwidth_gbs"
# Architecture -> the compute capability whose limits its occupancy uses (the family's most common one).
ARCH_CC = {"kepler": "3.5", "maxwell": "5.0", "maxwell2": "5.2", "pascal": "6.0", "volta": "7.0", "turing": "7.5",
           "ampere": "8.0", "ada": "8.9", "hopper": "9.0"}
FALLBACK_CC = "5.2"
# FP32 cores per SM (CUDA C++ Programming Guide, arithmetic instruction throughput): the SM count of a row whose
# catalogue lacks it (the Kepler GPUs) is its cores over these.
CORES_PER_SM = {"kepler": 192, "maxwell": 128, "maxwell2": 128, "pascal": 64}
SHRINKAGE = (0.01, 0.1, 1.0, 10.0)
MIX = (0.0, 0.5, 1.0)
DEFAULT = (1.0, 0.0)
ROUNDS = 2
TINY = 1e-12
H_PARAMS = dict(n_estimators=200, num_leaves=31, learning_rate=0.05, min_child_samples=10)


def _col(X: pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(X[name], dtype=float) if name in X.columns else np.full(len(X), np.nan)


def _product(X: pd.DataFrame, names: tuple[str, ...]) -> np.ndarray:
    out = np.ones(len(X))
    for name in names:
        out = out * np.where(np.isfinite(v := _col(X, name)) & (v > 0), v, 1.0)
    return out


_OCCUPANCY: dict[tuple, int] = {}


def resident_blocks(arch: str, threads: int, registers: int, smem: int) -> int:
    """Resident blocks per SM of a launch under its architecture's limits (at least 1)."""
    key = (arch, threads, registers, smem)
    if key not in _OCCUPANCY:
        cc = ARCH_CC.get(str(arch).lower(), FALLBACK_CC)
        try:
            blocks = occupancy(cc, threads_per_block=max(threads, 1), registers_per_thread=max(registers, 0),
                               shared_bytes_per_block=max(smem, 0)).blocks_per_sm
        except ValueError:
            blocks = 1
        _OCCUPANCY[key] = max(int(blocks), 1)
    return _OCCUPANCY[key]


class KernelScaling(RegressorMixin, BaseEstimator):
    """Per-kernel log-linear scaling over GPU figures with a GPU-independent launch model (module doc)."""

    def __init__(self, *, seed: int = 0, threads: int = 1, shrinkage: tuple = SHRINKAGE, mix: tuple = MIX) -> None:
        self.seed = seed
        self.threads = threads
        self.shrinkage = shrinkage
        self.mix = mix

    # ----- features ------------------------------------------------------------------------------------------
    def _launch(self, X: pd.DataFrame, categories: dict) -> pd.DataFrame:
        out = {c: pd.Categorical(X[c].astype(str), categories=categories[c]).codes.astype(float)
               if c in X.columns else np.full(len(X), -1.0) for c in CATEGORICAL}
        for c in LAUNCH:
            out[c] = _col(X, c)
        blocks = _product(X, ("grid_x", "grid_y", "grid_z"))
        out["log_blocks"] = np.log(blocks)
        out["log_threads"] = np.log(blocks * _product(X, ("block_x", "block_y", "block_z")))
        return pd.DataFrame(out)

    @staticmethod
    def _raw_z(X: pd.DataFrame, medians: dict) -> np.ndarray:
        """``ln`` clock, SMs, bandwidth and waves of every row (a missing figure: the training median)."""
        arch = X[ARCH].astype(str).to_numpy() if ARCH in X.columns else np.full(len(X), "")
        sms = _col(X, SMS)
        derived = _col(X, "gpu_cores") / np.array([CORES_PER_SM.get(a.lower(), np.nan) for a in arch])
        raw = {CLOCK: _col(X, CLOCK), SMS: np.where(np.isfinite(sms) & (sms > 0), sms, np.round(derived)),
               BANDWIDTH: _col(X, BANDWIDTH)}
        figs = {c: np.where(np.isfinite(v) & (v > 0), v, medians[c]) for c, v in raw.items()}
        blocks = _product(X, ("grid_x", "grid_y", "grid_z"))
        threads = _product(X, ("block_x", "block_y", "block_z")).astype(int)
        regs = np.nan_to_num(_col(X, "registers_per_thread")).astype(int)
        smem = np.nan_to_num(_col(X, "static_smem_bytes")).astype(int)
        per_sm = np.array([resident_blocks(a, t, r, s) for a, t, r, s in zip(arch, threads, regs, smem)])
        waves = np.ceil(blocks / (figs[SMS] * per_sm))
        return np.column_stack([np.log(figs[CLOCK]), np.log(figs[SMS]), np.log(figs[BANDWIDTH]),
                                np.log(np.maximum(waves, 1.0))])

    def _gpu_keys(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row's GPU (a string key), architecture and standardisable log figures."""
        figs = np.column_stack([np.log(np.where(np.isfinite(v := _col(X, c)) & (v > 0), v, np.nan)) for c in FIGURES])
        arch = X[ARCH].astype(str).to_numpy() if ARCH in X.columns else np.full(len(X), "")
        keys = np.array([a + "|" + "|".join(f"{v:.6g}" for v in row) for a, row in zip(arch, figs)])
        return keys, arch, figs

    def _booster(self):
        from lightgbm import LGBMRegressor

        return LGBMRegressor(**H_PARAMS, subsample=0.8, subsample_freq=1, colsample_bytree=0.9,
                             n_jobs=self.threads, deterministic=True, force_row_wise=True,
                             random_state=self.seed, verbose=-1)

    # ----- one fit at fixed hyper-parameters -----------------------------------------------------------------
    @staticmethod
    def _slopes(z: np.ndarray, e: np.ndarray, kernels: np.ndarray, strengths: tuple) -> tuple[dict, np.ndarray]:
        """Per kernel and shrinkage strength: (slopes, intercept); and the pooled slopes."""
        zc, ec = z.copy(), e.copy()
        groups = pd.Series(np.arange(len(e))).groupby(kernels).indices
        for idx in groups.values():
            zc[idx] -= zc[idx].mean(axis=0)
            ec[idx] -= ec[idx].mean()
        eye = np.eye(z.shape[1])
        pooled = np.linalg.solve(zc.T @ zc + 1e-6 * len(e) * eye, zc.T @ ec)
        out = {}
        for k, idx in groups.items():
            a, b = zc[idx].T @ zc[idx], zc[idx].T @ ec[idx]
            for s in strengths:
                n = s * len(idx)
                beta = np.linalg.solve(a + n * eye, b + n * pooled)
                out[(k, s)] = (beta, float(np.mean(e[idx] - z[idx] @ beta)))
        return out, pooled

    def _core(self, launch: pd.DataFrame, z: np.ndarray, log_y: np.ndarray, kernels: np.ndarray,
              shrinkage: float, strengths: tuple) -> dict:
        """Backfit ``h`` and the slopes at ``shrinkage``; the slopes at every strength of ``strengths`` given
        the final ``h``."""
        offset = np.zeros(len(log_y))
        for _ in range(ROUNDS):
            h = self._booster().fit(launch, log_y - offset)
            e = log_y - h.predict(launch)
            slopes, pooled = self._slopes(z, e, kernels, (shrinkage,))
            offset = self._linear({"slopes": slopes, "pooled": pooled}, z, kernels, shrinkage)
            offset -= np.array([slopes[(k, shrinkage)][1] for k in kernels]) if len(kernels) else 0.0
        slopes, pooled = self._slopes(z, e, kernels, strengths)
        return {"h": h, "slopes": slopes, "pooled": pooled, "e": e}

    @staticmethod
    def _linear(core: dict, z: np.ndarray, kernels: np.ndarray, s: float) -> np.ndarray:
        """``c_k + z . b_k`` of every row (a kernel not seen in training: the pooled slopes, no intercept)."""
        out = z @ core["pooled"]
        for k in pd.unique(kernels):
            if (k, s) in core["slopes"]:
                beta, c = core["slopes"][(k, s)]
                idx = kernels == k
                out[idx] = c + z[idx] @ beta
        return out

    @staticmethod
    def _residuals(e_lin: np.ndarray, kernels: np.ndarray, gpus: np.ndarray) -> dict:
        """Mean residual per (kernel, GPU)."""
        return pd.Series(e_lin).groupby([kernels, gpus]).mean().to_dict()

    @staticmethod
    def _sources(test_gpus, test_arch, test_figs, train_gpus, train_arch, train_figs) -> dict:
        """Each test GPU's nearest training GPU of its architecture (itself when it is one), or None."""
        table = pd.DataFrame(train_figs).assign(g=train_gpus, a=train_arch).groupby("g").first()
        figs = table.drop(columns="a").to_numpy(dtype=float)
        center, spread = np.nanmean(figs, axis=0), np.nanstd(figs, axis=0)
        scale = np.where(spread > 0, spread, 1.0)
        out = {}
        for g in pd.unique(test_gpus):
            i = int(np.flatnonzero(test_gpus == g)[0])
            same = np.flatnonzero(table["a"].to_numpy() == test_arch[i])
            if g in table.index:
                out[g] = g
            elif same.size == 0:
                out[g] = None
            else:
                z = np.nan_to_num((test_figs[i] - center) / scale)
                d = [float(np.sum((np.nan_to_num((figs[j] - center) / scale) - z) ** 2)) for j in same]
                out[g] = table.index[same[int(np.argmin(d))]]
        return out

    def _predict_log(self, core, launch, z, kernels, gpus, arch, figs, s, w, train) -> np.ndarray:
        """``ln t`` at shrinkage ``s`` and mix ``w``; ``train`` = (GPUs, architectures, figures, residual table)."""
        pred = core["h"].predict(launch) + self._linear(core, z, kernels, s)
        if w:
            t_gpus, t_arch, t_figs, resid = train
            src = self._sources(gpus, arch, figs, t_gpus, t_arch, t_figs)
            pred = pred + w * np.array([resid.get((k, src[g]), 0.0) if src[g] is not None else 0.0
                                        for k, g in zip(kernels, gpus)])
        return pred

    # ----- fit / predict -------------------------------------------------------------------------------------
    def _prepare(self, X: pd.DataFrame):
        launch = self._launch(X, self.categories_)
        z = (self._raw_z(X, self.medians_) - self.z_center_) / self.z_scale_
        kernels = X["kernel"].astype(str).to_numpy() if "kernel" in X.columns else np.full(len(X), "")
        gpus, arch, figs = self._gpu_keys(X)
        return launch, z, kernels, gpus, arch, figs

    def _score(self, core, train, launch, z, kernels, gpus, arch, figs, log_y, s, w) -> float:
        e_lin = core["e"] - self._linear(core, train["z"], train["kernels"], s)
        resid = self._residuals(e_lin, train["kernels"], train["gpus"])
        pred = self._predict_log(core, launch, z, kernels, gpus, arch, figs, s, w,
                                 (train["gpus"], train["arch"], train["figs"], resid))
        return float(np.median(np.abs(np.exp(pred - log_y) - 1.0)) * 100)

    def select(self, launch, z, kernels, gpus, arch, figs, log_y) -> tuple[tuple[float, float], dict]:
        """(shrinkage, mix) by leave-one-GPU-out over the GPUs of these rows, and every candidate's score on each
        held-out GPU (median APE, %); the candidate with the smallest median over the GPUs wins."""
        held = sorted(pd.unique(gpus))
        if len(held) < 3:
            return DEFAULT, {}
        scores: dict[tuple[float, float], dict] = {(s, w): {} for s in self.shrinkage for w in self.mix}
        for g in held:
            out, inn = gpus == g, gpus != g
            for s_fit in self.shrinkage:
                core = self._core(launch[inn].reset_index(drop=True), z[inn], log_y[inn], kernels[inn], s_fit,
                                  (s_fit,))
                train = {"z": z[inn], "kernels": kernels[inn], "gpus": gpus[inn], "arch": arch[inn], "figs": figs[inn]}
                for w in self.mix:
                    scores[(s_fit, w)][g] = self._score(core, train, launch[out].reset_index(drop=True), z[out],
                                                        kernels[out], gpus[out], arch[out], figs[out], log_y[out],
                                                        s_fit, w)
        best = min(scores, key=lambda k: (float(np.median(list(scores[k].values()))), -k[0], k[1]))
        return best, scores

    def fit(self, X, y):
        X = pd.DataFrame(X).reset_index(drop=True)
        log_y = np.log(np.maximum(np.asarray(y, dtype=float), TINY))
        self.categories_ = {c: sorted(X[c].astype(str).unique()) if c in X.columns else [] for c in CATEGORICAL}
        self.medians_ = {c: float(np.nanmedian(np.where((v := _col(X, c)) > 0, v, np.nan))) if c in X.columns
                         and np.any(_col(X, c) > 0) else 1.0 for c in (CLOCK, SMS, BANDWIDTH)}
        raw = self._raw_z(X, self.medians_)
        self.z_center_ = raw.mean(axis=0)
        spread = raw.std(axis=0)
        self.z_scale_ = np.where(spread > 0, spread, 1.0)
        launch, z, kernels, gpus, arch, figs = self._prepare(X)
        self.chosen_, self.inner_scores_ = self.select(launch, z, kernels, gpus, arch, figs, log_y)
        s, w = self.chosen_
        self.core_ = self._core(launch, z, log_y, kernels, s, (s,))
        e_lin = self.core_["e"] - self._linear(self.core_, z, kernels, s)
        self.train_ = (gpus, arch, figs, self._residuals(e_lin, kernels, gpus))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "core_")
        X = pd.DataFrame(X).reset_index(drop=True)
        launch, z, kernels, gpus, arch, figs = self._prepare(X)
        s, w = self.chosen_
        return np.exp(self._predict_log(self.core_, launch, z, kernels, gpus, arch, figs, s, w, self.train_))


def make_model(task, seed):
    return KernelScaling(seed=seed, threads=thread_count())
