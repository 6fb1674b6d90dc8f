"""Few-shot curves on a held-out GPU, and the goal figures the board reports against.

For a task with a leave-one-GPU-out scheme (a ``column`` scheme on ``gpu_name``, e.g. ``by-gpu``), each held-out
GPU's rows are put in a fixed order, ``hashed_order(row_ids, f"{task}-fewshot")`` (the same for every model). At
``k`` the first ``k`` of them are *revealed*: they join the training rows of every other GPU. The scored rows are
the held-out GPU's rows after the first ``max(ks)`` in that order (the same rows at every ``k``, so the curve
compares like with like, and never a revealed row), at most ``max_test_rows`` of them (the next ones in the same
hashed order). The other GPUs' rows keep the task's training subsample rule
(:func:`kgpubench.tasks.data.train_subsample` under ``max_train_rows``, as the board does: rows, or whole units when
the task declares ``subsample_by``), capped further by ``max_train_rows`` here when given (recorded). A GPU with
fewer than ``max(ks) + MIN_TEST_ROWS`` rows is skipped (recorded).

A recommendation task (``kind == "recommendation"``, e.g. autotune-config) is scored per problem (the best
configuration of a GPU, kernel and problem size), so its scored rows are *every* row of the held-out GPU, whole
problems, at every ``k``: a revealed row is one configuration whose time on that GPU was measured; it joins the
training rows and stays a candidate of its problem (a tuner that measured it may pick it). At ``k = 0`` this is
the board's leave-one-GPU-out protocol exactly (same training rows, same scored rows), when no cap lowers the
task's own rule. No test cap applies (``max_test_rows`` is ignored and recorded as None).

Model code runs only through :func:`kgpubench.models.evaluation.fit_predict` (trusted, in this process); scores come
from :func:`kgpubench.tasks.scoring.score_fold` (the task's metrics; APE in percent).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from kgpubench.errors import OptionError
from kgpubench.foundation.capped import loads_json
from kgpubench.models.evaluation import fit_predict
from kgpubench.results.result import Result, read_record, read_result_json
from kgpubench.tasks import Task
from kgpubench.tasks.data import TaskData, hashed_order, subsample_rank, train_subsample
from kgpubench.tasks.goals import Goal
from kgpubench.tasks.intervals import median_interval
from kgpubench.tasks.metrics import METRICS
from kgpubench.tasks.roofline import SingleFactorTransfer, ideal_single_factor_transfer
from kgpubench.tasks.scoring import score_fold
from kgpubench.tasks.splits import EXCLUDED, get_scheme

# fine enough near zero to say how few rows suffice (a contributor measures 1, 2 or 10 rows, not only 5 or 100)
KS = (0, 1, 2, 5, 10, 20, 50, 100, 200)
MIN_TEST_ROWS = 20


@dataclass(frozen=True)
class FewshotPlan:
    """One held-out GPU: row indices (into ``TaskData.rows``) of its training and scored rows.

    ``other``: the other GPUs' training rows (after the cap); ``reveal``: the first ``max(ks)`` held-out rows in
    the revealing order (at ``k`` the first ``k`` are revealed); ``test``: the scored held-out rows (for a
    recommendation task every held-out row, the revealed ones included).
    """

    fold: str
    other: np.ndarray
    reveal: np.ndarray
    test: np.ndarray
    held_rows: int

    def train(self, k: int) -> np.ndarray:
        """The training rows at ``k`` revealed rows (sorted indices)."""
        return np.sort(np.concatenate([self.other, self.reveal[:k]]))


def reveal_salt(task_name: str) -> str:
    return f"{task_name}-fewshot"


def train_cap(data: TaskData, max_train_rows: int | None) -> int | None:
    """The cap on the other GPUs' training rows: the task's rule, lowered to ``max_train_rows`` when given."""
    caps = [c for c in (data.task.max_train_rows, max_train_rows) if c]
    return min(caps) if caps else None


def train_order(task: Task) -> str:
    """The order the other GPUs' training rows are capped in (:func:`kgpubench.tasks.data.train_subsample`), in
    words: by row, or by whole unit when the task declares ``subsample_by``."""
    if task.subsample_by:
        cols = ", ".join(task.subsample_by)
        return (f"sha256('{task.name}' + the JSON list of ({cols})) over the other GPUs' units, whole units while "
                "within the cap")
    return f"sha256('{task.name}' + row_id) over the other GPUs' rows"


def whole_problems(task: Task) -> bool:
    """Whether the held-out GPU is scored on all its rows, whole problems (a recommendation task), rather than on
    its rows after the revealed ones."""
    return task.kind == "recommendation"


def scored_rule(task: Task, ks) -> str:
    """What the scored rows are, in words (for the JSON and the board's note)."""
    if whole_problems(task):
        return ("every row of the held-out GPU, whole problems (the revealed rows join the training rows and stay "
                "candidates of their problems)")
    return f"the held-out GPU's rows after the first {max(ks)} in the revealing order"


def plan_folds(data: TaskData, ks=KS, *, max_train_rows: int | None = None, max_test_rows: int | None = None,
               folds: list[str] | None = None, min_test_rows: int = MIN_TEST_ROWS
               ) -> tuple[list[FewshotPlan], dict[str, str]]:
    """The plan of every held-out GPU (independent of any model) and the GPUs skipped, with why.

    ``max_train_rows``: cap on the other GPUs' training rows (None or 0: the task's own rule only);
    ``max_test_rows``: cap on the scored rows per GPU (ignored for a recommendation task: whole problems).

    Raises
    ------
    OptionError
        When the scheme is not leave-one-GPU-out or ``ks`` holds a negative count.
    """
    sch = get_scheme(data.scheme)
    if sch.kind != "column" or sch.column != "gpu_name":
        raise OptionError(f"few-shot curves need a leave-one-GPU-out scheme (a column scheme on gpu_name, e.g. "
                          f"'by-gpu'); got {data.scheme!r}.")
    if not ks or min(ks) < 0:
        raise OptionError(f"ks {list(ks)!r}: expected non-negative row counts, e.g. 0,5,20,100.")
    kmax = max(ks)
    ids = data.rows["row_id"].to_pylist()
    reveal_rank = hashed_order(ids, reveal_salt(data.task.name))
    cap = train_cap(data, max_train_rows)
    train_rank = subsample_rank(data.task, data.rows) if cap else None
    plans, skipped = [], {}
    for fold in (data.fold_names if folds is None else folds):
        held = np.flatnonzero(data.folds == fold)
        if held.size < kmax + min_test_rows:
            skipped[fold] = f"{held.size} rows, fewer than max(k) + {min_test_rows} = {kmax + min_test_rows}"
            continue
        other = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))
        other = train_subsample(data.task, data.rows, other, cap or 0, rank=train_rank)
        ordered = held[np.argsort(reveal_rank[held], kind="mergesort")]
        if whole_problems(data.task):
            test = held
        else:
            rest = ordered[kmax:]
            test = np.sort(rest[:max_test_rows] if max_test_rows else rest)
        plans.append(FewshotPlan(str(fold), other, ordered[:kmax], test, int(held.size)))
    return plans, skipped


