"""Train and score a model on a task, fold by fold, and build its result record.

A model is a Python file exposing the factory ``make_model(task, seed)`` that returns an object with
``fit(X, y)`` and ``predict(X)`` (a scikit-learn estimator): ``X`` is a pandas DataFrame of the task's
declared features, ``y`` the target. See ``leaderboard/SUBMITTING.md``.

Model code runs in one place only, :func:`fit_predict` (one fold: ``X_train``, ``y_train``, ``X_test`` in,
predictions out), under :class:`~kgpubench.sandbox.limits.Limits` (threads pinned for OpenMP, BLAS, LightGBM and
XGBoost). Everything else here is scoring and the result record, which never runs model code. The task data it
runs on (rows, features, target, folds and the hashes a result records) come from :mod:`kgpubench.tasks.data`.

Strategies that measure the test problem instead of predicting it (seed 001's Profiling, Exhausting) set
``uses_measurements = True``; on a task that declares a measurement oracle (``Task.oracle``; ``npb-tpb``, see
:mod:`kgpubench.tasks.npb`) they are called as ``predict(X, problems=...)`` and every model's fold scores
carry ``measurements``, the mean number of distinct assignments measured per test problem (0 for models
that only learn from the training folds).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa

from kgpubench.errors import NoDataError, SubmissionError, unknown_name
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.results.records import Aggregate, FoldScores
from kgpubench.results.result import Result, model_label, round_floats
from kgpubench.sandbox.checks import checked_predictions, not_numbers, refusal
from kgpubench.sandbox.limits import THREAD_ENV, Limits
from kgpubench.sandbox.model_file import module_from_source, read_model_file
from kgpubench.sandbox.session import ModelSession
from kgpubench.store.store import sha256_file
from kgpubench.tasks import Task, as_task, list_tasks
from kgpubench.tasks.data import TaskData, scheme_problem, subsample_rank, task_data, train_subsample
from kgpubench.tasks.intervals import percentile_interval
from kgpubench.tasks.metrics import METRICS
from kgpubench.tasks.reference import ORACLE
from kgpubench.tasks.scoring import oracle_of, problem_choices, score_fold
from kgpubench.tasks.splits import EXCLUDED

FACTORY = "make_model"
SAMPLE_POINTS = 400


@contextlib.contextmanager
def pinned(limits: Limits) -> Iterator[None]:
    """Apply ``limits``' threads in this process for the duration (:data:`~kgpubench.sandbox.limits.THREAD_ENV`
    and threadpoolctl), then restore. LightGBM and XGBoost baselines read the count through
    :func:`kgpubench.tasks.preprocess.thread_count`."""
    from threadpoolctl import threadpool_limits

    saved = {k: os.environ.get(k) for k in THREAD_ENV}
    os.environ.update(limits.env())
    try:
        with threadpool_limits(limits=int(limits.threads)):
            yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def file_sha256(path: Path) -> str:
    """sha256 of a model (or predictions) file, as the store hashes its parts."""
    return sha256_file(Path(path))


def load_model_module(path: Path | str) -> ModuleType:
    """Import a model file as a fresh module, in this process: trusted code only (the board runs model code in
    the sandbox). Read as the sandbox reads it (:func:`kgpubench.sandbox.model_file.read_model_file`); errors
    name the file and the fix."""
    model = read_model_file(path)
    path = model.path
    name = f"kgpubench_model_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    try:
        return module_from_source(name, model.source, str(path))
    except Exception as exc:  # a user's module may raise anything on import
        sys.modules.pop(name, None)
        raise SubmissionError(f"{path}: importing the model failed ({type(exc).__name__}: {exc}).") from exc


def model_factory(module: ModuleType, path: Path | str = "<model>") -> Callable[..., Any]:
    """The module's ``make_model`` (error when missing or not callable)."""
    factory = getattr(module, FACTORY, None)
    if not callable(factory):
        raise SubmissionError(
            f"{path}: no callable `{FACTORY}(task, seed)` found; a model file must define it and return an "
            "object with fit(X, y) and predict(X) (see leaderboard/SUBMITTING.md).")
    return factory


