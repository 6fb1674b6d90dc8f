"""Submitting a model: checks on the model file that read it without running it, ``kgpubench submit`` (the
evaluation with the model in the sandbox of :mod:`kgpubench.sandbox.session`), and scoring predictions made elsewhere
(``kgpubench score``).
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from kgpubench.errors import DataFileNotFoundError, SchemaValidationError
from kgpubench.foundation.files import atomic_write_bytes, check_writable, is_stdout
from kgpubench.models.evaluation import FACTORY, SubmissionError, aggregate, attach_predictions, evaluate, file_sha256
from kgpubench.results.result import Result, model_label
from kgpubench.sandbox.checks import checked_predictions
from kgpubench.sandbox.limits import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, Limits
from kgpubench.sandbox.model_file import parse_model_file
from kgpubench.tasks import Task, as_task
from kgpubench.tasks.data import TaskData, task_data
from kgpubench.tasks.scoring import score_fold

PREDICTION_COLUMNS = ("row_id", "fold", "prediction")
# Caps on a predictions file, checked before it is parsed: a real one is a few bytes per test row.
MAX_PREDICTIONS_BYTES = 256 * 2**20
MAX_PREDICTION_ROWS = 10_000_000
__all__ = ["DEFAULT_MEMORY_GB", "DEFAULT_TIMEOUT_S", "MAX_PREDICTIONS_BYTES", "MAX_PREDICTION_ROWS", "check_factory",
           "declared_tasks", "model_file_in", "prediction_folds", "read_predictions", "score_predictions", "submit"]


def check_factory(path: Path | str) -> None:
    """Refuse a model file without a top-level ``make_model`` (read, not imported)."""
    path = Path(path)
    tree = parse_model_file(path)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == FACTORY:
            return
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == FACTORY for t in node.targets):
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name) == FACTORY for a in node.names):
            return
    raise SubmissionError(
        f"{path}: refused, the module defines no top-level `{FACTORY}(task, seed)`. Add a function "
        f"`def {FACTORY}(task, seed):` returning an estimator with fit(X, y) and predict(X) "
        "(see leaderboard/SUBMITTING.md).")


def declared_tasks(path: Path | str) -> tuple[str, ...]:
    """The tasks a model file declares in a top-level ``TASKS = (...)`` literal, read without running it
    (empty: any task)."""
    path = Path(path)
    for node in parse_model_file(path).body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "TASKS" for t in targets):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                value = None
            if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
                raise SubmissionError(f"{path}: TASKS (line {node.lineno}) must be a literal tuple of task names, e.g. "
                                      "TASKS = (\"kernel-time\",), so that it can be read without running the file.")
            return tuple(value)
    return ()


def model_file_in(root: Path | str, label: str) -> Path:
    """The file a committed result names (``model_file``), refused unless it is a relative path inside
    ``root``: no absolute path, no ``..``, no symbolic link leading out."""
    root = Path(root)
    bad = None
    if not isinstance(label, str) or not label.strip() or "\\" in label or "\x00" in label:
        bad = "it is not a plain relative path"
    elif PurePosixPath(label).is_absolute():
        bad = "it is an absolute path"
    elif ".." in PurePosixPath(label).parts:
        bad = "it climbs out with '..'"
    elif not (root / label).resolve().is_relative_to(root.resolve()):
        bad = "a symbolic link leads outside the project"
    if bad:
        raise SubmissionError(f"model_file {label!r}: refused, {bad}; a result must name a file inside the project "
                              "(e.g. leaderboard/submissions/mine.py).")
    return root / label


def submit(model: Path | str, task: Task | str, scheme: str | None = None, *, out: Path | str | None = None,
           data_dir: Path | str | None = None, seed: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S,
           memory_gb: float = DEFAULT_MEMORY_GB, threads: int = 1, trust: bool = False,
           force: bool = False) -> Path:
    """Evaluate ``model`` with its code in the sandbox (limits: ``timeout_s`` for all folds, ``memory_gb`` of
    address space, ``threads``); write the result and return its path.

    An existing ``out`` is refused before anything runs unless ``force`` (and so is a folder that cannot be
    written); ``out="-"`` means standard output (the JSON is printed, the return value is ``Path("-")``).

    The result (default ``./<model>--<task>--<scheme>.json``) is ready to be committed under
    ``leaderboard/results/<task>/<scheme>/`` with the model file in ``leaderboard/submissions/``. Only this
    process writes it; a timeout, a crash or refused predictions raise :class:`SubmissionError` (one line).
    ``trust`` allows running the model unisolated where the kernel cannot isolate it. ``task``: a
    :class:`~kgpubench.tasks.Task` or its name.
    """
    limits = Limits(timeout_s=timeout_s, memory_gb=memory_gb, threads=threads)
    model = Path(model)
    check_factory(model)
    the_task = as_task(task)
    scheme = scheme or the_task.schemes[0]
    out = Path(out or f"{model.stem}--{the_task.name}--{scheme}.json")
    if not is_stdout(out):
        check_writable(out, force=force)
    result = evaluate(model, the_task, scheme, data_dir=data_dir, seed=seed, limits=limits, trust=trust)
    if is_stdout(out):
        sys.stdout.write(result.to_json())
        sys.stdout.flush()
        return out
    atomic_write_bytes(out, result.to_json().encode(), overwrite=force)
    return out


def _numeric_text(value) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _check_size(path: Path, kind: str) -> None:
    """Refuse a predictions file over :data:`MAX_PREDICTIONS_BYTES` bytes, or a parquet file whose footer claims
    over :data:`MAX_PREDICTION_ROWS` rows (a small file that would expand to gigabytes), before reading it."""
    size = path.stat().st_size
    if size > MAX_PREDICTIONS_BYTES:
        raise SchemaValidationError(f"{path}: refused, {size:,} bytes; a predictions file must be under "
                                    f"{MAX_PREDICTIONS_BYTES // 2**20} MiB (one row per test row: row_id, fold, "
                                    "prediction).")
    if kind == "parquet":
        try:
            rows = pq.ParquetFile(path).metadata.num_rows
        except (OSError, pa.ArrowException):
            return  # not parquet: the reader below says so
        if rows > MAX_PREDICTION_ROWS:
            raise SchemaValidationError(f"{path}: refused, the file claims {rows:,} rows; a predictions file holds "
                                        f"one row per test row (at most {MAX_PREDICTION_ROWS:,}).")


def read_predictions(path: Path | str):
    """A predictions file (parquet or CSV) with columns row_id, fold, prediction, as a DataFrame (row_id and fold
    as text). Refused in one line naming the file (and the column or row): missing, over the size caps
    (:data:`MAX_PREDICTIONS_BYTES`, :data:`MAX_PREDICTION_ROWS`), unreadable, a column missing, predictions that
    are not numbers, a (row_id, fold) pair twice."""
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such predictions file.")
    kind = "CSV" if path.suffix.lower() == ".csv" else "parquet"
    _check_size(path, kind)
    try:
        df = pd.read_csv(path, dtype={"row_id": str, "fold": str}) if kind == "CSV" else pd.read_parquet(path)
    except (ValueError, OSError, TypeError, pa.ArrowException) as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise SchemaValidationError(f"{path}: cannot be read as {kind} ({type(exc).__name__}: {first}); write it with "
                                    "pandas' to_parquet or to_csv, with columns row_id, fold, prediction.") from None
    missing = [c for c in PREDICTION_COLUMNS if c not in df.columns]
    if missing:
        raise SchemaValidationError(f"{path}: lacks column(s) {missing}; a predictions file needs columns "
                                    f"{', '.join(PREDICTION_COLUMNS)} (one row per test row of every fold).")
    pred = df["prediction"]
    if not pd.api.types.is_numeric_dtype(pred) or pd.api.types.is_bool_dtype(pred):
        sample = next((v for v in pred if not _numeric_text(v)), pred.iloc[0] if len(pred) else None)
        raise SchemaValidationError(f"{path}: column prediction holds {pred.dtype} values (e.g. {sample!r}); give "
                                    "one finite number per row.")
    df = df.astype({"row_id": str, "fold": str})
    dupes = df.duplicated(["row_id", "fold"])
    if dupes.any():
        first = df[dupes].iloc[0]
        raise SchemaValidationError(f"{path}: {int(dupes.sum())} duplicate (row_id, fold) pair(s), e.g. "
                                    f"({first['row_id']}, {first['fold']}); give one prediction per test row.")
    return df


def prediction_folds(df, path: Path | str, data: TaskData) -> dict[str, np.ndarray]:
    """Each fold's checked predictions (float64, in the fold's test-row order) from ``df`` (:func:`read_predictions`),
    which must cover exactly the test rows of every fold of ``data`` and nothing else, with finite numbers.

    Raises
    ------
    kgpubench.errors.SchemaValidationError
        One line naming the file, the folds and rows that do not match (the first two when more than three) and
        the fix; every problem in ``violations``.
    kgpubench.errors.SubmissionError
        A NaN or infinite prediction (:func:`kgpubench.sandbox.checks.checked_predictions`, naming fold and row_id).
    """
    task, scheme = data.task, data.scheme
    ids = np.asarray(data.rows["row_id"].to_pylist(), dtype=object)
    problems = []
    folds = {}
    for fold in data.fold_names:
        test = np.flatnonzero(data.folds == fold)
        sub = df[df["fold"] == fold]
        want, have = set(ids[test]), set(sub["row_id"])
        if want != have:
            miss, extra = sorted(want - have), sorted(have - want)
            problems.append(f"fold {fold}: {len(miss)} test row(s) missing (e.g. {miss[:3]}), {len(extra)} row(s) "
                            f"not in the fold (e.g. {extra[:3]})")
            continue
        lookup = dict(zip(sub["row_id"], sub["prediction"]))
        rows = ids[test]
        folds[fold] = checked_predictions(np.asarray([lookup[r] for r in rows]), test.size, str(path),
                                          said=f"fold {fold} has", row_names=rows)
    unknown = sorted(set(df["fold"]) - set(data.fold_names))
    if unknown:
        problems.append(f"folds {unknown[:5]} are not folds of {scheme!r} (folds: {', '.join(data.fold_names)})")
    if problems:
        shown = problems if len(problems) <= 3 else [*problems[:2], f"{len(problems) - 2} more problem(s)"]
        raise SchemaValidationError(
            f"{path}: {'; '.join(shown)}; predictions must cover exactly the test rows of every fold of "
            f"{task.name!r}/{scheme!r}: list them with kgpubench.load_dataset({task.config!r}, scheme={scheme!r}, "
            f"fold=F, split='test', task={task.name!r}).", problems)
    return folds


def score_predictions(path: Path | str, task: Task | str, scheme: str, *,
                      data_dir: Path | str | None = None, data: TaskData | None = None) -> Result:
    """Score predictions made elsewhere (``task``: a :class:`~kgpubench.tasks.Task` or its name); they must cover
    exactly the test rows of every fold (:func:`prediction_folds`). ``data``: the task's rows under ``scheme``
    when already loaded (else read from ``data_dir``). Returns the :class:`~kgpubench.results.result.Result` (kind
    ``predictions``)."""
    start = time.perf_counter_ns()
    the_task = as_task(task)
    df = read_predictions(path)  # a bad file fails before the data is loaded
    if data is None:
        data = task_data(the_task, scheme, data_dir)
    ids = np.asarray(data.rows["row_id"].to_pylist(), dtype=object)
    folds = {}
    given = prediction_folds(df, path, data)
    for fold, pred in given.items():
        test = np.flatnonzero(data.folds == fold)
        folds[fold] = {"n_train": int(len(ids) - test.size), "n_test": int(test.size),
                       "scores": score_fold(the_task, data.rows.take(test), data.y[test], pred)}
    result = Result.new(
        status="ok", task=the_task.name, scheme=scheme, kind="predictions", model=Path(path).stem,
        model_file=model_label(path), model_sha256=file_sha256(Path(path)), predictions_sha256=file_sha256(Path(path)),
        dataset=data.dataset,
        split_sha256=data.split_sha256, folds=folds, aggregate=aggregate(folds), samples=[], seed=None,
        train_subsample=None, wall_time_s=(time.perf_counter_ns() - start) / 1e9,
    )
    return attach_predictions(result, given)