def revealed_sha256(data: TaskData, plan: FewshotPlan) -> str:
    """sha256 of the revealed row ids in revealing order (equal for every model: the plan does not see one)."""
    ids = data.rows["row_id"].to_pylist()
    return hashlib.sha256("\x1f".join(ids[i] for i in plan.reveal).encode()).hexdigest()


def kept_metrics(task: Task) -> tuple[str, ...]:
    """The metrics a curve keeps: the task's primary metric and ``mdape`` (median APE, percent); for a
    recommendation task its primary metric and its other per-problem and per-choice metrics (no row metric: a
    ranker predicts no time)."""
    if whole_problems(task):
        return tuple(dict.fromkeys((task.primary_metric, *(m for m in task.metrics if METRICS[m].scope != "row"))))
    return tuple(dict.fromkeys((task.primary_metric, "mdape")))


def fewshot_curve(data: TaskData, factory: Callable[..., Any], plans: list[FewshotPlan], ks=KS, *,
                  model_name: str = "model", seed: int = 0, metrics: tuple[str, ...] | None = None,
                  limits=None) -> dict:
    """Per ``k``: per held-out GPU the training/revealed/scored counts and scores, the median over GPUs and its
    95 % bootstrap interval (:func:`median_over_gpus`).

    ``metrics``: the task's metrics kept (default: :func:`kept_metrics`).
    """
    task = data.task
    keep = metrics or kept_metrics(task)
    out = {}
    for k in ks:
        per = {}
        for plan in plans:
            train = plan.train(k)
            res = fit_predict(factory, task, data.X.iloc[train].reset_index(drop=True), data.y[train],
                              data.X.iloc[plan.test].reset_index(drop=True), seed=seed, limits=limits,
                              model_name=model_name)
            test_rows = data.rows.take(pa.array(plan.test))
            scores = score_fold(task, test_rows, data.y[plan.test], res.predictions,
                                predicts_target=res.predicts_target)
            per[plan.fold] = {"n_train": int(train.size), "n_revealed": int(min(k, plan.reveal.size)),
                              "n_test": int(plan.test.size), "scores": {m: scores.get(m) for m in keep}}
        med, interval = {}, {}
        for m in keep:
            med[m], interval[m] = median_over_gpus(per, m)
        out[str(k)] = {"folds": per, "median": med, "interval": interval}
    return out


