"""Train and score a model on a task, fold by fold, and build its result record.

A model is a Python file exposing the factory ``make_model(task, seed)`` that returns an object with
``fit(X, y)`` and ``predict(X)`` (a scikit-learn estimator): ``X`` is a pandas DataFrame of the task's
declared features, ``y`` the target. See ``leaderboard/SUBMITTING.md``.

Model code runs in one place only, :func:`fit_predict` (one fold: ``X_train``, ``y_train``, ``X_test`` in,
predictions out), under :class:`~kgpubench.sandbox.limits.Limits` (threads pinned for OpenMP, BLAS, LightGBM and
XGBoost). Everything else here is data handling and scoring, which never runs model code.

Strategies that measure the test problem instead of predicting it (seed 001's Profiling, Exhausting) set
``uses_measurements = True``; on a task that declares a measurement oracle (``Task.oracle``; ``npb-tpb``, see
:mod:`kgpubench.tasks.npb`) they are called as ``predict(X, problems=...)`` and every model's fold scores
carry ``measurements``, the mean number of distinct assignments measured per test problem (0 for models
that only learn from the training folds).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import sys
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgpubench.board.result import (  # noqa: F401 - PACKAGES, RESULT_FORMAT, round_floats, result_json: importable here as before
    PACKAGES,
    RESULT_FORMAT,
    Result,
    Skipped,
    model_label,
    package_versions,
    result_json,
    round_floats,
)
from kgpubench.buildinfo import code_sha256
from kgpubench.errors import NoDataError, SubmissionError, unknown_name
from kgpubench.resources import default_data_dir
from kgpubench.sandbox.checks import checked_predictions, not_numbers, refusal
from kgpubench.sandbox.limits import THREAD_ENV, Limits
from kgpubench.sandbox.model_file import module_from_source, read_model_file
from kgpubench.sandbox.session import ModelSession
from kgpubench.store.shards import atomic_write_bytes
from kgpubench.store.store import Store, sha256_file
from kgpubench.tasks import Task, as_task, feature_frame, list_tasks, problem_keys, select
from kgpubench.tasks.intervals import percentile_interval
from kgpubench.tasks.metrics import METRICS
from kgpubench.tasks.reference import ORACLE
from kgpubench.tasks.scoring import oracle_of, problem_choices, score_fold, with_scoring_columns
from kgpubench.tasks.splits import EXCLUDED, evaluated_folds, fold_column, get_scheme, split_sha256_of

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


# ----- task data ---------------------------------------------------------------------------------------------
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

    @property
    def sample_rank(self) -> np.ndarray:
        """Fixed order of the rows for the plotted (measured, predicted) samples (computed once)."""
        if "_sample_rank" not in self.__dict__:
            self.__dict__["_sample_rank"] = hashed_order(self.rows["row_id"].to_pylist(), "samples")
        return self.__dict__["_sample_rank"]

    @functools.cached_property
    def split_sha256(self) -> str:
        """sha256 of the split file these rows and folds make (:func:`kgpubench.tasks.splits.split_digest`)."""
        return split_sha256_of(self.rows["row_id"].to_pylist(), self.folds)


HASH_EXTRA = ("run_id", "time_ms_std", "repeats", "time_rse", "default_remainder_s", "default_tpb", "remainder_s")


def rows_sha256(task: Task, rows: pa.Table) -> str:
    """sha256 over the values the task reads (features, target, problem and filter columns, the noise and
    scoring columns, row_id and run_id) of ``rows``, in (row_id, run_id) order.

    Results are tied to this hash, not to the store's manifest: data added to other configs, GPUs or suites
    leaves it unchanged. Numbers are hashed as little-endian float64 (null = NaN), strings joined by a unit
    separator (null = NUL), parameter lists as their lengths, names and values.
    """
    cols = sorted({*task.used_columns(), *(c for c in HASH_EXTRA if c in rows.column_names)})
    keys = [(c, "ascending") for c in ("row_id", "run_id") if c in rows.column_names]
    t = rows.select(cols).take(pc.sort_indices(rows, sort_keys=keys)) if rows.num_rows else rows.select(cols)
    h = hashlib.sha256(f"{task.name}\x1e{rows.num_rows}".encode())
    for name in cols:
        h.update(f"\x1e{name}\x1f".encode())
        _hash_array(h, t[name].combine_chunks())
    return h.hexdigest()


def _hash_array(h, arr: pa.Array) -> None:
    typ = arr.type
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_boolean(typ):
        vals = arr.to_numpy(zero_copy_only=False).astype("<f8")
        h.update(np.where(np.isnan(vals), np.nan, vals).tobytes())
    elif pa.types.is_list(typ) or pa.types.is_large_list(typ):
        h.update(pc.fill_null(pc.list_value_length(arr), -1).to_numpy(zero_copy_only=False).astype("<i8").tobytes())
        flat = pc.list_flatten(arr)
        if pa.types.is_struct(flat.type):
            for i in range(flat.type.num_fields):
                h.update(f"\x1d{flat.type.field(i).name}".encode())
                _hash_array(h, flat.field(i))
        else:
            _hash_array(h, flat)
    else:
        text = pc.fill_null(pc.cast(arr, pa.string()), "\x00").to_pylist()
        h.update("\x1f".join(text).encode())


# Task fields that change only what the board shows or when a job runs, never which rows are read nor how a
# prediction is scored: left out of :func:`task_sha256`. Every other field (a new one too) is in it.
PRESENTATION_FIELDS = frozenset({"description", "seed", "schemes", "board_schemes", "seed_metrics", "seed_reference",
                                 "relative_cost", "sources", "extras", "sections", "gpu_baseline", "split_files"})


def task_sha256(task: Task) -> str:
    """sha256 of the task's declaration as far as it decides a score: every field of the
    :class:`~kgpubench.tasks.Task` except :data:`PRESENTATION_FIELDS` (name, config, target, features, metrics,
    filters, scorer, ...). Recorded in a result's dataset block; part of what ``leaderboard run --reuse`` compares."""
    decl = {f.name: getattr(task, f.name) for f in fields(task) if f.name not in PRESENTATION_FIELDS}
    return hashlib.sha256(json.dumps(decl, sort_keys=True, default=repr).encode()).hexdigest()


