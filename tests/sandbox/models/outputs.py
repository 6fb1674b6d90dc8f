"""Attack fixture: each predict() call returns the next output of CASES (the last one, over and over)."""

import numpy as np

CASES = ["nan", "inf", "short", "strings", "none", "2d", "mixed", "good", "huge"]
calls = []


def bad(case, n):
    if case == "nan":
        return np.r_[np.ones(n - 1), np.nan]
    if case == "inf":
        return np.r_[np.inf, np.ones(n - 1)]
    if case == "short":
        return np.ones(n - 1)
    if case == "strings":
        return ["1.5"] * n
    if case == "none":
        return None
    if case == "2d":
        return np.ones((n, 2))
    if case == "mixed":
        return [1.0] * (n - 1) + [None]
    if case == "good":
        return np.arange(n, dtype=np.float32)
    return np.ones(200_000)


class Outputs:
    def fit(self, X, y):
        return self

    def predict(self, X):
        calls.append(1)
        return bad(CASES[min(len(calls), len(CASES)) - 1], len(X))


def make_model(task, seed):
    return Outputs()
