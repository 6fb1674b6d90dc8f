"""Tuning-budget curves on a held-out GPU: how close to the optimum a tuner gets after N evaluations when a
strategy orders the configurations, scored between random search (0) and the optimum (1).

For a recommendation task with a leave-one-GPU-out scheme (a ``column`` scheme on ``gpu_name``, e.g. ``by-gpu``),
each GPU is held out in turn. A model is trained on the other GPUs' rows only (the task's training subsample rule
applies, as on the board: :func:`kgpubench.models.evaluation.run_folds`), never on a row of the held-out GPU, and
predicts every row of it. For each *problem* of the held-out GPU (the task's problem columns, e.g. kernel and
problem size of ``autotune-config``) with ``n`` configurations and measured times ``t`` (the task's target, ms):

* the strategy's *order* is the configurations sorted by prediction, smallest first, ties by row position (a
  stable sort, as :func:`kgpubench.tasks.metrics.topk_regret` picks);
* after ``N`` evaluations the tuner has measured the first ``min(N, n)`` configurations of that order and keeps the
  best measured time ``t_N`` (ms);
* ``t_opt = min(t)``; ``E_N`` is the expected best time of ``N`` configurations drawn uniformly without
  replacement, exactly: with ``t_(1) <= ... <= t_(n)``, ``E_N = sum_i t_(i) C(n - i, N - 1) / C(n, N)``
  (:func:`expected_random_best`; the ``i``-th smallest is the sample's best when it is drawn and the other
  ``N - 1`` come from the ``n - i`` after it);
* the **score** is ``(E_N - t_N) / (E_N - t_opt)``, unitless: random search scores 0 in expectation by
  construction, the oracle (the true order) 1; a worse-than-random order scores below 0 (not clipped). When
  ``E_N - t_opt <= 1e-12 * t_opt`` (every configuration within rounding of the optimum, or ``N`` so large that
  any ``N`` configurations hold an optimal one, e.g. ``N >= n``) every strategy reaches the optimum and the score
  is undefined: the problem is left out at that ``N`` (``None``; the count of scored problems is recorded).

A GPU's figure at ``N`` is the mean of its problems' scores (the convention of the auto-tuning methodology that
averages the performance score over search spaces); a strategy's figure is the median over held-out GPUs, with a
95 % percentile bootstrap interval of that median (the GPUs resampled with replacement
:data:`kgpubench.tasks.intervals.RESAMPLES` times, seed :data:`kgpubench.tasks.intervals.SEED`). Measurement noise is
not applied here (the board's ``top1_regret`` counts a pick within noise of the best as optimal): times are taken
as measured.

Model code runs only through :func:`kgpubench.models.evaluation.fit_predict` (trusted, in this process).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kgpubench.errors import OptionError
from kgpubench.models.evaluation import fit_predict
from kgpubench.tasks._core import problem_keys
from kgpubench.tasks.data import TaskData, subsample_rank, train_subsample
from kgpubench.tasks.intervals import median_interval
from kgpubench.tasks.splits import EXCLUDED, get_scheme

BUDGETS = (1, 5, 20, 100)
RANDOM = "random"
DEGENERATE_RTOL = 1e-12


# ----- the score of one problem ----------------------------------------------------------------------------------
def expected_random_best(times, n_evals: int) -> float:
    """Expected best (smallest) of ``n_evals`` values drawn uniformly without replacement from ``times`` (exact).

    ``E = sum_i t_(i) C(n - i, N - 1) / C(n, N)`` over the sorted times; the weights are built by the ratio
    ``w_(i+1) / w_i = (n - i - N + 1) / (n - i)`` from ``w_1 = N / n`` (no large binomials). ``n_evals >= n``:
    the minimum.

    Raises
    ------
    OptionError
        When ``times`` is empty or ``n_evals < 1``.
    """
    t = np.sort(np.asarray(times, dtype=np.float64).ravel())
    n = t.size
    if n == 0 or n_evals < 1:
        raise OptionError(f"expected_random_best: need at least one time and one evaluation (got {n} times, "
                          f"N = {n_evals}).")
    if n_evals >= n:
        return float(t[0])
    i = np.arange(1, n - n_evals + 2)  # only the first n - N + 1 sorted times can be a sample's best
    ratios = (n - i[:-1] - n_evals + 1) / (n - i[:-1])
    weights = (n_evals / n) * np.concatenate([[1.0], np.cumprod(ratios)])
    return float(np.dot(weights, t[: i.size]) / weights.sum())  # the weights sum to 1 up to rounding


def best_after(times_in_order, n_evals: int) -> float:
    """The best (smallest) of the first ``n_evals`` times of an order (all of them when ``n_evals`` exceeds it)."""
    t = np.asarray(times_in_order, dtype=np.float64).ravel()
    return float(np.min(t[: max(1, n_evals)]))


def budget_score(times, order, n_evals: int) -> float | None:
    """``(E_N - t_N) / (E_N - t_opt)`` of one problem (module docstring); ``order``: indices into ``times``, the
    first evaluated first. None when undefined (``E_N`` within :data:`DEGENERATE_RTOL` of ``t_opt``)."""
    t = np.asarray(times, dtype=np.float64).ravel()
    expected, opt = expected_random_best(t, n_evals), float(np.min(t))
    span = expected - opt
    if span <= DEGENERATE_RTOL * abs(opt):
        return None
    return float((expected - best_after(t[np.asarray(order)], n_evals)) / span)


def prediction_order(predictions) -> np.ndarray:
    """The evaluation order a model's predictions give: smallest first, ties by position (stable)."""
    return np.argsort(np.asarray(predictions, dtype=np.float64).ravel(), kind="mergesort")