# ----- running model code ------------------------------------------------------------------------------------
@dataclass
class FoldOutput:
    """What :func:`fit_predict` returns for one fold."""

    predictions: np.ndarray
    predicts_target: bool
    measurements: list[int] | None


def fit_predict(factory: Callable[..., Any], task: Task, X_train, y_train: np.ndarray, X_test, *, seed: int = 0,
                limits: Limits | None = None, problems: list | None = None,
                model_name: str = "model") -> FoldOutput:
    """Build the model with ``factory(task=task, seed=seed)``, fit it on the training rows and predict the test
    rows, under ``limits``. The only place model code runs.

    ``problems`` (:class:`kgpubench.tasks.npb.NpbProblem`, one per test problem) is the measurement oracle a
    measuring strategy receives; only tasks that declare an ``oracle`` pass one. Any exception the model
    raises becomes a :class:`SubmissionError` naming the model and the step; predictions are checked by
    :func:`kgpubench.sandbox.checks.checked_predictions`, as the sandbox checks them.
    """
    limits = limits or Limits()
    step = "make_model"
    try:
        with pinned(limits):
            model = factory(task=task, seed=seed)
            step = "fit"
            model.fit(X_train, y_train)
            measures = bool(getattr(model, "uses_measurements", False))
            predicts_target = bool(getattr(model, "predicts_target", True))
            step = "predict"
            if measures:
                if problems is None:
                    raise SubmissionError(
                        f"{model_name}: sets uses_measurements, but task {task.name!r} has no measurement oracle "
                        f"(tasks with one: {', '.join(t.name for t in list_tasks() if t.measures)}).")
                raw = model.predict(X_test, problems=problems)
            else:
                raw = model.predict(X_test)
            arr = np.asarray(raw)  # as the sandboxed child converts what predict() returned
    except SubmissionError:
        raise
    except Exception as exc:  # model code may raise anything; it becomes one line on the board
        raise SubmissionError(f"{model_name}: {step}() raised {type(exc).__name__}: {exc}") from exc
    why = not_numbers(raw, arr)
    if why:
        raise refusal(model_name, why, len(X_test))
    pred = checked_predictions(arr, len(X_test), model_name)
    measured = None
    if task.measures:
        measured = [p.measurements for p in problems] if (measures and problems is not None) else []
    return FoldOutput(pred, predicts_target, measured)


