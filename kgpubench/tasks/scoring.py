"""Scoring one test fold of a task from measured targets and a model's predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from kgpubench.errors import SchemaValidationError
from kgpubench.metrics import METRICS, app_time_ratio, improvement_coefficient, pct_improved, regret
from kgpubench.tasks._core import Task, problem_keys
from kgpubench.tasks.npb import attach_npb_columns, npb_app_time_s, problem_remainder_s

__all__ = ["chosen_index", "npb_app_time_s", "score_fold", "with_scoring_columns"]


def with_scoring_columns(task: Task, table: pa.Table, rows: pa.Table) -> pa.Table:
    """``rows`` (``task_rows(task, table)``) plus the derived columns the task's scorer reads from other rows
    of ``table`` (npb-tpb: the default run's remainder and each kernel's default TPB); others unchanged."""
    if task.name == "npb-tpb":
        return attach_npb_columns(task, table, rows)
    return rows


def score_fold(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray, *, predicts_target: bool = True
               ) -> dict[str, float | None]:
    """Every metric of ``task`` on one test fold.

    Parameters
    ----------
    rows : pyarrow.Table
        The test rows (task columns), aligned with ``y`` and ``p``.
    predicts_target : bool
        False for a model whose outputs are only scores (a classifier, a fixed strategy): row metrics
        (MAPE...) are then None.
    """
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    out: dict[str, float | None] = {}
    choice = _choice_scores(task, rows, y, p) if task.kind == "recommendation" else {}
    groups = _groups(problem_keys(task, rows)) if task.kind == "recommendation" else None
    for name in task.metrics:
        metric = METRICS[name]
        if metric.scope == "row":
            out[name] = metric.fn(y, p) if predicts_target else None
        elif metric.scope == "problem":
            vals = [metric.fn(y[idx], p[idx]) for idx in groups]
            out[name] = float(np.mean(vals)) if vals else None
        else:
            out[name] = choice.get(name)
    return out


def _groups(keys: np.ndarray) -> list[np.ndarray]:
    codes, _ = pd.factorize(pd.Series(keys, dtype=object), sort=True)
    order = np.argsort(codes, kind="mergesort")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds) if len(order) else []


def _choice_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    if task.name == "stencil-tile":
        return _stencil_scores(task, rows, y, p)
    if task.name == "npb-tpb":
        return _npb_scores(task, rows, y, p)
    return {}


def chosen_index(p: np.ndarray, idx: np.ndarray) -> int:
    """The row (of ``idx``) with the smallest prediction; ties go to the first row."""
    return int(idx[np.argmin(p[idx])])


def _stencil_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    untiled = np.asarray([(a, b, c) == (1, 1, 1) for a, b, c in zip(
        rows["tile_b1"].to_pylist(), rows["tile_b2"].to_pylist(), rows["tile_b3"].to_pylist())])
    base, chosen, best = [], [], []
    for idx in _groups(problem_keys(task, rows)):
        pick = y[chosen_index(p, idx)]
        chosen.append(pick)
        best.append(np.min(y[idx]))
        b = idx[untiled[idx]]
        base.append(np.min(y[b]) if b.size else np.nan)
    base, chosen, best = map(np.asarray, (base, chosen, best))
    has_base = np.isfinite(base)
    out = {"regret": regret(best, chosen)}
    if has_base.any():
        out["improvement_coefficient"] = improvement_coefficient(base[has_base], chosen[has_base])
        out["pct_improved"] = pct_improved(base[has_base], chosen[has_base])
    return out


def _npb_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    if "calls_per_run" not in rows.column_names:
        raise SchemaValidationError("npb-tpb scoring needs column 'calls_per_run'; the npb table lacks it.")
    calls = np.asarray(rows["calls_per_run"].to_pylist(), dtype=float)
    if np.isnan(calls).any():
        raise SchemaValidationError("npb-tpb scoring needs calls_per_run on every ok row; some are null.")
    kernel_keys = problem_keys(task, rows, task.problem_columns + task.choice_columns)
    problem_of = problem_keys(task, rows)
    best_app, chosen_app = [], []
    for idx in _groups(problem_of):
        c_calls, c_time, b_calls, b_time = [], [], [], []
        for kidx in _groups(kernel_keys[idx]):
            k = idx[kidx]
            pick = chosen_index(p, k)
            c_calls.append(calls[pick])
            c_time.append(y[pick])
            fastest = k[np.argmin(y[k])]
            b_calls.append(calls[fastest])
            b_time.append(y[fastest])
        # the default run's remainder (kgpubench.tasks.npb); kernel rows' median only without a default run row
        remainder = problem_remainder_s(rows, idx)
        chosen_app.append(npb_app_time_s(np.array(c_calls), np.array(c_time), remainder))
        best_app.append(npb_app_time_s(np.array(b_calls), np.array(b_time), remainder))
    return {"app_time_ratio": app_time_ratio(best_app, chosen_app)}
