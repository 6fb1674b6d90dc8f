"""Train and score a model on a task, fold by fold, and build its result record.

A model is a Python file exposing the factory ``make_model(task, seed)`` that returns an object with
``fit(X, y)`` and ``predict(X)`` (a scikit-learn estimator): ``X`` is a pandas DataFrame of the task's
declared features, ``y`` the target. See ``leaderboard/SUBMITTING.md``.

Strategies that measure the test problem instead of predicting it (seed 001's Profiling, Exhausting) set
``uses_measurements = True``; on a task with a measurement oracle (``npb-tpb``, see
:mod:`kgpubench.tasks.npb`) they are called as ``predict(X, problems=...)`` and every model's fold scores
carry ``measurements``, the mean number of distinct assignments measured per test problem (0 for models
that only learn from the training folds).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from kgpubench.errors import DataFileNotFoundError, KgpubenchError
from kgpubench.splits import evaluated_folds, fold_column, split_sha256
from kgpubench.tasks import Task, feature_frame, get_task, task_rows
from kgpubench.tasks.scoring import score_fold, with_scoring_columns

FACTORY = "make_model"
RESULT_FORMAT = 1
SAMPLE_POINTS = 400
PACKAGES = ("numpy", "pandas", "pyarrow", "scikit-learn", "scipy", "lightgbm", "xgboost")


class SubmissionError(KgpubenchError, ValueError):
    """A model file that cannot be evaluated: no factory, bad predictions, a crash, a limit hit."""


class NoDataError(KgpubenchError, LookupError):
    """The task's config has no usable rows in the store."""


def file_sha256(path: Path) -> str:
    """sha256 of a model (or predictions) file, as the store hashes its parts."""
    from kgpubench.store import sha256_file

    return sha256_file(Path(path))


def load_model_module(path: Path | str) -> ModuleType:
    """Import a model file as a fresh module (errors name the file and the fix)."""
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such model file; pass the path of a .py file.")
    name = f"kgpubench_model_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a user's module may raise anything on import
        sys.modules.pop(name, None)
        raise SubmissionError(f"{path}: importing the model failed ({type(exc).__name__}: {exc}).") from exc
    return module


def model_factory(module: ModuleType, path: Path | str = "<model>") -> Callable[..., Any]:
    """The module's ``make_model`` (error when missing or not callable)."""
    factory = getattr(module, FACTORY, None)
    if not callable(factory):
        raise SubmissionError(
            f"{path}: no callable `{FACTORY}(task, seed)` found; a model file must define it and return an "
            "object with fit(X, y) and predict(X) (see leaderboard/SUBMITTING.md).")
    return factory


def model_tasks(module: ModuleType) -> tuple[str, ...]:
    """The tasks a model file says it applies to (its optional ``TASKS``); empty means any."""
    return tuple(getattr(module, "TASKS", ()) or ())


def hashed_order(row_ids: list[str], salt: str) -> np.ndarray:
    """Rank of every row under ``sha256(salt + row_id)``: a fixed order for deterministic subsamples."""
    keys = [hashlib.sha256(f"{salt}\x1f{r}".encode()).digest()[:8] for r in row_ids]
    order = np.argsort(np.asarray(keys, dtype="S8"), kind="mergesort")
    rank = np.empty(len(row_ids), dtype=np.int64)
    rank[order] = np.arange(len(row_ids))
    return rank


@dataclass
class TaskData:
    """A task's usable rows with their features, target and folds under one scheme."""

    task: Task
    scheme: str
    rows: pa.Table
    X: Any
    y: np.ndarray
    folds: np.ndarray
    dataset: dict = field(default_factory=dict)

    @property
    def fold_names(self) -> list[str]:
        return evaluated_folds(self.scheme, self.folds)


