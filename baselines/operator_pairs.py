"""Operator pairs: sees the operator, its shape and nominal work, the GPUs' catalogue figures, and the training GPUs'
times of the same shape; a per-class wave model mixed with same-shape GPU-pair ratios.

- Wave model: the tiles, waves and wave roofline ``t_roof`` of :mod:`kgpubench.features.operator_waves`; one
  LightGBM per operator class (GEMM-like: bmm, linear, conv2d; normalisation: layernorm, softmax; elementwise: the
  rest) learns the utilisation ``ln u = ln(t_roof / t)`` (at most 0) from the tile and wave features and the GPU's
  figures; ``ln t_wave = ln t_roof - ln u`` with ``u`` clipped to (1e-6, 1]. An operator of a class with no
  training rows gets a model fitted on every class.
- Pair ratio model: for every ordered pair of training GPUs ``a -> b`` that measured the same call (operator and
  every shape column equal; their mean ``ln t`` when measured more than once), one LightGBM learns
  ``ln(t_b / t_a)`` from the GPUs' figure differences (``ln`` SMs, fp32 peak, bandwidth, L2, SM and memory
  clocks, ``b`` minus ``a``), the call (operator, class, ``ln`` flops and bytes, tiles, tile work), the waves and
  wave fill on each GPU, the difference of the wave rooflines, and what ``a`` measured (``ln t_a`` and its
  utilisation ``ln(t_roof_a / t_a)``).
- For a row on GPU ``g``, each training GPU ``a`` that measured its call gives ``ln t_a + ratio(a -> g)``; these
  are averaged with weights ``exp(-d_a / tau)`` (``d_a`` the root mean square difference of the two GPUs'
  standardised ``ln`` catalogue figures, a figure missing on either left out; ``tau = 0``: the nearest source
  alone, ties to the first in sorted order; ``inf``: all alike), and ``ln t = w ln t_pairs + (1 - w) ln t_wave``.
  A row whose call no training GPU measured gets ``t_wave``.

``tau`` and ``w`` come from the fixed grids below, chosen by leave-one-GPU-out over the GPUs of the rows ``fit``
receives (the training GPUs only): each is held out in turn, both models fitted on the others and scored on it
(median absolute percentage error); the pair with the smallest median over those GPUs wins (ties: the first in
grid order). With fewer than three training GPUs: ``DEFAULT``. ``chosen_`` and ``inner_scores_`` record it.
Deterministic for a seed.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.features.operator_waves import GEMM, NORM, wave_features
from kgpubench.tasks.preprocess import thread_count
from kgpubench.tasks.roofline import joined_text, workload_keys

CLASSES = ("gemm", "norm", "elementwise")
# the figures that tell GPUs apart (distances) and those whose differences the pair model sees
FIGURES = ("gpu_sm_count", "gpu_cores", "gpu_memory_bytes", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
           "gpu_smem_per_sm_bytes", "gpu_clock_sm_mhz", "gpu_clock_mem_mhz", "gpu_peak_fp32_gflops")
PAIR_FIGURES = ("gpu_sm_count", "gpu_peak_fp32_gflops", "gpu_memory_bandwidth_gbs", "gpu_l2_bytes",
                "gpu_clock_sm_mhz", "gpu_clock_mem_mhz")
SHAPE_FEATURES = ("operator", "log_tiles", "log_tile_flops", "log_tile_bytes", "tile_intensity", "log_inner",
                  "log_flops", "log_bytes")
# The grids, declared before any fit; chosen by inner leave-one-GPU-out over the training GPUs.
TAU = (0.0, 0.25, 0.5, 1.0, 2.0, math.inf)
W = (0.0, 0.25, 0.5, 0.75, 1.0)
DEFAULT = (0.5, 0.5)
TINY = 1e-12
BOOSTER = dict(n_estimators=200, num_leaves=63, learning_rate=0.1, subsample=0.8, subsample_freq=1,
               colsample_bytree=0.9)


def operator_class(X: pd.DataFrame) -> np.ndarray:
    """Each row's class: ``gemm``, ``norm`` or ``elementwise`` (any other operator)."""
    op = X["operator"].astype(str).to_numpy()
    return np.where(np.isin(op, GEMM), "gemm", np.where(np.isin(op, NORM), "norm", "elementwise"))


def _log_figures(table: pd.DataFrame, names: tuple[str, ...]) -> np.ndarray:
    v = table[list(names)].to_numpy(dtype=float)
    return np.log(np.where(v > 0, v, np.nan))


