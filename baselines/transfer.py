"""Transfer: use the measured times of the most similar GPU that has the same problem (BAT's "reuse another
GPU's optimum"; the bar a learned model must clear on an unseen GPU).

A row is a GPU (its ``gpu_*`` columns), a problem (the task's ``problem_columns``) and a configuration: the
columns :data:`CONFIGURATION` names for the task's dataset config (convolutions: the solver, since a row's other
columns describe the problem or the solver's workspace on it), else every other column (autotune: the tuning
parameters; stencil: variant, block size and tile; NPB: kernel, threads per block, calls), always with the task's
``choice_columns``. Training stores, per training GPU and problem, every configuration's time relative to that
problem's best. For a test problem on GPU g, the source is the training GPU with the same problem that measured
at least half of the test problem's configurations (search spaces differ between GPUs: the AMD convolution space
has parameters the NVIDIA one lacks) and is most similar to g: same vendor first, then same architecture (when
the task gives ``gpu_vendor``/``gpu_architecture``), then nearest in standardised log hardware figures (SMs,
cores, memory, bandwidth, L2, shared memory, clocks, peak fp32); ties go to the first in sorted order. Without
such a GPU, the one that measured most of them. Each test row scores the source's relative time of its
configuration; a configuration the source never measured (or that failed there) scores after every measured one.
A problem no training GPU has falls back to each configuration's median relative time over all training
problems. Outputs are scores (``predicts_target = False``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

UNMEASURED = 1e6
MIN_COVER = 0.5
IDENTITY = ("gpu_vendor", "gpu_architecture")
# The columns naming a configuration, per dataset config, where they are not every column that is neither the GPU
# nor the problem: a conv-solver row also carries the problem's shape (problem_id is its only problem column) and
# the solver's workspace on that problem, which would make every configuration of one problem a configuration of
# its own, and the fallback over all training problems would never find one.
CONFIGURATION = {"convolutions": ("solver",)}


class TransferBest(BaseEstimator):
    """Ranks configurations by the relative times measured on the most similar training GPU."""

    predicts_target = False

    def __init__(self, *, problem_columns: tuple = (), choice_columns: tuple = (), config_columns: tuple = ()) -> None:
        self.problem_columns = problem_columns
        self.choice_columns = choice_columns
        self.config_columns = config_columns

    def _split(self, X):
        from kgpubench.tasks.ranking import row_keys

        gpu = [c for c in X.columns if c.startswith("gpu_")]
        figures = [c for c in gpu if c not in IDENTITY]
        problem = [c for c in self.problem_columns if c in X.columns and c not in gpu]
        choice = [c for c in self.choice_columns if c in X.columns and c not in gpu and c not in problem]
        if self.config_columns:  # the declared configuration, with the choice columns
            missing = [c for c in self.config_columns if c not in X.columns]
            if missing:
                raise ValueError(f"transfer: configuration column(s) {missing} are not among the {X.shape[1]} "
                                 "feature columns; pass config_columns that the task's features hold")
            config = list(dict.fromkeys([*choice, *self.config_columns]))
        else:
            config = [c for c in X.columns if c not in gpu and c not in problem]
        hw = np.log1p(np.nan_to_num(np.asarray(X[figures], dtype=float))) if figures else np.zeros((len(X), 0))
        ident = [c for c in IDENTITY if c in X.columns]
        if ident:  # vendor and architecture codes lead the vector; the distance weighs them first
            hw = np.column_stack([row_keys(X, [c]).astype(np.float64) for c in ident] + [hw])
        return hw, row_keys(X, problem), row_keys(X, config), row_keys(X, choice)

    def fit(self, X, y):
        import pandas as pd

        hw, problem, config, choice = self._split(X)
        self.gpus_ = sorted(set(map(tuple, hw)))
        gpu_id = {g: i for i, g in enumerate(self.gpus_)}
        df = pd.DataFrame({"gpu": [gpu_id[g] for g in map(tuple, hw)], "problem": problem, "config": config,
                           "choice": choice, "y": np.asarray(y, dtype=float)})
        df["rel"] = df["y"] / df.groupby(["gpu", "problem", "choice"], sort=False)["y"].transform("min")
        df = df.drop_duplicates(["gpu", "problem", "config"], keep="last")
        self.table_ = {key: pd.Series(part["rel"].to_numpy(), index=part["config"].to_numpy())
                       for key, part in df.groupby(["gpu", "problem"], sort=True)}
        self.fallback_ = df.groupby("config", sort=True)["rel"].median()
        self.n_ident_ = sum(c in X.columns for c in IDENTITY)
        hw_u = np.asarray(self.gpus_, dtype=float).reshape(len(self.gpus_), -1)[:, self.n_ident_:]
        self.center_ = hw_u.mean(axis=0)
        spread = hw_u.std(axis=0)
        self.scale_ = np.where(spread > 0, spread, 1.0)
        self.n_features_in_ = X.shape[1]
        return self

    def source(self, gpu: tuple, problem, configs=None) -> int | None:
        """Index (in ``gpus_``) of the nearest training GPU other than ``gpu`` that measured ``problem``; with
        ``configs``, only GPUs that measured at least half of them count (else the one that measured most)."""
        check_is_fitted(self, "table_")
        have = [i for i, g in enumerate(self.gpus_) if (i, problem) in self.table_ and g != gpu]
        if not have:
            return None
        if configs is not None and len(configs):
            cover = {i: float(np.mean(np.isin(configs, self.table_[(i, problem)].index))) for i in have}
            enough = [i for i in have if cover[i] >= MIN_COVER]
            if not enough:
                return max(have, key=lambda i: (cover[i], -i))
            have = enough
        k = self.n_ident_
        z = (np.asarray(gpu[k:], dtype=float) - self.center_) / self.scale_

        def rank(i):  # other vendor, then other architecture, then distance in figures
            other = tuple(int(self.gpus_[i][j] != gpu[j]) for j in range(k))
            return (*other, float(np.sum(((np.asarray(self.gpus_[i][k:]) - self.center_) / self.scale_ - z) ** 2)), i)

        return min(have, key=rank)

    def predict(self, X):
        import pandas as pd

        check_is_fitted(self, "table_")
        hw, problem, config, _ = self._split(X)
        gpu_code = pd.factorize(pd.Series([hash(tuple(r)) for r in hw]))[0]
        groups = pd.Series(np.arange(len(X))).groupby([gpu_code, problem], sort=False).indices
        out = np.full(len(X), UNMEASURED)
        for idx in groups.values():
            idx = np.asarray(idx)
            src = self.source(tuple(hw[idx[0]]), problem[idx[0]], np.unique(config[idx]))
            times = self.table_[(src, problem[idx[0]])] if src is not None else self.fallback_
            out[idx] = pd.Series(config[idx]).map(times).fillna(UNMEASURED).to_numpy(dtype=float)
        return out


def make_model(task, seed):
    return TransferBest(problem_columns=tuple(task.problem_columns), choice_columns=tuple(task.choice_columns),
                        config_columns=CONFIGURATION.get(task.config, ()))
