"""Few-shot curves on a held-out GPU, and the goal figures the board reports against.

For a task with a leave-one-GPU-out scheme (a ``column`` scheme on ``gpu_name``, e.g. ``by-gpu``), each held-out
GPU's rows are put in a fixed order, ``hashed_order(row_ids, f"{task}-fewshot")`` (the same for every model). At
``k`` the first ``k`` of them are *revealed*: they join the training rows of every other GPU. The scored rows are
the held-out GPU's rows after the first ``max(ks)`` in that order (the same rows at every ``k``, so the curve
compares like with like, and never a revealed row), at most ``max_test_rows`` of them (the next ones in the same
hashed order). The other GPUs' rows keep the task's training subsample rule (``max_train_rows``, ordered by
``hashed_order(row_ids, task.name)`` as the board does), capped further by ``max_train_rows`` here when given
(recorded). A GPU with fewer than ``max(ks) + MIN_TEST_ROWS`` rows is skipped (recorded).

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
import math
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
from kgpubench.tasks.data import TaskData, hashed_order
from kgpubench.tasks.intervals import median_interval
from kgpubench.tasks.metrics import METRICS, mdape
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
    train_rank = hashed_order(ids, data.task.name) if cap else None
    plans, skipped = [], {}
    for fold in (data.fold_names if folds is None else folds):
        held = np.flatnonzero(data.folds == fold)
        if held.size < kmax + min_test_rows:
            skipped[fold] = f"{held.size} rows, fewer than max(k) + {min_test_rows} = {kmax + min_test_rows}"
            continue
        other = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))
        if cap and other.size > cap:
            other = np.sort(other[np.argsort(train_rank[other], kind="mergesort")[:cap]])
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
                       "order": f"sha256('{data.task.name}' + row_id) over the other GPUs' rows"},
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


# ----- goals -------------------------------------------------------------------------------------------------
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
    :data:`IDEAL_TRANSFER` names the hindsight reference :func:`ideal_transfer` instead of a model (a ``"predict"``
    goal; every model is then scored on the rows the reference covers). ``target_pct`` None: no absolute target,
    met by beating ``beats`` on every group.
    """

    task: str
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


# the hindsight reference a goal's ``beats`` may name (:func:`ideal_transfer`): not a model, never a candidate
IDEAL_TRANSFER = "ideal_transfer"
UNSEEN = ("NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA A100 80GB PCIe")
# Evidence of what limits a goal, from the shipped data: an independent calibration at main 8300b4b
# (leave-one-GPU-out, hyper-parameters from the training GPUs only) and, for the LLM operators, the card's label floor.
OPERATOR_WHY = ("L4's sustained GEMM reaches 0.40 of its catalogue fp32 peak (training GPUs 0.61-0.97) and GEMM "
                "is 79 % of L4's rows; A100-80's conv2d (52 % of its rows) has no Ampere source in training; "
                "the same shape measured twice on one GPU agrees within about 1 %")
LABEL_FLOOR_WHY = ("the label floor: one GEMM measured by two or three frameworks differs by a median max/min of 1.38 "
                   "(B200: bf16 1.07, fp8 1.74, fp8_block 12.3, nvfp4 1.42; the card's figures:label_floor)")
# program-time's small and large programs (issue 43: "small and large programs apart"): a program is small on a GPU
# when its measured time there is under 0.1 ms, the launch-floor regime the evidence below names. The split is of the
# scored rows by their measured label after the run (a post-hoc stratification of the evaluation, never a feature):
# nothing known before a run separates that regime (KernelBench level 1 and 2 both hold many; input sizes overlap).
SMALL_PROGRAM_MS = 0.1
PROGRAM_GPUS = ("NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA L4")
PROGRAM_FLOOR_WHY = ("the host's launch floor: two set-ups with the same GPU (L40S) differ by a median 108 % under "
                     "0.1 ms and 30 % of H100 SXM rows are under 0.1 ms")
PROGRAM_L2_WHY = "H100 SXM's v0.2 rows were timed with L2 flushed, the other v0.2 GPU's were not"
PROGRAM_SCATTER_WHY = ("per-program scatter, not one speed factor per GPU: one time ratio from one training GPU "
                       "(the same program and compile mode; the ratio and the GPU chosen with the held-out GPU's own "
                       "labels, a hindsight reference) leaves L4's large rows at 19.8 % at best (from A10, on the 234 "
                       "of 430 it shares) and H100 SXM's v0.1 large rows at 16.3 % (A100-SXM4-40GB, 288 of 888)")
