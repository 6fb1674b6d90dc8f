"""Attack fixture: prints 1 GiB, or allocates 16 GiB (MODE)."""

import sys

import numpy as np

MODE = "__MODE__"


class Flood:
    def fit(self, X, y):
        if MODE == "print":
            chunk = "x" * (1 << 20)
            for _ in range(1024):
                sys.stdout.write(chunk)
        if MODE == "memory":
            self.big = np.ones(2**31)
        return self

    def predict(self, X):
        return np.zeros(len(X))


def make_model(task, seed):
    return Flood()
