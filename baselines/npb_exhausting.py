"""Seed 001 strategy Exhausting: every threads-per-block combination of the kernels that take at least 10% of
the run time, every other kernel at the NPB-GPU default.

Not a learned model: it measures the test problem (``uses_measurements = True``). One profiled run of the
default assignment gives each kernel's share of the application time; then every combination of the hot
kernels' measured TPBs is run (kernels sorted by name, TPBs ascending; the first shortest wins, ties keep
the default). Distinct assignments measured per problem: ``1 + prod_hot n_k``, less one when the default
combination is among them (it was the first run). Outputs are scores: 0 on the chosen rows, 1 elsewhere.
"""

from __future__ import annotations

import itertools

from sklearn.base import BaseEstimator

HOT_SHARE = 0.10


def hot_kernels(problem, share: float = HOT_SHARE) -> list[str]:
    """Kernels taking at least ``share`` of the default run's application time."""
    base = problem.measure()
    return [k for k in problem.kernels if base.share(k) >= share]


def exhaust(problem, share: float = HOT_SHARE) -> dict[str, int]:
    """The fastest measured combination of the hot kernels' TPBs, the other kernels at the default."""
    hot = hot_kernels(problem, share)
    best: dict[str, int] = {}
    best_s = problem.measure().app_time_s
    for combo in itertools.product(*(problem.choices[k] for k in hot)):
        trial = dict(zip(hot, combo))
        s = problem.measure(trial).app_time_s
        if s < best_s:
            best, best_s = trial, s
    return problem.full(best)


class ExhaustingTPB(BaseEstimator):
    """Seed 001's Exhausting strategy (measures the test problem; learns nothing)."""

    predicts_target = False
    uses_measurements = True

    def __init__(self, *, share: float = HOT_SHARE) -> None:
        self.share = share

    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X, problems=None):
        from kgpubench.tasks.npb import MeasurementError, assignment_scores

        if problems is None:
            raise MeasurementError("ExhaustingTPB measures the test problem: call predict(X, problems=...) with "
                                   "kgpubench.tasks.npb.npb_problems(task, rows, y) (the board does).")
        return assignment_scores(problems, [exhaust(p, self.share) for p in problems], len(X))


def make_model(task, seed):
    return ExhaustingTPB()