def files_sha256(task: Task, store) -> str:
    """sha256 of the files of the task's config in ``store`` (their paths and sha256, from the manifest): equal
    hashes mean the task reads the very same rows, without reading one. Data merged into another config leaves it
    unchanged; data merged into this one changes it (the task's own rows may still be the same:
    :func:`rows_sha256` tells)."""
    files = sorted([f["path"], f["sha256"]] for f in store.files(task.config))
    return hashlib.sha256(json.dumps([task.config, files]).encode()).hexdigest()


def inputs_sha256(task: Task, scheme: str, store) -> str:
    """Provenance only: the task's declaration, the scheme, the files of its config in the store (paths and sha256
    from the manifest), the library's code (:func:`kgpubench.buildinfo.code_sha256`) and the installed packages,
    as one hash. Any commit changes it, so it is not what ``leaderboard run --reuse`` compares (that is the data
    identity: :func:`task_sha256`, :func:`files_sha256` or :func:`rows_sha256`, the split, the model file, seed
    and threads); ``leaderboard verify`` (CI) is what catches a code change that moves a score."""
    files = [[f["path"], f["sha256"]] for f in store.files(task.config)]
    blob = json.dumps([repr(task), scheme, files, code_sha256(), package_versions()], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


_ROWS: dict[tuple, str | None] = {}


def current_rows_sha256(task: Task, data_dir: Path | str | None = None) -> str | None:
    """:func:`rows_sha256` of the task's usable rows in the store now (None: it has none), without building
    features or folds (a few seconds for the largest configs). Cached per process, (task, data folder, manifest)."""
    store = Store(data_dir or default_data_dir())
    key = (task.name, str(store.path), store.manifest_sha256())
    if key not in _ROWS:
        table = store.read(task.config)
        rows = with_scoring_columns(task, table, select(task, table).rows)
        _ROWS[key] = rows_sha256(task, rows) if rows.num_rows else None
    return _ROWS[key]


_TABLES: dict[tuple, pa.Table] = {}


def config_table(store: Store, config: str) -> pa.Table:
    """``store.read(config)``, kept for the next call on the same store folder, manifest and config (the last
    :data:`KEPT_TABLES` configs read): the jobs of one config's tasks and schemes read its files once."""
    key = (str(store.path.resolve()), store.manifest_sha256(), config)
    if key not in _TABLES:
        while len(_TABLES) >= KEPT_TABLES:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[key] = store.read(config)
    return _TABLES[key]


KEPT_TABLES = 2


def task_data(task: Task | str, scheme: str, data_dir: Path | str | None = None,
              table: pa.Table | None = None) -> TaskData:
    """Load the task's rows from a store (default: the packaged data) and assign folds (``task``: a name is
    looked up in the registry; :data:`kgpubench.tasks.as_task`)."""
    task = as_task(task)
    store = Store(data_dir or default_data_dir())
    table_given = table
    if table is None:
        table = config_table(store, task.config)
    selection = select(task, table)
    rows = with_scoring_columns(task, table, selection.rows)
    if rows.num_rows == 0:
        raise NoDataError(no_data_reason(task, store.path, table.num_rows, selection.report()))
    dataset = {"config": task.config, "version": store.version, "manifest_sha256": store.manifest_sha256(),
               "rows": rows.num_rows, "rows_sha256": rows_sha256(task, rows), "selection": selection.report(),
               "task_sha256": task_sha256(task)}
    if table_given is None:  # rows read from the store: what they were read from is known
        dataset["files_sha256"] = files_sha256(task, store)
        dataset["inputs_sha256"] = inputs_sha256(task, scheme, store)
    return TaskData(task, scheme, rows, feature_frame(task, rows),
                    rows[task.target].to_numpy(zero_copy_only=False).astype(np.float64),
                    fold_column(task, rows, scheme), dataset)


def no_data_reason(task: Task, store_path: Path, table_rows: int, report: dict) -> str:
    """Why a task has no usable rows, in one line."""
    if table_rows == 0:
        why = f"the {task.config!r} config of store {store_path} has no rows"
    elif report.get("incomplete_problems"):
        why = (f"every problem of the {task.config!r} config is incomplete ({len(report['incomplete_problems'])} "
               f"excluded, e.g. {report['incomplete_problems'][0]})")
    else:
        filt = "; ".join(f"{c} in {list(v)}" for c, v in task.filters)
        why = (f"none of the {table_rows} rows of the {task.config!r} config is usable (status ok, {task.target} "
               f"present{', ' + filt if filt else ''})")
    return f"task {task.name!r}: {why}; collect or merge data first (`kgpubench info`)."


def scheme_problem(data: TaskData) -> str | None:
    """Why a scheme cannot be evaluated on this data (no fold with training rows), else None."""
    names = data.fold_names
    if not names:
        return f"scheme {data.scheme!r} has no test fold"
    if all(np.all(data.folds == f) for f in names):
        sch = get_scheme(data.scheme)
        what = {"gpu_name": "GPU", "kernel": "kernel"}.get(sch.column or "", "problem" if data.task.group_columns
                                                           else "row group")
        if sch.kind == "column":
            return (f"every row has one {what} ({names[0]}), so leave-one-{what}-out has no training fold; it needs "
                    f"rows of at least two {what}s")
        if data.task.group_columns:
            n = len(set(problem_keys(data.task, data.rows)))
            cols = ", ".join(c for c in data.task.problem_columns)
            return (f"the {data.rows.num_rows} rows form {n} problem{'s' if n != 1 else ''} ({cols}), all in one "
                    "fold, so no fold has training rows; it needs problems in at least two folds")
        return f"all {data.rows.num_rows} rows fall in one fold, so no fold has training rows"
    return None


_USABLE: dict[tuple, TaskData | Skipped] = {}


def usable_task_data(task: Task | str, scheme: str, data_dir: Path | str | None = None) -> TaskData | Skipped:
    """The task data of (task, scheme) (:func:`task_data`), or the :class:`~kgpubench.board.result.Skipped` record
    saying why it cannot be evaluated with what data there is (:func:`scheme_problem`, or the
    :class:`~kgpubench.errors.NoDataError` message).

    Cached per process, (task, scheme, data folder) and store manifest, the last few only: the leaderboard's
    jobs (``kgpubench.board.leaderboard.run_job``) and the Ray fold tasks (``kgpubench.ray.board``) of one
    (task, scheme) share it.
    """
    task = as_task(task)
    key = (task.name, scheme, str(data_dir), Store(data_dir or default_data_dir()).manifest_sha256())
    if key not in _USABLE:
        while len(_USABLE) >= 4:
            _USABLE.pop(next(iter(_USABLE)))
        try:
            data = task_data(task, scheme, data_dir)
            why = scheme_problem(data)
            _USABLE[key] = Skipped(task=task.name, scheme=scheme, reason=why, dataset=data.dataset) if why else data
        except NoDataError as exc:  # what the (missing) rows would be read from: reusable while nothing changes
            store = Store(data_dir or default_data_dir())
            dataset = {"config": task.config, "task_sha256": task_sha256(task),
                       "files_sha256": files_sha256(task, store)}
            _USABLE[key] = Skipped(task=task.name, scheme=scheme, reason=str(exc), dataset=dataset)
    return _USABLE[key]


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
    ids = data.rows["row_id"].to_pylist()
    rank = hashed_order(ids, task.name) if task.max_train_rows else None
    sample_rank = data.sample_rank
    out, samples = {}, []
    for fold in wanted:
        test = np.flatnonzero(data.folds == fold)
        train = np.flatnonzero((data.folds != fold) & (data.folds != EXCLUDED))  # excluded: in no training set
        if train.size == 0:  # e.g. by-kernel with a single kernel: nothing to learn from
            continue
        if rank is not None and train.size > task.max_train_rows:
            train = np.sort(train[np.argsort(rank[train], kind="mergesort")[: task.max_train_rows]])
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


def aggregate(folds: dict) -> dict:
    """Mean, population std and median over folds of every score (folds where a score is None are skipped), and
    ``ci95``: the 95 % percentile bootstrap interval of the mean over the folds in name order, the one the board
    and the summary print (:func:`kgpubench.board.ranking.interval`, the same draw; None under two folds), drawn
    from the fold scores as the result file stores them (rounded), so that the board's recomputation equals it."""
    names = sorted({m for f in folds.values() for m in f["scores"]})
    stored = round_floats({k: {"scores": f["scores"]} for k, f in folds.items()})
    out = {}
    for m in names:
        vals = [f["scores"][m] for f in folds.values() if f["scores"].get(m) is not None]
        out[m] = ({"mean": float(np.mean(vals)), "std": float(np.std(vals)), "median": float(np.median(vals)),
                   "folds": len(vals), "ci95": fold_interval(stored, m)} if vals else None)
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
    """Evaluate a model file on a task under one scheme; returns its :class:`~kgpubench.board.result.Result`
    (written with :meth:`~kgpubench.board.result.Result.to_json`).

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
    oracle = str(model_path) == ORACLE
    session = None
    if oracle:
        name, label = ORACLE, ORACLE
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
    """The :class:`~kgpubench.board.result.Result` of a model that failed on this task and scheme (the board lists
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
        recorded = rec.get("scores") or {}
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