def run_folds(data: TaskData, factory: Callable[..., Any], *, seed: int = 0, folds: list[str] | None = None,
              model_name: str = "model", limits: Limits | None = None,
              oracle: bool = False) -> tuple[dict, list[tuple[float, float]]]:
    """Fit and score the model on each fold; returns per-fold records and (measured, predicted) samples.

    ``oracle``: instead of a model, predict every test row's measured target (the upper bound row).
    """
    task = data.task
    wanted = data.fold_names if folds is None else [str(f) for f in folds]
    for f in wanted:
        if f not in data.fold_names:
            raise unknown_name(f"fold of scheme {data.scheme!r}", f, data.fold_names)
    rank = subsample_rank(task, data.rows) if task.max_train_rows else None
    sample_rank = data.sample_rank
    out, samples = {}, []
    for fold in wanted:
        test = np.flatnonzero(data.folds == fold)
        train = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))  # excluded: in no training set
        if train.size == 0:  # e.g. by-kernel with a single kernel: nothing to learn from
            continue
        train = train_subsample(task, data.rows, train, rank=rank)
        test_rows = data.rows.take(pa.array(test))
        if oracle:
            result = FoldOutput(data.y[test].copy(), True, [] if task.measures else None)
        else:
            oracle_problems = oracle_of(task)
            problems = None if oracle_problems is None else oracle_problems(task, test_rows, data.y[test])
            result = fit_predict(factory, task, data.X.iloc[train].reset_index(drop=True), data.y[train],
                                 data.X.iloc[test].reset_index(drop=True), seed=seed, limits=limits,
                                 problems=problems, model_name=model_name)
        pred = result.predictions
        scores = score_fold(task, test_rows, data.y[test], pred, predicts_target=result.predicts_target)
        if result.measurements is not None:
            scores["measurements"] = float(np.mean(result.measurements)) if result.measurements else 0.0
        rec = {"n_train": int(train.size), "n_test": int(test.size), "scores": scores}
        if task.record_problems:
            rec["problems"] = problem_choices(task, test_rows, data.y[test], pred)
        out[fold] = rec
        if result.predicts_target:
            keep = test[np.argsort(sample_rank[test], kind="mergesort")[: SAMPLE_POINTS // max(1, len(wanted))]]
            pos = {t: i for i, t in enumerate(test)}
            samples += [(float(data.y[k]), float(pred[pos[k]])) for k in keep]
    if not out:
        why = scheme_problem(data) or "no fold has training rows"
        raise NoDataError(f"task {task.name!r} scheme {data.scheme!r}: {why} (folds {wanted}).")
    return out, samples


def aggregate(folds: Mapping[str, FoldScores | dict]) -> dict[str, Aggregate | None]:
    """Mean, population std and median over folds of every score (folds where a score is None are skipped), and
    ``ci95``: the 95 % percentile bootstrap interval of the mean over the folds in name order, the one the board
    and the summary print (:func:`kgpubench.board.ranking.interval`, the same draw; None under two folds), drawn
    from the fold scores as the result file stores them (rounded), so that the board's recomputation equals it.
    ``folds``: :class:`~kgpubench.results.records.FoldScores`, or the plain fold records :func:`run_folds` returns."""
    scores = {k: (f.scores if isinstance(f, FoldScores) else f["scores"]) for k, f in folds.items()}
    names = sorted({m for s in scores.values() for m in s})
    stored = round_floats({k: {"scores": s} for k, s in scores.items()})
    out: dict[str, Aggregate | None] = {}
    for m in names:
        vals = [s[m] for s in scores.values() if s.get(m) is not None]
        ci = fold_interval(stored, m)
        out[m] = (Aggregate(mean=float(np.mean(vals)), std=float(np.std(vals)), median=float(np.median(vals)),
                            folds=len(vals), ci95=None if ci is None else (ci[0], ci[1])) if vals else None)
    return out


def fold_interval(folds: dict, metric: str) -> list[float] | None:
    """The 95 % bootstrap interval of ``metric``'s mean over ``folds`` (taken in fold-name order, finite numbers
    only, as :func:`kgpubench.board.ranking.fold_values` takes them), or None for fewer than two."""
    vals = []
    for name in sorted(folds):
        v = ((folds[name] or {}).get("scores") or {}).get(metric)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v):
            vals.append(float(v))
    ci = percentile_interval(vals, np.mean)
    return None if ci is None else [ci[0], ci[1]]


def evaluate(model_path: Path | str, task: Task | str, scheme: str | None = None, *,
             folds: list[str] | None = None, data_dir: Path | str | None = None, seed: int = 0,
             data: TaskData | None = None, limits: Limits | None = None, trust: bool = False,
             predictions: list | None = None) -> Result:
    """Evaluate a model file on a task under one scheme; returns its :class:`~kgpubench.results.result.Result`
    (written with :meth:`~kgpubench.results.result.Result.to_json`).

    Parameters
    ----------
    model_path : path
        A file defining ``make_model(task, seed)``, or ``"oracle"`` for the upper-bound reference (every
        test row's measured target as its prediction).
    task : Task or str
        The task (a name is looked up once, here).
    scheme : str, optional
        Split scheme (default: the task's first scheme).
    folds : list of str, optional
        Only these folds (default: every test fold). For ``by-gpu``, any GPU of the data.
    data_dir : path, optional
        Another store (default: the packaged data).
    seed : int
        Seed handed to the factory.
    limits : kgpubench.sandbox.limits.Limits, optional
        Threads (default: one), and for the sandbox time, memory, processes, disk and output.
    trust : bool
        Run the model unisolated where the kernel cannot isolate it (else that is refused).
    predictions : list, optional
        When given, every evaluated fold's checked predictions (float64 arrays, in fold order: what
        ``predictions_sha256`` hashes, :func:`kgpubench.sandbox.session.predictions_sha256`) are appended to it;
        nothing for the oracle.

    The model's code runs in a :class:`kgpubench.sandbox.session.ModelSession` (a fresh child process per fold); this
    process keeps the test targets, scores, and hashes the model file as sent and the predictions as received.
    """
    start = time.perf_counter_ns()
    cpu_start = time.process_time()
    the_task = as_task(task)
    scheme = scheme or the_task.schemes[0]
    limits = limits or Limits()
    oracle = ORACLE.is_oracle(model_path)
    session = None
    if oracle:
        name = label = ORACLE.name
    else:
        path = Path(model_path)
        name, label = path.stem, _model_label(path)
        session = ModelSession(path, the_task, seed=seed, limits=limits, trust=trust, hide=[data_dir])
    if data is None:
        data = task_data(the_task, scheme, data_dir)
    if session is None:
        fold_records, samples = run_folds(data, None, seed=seed, folds=folds, model_name=name, limits=limits,
                                          oracle=True)
    else:
        with session:
            fold_records, samples = run_folds(data, session.factory, seed=seed, folds=folds, model_name=name,
                                              limits=limits)
        if predictions is not None:
            predictions.extend(session.predictions)
    result = Result.new(
        status="ok", task=the_task.name, scheme=scheme, kind="reference" if oracle else "model", model=name,
        model_file=label, model_sha256=session.model_sha256 if session else None,
        predictions_sha256=session.predictions_sha256 if session else None, dataset=data.dataset,
        split_sha256=data.split_sha256, train_subsample=the_task.max_train_rows, folds=fold_records,
        aggregate=aggregate(fold_records), samples=[] if oracle else samples, seed=seed,
        limits={"threads": limits.threads}, wall_time_s=(time.perf_counter_ns() - start) / 1e9,
        cpu_time_s=time.process_time() - cpu_start + (session.cpu_s if session else 0.0),
    )
    if session is not None and len(session.predictions) == len(fold_records):  # in fold order, as run
        attach_predictions(result, dict(zip(fold_records, session.predictions)))
    return result


def failure_record(model_path: Path | str, task: Task, scheme: str, message: str, *, data: TaskData | None = None,
                   seed: int = 0, limits: Limits | None = None) -> Result:
    """The :class:`~kgpubench.results.result.Result` of a model that failed on this task and scheme (the board lists
    it with the first line of ``message``)."""
    path = Path(model_path)
    return Result.new(
        status="failed", task=task.name, scheme=scheme, kind="model", model=path.stem, model_file=_model_label(path),
        model_sha256=file_sha256(path) if path.is_file() else None,
        dataset=data.dataset if data is not None else {}, split_sha256=data.split_sha256 if data else None,
        message=str(message).splitlines()[0][:500], folds={}, aggregate={}, samples=[], seed=seed,
        limits={"threads": (limits or Limits()).threads}, wall_time_s=0.0,
    )


_model_label = model_label


# ----- a result's predictions: written beside it, and every score recomputed from them before it is trusted ----
PREDICTIONS_SUFFIX = ".predictions.npz"
# The biggest predictions file read back: 8 bytes a test row, compressed; a board task has at most millions.
PREDICTIONS_MAX_BYTES = 256 << 20
# Recomputed scores must equal the recorded ones up to the result file's rounding (6 significant digits).
RESCORE_REL_TOL = 1e-5
# Scores that are not a function of the predictions and the data (the count of a strategy's measurements).
NOT_RESCORED = frozenset({"measurements"})


def predictions_path(result_path: Path | str) -> Path:
    """The predictions file beside a result file (``NAME.json`` -> ``NAME.predictions.npz``)."""
    path = Path(result_path)
    return path.with_name(path.name.removesuffix(".json") + PREDICTIONS_SUFFIX)


def attach_predictions(result: Result, folds: dict[str, np.ndarray]) -> Result:
    """``result`` carrying each fold's predictions in memory, for its writer (:func:`store_predictions`); not a
    field, so not in its JSON, and lost by ``dataclasses.replace`` (re-attach)."""
    object.__setattr__(result, "_predictions", {str(k): np.asarray(v, dtype=np.float64) for k, v in folds.items()})
    return result


def attached_predictions(result: Result) -> dict[str, np.ndarray] | None:
    """The per-fold predictions :func:`attach_predictions` put on ``result`` (None when there are none)."""
    return result.__dict__.get("_predictions")


def _npz_bytes(folds: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    names = list(folds)
    np.savez_compressed(buf, folds=np.array(names, dtype=str),
                        **{f"f{i}": np.asarray(folds[n], dtype="<f8") for i, n in enumerate(names)})
    return buf.getvalue()


def store_predictions(result: Result, result_path: Path | str, *, overwrite: bool = True) -> Result:
    """Write the predictions attached to ``result`` beside ``result_path`` (:func:`predictions_path`) and return
    the result naming them (``predictions_file``: name and sha256), to be written after them. A result without
    attached predictions is returned as it is (its stale predictions file, if any, removed)."""
    folds = attached_predictions(result)
    path = predictions_path(result_path)
    if folds is None:
        if path.is_file() and not path.is_symlink():
            path.unlink()
        return result
    data = _npz_bytes(folds)
    atomic_write_bytes(path, data, overwrite=overwrite)
    named = {"name": path.name, "sha256": hashlib.sha256(data).hexdigest()}
    extra = {k: v for k, v in result.extra.items() if k != "predictions_file"}
    return attach_predictions(replace(result, extra={**extra, "predictions_file": named}), folds)


def read_predictions_file(result: Result, result_path: Path | str) -> dict[str, np.ndarray]:
    """The per-fold predictions a result file names (``predictions_file``), checked: a plain file beside it,
    under :data:`PREDICTIONS_MAX_BYTES`, with the recorded sha256, read without pickle. Raises ``ValueError``
    (one line) otherwise."""
    named = result.extra.get("predictions_file")
    path = predictions_path(result_path)
    if not isinstance(named, dict) or named.get("name") != path.name:
        raise ValueError(f"it names no predictions file ({path.name}) to recompute its scores from")
    if path.is_symlink() or not path.is_file():
        raise ValueError(f"its predictions file {path} is missing (or not a plain file)")
    if path.stat().st_size > PREDICTIONS_MAX_BYTES:
        raise ValueError(f"its predictions file {path} is larger than {PREDICTIONS_MAX_BYTES:,} bytes")
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != named.get("sha256"):
        raise ValueError(f"its predictions file {path} does not have the sha256 the result records")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            names = [str(n) for n in npz["folds"]]
            return {n: np.asarray(npz[f"f{i}"], dtype=np.float64) for i, n in enumerate(names)}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise ValueError(f"its predictions file {path} does not read ({type(exc).__name__})") from None


def rescore_problem(result: Result, result_path: Path | str, data: TaskData) -> str | None:
    """Why ``result``'s scores cannot be trusted, or None: each fold's scores recomputed from its predictions
    (the file beside it, :func:`read_predictions_file`; for the oracle reference, the measured targets) and
    ``data`` (the task's rows under the result's scheme) equal the recorded ones (:data:`RESCORE_REL_TOL`). A
    failed result has no score to check."""
    if result.status != "ok":
        return None
    task = data.task
    if result.kind == "reference":
        preds = None
    else:
        try:
            preds = read_predictions_file(result, result_path)
        except ValueError as exc:
            return str(exc)
    folds = result.folds or {}
    if preds is not None and set(preds) != set(folds):
        return f"its predictions cover folds {sorted(preds)}, its scores {sorted(folds)}"
    for fold, rec in folds.items():
        test = np.flatnonzero(data.folds == fold)
        pred = data.y[test] if preds is None else preds[fold]
        if test.size == 0 or pred.shape != (test.size,) or not np.all(np.isfinite(pred)):
            return f"fold {fold}: {pred.size} predictions for {test.size} test rows"
        recorded = rec.scores
        row_scores = [recorded.get(m) for m in task.metrics if METRICS[m].scope == "row"]
        predicts_target = not row_scores or any(v is not None for v in row_scores)
        fresh = score_fold(task, data.rows.take(pa.array(test)), data.y[test], pred, predicts_target=predicts_target)
        for name in sorted(set(fresh) | set(recorded)):
            if name in NOT_RESCORED:
                continue
            a, b = recorded.get(name), fresh.get(name)
            if (a is None) != (b is None) or (a is not None and not _same_score(float(a), float(b))):
                return f"fold {fold}: {name} is recorded as {a}, but its predictions score {b}"
    return None


def _same_score(a: float, b: float) -> bool:
    return abs(a - b) <= RESCORE_REL_TOL * max(abs(a), abs(b)) + 1e-12
