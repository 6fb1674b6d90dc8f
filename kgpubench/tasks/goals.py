"""A task's goals: the targets the board reports against, declared on the task (``Task.goals``), and which of a
fold's rows a goal scores.

A :class:`Goal` is frozen data like the task that holds it; :func:`goal_rows`, :func:`group_masks`,
:func:`grouped_rows` and :func:`grouped_mdape` say what its ``where``, ``target_range``, ``groups`` and
``group_by`` select. How a goal is judged on the board's results or on predictions (which model is best, met or
not) is :mod:`kgpubench.board.fewshot`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgpubench.foundation.capped import lists_to_tuples
from kgpubench.tasks.metrics import mdape

# the hindsight reference a goal's ``beats`` may name (kgpubench.board.fewshot.ideal_transfer): not a model, never
# a candidate
IDEAL_TRANSFER = "ideal_transfer"
SOURCES = ("board", "predict")
OVER = ("each", "median")


@dataclass(frozen=True)
class Goal:
    """A target the board reports against: a per-group figure in percent at most ``target_pct``.

    ``source``: ``"board"`` reads the per-fold ``metric`` (default ``mdape``, median APE in percent; ``percent``
    turns the metric into percent, e.g. 100 for a regret fraction) of the committed board results of ``scheme`` (a
    fold is a group; ``groups`` empty: every fold); ``"predict"``: a model trained on the scheme's training folds
    predicts its test fold, whose rows are grouped by ``group_by`` after keeping those whose ``where`` columns hold
    the listed values and, with ``target_range`` ``(lo, hi)``, whose measured label (the task's target) lies in
    ``[lo, hi)`` (median APE; a post-hoc stratification of the scored rows, never a feature). ``over``:
    ``"each"``: met when at least ``at_least`` groups (default: all) meet the target for one model; ``"median"``:
    met when the median over the groups does. ``beats``: a model the best
    must beat (a strictly lower figure) on every group; it is not a candidate itself. ``beats`` =
    :data:`IDEAL_TRANSFER` names the hindsight reference :func:`kgpubench.board.fewshot.ideal_transfer` instead of
    a model (a ``"predict"`` goal; every model is then scored on the rows the reference covers). ``target_pct``
    None: no absolute target, met by beating ``beats`` on every group.
    """

    label: str
    scheme: str
    target_pct: float | None
    source: str = "board"
    groups: tuple[str, ...] = ()
    group_by: str = "gpu_name"
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    target_range: tuple[float, float] | None = None
    at_least: int | None = None
    metric: str = "mdape"
    percent: float = 1.0
    over: str = "each"
    beats: str = ""
    scaling: str = ""  # the scaling-aware baseline whose figures the board shows beside the target
    why: str = ""  # the evidence of what limits the goal, said beside "not met"

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"goal {self.label!r}: source {self.source!r}; expected one of {', '.join(SOURCES)}")
        if self.over not in OVER:
            raise ValueError(f"goal {self.label!r}: over {self.over!r}; expected one of {', '.join(OVER)}")
        if self.target_pct is None and not self.beats:
            raise ValueError(f"goal {self.label!r}: no target_pct and nothing it beats; declare one of them")
        if self.target_pct is None and self.over == "median":
            raise ValueError(f"goal {self.label!r}: over='median' needs a target_pct")
        if self.beats == IDEAL_TRANSFER and self.source != "predict":
            raise ValueError(f"goal {self.label!r}: beats {IDEAL_TRANSFER!r} needs source='predict' (the reference "
                             "is computed from the rows, never read from the board)")


def goal_from_fields(fields: Mapping) -> Goal:
    """A goal from its fields as :func:`dataclasses.asdict` gives them and JSON carries them (the sandbox sends a
    task to the model's process so): lists become tuples."""
    return Goal(**{k: lists_to_tuples(v) for k, v in fields.items()})


def goal_rows(rows: pa.Table, y: np.ndarray, goal: Goal, keep: np.ndarray | None = None) -> np.ndarray:
    """The boolean mask of the rows ``goal`` scores: those its ``where`` keeps, whose label ``y`` lies in its
    ``target_range`` when set, and in ``keep`` (a boolean mask over ``rows``, e.g. the rows a reference covers)."""
    keep = np.ones(rows.num_rows, dtype=bool) if keep is None else np.asarray(keep, dtype=bool).copy()
    for col, values in goal.where:
        keep &= np.isin(np.asarray(rows[col].to_pylist(), dtype=object), list(values))
    if goal.target_range is not None:
        lo, hi = goal.target_range
        y = np.asarray(y, dtype=float)
        keep &= (y >= lo) & (y < hi)
    return keep


def group_masks(rows: pa.Table, y: np.ndarray, goal: Goal, keep: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per group of ``goal`` (its declared ``groups``, else every group with a scored row), the boolean mask of the
    rows it scores there (:func:`goal_rows`)."""
    keep = goal_rows(rows, y, goal, keep)
    groups = np.asarray(rows[goal.group_by].to_pylist(), dtype=object)
    names = goal.groups or tuple(sorted(set(groups[keep])))
    return {g: keep & (groups == g) for g in names}


def grouped_rows(rows: pa.Table, y: np.ndarray, goal: Goal, keep: np.ndarray | None = None) -> dict[str, int]:
    """Rows per group of ``goal`` that it scores (:func:`goal_rows`); a declared group without any counts 0."""
    return {g: int(np.sum(mask)) for g, mask in group_masks(rows, y, goal, keep).items()}


def grouped_mdape(rows: pa.Table, y: np.ndarray, pred: np.ndarray, goal: Goal,
                  keep: np.ndarray | None = None) -> dict[str, float]:
    """Median APE (percent) per group of ``goal`` over the rows it scores (:func:`goal_rows`; ``keep``, a boolean
    mask over ``rows``, when given: e.g. the rows a reference covers)."""
    return {g: float(mdape(y[mask], pred[mask])) for g, mask in group_masks(rows, y, goal, keep).items()
            if np.any(mask)}