def median_over_gpus(folds: dict[str, dict], metric: str) -> tuple[float | None, list[float] | None]:
    """The median over held-out GPUs of ``metric`` (a curve point's ``folds``: GPU -> ``{"scores": ...}``) and
    its 95 % percentile bootstrap interval (the GPUs resampled, :func:`kgpubench.tasks.intervals.median_interval`;
    None with fewer than two GPUs scored)."""
    vals = [f["scores"][metric] for f in folds.values() if (f.get("scores") or {}).get(metric) is not None]
    ci = median_interval(vals)
    return (float(np.median(vals)) if vals else None), (list(ci) if ci else None)


def plan_record(data: TaskData, plans: list[FewshotPlan], skipped: dict[str, str], ks, *,
                max_train_rows: int | None, max_test_rows: int | None) -> dict:
    """What the curves were computed on (for the JSON): the rules, and per GPU the counts and revealed hash."""
    return {
        "task": data.task.name, "scheme": data.scheme, "ks": [int(k) for k in ks],
        "reveal_order": f"sha256('{reveal_salt(data.task.name)}' + row_id), per held-out GPU",
        "train_rule": {"task_max_train_rows": data.task.max_train_rows, "cap": train_cap(data, max_train_rows),
                       "order": train_order(data.task)},
        "test_rule": {"scored": scored_rule(data.task, ks),
                      "max_test_rows": None if whole_problems(data.task) else max_test_rows,
                      **({"whole_problems": True} if whole_problems(data.task) else {})},
        "gpus": {p.fold: {"held_rows": p.held_rows, "other_rows": int(p.other.size), "test_rows": int(p.test.size),
                          "revealed_sha256": revealed_sha256(data, p)} for p in plans},
        "skipped": skipped, "dataset": {k: data.dataset.get(k) for k in ("rows", "rows_sha256", "manifest_sha256")},
    }


# what a run adding models to a curves file must share with it (the plan holds the data's hashes, ks, caps, the
# revealing order and each GPU's revealed rows)
SHARED_KEYS = ("task", "metric", "metrics", "plan")


