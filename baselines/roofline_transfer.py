"""Transfer: the same call measured on the most similar training GPU, scaled by the ratio of the two GPUs'
rooflines; sees every non-GPU feature of the call (shape, dtypes, framework, kernel source or solver), its
nominal work and the GPUs' catalogue figures with the dtype's tensor peak.

A training row's efficiency is ``e = t / t_roof`` (:func:`kgpubench.tasks.roofline.roofline_ms`). For a test row
the candidates are the training rows of the same workload (every non-GPU feature equal); the source is the one
whose GPU is most like the test GPU: the same vendor first, then the same architecture, then nearest in
standardised log catalogue figures (ties: the first training row), and the prediction is
``e_source x t_roof(test GPU)``. Without such a row, the same workload measured by another framework or kernel
source is used the same way; failing that, the median efficiency of the row's (operator, compute dtype) over the
training rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from kgpubench.tasks.roofline import filled_roofline_ms, gpu_matrix, joined_text, workload_keys

# Left out of the looser key: who ran the call (another stack's measurement of the same shape and dtype).
STACK = ("framework", "framework_version", "kernel_source", "solver", "algorithm")
GROUP = ("operator", "compute_dtype", "direction")
# Compared exactly, before the figures: a GPU of the same vendor, then of the same architecture, is the more alike.
IDENTITY = ("gpu_vendor", "gpu_architecture")


def _groups(X) -> np.ndarray:
    return joined_text(X, [c for c in GROUP if c in X.columns])


class RooflineTransfer(RegressorMixin, BaseEstimator):
    """Efficiency of the same workload on the most similar training GPU, times the test GPU's roofline."""

    def _gpus(self, X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per row its GPU's code among the distinct GPUs of ``X``; per distinct GPU its log figures and its
        identity (vendor, architecture)."""
        figures = gpu_matrix(X)
        ident = joined_text(X, [c for c in IDENTITY if c in X.columns])
        whole = pd.DataFrame(figures).assign(_ident=ident)
        codes = pd.factorize(pd.MultiIndex.from_frame(whole))[0]
        _, first = np.unique(codes, return_index=True)
        return codes, figures[first], ident[first]

    def fit(self, X, y):
        X = X.reset_index(drop=True)
        bound, self.fallback_ = filled_roofline_ms(X)
        eff = np.asarray(y, dtype=float) / bound
        gpu_id, self.gpus_, self.idents_ = self._gpus(X)
        self.mean_, self.std_ = self.gpus_.mean(axis=0), np.maximum(self.gpus_.std(axis=0), 1e-9)
        self.train_ = pd.DataFrame({"key": workload_keys(X), "loose": workload_keys(X, STACK),
                                    "gpu": gpu_id, "eff": eff, "order": np.arange(len(X))})
        groups = _groups(X)
        self.by_group_ = pd.Series(np.log(eff)).groupby(groups).median().map(np.exp).to_dict()
        self.overall_ = float(np.exp(np.median(np.log(eff))))
        self.n_features_in_ = X.shape[1]
        return self

    def _distances(self, figures: np.ndarray, idents: np.ndarray) -> np.ndarray:
        """Test GPU x training GPU: another vendor, then another architecture, outweigh any figure distance."""
        test = (figures - self.mean_) / self.std_
        train = (self.gpus_ - self.mean_) / self.std_
        dist = ((test[:, None, :] - train[None, :, :]) ** 2).sum(axis=2)
        parts = [np.asarray([str(i).split("|") for i in ids], dtype=object) for ids in (idents, self.idents_)]
        if parts[0].ndim == 2 and parts[0].shape[1] == parts[1].shape[1]:
            for col, weight in zip(range(parts[0].shape[1]), (1e9, 1e6)):
                dist += weight * (parts[0][:, None, col] != parts[1][None, :, col])
        return dist

    def _nearest(self, test: pd.DataFrame, key: str, dist: np.ndarray) -> pd.DataFrame:
        cand = test.merge(self.train_[[key, "gpu", "eff", "order"]], on=key, how="inner")
        if not len(cand):
            return cand
        cand["dist"] = dist[cand["tgpu"].to_numpy(), cand["gpu"].to_numpy()]
        return cand.sort_values(["row", "dist", "order"], kind="mergesort").drop_duplicates("row")

    def predict(self, X):
        check_is_fitted(self, "train_")
        X = X.reset_index(drop=True)
        bound, _ = filled_roofline_ms(X, self.fallback_)
        inverse, figures, idents = self._gpus(X)
        dist = self._distances(figures, idents)
        test = pd.DataFrame({"key": workload_keys(X), "loose": workload_keys(X, STACK), "row": np.arange(len(X)),
                             "tgpu": inverse})
        eff = np.asarray([self.by_group_.get(grp, self.overall_) for grp in _groups(X)], dtype=float)
        for key in ("loose", "key"):  # the exact workload last, so it wins where both exist
            best = self._nearest(test, key, dist)
            if len(best):
                eff[best["row"].to_numpy()] = best["eff"].to_numpy()
        return eff * bound


def make_model(task, seed):
    return RooflineTransfer()