def task_data(task: Task | str, scheme: str, data_dir: Path | str | None = None,
              table: pa.Table | None = None) -> TaskData:
    """Load the task's rows from a store (default: the packaged data) and assign folds."""
    from kgpubench.resources import default_data_dir
    from kgpubench.store import Store

    task = get_task(task) if isinstance(task, str) else task
    store = Store(data_dir or default_data_dir())
    if table is None:
        table = store.read(task.config)
    rows = with_scoring_columns(task, table, task_rows(task, table))
    if rows.num_rows == 0:
        raise NoDataError(f"task {task.name!r}: the {task.config!r} config of store {store.path} has no usable rows "
                          "(status ok with a target); collect or merge data first (`kgpubench info`).")
    dataset = {"config": task.config, "version": store.version, "manifest_sha256": store.manifest_sha256(),
               "rows": rows.num_rows}
    return TaskData(task, scheme, rows, feature_frame(task, rows),
                    rows[task.target].to_numpy(zero_copy_only=False).astype(np.float64),
                    fold_column(task, rows, scheme), dataset)


def run_folds(data: TaskData, factory: Callable[..., Any], *, seed: int = 0, folds: list[str] | None = None,
              model_name: str = "model") -> tuple[dict, list[tuple[float, float]]]:
    """Fit and score the model on each fold; returns per-fold records and (measured, predicted) samples."""
    task = data.task
    wanted = data.fold_names if folds is None else [str(f) for f in folds]
    for f in wanted:
        if f not in data.fold_names:
            from kgpubench.errors import unknown_name

            raise unknown_name(f"fold of scheme {data.scheme!r}", f, data.fold_names)
    ids = data.rows["row_id"].to_pylist()
    rank = hashed_order(ids, task.name) if task.max_train_rows else None
    sample_rank = hashed_order(ids, "samples")
    out, samples = {}, []
    for fold in wanted:
        test = np.flatnonzero(data.folds == fold)
        train = np.flatnonzero(data.folds != fold)
        if train.size == 0:  # e.g. by-kernel with a single kernel: nothing to learn from
            continue
        if rank is not None and train.size > task.max_train_rows:
            train = np.sort(train[np.argsort(rank[train], kind="mergesort")[: task.max_train_rows]])
        model = factory(task=task, seed=seed)
        model.fit(data.X.iloc[train].reset_index(drop=True), data.y[train])
        pred, measured = _predict(task, model, data, test, model_name)
        predicts_target = bool(getattr(model, "predicts_target", True))
        scores = score_fold(task, data.rows.take(test), data.y[test], pred, predicts_target=predicts_target)
        if measured is not None:
            scores["measurements"] = float(np.mean(measured)) if measured else 0.0
        out[fold] = {"n_train": int(train.size), "n_test": int(test.size), "scores": scores}
        if predicts_target:
            keep = test[np.argsort(sample_rank[test], kind="mergesort")[: SAMPLE_POINTS // max(1, len(wanted))]]
            pos = {t: i for i, t in enumerate(test)}
            samples += [(float(data.y[k]), float(pred[pos[k]])) for k in keep]
    if not out:
        raise NoDataError(f"task {task.name!r} scheme {data.scheme!r}: every fold has an empty training set "
                          f"(folds {wanted}); the scheme needs at least two groups in the data.")
    return out, samples


MEASURING_TASKS = ("npb-tpb",)


def _predict(task: Task, model: Any, data: TaskData, test: np.ndarray, model_name: str
             ) -> tuple[np.ndarray, list[int] | None]:
    """The model's checked outputs on the test rows, and, on a task with a measurement oracle, the distinct
    assignments it measured per test problem (zeros for a model that does not measure)."""
    X = data.X.iloc[test].reset_index(drop=True)
    measures = bool(getattr(model, "uses_measurements", False))
    if task.name not in MEASURING_TASKS:
        if measures:
            raise SubmissionError(f"{model_name}: sets uses_measurements, but task {task.name!r} has no measurement "
                                  f"oracle (tasks with one: {', '.join(MEASURING_TASKS)}).")
        return check_predictions(model.predict(X), test.size, model_name), None
    if not measures:
        return check_predictions(model.predict(X), test.size, model_name), []
    from kgpubench.tasks.npb import npb_problems

    problems = npb_problems(task, data.rows.take(test), data.y[test])
    pred = check_predictions(model.predict(X, problems=problems), test.size, model_name)
    return pred, [p.measurements for p in problems]


def check_predictions(pred: Any, n: int, model_name: str = "model") -> np.ndarray:
    """Predictions as a finite float vector of length ``n`` (else a clear error)."""
    try:
        arr = np.asarray(pred, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SubmissionError(f"{model_name}: predict() returned {type(pred).__name__}, not numbers ({exc}).") from None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.shape != (n,):
        raise SubmissionError(f"{model_name}: predict() returned shape {arr.shape}, expected ({n},): one value per "
                              "test row.")
    if not np.all(np.isfinite(arr)):
        raise SubmissionError(f"{model_name}: predict() returned {int(np.sum(~np.isfinite(arr)))} NaN/inf value(s); "
                              "every row needs a finite prediction.")
    return arr


def aggregate(folds: dict) -> dict:
    """Mean and population std over folds of every score (folds where a score is None are skipped)."""
    names = sorted({m for f in folds.values() for m in f["scores"]})
    out = {}
    for m in names:
        vals = [f["scores"][m] for f in folds.values() if f["scores"].get(m) is not None]
        out[m] = {"mean": float(np.mean(vals)), "std": float(np.std(vals)), "folds": len(vals)} if vals else None
    return out


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in ("kgpubench", *PACKAGES):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def evaluate(model_path: Path | str, task: str, scheme: str | None = None, *, folds: list[str] | None = None,
             data_dir: Path | str | None = None, seed: int = 0, data: TaskData | None = None,
             limits: Any = None, trust: bool = False) -> dict:
    """Evaluate a model file on a task under one scheme; returns the result record (see :func:`result_json`).

    Parameters
    ----------
    model_path : path
        A file defining ``make_model(task, seed)``.
    task : str
        Task name.
    scheme : str, optional
        Split scheme (default: the task's first scheme).
    folds : list of str, optional
        Only these folds (default: every test fold).
    data_dir : path, optional
        Another store (default: the packaged data).
    seed : int
        Seed handed to the factory.
    limits : kgpubench.sandbox.Limits, optional
        Time, memory and threads of the sandboxed model (default: ``Limits()``).
    trust : bool
        Run the model unisolated where the kernel cannot isolate it (else that is refused).

    The model's code runs in a :class:`kgpubench.sandbox.ModelSession` (one child process for every fold); this
    process keeps the test targets, scores, and hashes the model file as sent and the predictions as received.
    """
    from kgpubench.sandbox import ModelSession

    start = time.perf_counter_ns()
    the_task = get_task(task)
    scheme = scheme or the_task.schemes[0]
    path = Path(model_path)
    session = ModelSession(path, the_task, seed=seed, limits=limits, trust=trust, hide=[data_dir])
    if data is None:
        data = task_data(the_task, scheme, data_dir)
    with session:
        fold_records, samples = run_folds(data, session.factory, seed=seed, folds=folds, model_name=path.name)
    return {
        "format": RESULT_FORMAT,
        "task": the_task.name,
        "scheme": scheme,
        "model": path.stem,
        "model_file": _model_label(path),
        "model_sha256": session.model_sha256,
        "predictions_sha256": session.predictions_sha256,
        "dataset": data.dataset,
        "split_sha256": split_sha256(the_task.name, scheme),
        "train_subsample": the_task.max_train_rows,
        "folds": fold_records,
        "aggregate": aggregate(fold_records),
        "samples": samples,
        "seed": seed,
        "packages": package_versions(),
        "date": _dt.date.today().isoformat(),
        "wall_time_s": (time.perf_counter_ns() - start) / 1e9,
    }


def _model_label(path: Path) -> str:
    from kgpubench.leaderboard import model_label

    return model_label(path)


def round_floats(obj: Any, digits: int = 6) -> Any:
    """Round every float to ``digits`` significant digits, recursively (ints and strings unchanged)."""
    if isinstance(obj, float):
        return float(f"{obj:.{digits}g}") if np.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): round_floats(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [round_floats(v, digits) for v in obj]
    return obj


def result_json(result: dict) -> str:
    """The result as JSON: sorted keys, floats rounded to 6 significant digits, trailing newline."""
    import json

    return json.dumps(round_floats(result), indent=1, sort_keys=True) + "\n"