def problem_groups(keys) -> dict[str, np.ndarray]:
    """Problem key -> positions of its rows (in row order), problems sorted by key."""
    keys = np.asarray([str(k) for k in keys], dtype=object)
    return {k: np.flatnonzero(keys == k) for k in sorted(set(keys))}


def fold_scores(y, predictions, keys, budgets=BUDGETS) -> dict[str, dict[str, float | None]]:
    """Per problem (key), per ``N`` (a string): the score of the order ``predictions`` give (None: undefined)."""
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(predictions, dtype=np.float64)
    out = {}
    for key, idx in problem_groups(keys).items():
        order = prediction_order(p[idx])
        out[key] = {str(n): budget_score(y[idx], order, n) for n in budgets}
    return out


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def summarise(per_gpu: dict[str, dict[str, float | None]], budgets=BUDGETS) -> dict[str, dict]:
    """Per ``N``: the median over GPUs of their figures, its bootstrap interval and the count of GPUs."""
    out = {}
    for n in map(str, budgets):
        vals = [f[n] for f in per_gpu.values() if f.get(n) is not None]
        ci = median_interval(vals)
        out[n] = {"median": float(np.median(vals)) if vals else None, "interval": list(ci) if ci else None,
                  "gpus": len(vals)}
    return out


# ----- the plan: one fold per held-out GPU ---------------------------------------------------------------------------
@dataclass(frozen=True)
class BudgetPlan:
    """One held-out GPU: row indices (into ``TaskData.rows``) of the training rows (the other GPUs' rows, under
    the task's subsample rule) and of the held-out GPU's rows (every one of them is ordered)."""

    fold: str
    train: np.ndarray
    test: np.ndarray


