"""Launch transfer: sees the launch (kernel, inputs, launch index, grid, block, registers, smem), GPU architecture and
catalogue figures, and the training GPUs' times of the same launch; carries them to an unseen GPU, kernel by kernel.

For a row of kernel ``k``, launch ``l``, on GPU ``g``:

``ln t_g(l) = sum_s w_s [ ln t_s(l) + b_k . (z_g(l) - z_s(l)) ]`` over the training GPUs ``s``, where

- ``ln t_s(l)``: the time training GPU ``s`` measured for the same launch (application, kernel, input_size_1,
  input_size_2, launch_index, grid, block; their mean when measured more than once); a launch ``s`` did not measure
  gets the kernel-scaling-style estimate ``h(l) + f_k(s)``: ``h`` a GPU-independent LightGBM model of the launch
  (application, kernel, inputs, launch index, grid, block, log blocks, log threads; no GPU figure, no registers
  or shared memory, which differ per architecture's binary) and ``f_k(s)`` the mean of ``ln t - h`` over kernel
  ``k``'s rows on ``s`` (two rounds of backfitting ``h`` and ``f``). Only sources with training rows of kernel
  ``k`` count for its rows (the weights renormalised over them); a kernel that no training GPU has gets every
  source, each with ``h(l)`` plus the mean of its ``f`` over the kernels.
- ``z``: standardised ``ln`` SM clock, ``ln`` SM count (Kepler's catalogue lacks it: its cores over 192),
  ``ln`` memory bandwidth and ``ln`` waves, waves = ``ceil(blocks / (SMs x resident blocks per SM))`` with the
  resident blocks from the launch's theoretical occupancy under the limits of the GPU's architecture
  (:mod:`kgpubench.features.occupancy`; outside the table: Maxwell 2's). On a source, the registers and static
  shared memory are the kernel's median on that GPU's training rows (the test row's when it has none).
- ``b_k``: the kernel's slopes, a ridge fit on pairs of training GPUs that measured the same launch group
  (the launch without its index, launch 0 apart from the rest: their mean ``ln t`` and ``z`` per GPU): the
  pairs' ``ln t`` differences against their ``z`` differences, shrunk toward the slopes pooled over the kernels
  with strength ``shrinkage`` (``b_k = (D'D + s n I)^-1 (D'e + s n b_pooled)``, ``n`` the kernel's pairs); a
  kernel without pairs: the pooled slopes.
- ``w_s = exp(-d_s / tau)`` normalised: ``d_s`` the root mean square difference between the GPUs' standardised
  ``ln`` catalogue figures (a figure missing on either: left out) plus ``gap`` when ``s`` is of another
  architecture; ``tau = 0``: the nearest source alone (ties: the first in sorted order), ``inf``: all alike.

``shrinkage``, ``tau`` and ``gap`` come from the fixed grids below, chosen by leave-one-GPU-out over the GPUs of
the rows ``fit`` receives (the training GPUs only): each training GPU is held out in turn, the model fitted on the
others and scored on it (median absolute percentage error); the triple with the smallest median over those GPUs
wins (ties: the first in grid order). ``chosen_`` and ``inner_scores_`` record it. One thread, deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.features.occupancy import resident_blocks
from kgpubench.tasks.preprocess import thread_count

CATEGORICAL = ("application", "kernel")
SHAPE = ("input_size_1", "input_size_2", "launch_index", "grid_x", "grid_y", "grid_z", "block_x", "block_y",
         "block_z")
LAUNCH_KEY = ("application", "kernel", *SHAPE)
GROUP_KEY = tuple(c for c in LAUNCH_KEY if c != "launch_index")
ARCH = "gpu_architecture"
FIGURES = ("gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
           "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops")
CLOCK, SMS, BANDWIDTH = "gpu_clock_sm_mhz", "gpu_sm_count", "gpu_memory_bandwidth_gbs"
# FP32 cores per SM (CUDA C++ Programming Guide, arithmetic instruction throughput): the SM count of a GPU whose
# catalogue lacks it (the Kepler GPUs) is its cores over these.
CORES_PER_SM = {"kepler": 192, "maxwell": 128, "maxwell2": 128, "pascal": 64}
# The grids, declared up front; chosen by inner leave-one-GPU-out over the training GPUs.
SHRINKAGE = (0.0001, 0.001, 0.01, 0.1, 1.0, 10.0)
TAU = (0.0, 0.25, 0.5, 1.0, 2.0, math.inf)
GAP = (0.5, 2.0)
DEFAULT = (1.0, 0.0, 2.0)
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


def _keys(X: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    """One string per row naming its values of ``columns`` (a missing column: empty)."""
    parts = [X[c].astype(str).to_numpy() if c in X.columns else np.full(len(X), "") for c in columns]
    return np.array(["|".join(p) for p in zip(*parts)]) if len(X) else np.array([], dtype=str)


class LaunchTransfer(RegressorMixin, BaseEstimator):
    """The same launch's time on the training GPUs, moved by per-kernel slopes and weighted by nearness
    (module doc)."""

    def __init__(self, *, seed: int = 0, threads: int = 1, shrinkage: tuple = SHRINKAGE, tau: tuple = TAU,
                 gap: tuple = GAP) -> None:
        self.seed = seed
        self.threads = threads
        self.shrinkage = shrinkage
        self.tau = tau
        self.gap = gap

    # ----- features ------------------------------------------------------------------------------------------
    def _launch(self, X: pd.DataFrame) -> pd.DataFrame:
        out = {c: pd.Index(self.categories_[c]).get_indexer(X[c].astype(str)).astype(float)  # unseen: -1
               if c in X.columns else np.full(len(X), -1.0) for c in CATEGORICAL}
        for c in SHAPE:
            out[c] = _col(X, c)
        blocks = _product(X, ("grid_x", "grid_y", "grid_z"))
        out["log_blocks"] = np.log(blocks)
        out["log_threads"] = np.log(blocks * _product(X, ("block_x", "block_y", "block_z")))
        return pd.DataFrame(out)

    @staticmethod
    def _gpu_table(X: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
        """Each row's GPU (a string key) and one row per GPU: architecture, catalogue figures, SM count (derived
        from the cores where missing)."""
        arch = X[ARCH].astype(str).to_numpy() if ARCH in X.columns else np.full(len(X), "")
        figs = np.column_stack([_col(X, c) for c in FIGURES])
        keys = np.array([a + "|" + "|".join(f"{v:.6g}" for v in row) for a, row in zip(arch, figs)])
        first = pd.Series(np.arange(len(X))).groupby(keys).first()
        table = pd.DataFrame(figs[first.to_numpy()], columns=list(FIGURES), index=first.index)
        table[ARCH] = arch[first.to_numpy()]
        sms = table[SMS].to_numpy(dtype=float)
        derived = table["gpu_cores"].to_numpy(dtype=float) / np.array(
            [CORES_PER_SM.get(a.lower(), np.nan) for a in table[ARCH]])
        table["sms"] = np.where(np.isfinite(sms) & (sms > 0), sms, np.round(derived))
        return keys, table

    def _raw_z(self, X: pd.DataFrame, gpu_rows: pd.DataFrame, registers: np.ndarray, smem: np.ndarray) -> np.ndarray:
        """``ln`` clock, SMs, bandwidth and waves of each launch of ``X`` on the GPU of the same row of
        ``gpu_rows`` (a missing figure: the training median)."""
        figs = {}
        for name, col in ((CLOCK, CLOCK), (SMS, "sms"), (BANDWIDTH, BANDWIDTH)):
            v = gpu_rows[col].to_numpy(dtype=float)
            figs[name] = np.where(np.isfinite(v) & (v > 0), v, self.medians_[name])
        arch = gpu_rows[ARCH].to_numpy()
        blocks = _product(X, ("grid_x", "grid_y", "grid_z"))
        threads = _product(X, ("block_x", "block_y", "block_z")).astype(int)
        per_sm = np.array([resident_blocks(a, t, int(r), int(s))
                           for a, t, r, s in zip(arch, threads, np.nan_to_num(registers), np.nan_to_num(smem))])
        waves = np.ceil(blocks / (figs[SMS] * per_sm)) if len(X) else np.zeros(0)
        return np.column_stack([np.log(figs[CLOCK]), np.log(figs[SMS]), np.log(figs[BANDWIDTH]),
                                np.log(np.maximum(waves, 1.0))]) if len(X) else np.zeros((0, 4))

    def _booster(self):
        from lightgbm import LGBMRegressor

        return LGBMRegressor(**H_PARAMS, subsample=0.8, subsample_freq=1, colsample_bytree=0.9,
                             n_jobs=self.threads, deterministic=True, force_row_wise=True,
                             random_state=self.seed, verbose=-1)

    # ----- one fit: everything but the hyper-parameters' choice --------------------------------------------------
    def _fit_core(self, X: pd.DataFrame, log_y: np.ndarray, gpus: np.ndarray, table: pd.DataFrame,
                  strengths: tuple) -> dict:
        """``h``, ``f``, the measured launches, the sources' registers and the slopes at every strength."""
        kernels = X["kernel"].astype(str).to_numpy() if "kernel" in X.columns else np.full(len(X), "")
        launch = self._launch(X)
        kg = pd.Series(kernels).str.cat(pd.Series(gpus), sep="\x00").to_numpy()
        offset = pd.Series(log_y).groupby(kg).transform("mean").to_numpy()
        for _ in range(ROUNDS):
            h = self._booster().fit(launch, log_y - offset)
            e = log_y - h.predict(launch)
            offset = pd.Series(e).groupby(kg).transform("mean").to_numpy()
        f = pd.Series(e).groupby([kernels, gpus]).mean()
        f_any = pd.Series(e).groupby(gpus).mean()
        measured = pd.Series(log_y).groupby([_keys(X, LAUNCH_KEY), gpus]).mean()
        regs = pd.DataFrame({"r": _col(X, "registers_per_thread"), "s": _col(X, "static_smem_bytes")}) \
            .groupby([kernels, gpus]).median()
        raw = self._raw_z(X, table.loc[gpus].reset_index(drop=True), _col(X, "registers_per_thread"),
                          _col(X, "static_smem_bytes"))
        z = (raw - self.z_center_) / self.z_scale_
        slopes, pooled = self._slopes(X, kernels, gpus, z, log_y, strengths)
        return {"h": h, "f": f.to_dict(), "f_any": f_any.to_dict(), "measured": measured.to_dict(),
                "regs": regs.to_dict("index"), "slopes": slopes, "pooled": pooled, "gpus": sorted(set(gpus))}

    @staticmethod
    def _slopes(X, kernels, gpus, z, log_y, strengths) -> tuple[dict, np.ndarray]:
        """Per (kernel, strength) slopes from pairs of GPUs measuring the same launch group; the pooled slopes."""
        group = _keys(X, GROUP_KEY)
        first = np.where(_col(X, "launch_index") == 0, "|0", "|n")
        frame = pd.DataFrame(z, columns=["z0", "z1", "z2", "z3"]).assign(
            y=log_y, grp=np.char.add(group.astype(str), first), gpu=gpus, k=kernels)
        means = frame.groupby(["k", "grp", "gpu"], sort=True).mean().reset_index()
        pair = means.merge(means, on=["k", "grp"], suffixes=("_a", "_b"))
        pair = pair[pair["gpu_a"] < pair["gpu_b"]]
        dz = pair[[f"z{i}_a" for i in range(4)]].to_numpy() - pair[[f"z{i}_b" for i in range(4)]].to_numpy()
        de = (pair["y_a"] - pair["y_b"]).to_numpy()
        eye = np.eye(4)
        if len(de) == 0:
            return {}, np.zeros(4)
        pooled = np.linalg.solve(dz.T @ dz + 1e-6 * len(de) * eye, dz.T @ de)
        out = {}
        for k, idx in pd.Series(np.arange(len(de))).groupby(pair["k"].to_numpy()).indices.items():
            a, b = dz[idx].T @ dz[idx], dz[idx].T @ de[idx]
            for s in strengths:
                n = s * len(idx)
                out[(k, s)] = np.linalg.solve(a + n * eye, b + n * pooled)
        return out, pooled

    def _distances(self, target: pd.Series, sources: pd.DataFrame) -> np.ndarray:
        """RMS difference of standardised ``ln`` catalogue figures between ``target`` and each source, and
        whether each source is of another architecture."""
        logs = np.log(np.where((v := sources[list(FIGURES)].to_numpy(dtype=float)) > 0, v, np.nan))
        t = np.log(np.where((u := target[list(FIGURES)].to_numpy(dtype=float)) > 0, u, np.nan))
        diff = ((logs - self.fig_center_) - (t - self.fig_center_)) / self.fig_scale_
        ok = np.isfinite(diff)
        d = np.sqrt(np.where(ok, diff ** 2, 0.0).sum(axis=1) / np.maximum(ok.sum(axis=1), 1))
        return d, (sources[ARCH].to_numpy() != target[ARCH]).astype(float)

    @staticmethod
    def _weights(d: np.ndarray, other: np.ndarray, avail: np.ndarray, tau: float, gap: float) -> np.ndarray:
        """Each row's source weights (rows x sources): ``exp(-(d + gap [other architecture]) / tau)`` over the
        sources available to the row, normalised."""
        dist = np.where(avail, (d + gap * other)[None, :], np.inf)
        if tau == 0:
            w = np.zeros(dist.shape)
            w[np.arange(len(dist)), np.argmin(dist, axis=1)] = 1.0  # the first of the nearest in sorted order
            return w
        if math.isinf(tau):
            w = avail.astype(float)
        else:
            w = np.where(avail, np.exp(-(dist - dist.min(axis=1, keepdims=True)) / tau), 0.0)
        return w / w.sum(axis=1, keepdims=True)

    def _source_terms(self, core: dict, X: pd.DataFrame, gpus: np.ndarray, table: pd.DataFrame,
                      strengths: tuple) -> dict:
        """Per test GPU: its rows, ``ln t_s(l)`` (rows x sources) and ``b_k . (z_g - z_s)`` (per strength)."""
        kernels = X["kernel"].astype(str).to_numpy() if "kernel" in X.columns else np.full(len(X), "")
        h = core["h"].predict(self._launch(X)) if len(X) else np.zeros(0)
        keys = _keys(X, LAUNCH_KEY)
        regs, sms = _col(X, "registers_per_thread"), _col(X, "static_smem_bytes")
        sources = core["gpus"]
        src_table = table.loc[sources]
        z_g = (self._raw_z(X, table.loc[gpus].reset_index(drop=True), regs, sms) - self.z_center_) / self.z_scale_
        base = np.empty((len(X), len(sources)))
        dz = np.empty((len(X), len(sources), 4))
        for j, s in enumerate(sources):
            f_s = np.array([core["f"].get((k, s), np.nan) for k in kernels])
            meas = np.array([core["measured"].get((key, s), np.nan) for key in keys])
            base[:, j] = np.where(np.isfinite(meas), meas, h + f_s)
            r_s = np.array([core["regs"].get((k, s), {}).get("r", np.nan) for k in kernels])
            m_s = np.array([core["regs"].get((k, s), {}).get("s", np.nan) for k in kernels])
            rows = src_table.iloc[np.full(len(X), j)].reset_index(drop=True)
            z_s = (self._raw_z(X, rows, np.where(np.isfinite(r_s), r_s, regs), np.where(np.isfinite(m_s), m_s, sms))
                   - self.z_center_) / self.z_scale_
            dz[:, j] = z_g - z_s
        # a source counts for a row when it has the row's kernel; a kernel no source has: every source, with its
        # mean f over the kernels
        avail = np.isfinite(base)
        none = ~avail.any(axis=1)
        base[none] = h[none, None] + np.array([core["f_any"][s] for s in sources])[None, :]
        avail[none] = True
        moves = {}
        for st in strengths:
            beta = np.array([core["slopes"].get((k, st), core["pooled"]) for k in kernels]).reshape(len(X), 4)
            moves[st] = np.einsum("rsf,rf->rs", dz, beta)
        out = {}
        for g in pd.unique(gpus):
            idx = np.flatnonzero(gpus == g)
            out[g] = (idx, np.where(avail[idx], base[idx], 0.0), {st: m[idx] for st, m in moves.items()},
                      avail[idx], self._distances(table.loc[g], src_table))
        return out

    @staticmethod
    def _combine(terms: dict, n: int, s: float, tau: float, gap: float) -> np.ndarray:
        out = np.empty(n)
        for idx, base, moves, avail, (d, other) in terms.values():
            w = LaunchTransfer._weights(d, other, avail, tau, gap)
            out[idx] = np.sum((base + moves[s]) * w, axis=1)
        return out

    # ----- fit / predict -------------------------------------------------------------------------------------
    def _grid(self) -> list[tuple[float, float, float]]:
        return [(s, t, g) for s in self.shrinkage for t in self.tau for g in self.gap]

    def select(self, X: pd.DataFrame, log_y: np.ndarray, gpus: np.ndarray, table: pd.DataFrame):
        """(shrinkage, tau, gap) by leave-one-GPU-out over the GPUs of these rows, and every candidate's score on
        each held-out GPU (median APE, %); the candidate with the smallest median over the GPUs wins."""
        held = sorted(pd.unique(gpus))
        if len(held) < 3:
            return DEFAULT, {}
        grid = self._grid()
        scores: dict[tuple, dict] = {c: {} for c in grid}
        for g in held:
            out, inn = gpus == g, gpus != g
            core = self._fit_core(X[inn].reset_index(drop=True), log_y[inn], gpus[inn], table, tuple(self.shrinkage))
            terms = self._source_terms(core, X[out].reset_index(drop=True), gpus[out], table, tuple(self.shrinkage))
            for c in grid:
                pred = self._combine(terms, int(out.sum()), *c)
                scores[c][g] = float(np.median(np.abs(np.exp(pred - log_y[out]) - 1.0)) * 100)
        best = min(grid, key=lambda c: float(np.median(list(scores[c].values()))))
        return best, scores

    def fit(self, X, y):
        X = pd.DataFrame(X).reset_index(drop=True)
        log_y = np.log(np.maximum(np.asarray(y, dtype=float), TINY))
        self.categories_ = {c: sorted(X[c].astype(str).unique()) if c in X.columns else [] for c in CATEGORICAL}
        gpus, table = self._gpu_table(X)
        self.medians_ = {}
        for name, col in ((CLOCK, CLOCK), (SMS, "sms"), (BANDWIDTH, BANDWIDTH)):
            v = table[col].to_numpy(dtype=float)
            self.medians_[name] = float(np.nanmedian(v[v > 0])) if np.any(v > 0) else 1.0
        raw = self._raw_z(X, table.loc[gpus].reset_index(drop=True), _col(X, "registers_per_thread"),
                          _col(X, "static_smem_bytes"))
        self.z_center_ = raw.mean(axis=0)
        spread = raw.std(axis=0)
        self.z_scale_ = np.where(spread > 0, spread, 1.0)
        logs = np.log(np.where((v := table[list(FIGURES)].to_numpy(dtype=float)) > 0, v, np.nan))
        ok = np.isfinite(logs)
        count = np.maximum(ok.sum(axis=0), 1)
        self.fig_center_ = np.where(ok, logs, 0.0).sum(axis=0) / count  # a figure no GPU has: 0
        spread = np.sqrt(np.where(ok, (logs - self.fig_center_) ** 2, 0.0).sum(axis=0) / count)
        self.fig_scale_ = np.where(spread > 0, spread, 1.0)
        self.chosen_, self.inner_scores_ = self.select(X, log_y, gpus, table)
        self.core_ = self._fit_core(X, log_y, gpus, table, (self.chosen_[0],))
        self.table_ = table
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "core_")
        X = pd.DataFrame(X).reset_index(drop=True)
        gpus, table = self._gpu_table(X)
        table = pd.concat([self.table_, table[~table.index.isin(self.table_.index)]])
        terms = self._source_terms(self.core_, X, gpus, table, (self.chosen_[0],))
        return np.exp(self._combine(terms, len(X), *self.chosen_))


def make_model(task, seed):
    return LaunchTransfer(seed=seed, threads=thread_count())