def differing_keys(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The dotted paths at which two JSON values differ (a key present in one only counts), sorted."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [] if old == new else [prefix or "(the whole document)"]
    out = []
    for key in set(old) | set(new):
        here = f"{prefix}.{key}" if prefix else str(key)
        out += differing_keys(old[key], new[key], here) if key in old and key in new else [here]
    return sorted(out)


def curves_to_extend(path: Path, doc: dict, models) -> dict:
    """The curves file at ``path``, to which a run whose new document is ``doc`` (its plan computed, no model yet)
    adds ``models`` without recomputing the file's others: refused unless the file's task, metrics and plan (the
    data's hashes, ks, caps, revealing order, per-GPU revealed rows, skipped GPUs) are this run's, and unless no
    model of ``models`` is in the file already. The file's curves and wall times are kept.

    Raises
    ------
    OptionError
        No file, not a curves file, a plan that differs (each differing key named), or a model already there.
    """
    path = Path(path)
    if not path.is_file():
        raise OptionError(f"--add: {path} does not exist; run without --add to write the curves file first.")
    old = loads_json(path.read_bytes(), path, expected="a few-shot curves file written by scripts/fewshot_curves.py")
    if not isinstance(old, dict) or not isinstance(old.get("plan"), dict) or not isinstance(old.get("models"), dict):
        raise OptionError(f"--add: {path} is not a few-shot curves file (no 'plan' and 'models' objects); name the "
                          "fewshot.json that scripts/fewshot_curves.py wrote, or run without --add.")
    new = json.loads(json.dumps({k: doc.get(k) for k in SHARED_KEYS}))  # as the file would hold it
    diffs = [p for k in SHARED_KEYS for p in differing_keys(old.get(k), new[k], k)]
    if diffs:
        shown = "; ".join(f"{p}: file {_short(_at(old, p))}, this run {_short(_at(new, p))}" for p in diffs[:4])
        more = f" (and {len(diffs) - 4} more)" if len(diffs) > 4 else ""
        raise OptionError(f"--add: {path} was computed on another plan, so its curves and this run's would not "
                          f"compare: {shown}{more}. Rerun with the file's options (--ks, --max-train-rows, "
                          "--max-test-rows, --min-test-rows, --scheme) on the same data, or without --add to "
                          "recompute every model.")
    again = [m for m in models if m in old["models"]]
    if again:
        raise OptionError(f"--add: {path} already has the curve of {', '.join(again)}; drop "
                          f"{'it' if len(again) == 1 else 'them'} from --models, or run without --add to "
                          "recompute every model.")
    return {**old, "models": dict(old["models"]), "wall_s": dict(old.get("wall_s") or {})}


def _at(doc: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return "(absent)"
        doc = doc[key]
    return doc


def _short(value: Any, width: int = 60) -> str:
    text = value if value == "(absent)" else json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


# ----- goals (declared on the task: kgpubench.tasks.goals) -------------------------------------------------
def judge(goal: Goal, per_model: dict[str, dict[str, float]]) -> dict:
    """The goal's record: per model its group figures and how many meet the target; the best model; met or not.

    ``over == "each"``: the best has the most groups met, then the smallest worst figure. ``over == "median"``: the
    best meets the goal if any model does, then has the smallest median; the record adds ``metric``, ``over``,
    ``median``, and with ``beats`` the baseline's figures and the groups where the best does not beat it. The
    goal's ``scaling`` model and ``why`` evidence are recorded as ``scaling_model`` and ``why`` when declared."""
    rec = _judge_median(goal, per_model) if goal.over == "median" else _judge_each(goal, per_model)
    rec.update(declared_notes(goal))
    return rec


def declared_notes(goal: Goal) -> dict:
    """The goal's declared ``scaling_model`` and ``why`` (each only when set), as its record carries them."""
    return {k: v for k, v in (("scaling_model", goal.scaling), ("why", goal.why)) if v}


def _judge_each(goal: Goal, per_model: dict[str, dict[str, float]]) -> dict:
    base = per_model.get(goal.beats, {}) if goal.beats else {}

    def losses(figs: dict[str, float]) -> list[str]:
        return sorted(g for g, v in figs.items() if goal.beats and not (g in base and v < base[g]))

    def within(figs: dict[str, float]) -> int:  # groups within the target (no target: below the reference)
        if goal.target_pct is None:
            return len(figs) - len(losses(figs))
        return sum(v <= goal.target_pct for v in figs.values())

    def rank(m):
        figs = per_model[m]
        return (-within(figs), len(losses(figs)), max(figs.values(), default=float("inf")), m)

    models = {m: f for m, f in per_model.items() if f and m != goal.beats}
    best = min(models, key=rank) if models else None
    figs = models.get(best, {})
    need = goal.at_least if goal.at_least is not None else len(goal.groups or figs)
    met_n = within(figs)
    missing = [g for g in goal.groups if g not in figs]
    rec = {"goal": goal.label, "scheme": goal.scheme, "target_pct": goal.target_pct, "need": need,
           "best_model": best, "figures": figs, "groups_met": met_n, "groups": len(figs), "missing": missing,
           "met": bool(best is not None and not missing and met_n >= need and not losses(figs)),
           "per_model": per_model}
    if goal.beats:
        rec.update(beats=goal.beats, baseline_figures=base, losses=losses(figs))
    return rec


def _judge_median(goal: Goal, per_model: dict[str, dict[str, float]]) -> dict:
    base = per_model.get(goal.beats, {}) if goal.beats else {}

    def losses(figs: dict[str, float]) -> list[str]:
        return sorted(g for g, v in figs.items() if goal.beats and not (g in base and v < base[g]))

    def meets(m: str) -> bool:
        figs = models[m]
        return (float(np.median(list(figs.values()))) <= goal.target_pct and not losses(figs)
                and not [g for g in goal.groups if g not in figs])

    models = {m: f for m, f in per_model.items() if f and m != goal.beats}
    best = min(models, key=lambda m: (not meets(m), float(np.median(list(models[m].values()))), m)) if models else None
    figs = models.get(best, {})
    missing = [g for g in goal.groups if g not in figs]
    rec = {"goal": goal.label, "scheme": goal.scheme, "target_pct": goal.target_pct, "need": len(goal.groups or figs),
           "best_model": best, "figures": figs, "groups_met": sum(v <= goal.target_pct for v in figs.values()),
           "groups": len(figs), "missing": missing, "met": bool(best is not None and meets(best)),
           "per_model": per_model, "metric": goal.metric, "over": goal.over,
           "median": float(np.median(list(figs.values()))) if figs else None}
    if goal.beats:
        rec.update(beats=goal.beats, baseline_figures=base, losses=losses(figs))
    return rec


def board_fold_figures(result: Result, goal: Goal) -> dict[str, float]:
    """Per-fold ``goal.metric`` in percent (times ``goal.percent``) of a board
    :class:`~kgpubench.results.result.Result`, restricted to the goal's groups."""
    out = {}
    for fold, rec in (result.folds or {}).items():
        v = rec.score(goal.metric)
        if v is not None and (not goal.groups or fold in goal.groups):
            out[str(fold)] = float(v) * goal.percent
    return out


def board_goal(task: Task, goal: Goal, results: Path) -> dict:
    """:func:`judge` on the committed board results of ``task`` (one of its goals) on the goal's scheme under
    ``results`` (every ``kind: model`` result with status ok; the reference oracle is not a candidate)."""
    per_model = {}
    for path in sorted((Path(results) / task.name / goal.scheme).glob("*.json")):
        result = read_record(read_result_json(path), where=str(path))
        if isinstance(result, Result) and result.status == "ok" and result.kind == "model":
            per_model[path.stem] = board_fold_figures(result, goal)
    return judge(goal, per_model)


# ----- the hindsight reference of a goal ---------------------------------------------------------------------


def newest_generation(rows: pa.Table, mask: np.ndarray) -> tuple[str, ...]:
    """The GPUs of ``rows[mask]`` of the newest generation: those with the highest ``gpu_compute_capability``
    (e.g. ``"9.0"``, compared as numbers; a GPU without one is never chosen), sorted."""
    names = np.asarray(rows["gpu_name"].to_pylist(), dtype=object)[mask]
    caps = np.asarray(rows["gpu_compute_capability"].to_pylist(), dtype=object)[mask]
    known = {str(n): tuple(int(p) for p in str(c).split(".")) for n, c in zip(names, caps) if c}
    top = max(known.values(), default=None)
    return tuple(sorted(n for n, c in known.items() if c == top))


def ideal_transfer(data: TaskData) -> dict[str, SingleFactorTransfer]:
    """:func:`kgpubench.tasks.roofline.ideal_single_factor_transfer` to every GPU of every evaluated fold of
    ``data``, from the newest generation (:func:`newest_generation`) of the GPUs of that fold's training rows: a
    hindsight reference (it chooses with the test labels), never a model."""
    gpu = np.asarray(data.rows["gpu_name"].to_pylist(), dtype=object)
    out = {}
    for fold in data.fold_names:
        test = data.folds == fold
        sources = newest_generation(data.rows, (data.folds != fold) & (data.folds != EXCLUDED))
        out.update(ideal_single_factor_transfer(data.X, data.y, gpu, test, sources))
    return out