GOALS: tuple[Goal, ...] = (
    Goal("operator-latency", "NeuSight's split, per call: pooled median APE on each unseen GPU", "neusight", 10.0,
         source="predict", groups=UNSEEN, scaling="neusight_wave", why=OPERATOR_WHY),
    Goal("operator-latency", "NeuSight's split, per call: median APE of H100 bmm and of H100 linear", "neusight",
         15.0, source="predict", groups=("bmm", "linear"), group_by="operator",
         where=(("gpu_name", ("NVIDIA H100 80GB HBM3",)),), scaling="neusight_wave", why=OPERATOR_WHY),
    Goal("rodinia-time", "leave-one-GPU-out, without counters: per-GPU median APE on at least 7 of the 8 GPUs",
         "by-gpu", 10.0, at_least=7, scaling="kernel_scaling",
         why="the error is one speed factor per kernel per GPU that the catalogue's figures do not follow (within "
         "Kepler a kernel's clock-normalised time ranges 0.37-1.09; P100 runs bpnn about 6x faster than TITAN X on "
         "1.6x the bandwidth), while single-run labels agree with 10-run medians within 0.03-0.4 %"),
    Goal("program-time", "leave-one-GPU-out: median APE on H100 (both) and on L4", "by-gpu", 15.0,
         groups=PROGRAM_GPUS, scaling="program_floor", why=f"{PROGRAM_FLOOR_WHY}; {PROGRAM_L2_WHY}"),
    Goal("program-time", f"leave-one-GPU-out, large programs (measured ≥ {SMALL_PROGRAM_MS} ms on the held-out GPU, "
         "rows split after the run): median APE on H100 (both) and on L4", "by-gpu", 15.0, source="predict",
         groups=PROGRAM_GPUS, target_range=(SMALL_PROGRAM_MS, math.inf), scaling="program_floor",
         why=f"{PROGRAM_SCATTER_WHY}; {PROGRAM_L2_WHY}"),
    Goal("program-time", f"leave-one-GPU-out, small programs (measured < {SMALL_PROGRAM_MS} ms on the held-out GPU, "
         "rows split after the run): median APE on H100 (both) and on L4", "by-gpu", 15.0, source="predict",
         groups=PROGRAM_GPUS, target_range=(0.0, SMALL_PROGRAM_MS), scaling="program_floor",
         why=f"{PROGRAM_FLOOR_WHY}; H100 PCIe has no row under {SMALL_PROGRAM_MS} ms (its programs are v0.2, "
         "resized towards > 1 ms), so this line has no figure there"),
    Goal("autotune-config", "leave-one-GPU-out: median top-1 regret over the GPUs, and better than transfer on "
         "every GPU", "by-gpu", 10.0, metric="top1_regret", percent=100.0, over="median", beats="transfer",
         scaling="config_consensus",
         why="each GPU has 2-3 problems, and on near twins transfer already picks from the best possible source "
         "GPU, so a strict win on every GPU cannot be had there"),
    # The LLM operators: no model can agree with one stack's label better than the stacks agree with one another
    # (the card's label floor: the median max/min time of one GEMM across the three frameworks).
    Goal("gemm-latency", "next generation (trained on Ampere, Ada and Hopper): median APE on each Blackwell GPU "
         "(the card gives the label floor across stacks)", "next-generation", 15.0, source="predict",
         scaling="roofline_transfer", why=LABEL_FLOOR_WHY),
    Goal("gemm-latency", "next generation (Hopper to Blackwell, issue 43): median APE below the ideal single-factor "
         "transfer from the newest training generation on each Blackwell GPU, on the rows it covers",
         "next-generation", None, source="predict", beats=IDEAL_TRANSFER, scaling="gemm_waves"),
    Goal("gemm-latency", "leave-one-GPU-out: median APE on each GPU", "by-gpu", 15.0, scaling="roofline_transfer",
         why=LABEL_FLOOR_WHY),
    Goal("attention-latency", "leave-one-GPU-out: median APE on each GPU", "by-gpu", 15.0,
         scaling="roofline_transfer",
         why="one label per framework, whose kernels differ (for GEMM, " + LABEL_FLOOR_WHY.removeprefix("the ") + ")"),
    Goal("conv-time", "leave-one-GPU-out over the AMD GPUs: median APE on each GPU", "by-gpu", 15.0,
         scaling="roofline_transfer"),
    Goal("conv-solver", "leave-one-GPU-out: median top-1 regret over the AMD GPUs, and better than transfer on "
         "every GPU", "by-gpu", 10.0, metric="top1_regret", percent=100.0, over="median", beats="transfer",
         scaling="solver_consensus"),
)


def goals_of(task: Task | str) -> tuple[Goal, ...]:
    """The goals of ``task`` (a :class:`~kgpubench.tasks.Task` or its name: goals are declared by task name)."""
    name = task.name if isinstance(task, Task) else task
    return tuple(g for g in GOALS if g.task == name)


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


def board_goal(goal: Goal, results: Path) -> dict:
    """:func:`judge` on the committed board results of the goal's task and scheme under ``results`` (every
    ``kind: model`` result with status ok; the reference oracle is not a candidate)."""
    per_model = {}
    for path in sorted((Path(results) / goal.task / goal.scheme).glob("*.json")):
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
