"""Scoring one test fold of a task from measured targets and a model's predictions.

What differs between tasks is declared on the task (:class:`kgpubench.tasks.Task` ``scorer``, ``oracle``) and
looked up here in :data:`SCORERS` and :data:`ORACLES`; nothing branches on a task's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.errors import SchemaValidationError
from kgpubench.registry import Registry
from kgpubench.tasks._core import Task, problem_keys
from kgpubench.tasks.metrics import METRICS, app_time_ratio, app_time_s, improvement_coefficient, pct_improved, regret
from kgpubench.tasks.npb import (
    RemoteNpbProblem,
    attach_npb_columns,
    npb_app_time_s,
    npb_problems,
    problem_remainder_s,
)

__all__ = ["ORACLES", "SCORERS", "Scorer", "chosen_index", "npb_app_time_s", "oracle_of", "problem_choices",
           "score_fold", "scorer_of", "time_noise", "with_scoring_columns"]

ChoiceScores = Callable[[Task, pa.Table, np.ndarray, np.ndarray, np.ndarray], dict[str, float]]
ProblemChoices = Callable[[Task, pa.Table, np.ndarray, np.ndarray], dict[str, dict[str, float]]]
ScoringColumns = Callable[[Task, pa.Table, pa.Table], pa.Table]


@dataclass(frozen=True, slots=True, kw_only=True)
class Scorer:
    """How a recommendation task scores the choice a model makes per problem (named by ``Task.scorer``).

    Parameters
    ----------
    name : str
        Registry name.
    choice_scores : callable
        ``(task, rows, y, p, noise) -> {metric: value}``: the fold's metrics of scope ``"choice"``.
    problem_choices : callable
        ``(task, rows, y, p) -> {problem: {"chosen", "best"[, "baseline"]}}`` in the task's unit.
    columns : callable, optional
        ``(task, table, rows) -> rows``: derived columns the scorer reads from other rows of the table.
    """

    name: str
    choice_scores: ChoiceScores
    problem_choices: ProblemChoices
    columns: ScoringColumns | None = None


def time_noise(task: Task, rows: pa.Table) -> np.ndarray:
    """Standard error of every row's measured target (0 where unknown).

    ``time_rse * target`` where the row records ``time_rse`` (protocol 2), else ``time_ms_std / sqrt(repeats)``;
    for a target that is not a time (power), 0. The npb target is a mean per call, the others a median: both
    are read with the standard error of the mean, a documented approximation (docs/METRICS.md).
    """
    n = rows.num_rows
    if not task.target.startswith("time_ms"):
        return np.zeros(n)

    def col(name):
        if name not in rows.column_names:
            return np.full(n, np.nan)
        return rows[name].to_numpy(zero_copy_only=False).astype(np.float64)

    target = col(task.target)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = col("time_ms_std") / np.sqrt(col("repeats"))
        rse = col("time_rse") * target
    out = np.where(np.isfinite(rse), rse, se)
    return np.where(np.isfinite(out) & (out >= 0), out, 0.0)


def with_scoring_columns(task: Task, table: pa.Table, rows: pa.Table) -> pa.Table:
    """``rows`` (``task_rows(task, table)``) plus the derived columns the task's scorer reads from other rows
    of ``table`` (npb-tpb: the default run's remainder and each kernel's default TPB); others unchanged."""
    columns = scorer_of(task).columns
    return rows if columns is None else columns(task, table, rows)


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
    noise = time_noise(task, rows)
    choice = scorer_of(task).choice_scores(task, rows, y, p, noise) if task.kind == "recommendation" else {}
    groups = _groups(problem_keys(task, rows)) if task.kind == "recommendation" else None
    for name in task.metrics:
        metric = METRICS[name]
        if metric.scope == "row":
            out[name] = metric.fn(y, p) if predicts_target else None
        elif metric.scope == "problem":
            extra = (lambda idx: {"noise": noise[idx]}) if metric.noise else (lambda idx: {})
            vals = [metric.fn(y[idx], p[idx], **extra(idx)) for idx in groups]
            out[name] = float(np.mean(vals)) if vals else None
        else:
            out[name] = choice.get(name)
    return out


def problem_choices(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, dict[str, float]]:
    """Per test problem: the chosen, best and (where there is one) baseline time of the model's choice, in the
    task's unit (npb-tpb: application seconds; others: the target). The seed-protocol sections of the board
    are built from these."""
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    if task.kind != "recommendation":
        return {}
    return scorer_of(task).problem_choices(task, rows, y, p)


def _best_and_chosen(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, dict[str, float]]:
    """Per problem: the target of the chosen and of the best row (and of the best untiled row, if any)."""
    keys = problem_keys(task, rows)
    untiled = _untiled(rows)
    out = {}
    for idx in _groups(keys):
        rec = {"chosen": float(y[chosen_index(p, idx)]), "best": float(np.min(y[idx]))}
        if untiled is not None and untiled[idx].any():
            rec["baseline"] = float(np.min(y[idx[untiled[idx]]]))
        out[str(keys[idx[0]])] = rec
    return out


def _groups(keys: np.ndarray) -> list[np.ndarray]:
    codes, _ = pd.factorize(pd.Series(keys, dtype=object), sort=True)
    order = np.argsort(codes, kind="mergesort")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    return np.split(order, bounds) if len(order) else []


def _no_choice_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray, noise: np.ndarray
                      ) -> dict[str, float]:
    """The generic scorer has no fold-level choice metric (its metrics are per problem or per row)."""
    return {}


def chosen_index(p: np.ndarray, idx: np.ndarray) -> int:
    """The row (of ``idx``) with the smallest prediction; ties go to the first row."""
    return int(idx[np.argmin(p[idx])])


def _untiled(rows: pa.Table) -> np.ndarray | None:
    """Rows of the untiled (1, 1, 1) thread-tile baseline; None for a table without tiles."""
    if "tile_b1" not in rows.column_names:
        return None
    mask = pc.and_(pc.and_(pc.equal(rows["tile_b1"], 1), pc.equal(rows["tile_b2"], 1)), pc.equal(rows["tile_b3"], 1))
    if "variant" in rows.column_names:
        mask = pc.and_(mask, pc.not_equal(rows["variant"], "shared-tile"))
    return np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)


def _stencil_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray, noise: np.ndarray
                    ) -> dict[str, float]:
    untiled = _untiled(rows)
    base, chosen, best, s_chosen, s_best = [], [], [], [], []
    for idx in _groups(problem_keys(task, rows)):
        c = chosen_index(p, idx)
        b = int(idx[np.argmin(y[idx])])
        chosen.append(y[c])
        best.append(y[b])
        s_chosen.append(noise[c])
        s_best.append(noise[b])
        u = idx[untiled[idx]]
        base.append(np.min(y[u]) if u.size else np.nan)
    base, chosen, best = map(np.asarray, (base, chosen, best))
    has_base = np.isfinite(base)
    out = {"regret": regret(best, chosen, s_best, s_chosen)}
    if has_base.any():
        out["improvement_coefficient"] = improvement_coefficient(base[has_base], chosen[has_base])
        out["pct_improved"] = pct_improved(base[has_base], chosen[has_base])
    return out


def _npb_apps(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> list[tuple[str, float, float]]:
    """(problem, chosen application s, best application s) per test problem, in key order."""
    if "calls_per_run" not in rows.column_names:
        raise SchemaValidationError("npb-tpb scoring needs column 'calls_per_run'; the npb table lacks it.")
    calls = rows["calls_per_run"].to_numpy(zero_copy_only=False).astype(np.float64)
    if np.isnan(calls).any():
        raise SchemaValidationError("npb-tpb scoring needs calls_per_run on every ok row; some are null.")
    kernel_keys = problem_keys(task, rows, task.problem_columns + task.choice_columns)
    problem_of = problem_keys(task, rows)
    out = []
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
        out.append((str(problem_of[idx[0]]), npb_app_time_s(np.array(c_calls), np.array(c_time), remainder),
                    npb_app_time_s(np.array(b_calls), np.array(b_time), remainder)))
    return out


def _npb_choices(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray) -> dict[str, dict[str, float]]:
    return {k: {"chosen": c, "best": b} for k, c, b in _npb_apps(task, rows, y, p)}


def _npb_scores(task: Task, rows: pa.Table, y: np.ndarray, p: np.ndarray, noise: np.ndarray | None = None
                ) -> dict[str, float]:
    apps = _npb_apps(task, rows, y, p)
    best = [b for _, _, b in apps]
    chosen = [c for _, c, _ in apps]
    return {"app_time_ratio": app_time_ratio(best, chosen), "app_time_s": app_time_s(best, chosen)}


_BUILT_IN_SCORERS = (
    Scorer(name="choice", choice_scores=_no_choice_scores, problem_choices=_best_and_chosen),
    Scorer(name="tiles", choice_scores=_stencil_scores, problem_choices=_best_and_chosen),
    Scorer(name="npb-app", choice_scores=_npb_scores, problem_choices=_npb_choices, columns=attach_npb_columns),
)
# Built in, then plugged in through the entry-point groups ``kgpubench.scorers`` / ``kgpubench.oracles``.
SCORERS: Registry[Scorer] = Registry("scorer", "kgpubench.scorers", Scorer,
                                     builtins=lambda: ((s.name, s) for s in _BUILT_IN_SCORERS),
                                     name_of=lambda s: s.name)
# Measurement oracles: ``(task, test rows, test targets) -> problems`` a measuring strategy queries.
ORACLES: Registry[Callable[[Task, pa.Table, np.ndarray], list[Any]]] = Registry(
    "measurement oracle", "kgpubench.oracles", builtins=lambda: [("npb", npb_problems)],
    check=lambda name, fn: _check_callable("measurement oracle", name, fn))
# The same problems in the sandbox's child: ``(problem.describe(), ask) -> problem`` whose ``measure`` sends the
# full assignment through ``ask`` and reads back the parent's ``Measurement.to_wire()``. Built in only: the
# problems of an oracle plugged in through ``kgpubench.oracles`` cannot be handed to a sandboxed model.
REMOTE_ORACLES: Registry[Callable[[dict, Callable[[dict[str, int]], dict]], Any]] = Registry(
    "sandboxed measurement oracle", None, builtins=lambda: [("npb", RemoteNpbProblem.from_description)],
    check=lambda name, fn: _check_callable("sandboxed measurement oracle", name, fn))


def _check_callable(kind: str, name: str, fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"{kind} {name!r} must be callable, got a {type(fn).__name__}")


def scorer_of(task: Task) -> Scorer:
    """The :class:`Scorer` ``task`` declares (:class:`~kgpubench.errors.UnknownNameError` if none is)."""
    return SCORERS[task.scorer]


def oracle_of(task: Task) -> Callable[[Task, pa.Table, np.ndarray], list[Any]] | None:
    """The measurement oracle ``task`` declares, or None for a task whose models only learn."""
    return None if task.oracle is None else ORACLES[task.oracle]


def remote_oracle_of(task: Task) -> Callable[[dict, Callable[[dict[str, int]], dict]], Any]:
    """How the sandbox's child rebuilds the problems of the oracle ``task`` declares (:data:`REMOTE_ORACLES`)."""
    return REMOTE_ORACLES[task.oracle]
