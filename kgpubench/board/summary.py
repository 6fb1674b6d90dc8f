"""A result in a few lines for a person: what ran, each metric's mean over the folds with its 95 % bootstrap
interval as the board shows it (the ranking metric first, the seed study's marked), and where it would stand on
the board by the board's rule (:mod:`kgpubench.board.ranking`)."""

from __future__ import annotations

from pathlib import Path

from kgpubench.board.leaderboard import read_results, results_dir
from kgpubench.board.ranking import cell, headline, role, would_rank
from kgpubench.board.result_set import ResultSet
from kgpubench.errors import escape_text
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.models.evaluation import store_predictions
from kgpubench.results.result import Record, Result
from kgpubench.tasks import Task, as_task
from kgpubench.tasks.metrics import METRICS


def board_rank(result: Result, board: list[Record], task: Task | None = None) -> tuple[int, int] | None:
    """(rank, models) the result would have among the board's learned models of its task and scheme, by the
    board's one rule (:mod:`kgpubench.board.ranking`: the mean over folds of the task's primary metric, equal at the 4
    significant digits shown is a tie and shares the better rank), like with like: a result of every fold against
    the board's means, a result of some folds (``evaluate --fold F``) against each board model's mean over those
    same folds (its per-fold scores). The oracle and the strategies that measure the target are not ranked, on
    either side. None when the result or no comparable board model has a score. ``task``: the result's task
    (default: looked up by the result's task name)."""
    task = task or as_task(result.task)
    metric = task.primary_metric
    mine = headline(result, metric)
    if mine is None or role(result) != "model":
        return None
    folds = set(result.folds or {})
    others = []
    for r in ResultSet.of_records(task, board).scored(result.scheme):
        if role(r) != "model" or r.model == result.model or headline(r, metric) is None:
            continue
        theirs = set(r.folds or {})
        if theirs == folds:
            others.append(headline(r, metric))
        elif folds and folds < theirs:
            value = _mean_over(r, metric, folds)
            if value is not None:
                others.append(value)
    if not others:
        return None
    return would_rank(mine, others, metric), len(others) + 1


def _mean_over(result: Result, metric: str, folds: set[str]) -> float | None:
    """The mean of ``result``'s per-fold ``metric`` over ``folds``; None when a fold has no such score."""
    values = []
    for fold in sorted(folds):
        rec = (result.folds or {}).get(fold)
        score = rec.score(metric) if rec is not None else None
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            return None
        values.append(float(score))
    return sum(values) / len(values)


def _fold_note(result: Result, board: list[Record]) -> str:
    """`` on fold(s) F`` when the result covers fewer folds than the board's results of its task and scheme."""
    folds = set(result.folds or {})
    widest = max((set(r.folds or {}) for r in ResultSet.of_records(as_task(result.task), board).records(result.scheme)
                  if isinstance(r, Result)), key=len, default=set())
    return f" on the same fold(s) ({', '.join(sorted(folds))})" if folds and folds < widest else ""


def result_summary(result: Result, *, board: list[Record] | None = None, path: Path | str | None = None) -> str:
    """A short human summary of one result (``board``: the records to rank it against)."""
    task = as_task(result.task)
    folds = result.folds or {}
    # the model's name and message come from the model file and its code: escaped, one line each
    lines = [f"{escape_text(result.model)} on {task.name} / {result.scheme}: {len(folds)} fold(s), "
             f"{result.wall_time_s or 0.0:.1f} s"]
    if result.status != "ok":
        lines.append(f"  {result.status}: {escape_text(result.message or '')}")
        return "\n".join(lines) + "\n"
    agg = result.aggregate or {}
    names = [m for m in task.metrics if m in agg] + [m for m in agg if m not in task.metrics]
    width = max((len(m) for m in names), default=0)
    for m in names:
        what = METRICS[m].doc if m in METRICS else ""
        note = " (ranks the task)" if m == task.primary_metric else (" (seed study)" if m in task.seed_metrics
                                                                     else "")
        direction = ("higher" if METRICS[m].higher_is_better else "lower") + " is better" if m in METRICS else ""
        lines.append(f"  {m:<{width}}  {cell(result, m)}  {what}{note}"
                     + (f"; {direction}" if direction else ""))
    rank = board_rank(result, board or [], task)
    if rank:
        lines.append(f"  on the board it would rank {rank[0]} of {rank[1]} by {task.primary_metric}"
                     + _fold_note(result, board or []))
    elif board and _fold_note(result, board):
        lines.append("  no rank: the board's models have no score on these fold(s) to compare with")
    if path:
        lines.append(f"  result: {escape_text(path)}")
    return "\n".join(lines) + "\n"


def committed_board() -> list[Record]:
    """The committed board's records (empty when there is no results folder)."""
    return [r for _, r in read_results(results_dir())] if results_dir().is_dir() else []


def write_and_summarise(result: Result, out: Path | str, *, force: bool = False) -> str:
    """Write the result JSON to ``out`` (atomically; an existing file only with ``force``), its predictions beside
    it (:func:`kgpubench.models.evaluation.store_predictions`), and return its summary, ranked against the
    committed board when there is one."""
    result = store_predictions(result, Path(out), overwrite=force)  # first: the result names them by sha256
    atomic_write_bytes(Path(out), result.to_json().encode(), overwrite=force)
    return result_summary(result, board=committed_board(), path=out)
