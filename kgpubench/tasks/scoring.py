"""Scoring one test fold of a task from measured targets and a model's predictions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from kgpubench.errors import SchemaValidationError
from kgpubench.metrics import METRICS, app_time_ratio, improvement_coefficient, pct_improved, regret
from kgpubench.tasks._core import Task, problem_keys

# NPB: the non-kernel part of an application run (seconds); rows of one problem carry the same value.
NPB_REMAINDER = "remainder_s"


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


def npb_app_time_s(calls: np.ndarray, time_ms: np.ndarray, remainder_s: float) -> float:
    """Application time of one assignment: ``remainder + sum_k calls_k * time_k / 1000`` (seconds)."""
    return float(remainder_s + np.sum(np.asarray(calls, float) * np.asarray(time_ms, float)) / 1000.0)


def _npb_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    if "calls_per_run" not in rows.column_names:
        raise SchemaValidationError("npb-tpb scoring needs column 'calls_per_run'; the npb table lacks it.")
    calls = np.asarray(rows["calls_per_run"].to_pylist(), dtype=float)
    if np.isnan(calls).any():
        raise SchemaValidationError("npb-tpb scoring needs calls_per_run on every ok row; some are null.")
    # The non-kernel remainder counts when the table records it (else the ratio covers kernel time only).
    rem = (np.asarray(rows[NPB_REMAINDER].to_pylist(), dtype=float) if NPB_REMAINDER in rows.column_names
           else np.zeros(rows.num_rows))
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
        remainder = float(np.nanmedian(rem[idx])) if np.isfinite(rem[idx]).any() else 0.0
        chosen_app.append(npb_app_time_s(np.array(c_calls), np.array(c_time), remainder))
        best_app.append(npb_app_time_s(np.array(b_calls), np.array(b_time), remainder))
    return {"app_time_ratio": app_time_ratio(best_app, chosen_app)}
