"""Attack fixture: predict() looks for the test targets in the caller's frames and in the garbage collector."""

import gc
import sys

import numpy as np


def _from_frames(n):
    frame = sys._getframe(1)
    while frame is not None:
        scope = frame.f_locals
        data, test = scope.get("data"), scope.get("test")
        if data is not None and hasattr(data, "y") and test is not None and len(test) == n:
            return np.asarray(data.y)[test]
        frame = frame.f_back
    return None


def _from_gc(n):
    for obj in gc.get_objects():
        if type(obj).__name__ == "TaskData":
            return obj.y  # wrong rows, but proof enough that the labels are reachable
    return None


class Peek:
    found = ""

    def fit(self, X, y):
        return self

    def predict(self, X):
        labels = _from_frames(len(X))
        if labels is not None:
            return labels
        if _from_gc(len(X)) is not None:
            raise RuntimeError("found the evaluator's TaskData through gc")
        return np.ones(len(X))


def make_model(task, seed):
    return Peek()
