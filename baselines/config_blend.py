"""Similarity-weighted consensus; sees the problem (kernel, problem size), each row's configuration, the GPUs'
catalogue figures, and the training GPUs' times of that problem.

A configuration's score on a test GPU is the weighted mean over training GPUs of its ``ln(t / t_best)`` there
(``t_best`` the fastest time of that problem on that GPU), with weight ``exp(-d / tau)`` for a training GPU at
distance ``d`` from the test GPU. ``d`` is the Euclidean distance in the figures ``baselines/transfer.py`` uses to
pick its nearest GPU (log catalogue figures, standardised over the training GPUs), plus ``IDENTITY_GAP`` for
another vendor and ``IDENTITY_GAP`` for another architecture; distances are taken relative to the nearest
training GPU. ``tau = 0`` is transfer (only the nearest GPU counts, nearest in transfer's order: same vendor,
same architecture, then figures); ``tau = inf`` weighs every counted training GPU alike, as ``config_consensus``
does (which counts every GPU that timed the problem).

As in transfer, only training GPUs that timed the same problem count, and of those only the ones that timed at
least half of the test problem's configurations (else the one that timed most); a configuration's weighted mean
runs over the counted GPUs that timed it (as in config_consensus). A problem no training GPU timed falls back to
the same kernel's other problems, then to every training problem (each GPU's mean over them); a configuration
no counted GPU timed scores after every timed one.

``tau`` comes from the fixed grid ``TAUS`` by leave-one-GPU-out over the training GPUs only: each training GPU
in turn is scored by the others, a GPU's regret is the mean over its problems of ``t(chosen) / t_best - 1`` (no
noise allowance: the model sees no repeat spread), and
the ``tau`` with the smallest median regret over the training GPUs wins (ties: the larger ``tau``). The test GPU's
rows are never seen. Lowest score = predicted fastest; outputs are scores, not times (``predicts_target = False``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.ranking import row_keys

# The grid of tau, in units of standardised-figure distance, declared before any fit; 0 is transfer, inf consensus.
TAUS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, math.inf)
IDENTITY = ("gpu_vendor", "gpu_architecture")
# Distance added for another vendor, and again for another architecture: larger than the spread of the figures'
# distances, so that a small tau keeps transfer's order (vendor, architecture, then figures).
IDENTITY_GAP = 4.0
MIN_COVER = 0.5
UNTIMED = 1e6
KERNEL = "kernel"
LEVELS = ("problem", "kernel", "overall")


class ConfigBlend(BaseEstimator):
    """Weighted mean over training GPUs of a configuration's log time above the problem's best, nearer GPUs heavier."""

    predicts_target = False

    def __init__(self, *, problem_columns: tuple = (), taus: tuple = TAUS, tau: float | None = None) -> None:
        self.problem_columns = problem_columns
        self.taus = taus
        self.tau = tau

    # -- columns -------------------------------------------------------------------------------------------------
    def _split(self, X: pd.DataFrame):
        gpu = [c for c in X.columns if c.startswith("gpu_")]
        figures = [c for c in gpu if c not in IDENTITY]
        problem = [c for c in self.problem_columns if c in X.columns and c not in gpu]
        config = [c for c in X.columns if c not in gpu and c not in problem]
        kernel = [KERNEL] if KERNEL in X.columns else []
        fig = np.log1p(np.nan_to_num(np.asarray(X[figures], dtype=float))) if figures else np.zeros((len(X), 0))
        ident = np.column_stack([row_keys(X, [c]) for c in IDENTITY if c in X.columns] or
                                [np.zeros(len(X), dtype=np.uint64)])
        return (row_keys(X, gpu), ident, fig, row_keys(X, problem), row_keys(X, kernel), row_keys(X, config))

    # -- fit -----------------------------------------------------------------------------------------------------
    def fit(self, X, y):
        X = pd.DataFrame(X).reset_index(drop=True)
        gpu, ident, fig, problem, kernel, config = self._split(X)
        y = np.asarray(y, dtype=float)
        ok = np.isfinite(y) & (y > 0)
        df = pd.DataFrame({"gpu": gpu, "problem": problem, "kernel": kernel, "config": config, "y": y})[ok]
        first = pd.Series(np.arange(len(X)))[ok].groupby(gpu[ok], sort=True).first()
        self.gpus_ = [int(g) for g in first.index]  # sorted keys: the tie order
        self.ident_ = {g: tuple(int(v) for v in ident[i]) for g, i in zip(self.gpus_, first.to_numpy())}
        self.fig_ = {g: fig[i] for g, i in zip(self.gpus_, first.to_numpy())}
        self.tables_ = _tables(df)
        self.tau_ = float(self.tau) if self.tau is not None else self._inner_tau(df)
        self.n_features_in_ = X.shape[1]
        return self

    def _inner_tau(self, df: pd.DataFrame) -> float:
        """The tau of ``taus`` with the smallest median regret over the training GPUs, each scored by the others."""
        taus = sorted(float(t) for t in self.taus)
        if len(self.gpus_) < 3:  # one GPU left to learn from: every tau is the same choice
            return taus[-1]
        regrets = {t: [] for t in taus}
        for held in self.gpus_:
            others = [g for g in self.gpus_ if g != held]
            tables = _tables(df[df["gpu"] != held])
            center, scale = _standardise([self.fig_[g] for g in others])
            mine = df[df["gpu"] == held]
            per_tau = {t: [] for t in taus}
            for p, part in mine.groupby("problem", sort=True):
                rel = _rel(part).groupby(level=0).mean()
                configs = rel.index.to_numpy()
                ranked = self._ranked(tables, others, center, scale, self.ident_[held], self.fig_[held],
                                      int(p), int(part["kernel"].iloc[0]), configs)
                for t in taus:
                    scores = self._blend(ranked, configs, t)
                    per_tau[t].append(math.expm1(float(rel.iloc[int(np.argmin(scores))])))
            for t in taus:
                regrets[t].append(float(np.mean(per_tau[t])))
        self.inner_regret_ = {t: float(np.median(r)) for t, r in regrets.items()}
        best = min(self.inner_regret_.values())
        return max(t for t in taus if self.inner_regret_[t] <= best + 1e-12)

    # -- scoring -------------------------------------------------------------------------------------------------
    def _ranked(self, tables, gpus, center, scale, ident, fig, problem, kernel, configs):
        """(distance above the nearest, that GPU's table) for each counted training GPU, nearest first."""
        for level, key in zip(LEVELS, (problem, kernel, 0)):
            have = [g for g in gpus if (g, key) in tables[level]]
            if have:
                break
        else:
            return []
        table = tables[level]
        if len(configs):
            cover = {g: float(np.mean(np.isin(configs, table[(g, key)].index))) for g in have}
            enough = [g for g in have if cover[g] >= MIN_COVER]
            have = enough or [max(have, key=lambda g: (cover[g], -gpus.index(g)))]
        z = (fig - center) / scale
        rows = []
        for g in have:
            other = tuple(int(a != b) for a, b in zip(self.ident_[g], ident))
            dist = float(np.sqrt(np.sum(((self.fig_[g] - center) / scale - z) ** 2)))
            rows.append((other, dist, gpus.index(g), g))
        rows.sort()
        d = np.array([IDENTITY_GAP * sum(o) + dist for o, dist, _, _ in rows])
        return [(float(x), table[(g, key)]) for x, (_, _, _, g) in zip(d - d[0], rows)]

    @staticmethod
    def _blend(ranked, configs, tau: float) -> np.ndarray:
        if not ranked:
            return np.full(len(configs), UNTIMED)
        if tau == 0:  # transfer: the nearest only
            ranked = ranked[:1]
        d = np.array([x for x, _ in ranked])
        w = np.exp(-d / tau) if 0 < tau < math.inf else np.ones(len(d))
        total = np.zeros(len(configs))
        weight = np.zeros(len(configs))
        for wg, (_, rel) in zip(w, ranked):
            vals = pd.Series(configs).map(rel).to_numpy(dtype=float)
            have = np.isfinite(vals)
            total += wg * np.where(have, vals, 0.0)
            weight += wg * have
        return np.where(weight > 0, total / np.where(weight > 0, weight, 1.0), UNTIMED)

    def predict(self, X):
        check_is_fitted(self, "tables_")
        X = pd.DataFrame(X).reset_index(drop=True)
        gpu, ident, fig, problem, kernel, config = self._split(X)
        center, scale = _standardise([self.fig_[g] for g in self.gpus_])
        out = np.full(len(X), UNTIMED)
        groups = pd.Series(np.arange(len(X))).groupby([gpu, problem], sort=False).indices
        for idx in groups.values():
            idx = np.asarray(idx)
            i = idx[0]
            # the test GPU is not a source of itself (a training GPU scored again: the others)
            gpus = [g for g in self.gpus_ if g != int(gpu[i])]
            configs = np.unique(config[idx])
            ranked = self._ranked(self.tables_, gpus, center, scale, tuple(int(v) for v in ident[i]), fig[i],
                                  int(problem[i]), int(kernel[i]), configs)
            scores = pd.Series(self._blend(ranked, configs, self.tau_), index=configs)
            out[idx] = scores.reindex(config[idx]).to_numpy(dtype=float)
        return out


def _rel(df: pd.DataFrame) -> pd.Series:
    return pd.Series(np.log(df["y"].to_numpy() / df["y"].min()), index=df["config"].to_numpy())


def _tables(df: pd.DataFrame) -> dict:
    """Per level, (GPU, key) -> each configuration's mean ln(t / t_best) there (problem: that problem's; kernel and
    overall: the mean over the GPU's problems of that kernel, or all of them)."""
    df = df.assign(rel=np.log(df["y"] / df.groupby(["gpu", "problem"], sort=False)["y"].transform("min")))
    per = df.groupby(["gpu", "problem", "kernel", "config"], sort=True)["rel"].mean().reset_index()
    per["overall"] = 0
    tables = {}
    for level, col in zip(LEVELS, ("problem", "kernel", "overall")):
        means = per.groupby(["gpu", col, "config"], sort=True)["rel"].mean()
        tables[level] = {(int(g), int(k)): part.droplevel([0, 1])
                         for (g, k), part in means.groupby(level=[0, 1], sort=True)}
    return tables


def _standardise(figs: list) -> tuple[np.ndarray, np.ndarray]:
    arr = np.asarray(figs, dtype=float).reshape(len(figs), -1)
    spread = arr.std(axis=0)
    return arr.mean(axis=0), np.where(spread > 0, spread, 1.0)


def make_model(task, seed):
    return ConfigBlend(problem_columns=tuple(task.problem_columns))
