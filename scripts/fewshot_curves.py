"""Few-shot curves on the unseen-GPU scheme of a task, and its goal figures, as board extras.

For k = 0, 1, 2, 5, 10, 20, 50, 100, 200 (``--ks``) every held-out GPU reveals k of its rows (a fixed hashed order,
the same for every model) and each baseline is trained on the other GPUs' rows plus those k, then scored on the
GPU's remaining rows (:mod:`kgpubench.board.fewshot`). Baselines are our own files, run in this process (trusted
code, no sandbox), with one thread. ``--goals-out`` also writes the task's goals (``Task.goals``, declared with
the task): read from the committed board results (``--results``), or, for a goal computed from predictions, by
training each model on the goal's scheme (the task's training subsample rule) and predicting its test fold.
``--models ""`` runs no model: with ``--goals-out`` it writes only goals read from the board (autotune-config's).
``--add`` adds ``--models`` to the curves already in ``--out`` without recomputing the
others, refused unless the file's plan (the data's hashes, ks, caps, revealing order) is this run's.

    PYTHONPATH=. python scripts/fewshot_curves.py --data STORE --task T [--models median,lgbm,...] \
        --out leaderboard/results/T/fewshot.json --goals-out leaderboard/results/T/goals.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from kgpubench.board.baselines import planned_tasks
from kgpubench.board.fewshot import (
    KS,
    board_goal,
    curves_to_extend,
    fewshot_curve,
    ideal_transfer,
    judge,
    kept_metrics,
    plan_folds,
    plan_record,
)
from kgpubench.board.leaderboard import baseline_files
from kgpubench.errors import KgpubenchError, OptionError
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.models.evaluation import fit_predict, load_model_module, model_factory
from kgpubench.sandbox.limits import Limits
from kgpubench.tasks import get_task
from kgpubench.tasks.data import task_data, train_subsample
from kgpubench.tasks.goals import IDEAL_TRANSFER, grouped_mdape, grouped_rows
from kgpubench.tasks.splits import EXCLUDED

DEFAULT_MODELS = "median,lgbm"


def _write(path: Path, doc: dict) -> None:
    """Write ``doc`` as the board's extras JSON, atomically (a run stopped mid-write leaves the previous file)."""
    atomic_write_bytes(path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


def _num(v) -> str:
    return "—" if v is None else f"{v:.3g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="store holding the task's config")
    parser.add_argument("--task", required=True)
    parser.add_argument("--scheme", default="by-gpu")
    parser.add_argument("--models", default=DEFAULT_MODELS, help="baseline names (files under baselines/)")
    parser.add_argument("--goal-models", default=None,
                        help="baselines for goals computed from predictions (default: --models)")
    parser.add_argument("--ks", default=",".join(map(str, KS)))
    parser.add_argument("--max-train-rows", type=int, default=20_000,
                        help="cap on the other GPUs' training rows (under the task's own rule; 0: the task's rule "
                             "only, as on the board)")
    parser.add_argument("--max-test-rows", type=int, default=1_000,
                        help="scored rows per held-out GPU at most (a recommendation task: ignored, whole problems)")
    parser.add_argument("--min-test-rows", type=int, default=20,
                        help="a held-out GPU with fewer than max(k) + this many rows is skipped")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--add", action="store_true",
                        help="add --models to the curves already in --out, keeping (not recomputing) its other "
                             "models; refused unless the file's plan (data, ks, caps, revealing order) is this run's")
    parser.add_argument("--goals-out", type=Path, default=None)
    parser.add_argument("--results", type=Path, default=Path("leaderboard/results"),
                        help="committed board results (goals read from them)")
    args = parser.parse_args(argv)

    if args.add and args.out is None:
        raise OptionError("--add needs --out: the curves file to add the models to.")
    task = get_task(args.task)
    ks = tuple(int(k) for k in args.ks.split(","))
    files = {p.stem: p for p in baseline_files()}
    names = [m for m in args.models.split(",") if m]
    goal_names = [m for m in (args.goal_models or args.models).split(",") if m]
    modules = {m: load_model_module(files[m]) for m in dict.fromkeys(names + goal_names)}
    for m in modules:
        runs = [t.name for t in planned_tasks(files[m])]
        if task.name not in runs:
            raise OptionError(f"--models: baseline {m!r} does not run on task {task.name!r} (it runs on: "
                              f"{', '.join(runs)}; kgpubench/board/baselines.py RUNS_ON); drop it from --models.")
    factories = {m: model_factory(module, files[m]) for m, module in modules.items()}
    limits = Limits(threads=1)
    data = task_data(task, args.scheme, args.data)
    plans, skipped = plan_folds(data, ks, max_train_rows=args.max_train_rows, max_test_rows=args.max_test_rows,
                                min_test_rows=args.min_test_rows)
    doc = {"task": task.name, "metric": task.primary_metric, "metrics": list(kept_metrics(task)),
           "plan": plan_record(data, plans, skipped, ks, max_train_rows=args.max_train_rows,
                               max_test_rows=args.max_test_rows), "models": {}, "wall_s": {}}
    if args.add:  # before any model runs: a refused plan costs no training
        doc = curves_to_extend(args.out, doc, names)
    for m in names:
        t0 = time.perf_counter()
        doc["models"][m] = fewshot_curve(data, factories[m], plans, ks, model_name=m, limits=limits)
        doc["wall_s"][m] = round(time.perf_counter() - t0, 1)
        print(f"{m}: " + ", ".join(f"k={k} " + " ".join(f"{name} {_num(v)}" for name, v in r["median"].items())
                                   for k, r in doc["models"][m].items()) + f" ({doc['wall_s'][m]} s)", flush=True)
        if args.out:  # after each model: a long run that stops keeps the curves of the models done
            _write(args.out, doc)
    if args.out and not names:
        _write(args.out, doc)

    schemes: dict = {}
    predictions: dict = {}

    def predicted(gdata, fold: str, m: str) -> np.ndarray:
        """Model ``m`` trained on the other folds of ``gdata`` (the task's subsample rule, as on the board), its
        predictions of ``fold`` (computed once per scheme, fold and model: several goals may read them)."""
        if (gdata.scheme, fold, m) not in predictions:
            test = np.flatnonzero(gdata.folds == fold)
            train = np.flatnonzero((gdata.folds != fold) & (gdata.folds != EXCLUDED))
            train = train_subsample(task, gdata.rows, train)
            predictions[(gdata.scheme, fold, m)] = fit_predict(
                factories[m], task, gdata.X.iloc[train].reset_index(drop=True), gdata.y[train],
                gdata.X.iloc[test].reset_index(drop=True), limits=limits, model_name=m).predictions
        return predictions[(gdata.scheme, fold, m)]

    if args.goals_out:
        records = []
        for goal in task.goals:
            if goal.source == "board":
                rec = board_goal(task, goal, args.results)
            else:
                per_model: dict[str, dict[str, float]] = {}
                if goal.scheme not in schemes:
                    schemes[goal.scheme] = data if goal.scheme == args.scheme else task_data(task, goal.scheme,
                                                                                              args.data)
                gdata = schemes[goal.scheme]
                reference, keep = {}, None
                if goal.beats == IDEAL_TRANSFER:  # a hindsight reference, scored on the rows it covers
                    reference = ideal_transfer(gdata)
                    keep = np.zeros(gdata.rows.num_rows, dtype=bool)
                    for ref in reference.values():
                        keep[ref.covered] = True
                    per_model[IDEAL_TRANSFER] = {g: ref.mdape for g, ref in reference.items() if ref.mdape is not None}
                counts: dict[str, int] = dict.fromkeys(goal.groups, 0)
                for fold in gdata.fold_names:
                    test = np.flatnonzero(gdata.folds == fold)
                    rows = gdata.rows.take(test)
                    fold_keep = None if keep is None else keep[test]
                    here = grouped_rows(rows, gdata.y[test], goal, fold_keep)
                    if goal.groups and not any(here.get(g) for g in goal.groups):
                        continue  # no scored row of the goal's groups in this fold: no model need run on it
                    for g, n in here.items():
                        counts[g] = counts.get(g, 0) + n
                    for m in goal_names:
                        pred = predicted(gdata, fold, m)
                        per_model.setdefault(m, {}).update(
                            grouped_mdape(rows, gdata.y[test], pred, goal, fold_keep))
                rec = judge(goal, per_model)
                rec["rows"] = counts
                if reference:
                    rec["reference"] = {g: ref.record() for g, ref in reference.items()}
            records.append(rec)
            print(f"goal {goal.label}: best {rec['best_model']} {rec['figures']} -> "
                  f"{'met' if rec['met'] else 'not met'}", flush=True)
        metrics = sorted({g.metric for g in task.goals if g.source == "board"})
        note = "Figures of goals on a board scheme are the committed board results' per-fold median APE."
        if metrics and metrics != ["mdape"]:
            note = (f"Figures of goals on a board scheme are the committed board results' per-fold "
                    f"{', '.join(metrics)}, in percent.")
        if any(g.source == "predict" for g in task.goals):
            both = any(g.source == "board" for g in task.goals)
            lead = f"{note} The other goals' figures are" if both else "Figures"
            note = lead + (f" computed by `scripts/fewshot_curves.py` from the models {', '.join(goal_names)}, "
                           "each trained on the goal's scheme with the task's training subsample rule (as on the "
                           "board) and scored on its test fold, grouped as the goal says.")
            ranged = [g for g in task.goals if g.target_range is not None]
            if ranged:
                note += (" A goal on a range of the measured time scores only the test rows whose measured time "
                         "lies in it (the rows split after the run, an evaluation stratum, never a feature); "
                         "`rows` counts them per group, and a group with none has no figure.")
        if any(g.beats == IDEAL_TRANSFER for g in task.goals):
            note += (f" `{IDEAL_TRANSFER}` is a hindsight reference, not a model (never a candidate, not in "
                     "baselines/ nor predict): each test row's same workload (every non-GPU input: shape, dtype, "
                     "framework, kernel source) measured on a training GPU of the newest training generation, its "
                     "time scaled by the ratio of one catalogue figure (the dtype's dense tensor peak, memory "
                     "bandwidth, fp32 peak, or SM count x clock; time proportional to 1 / figure), the source GPU and "
                     "figure chosen per test GPU with that GPU's labels (the lowest median APE: the best any "
                     "single-factor transfer could do; kgpubench.tasks.roofline.ideal_single_factor_transfer). "
                     "Rows without a same-workload source are left out of that goal for every model; its figures "
                     "are on the rows the reference covers.")
        _write(args.goals_out, {"task": task.name, "goals": records, "note": note})
    return 0


def cli(argv: list[str] | None = None) -> int:
    """:func:`main`, with an error kgpubench raises on purpose as one line on stderr and its exit status."""
    try:
        return main(argv)
    except KgpubenchError as exc:
        print(f"fewshot_curves.py: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(cli())