def plan_folds(data: TaskData, folds: list[str] | None = None) -> list[BudgetPlan]:
    """The plan of every held-out GPU, the board's training rows (:func:`kgpubench.models.evaluation.run_folds`).

    Raises
    ------
    OptionError
        When the scheme is not leave-one-GPU-out or the task is not a recommendation task.
    """
    sch = get_scheme(data.scheme)
    if sch.kind != "column" or sch.column != "gpu_name":
        raise OptionError(f"tuning-budget curves need a leave-one-GPU-out scheme (a column scheme on gpu_name, "
                          f"e.g. 'by-gpu'); got {data.scheme!r}.")
    if data.task.kind != "recommendation":
        raise OptionError(f"tuning-budget curves need a recommendation task (configurations per problem); "
                          f"{data.task.name!r} is a {data.task.kind} task.")
    task = data.task
    rank = subsample_rank(task, data.rows) if task.max_train_rows else None
    plans = []
    for fold in (data.fold_names if folds is None else folds):
        test = np.flatnonzero(data.folds == fold)
        train = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))
        train = train_subsample(task, data.rows, train, rank=rank)
        plans.append(BudgetPlan(str(fold), train, test))
    return plans


def plan_record(data: TaskData, plans: list[BudgetPlan], budgets=BUDGETS) -> dict:
    """What the curves were computed on (for the JSON): the rules, and per GPU its counts and the sha256 of its
    training row ids (equal for every strategy)."""
    ids = data.rows["row_id"].to_pylist()
    keys = problem_keys(data.task, data.rows)
    return {
        "task": data.task.name, "scheme": data.scheme, "budgets": [int(n) for n in budgets],
        "target": data.task.target, "problem_columns": list(data.task.problem_columns),
        "train_rule": {"rows": "every row of the other GPUs (the board's folds)",
                       "task_max_train_rows": data.task.max_train_rows},
        "gpus": {p.fold: {"train_rows": int(p.train.size), "test_rows": int(p.test.size),
                          "problems": len({str(keys[i]) for i in p.test}),
                          "train_sha256": hashlib.sha256("\x1f".join(ids[i] for i in p.train).encode()).hexdigest()}
                 for p in plans},
        "dataset": {k: data.dataset.get(k) for k in ("rows", "rows_sha256", "manifest_sha256")},
    }


# ----- curves ---------------------------------------------------------------------------------------------------------
def curve_from_orders(data: TaskData, plans: list[BudgetPlan], predict: Callable[[BudgetPlan], np.ndarray],
                      budgets=BUDGETS) -> dict:
    """A strategy's curve from its predictions per held-out GPU (``predict(plan)``: one value per test row).

    Returns ``{"folds": {gpu: {"problems": {key: {N: score}}, "scores": {N: mean over problems},
    "problems_scored": {N: count}}}, "summary": summarise(...)}``.
    """
    keys = problem_keys(data.task, data.rows)
    folds = {}
    for plan in plans:
        probs = fold_scores(data.y[plan.test], predict(plan), keys[plan.test], budgets)
        per_n = {str(n): [s[str(n)] for s in probs.values()] for n in budgets}
        folds[plan.fold] = {"n_train": int(plan.train.size), "n_test": int(plan.test.size), "problems": probs,
                            "scores": {n: _mean(v) for n, v in per_n.items()},
                            "problems_scored": {n: sum(x is not None for x in v) for n, v in per_n.items()}}
    return {"folds": folds, "summary": summarise({g: f["scores"] for g, f in folds.items()}, budgets)}


def model_curve(data: TaskData, factory: Callable[..., Any], plans: list[BudgetPlan], budgets=BUDGETS, *,
                model_name: str = "model", seed: int = 0, limits=None) -> dict:
    """A model's curve: trained per held-out GPU on ``plan.train`` only, its predictions order ``plan.test``."""
    def predict(plan: BudgetPlan) -> np.ndarray:
        return fit_predict(factory, data.task, data.X.iloc[plan.train].reset_index(drop=True), data.y[plan.train],
                           data.X.iloc[plan.test].reset_index(drop=True), seed=seed, limits=limits,
                           model_name=model_name).predictions

    return curve_from_orders(data, plans, predict, budgets)


def oracle_curve(data: TaskData, plans: list[BudgetPlan], budgets=BUDGETS) -> dict:
    """The oracle: the measured times order the configurations (1 wherever defined; the upper bound)."""
    return curve_from_orders(data, plans, lambda plan: data.y[plan.test], budgets)