class OperatorPairs(RegressorMixin, BaseEstimator):
    """Per-class wave utilisation mixed with same-shape GPU-pair ratios (module doc)."""

    def __init__(self, *, seed: int = 0, threads: int = 1, tau: tuple = TAU, w: tuple = W) -> None:
        self.seed = seed
        self.threads = threads
        self.tau = tau
        self.w = w

    def _booster(self):
        from lightgbm import LGBMRegressor

        return LGBMRegressor(**BOOSTER, n_jobs=self.threads, deterministic=True, force_row_wise=True,
                             random_state=self.seed, verbose=-1)

    # ----- GPUs ------------------------------------------------------------------------------------------------
    @staticmethod
    def _gpu_table(X: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
        """Each row's GPU (its figures as text) and one row of figures per GPU, in sorted order."""
        for c in FIGURES:
            if c not in X.columns:
                X = X.assign(**{c: np.nan})
        keys = joined_text(X, FIGURES)
        first = pd.Series(np.arange(len(X))).groupby(keys).first()
        table = pd.DataFrame(X[list(FIGURES)].to_numpy(dtype=float)[first.to_numpy()], columns=list(FIGURES),
                             index=first.index)
        return keys, table

    def _standardised(self, table: pd.DataFrame) -> np.ndarray:
        return (_log_figures(table, FIGURES) - self.fig_center_) / self.fig_scale_

    # ----- one fit of both models ---------------------------------------------------------------------------------
    def _fit_core(self, X: pd.DataFrame, log_y: np.ndarray, gpus: np.ndarray, table: pd.DataFrame) -> dict:
        waves = wave_features(X)
        roof = waves.pop("t_roof_ms").to_numpy()
        log_u = np.minimum(np.log(roof) - log_y, 0.0)
        classes = operator_class(X)
        wave_models = {c: self._booster().fit(waves[classes == c], log_u[classes == c])
                       for c in CLASSES if np.any(classes == c)}
        if len(wave_models) < len(CLASSES):
            wave_models["any"] = self._booster().fit(waves, log_u)
        keys = workload_keys(X)
        measured = pd.DataFrame({"key": keys, "gpu": gpus, "log_t": log_y, "row": np.arange(len(X))}) \
            .groupby(["key", "gpu"], sort=True).agg(log_t=("log_t", "mean"), row=("row", "first")).reset_index()
        pairs = measured.merge(measured, on="key", suffixes=("_a", "_b"))
        pairs = pairs[pairs["gpu_a"] != pairs["gpu_b"]].reset_index(drop=True)
        pair_model = None
        if len(pairs):
            shape = X.iloc[pairs["row_a"].to_numpy()].reset_index(drop=True)
            feats = self._pair_features(shape, table.loc[pairs["gpu_a"]], table.loc[pairs["gpu_b"]],
                                        pairs["log_t_a"].to_numpy())
            pair_model = self._booster().fit(feats, (pairs["log_t_b"] - pairs["log_t_a"]).to_numpy())
        return {"wave": wave_models, "pair": pair_model,
                "measured": measured[["key", "gpu", "log_t"]], "gpus": sorted(set(gpus))}

    @staticmethod
    def _on_gpu(shape: pd.DataFrame, figures: pd.DataFrame) -> pd.DataFrame:
        """``shape``'s rows with the GPU figures of the same row of ``figures``."""
        return shape.assign(**{c: figures[c].to_numpy(dtype=float) for c in FIGURES})

    def _pair_features(self, shape: pd.DataFrame, source: pd.DataFrame, target: pd.DataFrame,
                       log_t_a: np.ndarray) -> pd.DataFrame:
        """The pair model's features of moving each row of ``shape`` from the GPU of ``source``'s same row (where it
        took ``exp(log_t_a)`` ms) to the GPU of ``target``'s."""
        on_a = wave_features(self._on_gpu(shape, source))
        on_b = wave_features(self._on_gpu(shape, target))
        out = {c: on_b[c].to_numpy() for c in SHAPE_FEATURES}
        out["class"] = pd.Categorical(operator_class(shape), categories=CLASSES).codes.astype(float)
        for side, f in (("a", on_a), ("b", on_b)):
            out[f"log_waves_{side}"] = f["log_waves"].to_numpy()
            out[f"wave_fill_{side}"] = f["wave_fill"].to_numpy()
        out["d_log_roof"] = np.log(on_b["t_roof_ms"].to_numpy()) - np.log(on_a["t_roof_ms"].to_numpy())
        diff = _log_figures(target, PAIR_FIGURES) - _log_figures(source, PAIR_FIGURES)
        for i, c in enumerate(PAIR_FIGURES):
            out[f"d_log_{c.removeprefix('gpu_')}"] = diff[:, i]
        out["log_t_a"] = log_t_a
        out["log_u_a"] = np.log(on_a["t_roof_ms"].to_numpy()) - log_t_a
        return pd.DataFrame(out)

    # ----- predictions' parts -------------------------------------------------------------------------------------
    def _terms(self, core: dict, X: pd.DataFrame, gpus: np.ndarray, table: pd.DataFrame):
        """``ln t_wave`` per row, the sources' estimates ``ln t_a + ratio(a -> g)`` (rows x sources; NaN: ``a`` did
        not measure the call) and the distances ``d_a`` (rows x sources)."""
        waves = wave_features(X)
        roof = waves.pop("t_roof_ms").to_numpy()
        classes = operator_class(X)
        log_u = np.zeros(len(X))
        for c in CLASSES:
            rows = classes == c
            if rows.any():
                log_u[rows] = core["wave"].get(c, core["wave"].get("any")).predict(waves[rows])
        wave = np.log(roof) - np.log(np.clip(np.exp(log_u), 1e-6, 1.0))
        sources = core["gpus"]
        estimates = np.full((len(X), len(sources)), np.nan)
        cand = pd.DataFrame({"key": workload_keys(X), "row": np.arange(len(X)), "gpu_b": gpus}) \
            .merge(core["measured"].rename(columns={"gpu": "gpu_a"}), on="key", how="inner")
        if len(cand) and core["pair"] is not None:
            shape = X.iloc[cand["row"].to_numpy()].reset_index(drop=True)
            feats = self._pair_features(shape, table.loc[cand["gpu_a"]], table.loc[cand["gpu_b"]],
                                        cand["log_t"].to_numpy())
            column = pd.Index(sources).get_indexer(cand["gpu_a"])
            estimates[cand["row"].to_numpy(), column] = cand["log_t"].to_numpy() + core["pair"].predict(feats)
        target = self._standardised(table.loc[gpus])
        source = self._standardised(table.loc[sources])
        diff = target[:, None, :] - source[None, :, :]
        ok = np.isfinite(diff)
        d = np.sqrt(np.where(ok, diff ** 2, 0.0).sum(axis=2) / np.maximum(ok.sum(axis=2), 1))
        return wave, estimates, d

    @staticmethod
    def _combine(wave: np.ndarray, estimates: np.ndarray, d: np.ndarray, tau: float, w: float) -> np.ndarray:
        """``ln t`` of every row for one (tau, w) (module doc)."""
        avail = np.isfinite(estimates)
        has = avail.any(axis=1)
        dist = np.where(avail, d, np.inf)
        if tau == 0:
            weight = np.zeros(dist.shape)
            weight[np.arange(len(dist)), np.argmin(dist, axis=1)] = 1.0
            weight[~has] = 0.0
        elif math.isinf(tau):
            weight = avail.astype(float)
        else:
            nearest = np.where(has, dist.min(axis=1), 0.0)[:, None]
            weight = np.where(avail, np.exp(-(dist - nearest) / tau), 0.0)
        total = weight.sum(axis=1)
        pairs = np.where(avail, estimates, 0.0) * weight
        pooled = pairs.sum(axis=1) / np.where(has, total, 1.0)
        return np.where(has, w * pooled + (1 - w) * wave, wave)

    # ----- fit / predict ----------------------------------------------------------------------------------------
    def _grid(self) -> list[tuple[float, float]]:
        return [(t, w) for t in self.tau for w in self.w]

    def select(self, X: pd.DataFrame, log_y: np.ndarray, gpus: np.ndarray, table: pd.DataFrame):
        """(tau, w) by leave-one-GPU-out over the GPUs of these rows, and every candidate's median APE (%) on each
        held-out GPU; the candidate with the smallest median over the GPUs wins."""
        held = sorted(pd.unique(gpus))
        if len(held) < 3:
            return DEFAULT, {}
        grid = self._grid()
        scores: dict[tuple, dict] = {c: {} for c in grid}
        for g in held:
            out, inn = gpus == g, gpus != g
            core = self._fit_core(X[inn].reset_index(drop=True), log_y[inn], gpus[inn], table)
            terms = self._terms(core, X[out].reset_index(drop=True), gpus[out], table)
            for c in grid:
                pred = self._combine(*terms, *c)
                scores[c][g] = float(np.median(np.abs(np.exp(pred - log_y[out]) - 1.0)) * 100)
        best = min(grid, key=lambda c: float(np.median(list(scores[c].values()))))
        return best, scores

    def fit(self, X, y):
        X = pd.DataFrame(X).reset_index(drop=True)
        log_y = np.log(np.maximum(np.asarray(y, dtype=float), TINY))
        gpus, table = self._gpu_table(X)
        logs = _log_figures(table, FIGURES)
        ok = np.isfinite(logs)
        count = np.maximum(ok.sum(axis=0), 1)
        self.fig_center_ = np.where(ok, logs, 0.0).sum(axis=0) / count  # a figure no GPU has: 0
        spread = np.sqrt(np.where(ok, (logs - self.fig_center_) ** 2, 0.0).sum(axis=0) / count)
        self.fig_scale_ = np.where(spread > 0, spread, 1.0)
        self.chosen_, self.inner_scores_ = self.select(X, log_y, gpus, table)
        self.core_ = self._fit_core(X, log_y, gpus, table)
        self.table_ = table
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "core_")
        X = pd.DataFrame(X).reset_index(drop=True)
        gpus, table = self._gpu_table(X)
        table = pd.concat([self.table_, table[~table.index.isin(self.table_.index)]])
        return np.exp(self._combine(*self._terms(self.core_, X, gpus, table), *self.chosen_))


def make_model(task, seed):
    return OperatorPairs(seed=seed, threads=thread_count())
