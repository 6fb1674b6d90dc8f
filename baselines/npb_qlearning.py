"""Seed 001: Q-learning over a neural-network surrogate of the per-kernel time.

The surrogate (an MLP on min-max scaled features, learning log time per call) stands in for running the
application. For each application (rows sharing every feature but kernel, tpb and calls_per_run), an agent
walks the kernels in order; in state k it picks a TPB for kernel k (epsilon-greedy, exploration scaled by the
kernel's share of the predicted run time) and receives ``-calls_k * t_hat_k(tpb)``; tabular Q-learning
(``Q <- Q + lr (r + max Q(next) - Q)``). Each row's output is ``-Q(kernel, tpb)``: the argmin per kernel is
the greedy policy. Outputs are scores, not times (``predicts_target = False``).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

PER_APP = ("kernel", "tpb", "calls_per_run")


class QLearningTPB(BaseEstimator):
    """Tabular Q-learning of a TPB per kernel, with an MLP surrogate as the environment."""

    predicts_target = False

    def __init__(self, *, episodes: int = 300, learning_rate: float = 0.3, epsilon: float = 0.3,
                 hidden_layer_sizes: tuple = (32, 16), random_state: int | None = 0) -> None:
        self.episodes = episodes
        self.learning_rate = learning_rate
        self.epsilon = epsilon
        self.hidden_layer_sizes = hidden_layer_sizes
        self.random_state = random_state

    def fit(self, X, y):
        from sklearn.neural_network import MLPRegressor

        from kgpubench.tasks.preprocess import tabular_model

        self.surrogate_ = tabular_model(MLPRegressor(hidden_layer_sizes=self.hidden_layer_sizes, max_iter=800,
                                                     random_state=self.random_state), scale=True)
        self.surrogate_.fit(X, np.asarray(y, dtype=float))
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        check_is_fitted(self, "surrogate_")
        t_hat = self.surrogate_.predict(X)
        calls = np.asarray(X["calls_per_run"], dtype=float) if "calls_per_run" in X else np.ones(len(X))
        cost = np.nan_to_num(calls, nan=1.0) * t_hat
        app_cols = [c for c in X.columns if c not in PER_APP]
        apps = X[app_cols].astype(str).agg("|".join, axis=1).to_numpy() if app_cols else np.zeros(len(X), str)
        kernels = X["kernel"].astype(str).to_numpy()
        out = np.zeros(len(X))
        rng = np.random.default_rng(self.random_state)
        for app in sorted(set(apps)):
            rows = np.flatnonzero(apps == app)
            out[rows] = self._learn(rows, kernels[rows], cost[rows], rng)
        return out

    def _learn(self, rows, kernels, cost, rng) -> np.ndarray:
        names = sorted(set(kernels))
        actions = [np.flatnonzero(kernels == k) for k in names]
        share = np.array([np.mean(cost[a]) for a in actions])
        share = share / share.sum() if share.sum() > 0 else np.full(len(names), 1 / len(names))
        q = [np.zeros(a.size) for a in actions]
        for _ in range(self.episodes):
            for s, acts in enumerate(actions):
                explore = rng.random() < min(1.0, self.epsilon * share[s] * len(names))
                a = int(rng.integers(acts.size)) if explore else int(np.argmax(q[s]))
                future = float(np.max(q[s + 1])) if s + 1 < len(actions) else 0.0
                q[s][a] += self.learning_rate * (-cost[acts[a]] + future - q[s][a])
        scores = np.empty(rows.size)
        for s, acts in enumerate(actions):
            scores[acts] = -q[s]
        return scores


def make_model(task, seed):
    return QLearningTPB(random_state=seed)
