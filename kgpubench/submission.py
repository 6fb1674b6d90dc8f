"""Running a user's model in a separate process with time and memory limits, and scoring predictions
made elsewhere.

``python -m kgpubench.submission --model M --task T --scheme S --out R.json`` is the child process.
"""

from __future__ import annotations

import argparse
import ast
import datetime as _dt
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from kgpubench.errors import DataFileNotFoundError, SchemaValidationError
from kgpubench.evaluation import (
    FACTORY,
    SubmissionError,
    aggregate,
    check_predictions,
    file_sha256,
    package_versions,
    result_json,
    task_data,
)
from kgpubench.tasks import get_task
from kgpubench.tasks.scoring import score_fold

DEFAULT_TIMEOUT_S = 1800
DEFAULT_MEMORY_GB = 8.0
PREDICTION_COLUMNS = ("row_id", "fold", "prediction")


def check_factory(path: Path | str) -> None:
    """Refuse a model file without a top-level ``make_model`` (read, not imported)."""
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such model file; pass the path of a .py file.")
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise SubmissionError(f"{path}: not valid Python (line {exc.lineno}: {exc.msg}).") from None
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


def _limit_memory(max_bytes: int):
    def apply() -> None:  # runs in the child before exec
        import resource

        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    return apply


def submit(model: Path | str, task: str, scheme: str | None = None, *, out: Path | str | None = None,
           data_dir: Path | str | None = None, seed: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S,
           memory_gb: float = DEFAULT_MEMORY_GB) -> Path:
    """Evaluate ``model`` in a child process limited to ``timeout_s`` seconds and ``memory_gb`` GiB.

    Returns the result file (default ``./<model>--<task>--<scheme>.json``), ready to be committed under
    ``leaderboard/results/<task>/<scheme>/`` together with the model file in ``leaderboard/submissions/``.
    """
    model = Path(model)
    check_factory(model)
    the_task = get_task(task)
    scheme = scheme or the_task.schemes[0]
    out = Path(out or f"{model.stem}--{task}--{scheme}.json")
    cmd = [sys.executable, "-m", "kgpubench.submission", "--model", str(model), "--task", task, "--scheme",
           scheme, "--out", str(out), "--seed", str(seed)]
    if data_dir:
        cmd += ["--data", str(data_dir)]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_limit_memory(int(memory_gb * 2**30)))
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        raise SubmissionError(f"{model}: refused, evaluation exceeded the time limit of {timeout_s:g} s; make "
                              "the model faster or raise --timeout.") from None
    if proc.returncode != 0:
        tail = "\n".join(err.strip().splitlines()[-8:])
        hint = (f" It ran out of memory (limit {memory_gb:g} GiB); raise --memory-gb or use less."
                if "MemoryError" in err or "std::bad_alloc" in err else "")
        raise SubmissionError(f"{model}: the evaluation process failed (exit {proc.returncode}).{hint}\n{tail}")
    return out


def _child(argv: list[str] | None = None) -> int:
    from kgpubench.errors import KgpubenchError
    from kgpubench.evaluation import evaluate

    ap = argparse.ArgumentParser(prog="python -m kgpubench.submission")
    ap.add_argument("--model", required=True)
    ap.add_argument("--task", required=True)
    ap.add_argument("--scheme", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=None)
    a = ap.parse_args(argv)
    try:
        result = evaluate(a.model, a.task, a.scheme, data_dir=a.data, seed=a.seed)
    except KgpubenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(result_json(result))
    return 0


def read_predictions(path: Path | str):
    """A predictions file (parquet or CSV) with columns row_id, fold, prediction, as a DataFrame."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: no such predictions file.")
    df = pd.read_csv(path, dtype={"row_id": str, "fold": str}) if path.suffix == ".csv" else pd.read_parquet(path)
    missing = [c for c in PREDICTION_COLUMNS if c not in df.columns]
    if missing:
        raise SchemaValidationError(f"{path}: lacks column(s) {missing}; a predictions file needs columns "
                                    f"{', '.join(PREDICTION_COLUMNS)} (one row per test row of every fold).")
    df = df.astype({"row_id": str, "fold": str})
    dupes = df.duplicated(["row_id", "fold"])
    if dupes.any():
        first = df[dupes].iloc[0]
        raise SchemaValidationError(f"{path}: {int(dupes.sum())} duplicate (row_id, fold) pair(s), e.g. "
                                    f"({first['row_id']}, {first['fold']}); give one prediction per test row.")
    return df


def score_predictions(path: Path | str, task: str, scheme: str, *, data_dir: Path | str | None = None) -> dict:
    """Score predictions made elsewhere: they must cover exactly the test rows of every fold."""
    start = time.perf_counter_ns()
    the_task = get_task(task)
    data = task_data(the_task, scheme, data_dir)
    df = read_predictions(path)
    ids = np.asarray(data.rows["row_id"].to_pylist(), dtype=object)
    problems = []
    folds = {}
    given_folds = set(df["fold"])
    for fold in data.fold_names:
        test = np.flatnonzero(data.folds == fold)
        want = set(ids[test])
        sub = df[df["fold"] == fold]
        have = set(sub["row_id"])
        if want != have:
            miss, extra = sorted(want - have), sorted(have - want)
            problems.append(f"fold {fold}: {len(miss)} test row(s) missing (e.g. {miss[:3]}), {len(extra)} row(s) "
                            f"not in the fold (e.g. {extra[:3]})")
            continue
        lookup = dict(zip(sub["row_id"], sub["prediction"]))
        pred = check_predictions([lookup[r] for r in ids[test]], test.size, str(path))
        folds[fold] = {"n_train": int(len(ids) - test.size), "n_test": int(test.size),
                       "scores": score_fold(the_task, data.rows.take(test), data.y[test], pred)}
    unknown = sorted(given_folds - set(data.fold_names))
    if unknown:
        problems.append(f"folds {unknown} are not folds of {scheme!r} (folds: {', '.join(data.fold_names)})")
    if problems:
        raise SchemaValidationError(
            f"{path}: predictions must cover exactly the test rows of every fold of {task!r}/{scheme!r}:\n"
            + "\n".join(f"  {p}" for p in problems) + "\nList the test rows with kgpubench.load_dataset("
            f"{the_task.config!r}, scheme={scheme!r}, fold=F, split='test', task={task!r}).", problems)
    from kgpubench.leaderboard import model_label

    return {"format": 2, "task": task, "scheme": scheme, "model": Path(path).stem, "model_file": model_label(path),
            "model_sha256": file_sha256(Path(path)), "kind": "predictions", "dataset": data.dataset,
            "split_sha256": data.split_sha256, "folds": folds, "aggregate": aggregate(folds), "status": "ok",
            "samples": [], "seed": None, "train_subsample": None, "packages": package_versions(),
            "date": _dt.date.today().isoformat(), "wall_time_s": (time.perf_counter_ns() - start) / 1e9}


if __name__ == "__main__":
    raise SystemExit(_child())
