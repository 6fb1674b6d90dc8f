"""Seed 001 strategy Profiling: vary one kernel's threads per block at a time, every other kernel at the
NPB-GPU default, and keep each kernel's fastest.

Not a learned model: it measures the test problem (``uses_measurements = True``). The board calls
``predict(X, problems=...)`` with one :class:`kgpubench.tasks.npb.NpbProblem` per test problem; each
``measure`` is a profiled run of the application under one assignment, and the result records the distinct
assignments measured per problem (``1 + sum_k (n_k - 1)``: the default run, then every other TPB of every
kernel). A kernel keeps the TPB of the shortest application time; ties keep the default, then the smaller TPB.
Outputs are scores, not times (``predicts_target = False``): 0 on the chosen rows, 1 elsewhere.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator


def profile(problem) -> dict[str, int]:
    """Each kernel's fastest TPB, measured one kernel at a time with the others at the default."""
    base = problem.measure()
    chosen = {}
    for kernel in problem.kernels:
        best_tpb, best_s = problem.default[kernel], base.app_time_s
        for tpb in problem.choices[kernel]:
            s = problem.measure({kernel: tpb}).app_time_s
            if s < best_s:
                best_tpb, best_s = tpb, s
        chosen[kernel] = best_tpb
    return chosen


class ProfilingTPB(BaseEstimator):
    """Seed 001's Profiling strategy (measures the test problem; learns nothing)."""

    predicts_target = False
    uses_measurements = True

    def __init__(self) -> None:
        pass

    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X, problems=None):
        from kgpubench.tasks.npb import MeasurementError, assignment_scores

        if problems is None:
            raise MeasurementError("ProfilingTPB measures the test problem: call predict(X, problems=...) with "
                                   "kgpubench.tasks.npb.npb_problems(task, rows, y) (the board does).")
        return assignment_scores(problems, [profile(p) for p in problems], len(X))


def make_model(task, seed):
    return ProfilingTPB()
