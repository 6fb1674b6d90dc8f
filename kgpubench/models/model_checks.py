"""Contract checks of a model file, in the spirit of scikit-learn's ``parametrize_with_checks``: does
``make_model(task, seed)`` give an estimator whose predictions the board can reproduce?

Each check runs the model on a small deterministic sample of the task's rows (:func:`check_sample`: at most
:data:`SAMPLE_ROWS` rows, whole problems for a recommendation task, so it takes seconds) and compares predictions
bit for bit:

* ``predictions``: ``predict`` gives one finite number per row, for the sample's test rows and for a single row
  (:func:`kgpubench.sandbox.checks.checked_predictions`);
* ``seed-determinism``: a second model from the same seed, fitted on the same rows (in a fresh process when the
  model runs in the sandbox), predicts the same values;
* ``thread-invariance``: with two threads (``KGPUBENCH_THREADS``, OpenMP and BLAS pinned to 2) it predicts the same
  values as with one; a model that ignores the thread setting passes trivially;
* ``refit``: fitting again on the same rows predicts the same values, and so does fitting on them again after a fit
  on a different subset (nothing learnt is kept globally: a module-level cache, a random state shared between
  models). In process the same estimator object is refitted, as scikit-learn's checks do; in the sandbox every
  ``fit`` builds a new estimator (its protocol), so only what is kept outside the estimator is seen.

:func:`run_model_checks` returns every :class:`CheckOutcome`; :func:`kgpubench.testing.check_model` raises on a
failure; ``kgpubench check-model FILE --task T`` prints them, and ``kgpubench submission check --model-checks``
runs them on a submitted model. Model code runs in the sandbox (:class:`~kgpubench.sandbox.session.ModelSession`)
unless ``sandbox=False`` (trusted code only: the project's baselines in its tests).
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from kgpubench.errors import NoDataError, SubmissionError
from kgpubench.models.evaluation import load_model_module, model_factory, pinned
from kgpubench.resources import default_data_dir
from kgpubench.sandbox.checks import checked_predictions
from kgpubench.sandbox.limits import Limits
from kgpubench.sandbox.session import ModelSession
from kgpubench.store.store import Store
from kgpubench.tasks import Task, as_task, feature_frame, problem_keys, select
from kgpubench.tasks.scoring import oracle_of, with_scoring_columns

CHECKS = ("predictions", "seed-determinism", "thread-invariance", "refit")
SAMPLE_ROWS = 64  # rows of the sample at most (a quarter are the test rows)
SAMPLE_PROBLEMS = 8  # problems of a recommendation task's sample
THREADS = (1, 2)  # the thread counts compared
SALT = "check-model"  # the sample is the first rows (problems) in sha256(salt, row_id (problem)) order
CHECK_TIMEOUT_S = 600.0  # the sandbox's time budget for one run of the checks' fits


@dataclass(frozen=True)
class CheckSample:
    """The rows a model is checked on: fit on ``fit``, refit after a fit on ``other`` (a different subset of
    ``fit``), predict ``test`` (disjoint from ``fit``)."""

    task: Task
    X_fit: Any
    y_fit: np.ndarray
    X_other: Any
    y_other: np.ndarray
    X_test: Any
    test_rows: pa.Table
    y_test: np.ndarray

    def problems(self) -> list | None:
        """A fresh measurement oracle for the test rows (its counters at zero), or None if the task has none."""
        oracle = oracle_of(self.task)
        return None if oracle is None else oracle(self.task, self.test_rows, self.y_test)


@dataclass(frozen=True)
class CheckOutcome:
    """One check's verdict: ``status`` is ``pass``, ``fail`` or ``skip`` (could not be decided), ``detail`` one
    line saying what was seen."""

    check: str
    status: str
    detail: str

    @property
    def line(self) -> str:
        return f"{self.status:4}  {self.check}: {self.detail}"


def _order(keys: Sequence[str]) -> np.ndarray:
    return np.argsort(np.asarray([hashlib.sha256(f"{SALT}\x1f{k}".encode()).digest()[:8] for k in keys], dtype="S8"),
                      kind="mergesort")


def check_sample(task: Task | str, *, table: pa.Table | None = None, data_dir: Path | str | None = None,
                 rows: int = SAMPLE_ROWS) -> CheckSample:
    """A small deterministic sample of ``task``'s rows (of ``table``, a config table, or else of the store
    ``data_dir``, default the packaged data): ``rows`` rows in sha256 order of their ``row_id``, or for a task with
    problems :data:`SAMPLE_PROBLEMS` problems in sha256 order of their key with at most ``rows //``
    :data:`SAMPLE_PROBLEMS` rows each (all of them for a task whose models may measure the test problems).
    A quarter of the rows (problems) are the test rows, the rest the fit rows; the second half of the fit rows
    (problems) is the other subset."""
    task = as_task(task)
    if table is None:
        table = Store(data_dir or default_data_dir()).read(task.config)
    usable = select(task, table).rows
    if usable.num_rows < 4:
        raise NoDataError(f"task {task.name!r}: {usable.num_rows} usable row(s) in the {task.config!r} config; the "
                          "model checks need at least 4 (collect or merge data first, or pass another --data).")
    if task.group_columns:
        keys = problem_keys(task, usable)
        names = list(dict.fromkeys(keys))
        chosen = [names[i] for i in _order(names)[:SAMPLE_PROBLEMS]]
        per = None if task.measures else max(1, rows // SAMPLE_PROBLEMS)
        ids = np.asarray(usable["row_id"].to_pylist(), dtype=object)
        units = []
        for name in chosen:
            idx = np.flatnonzero(keys == name)
            units.append(np.sort(idx if per is None else idx[_order(list(ids[idx]))[:per]]))
    else:
        units = [np.asarray([i]) for i in np.sort(_order(usable["row_id"].to_pylist())[:rows])]
    if len(units) < 4:  # a quarter to test, three quarters to fit, half of those the other subset
        raise NoDataError(f"task {task.name!r}: {len(units)} problem(s) in the {task.config!r} config; the model "
                          "checks need at least 4.")
    n_test = max(1, len(units) // 4)
    fit_units = units[n_test:]
    order = np.concatenate(units)  # test rows first, then the fit rows; features of all at once (same columns)
    sub = with_scoring_columns(task, table, usable.take(pa.array(order)))
    X = feature_frame(task, sub)
    y = sub[task.target].to_numpy(zero_copy_only=False).astype(np.float64)
    n_test_rows = sum(len(u) for u in units[:n_test])
    n_other = sum(len(u) for u in fit_units[: len(fit_units) // 2])  # the other subset: the fit rows' second half

    def part(start: int, stop: int | None = None):
        return X.iloc[start:stop].reset_index(drop=True), y[start:stop]

    X_fit, y_fit = part(n_test_rows)
    X_other, y_other = part(n_test_rows + n_other)
    X_test, y_test = part(0, n_test_rows)
    return CheckSample(task, X_fit, y_fit, X_other, y_other, X_test, sub.slice(0, n_test_rows), y_test)


# A run: a list of steps, ("fit", X, y) or ("predict", X, problems?) and the predictions of every predict step.
Step = tuple


def _in_process(path: Path, task: Task, seed: int, threads: int, steps: list[Step]) -> list[np.ndarray]:
    """The steps in this process (trusted code): one estimator, refitted at every ``fit`` after the first."""
    factory = model_factory(load_model_module(path), path)
    model, out = None, []
    where = "make_model"
    try:
        with pinned(Limits(threads=threads)), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for step in steps:
                if step[0] == "fit":
                    if model is None:
                        model = factory(task=task, seed=seed)
                    where = "fit"
                    model.fit(step[1], step[2])
                else:
                    where = "predict"
                    measures = bool(getattr(model, "uses_measurements", False))
                    raw = model.predict(step[1], problems=step[2]()) if measures and step[2] else model.predict(step[1])
                    out.append(checked_predictions(np.asarray(raw), len(step[1]), path.name))
    except SubmissionError:
        raise
    except Exception as exc:  # model code may raise anything: one line naming the step
        raise SubmissionError(f"{path.name}: {where}() raised {type(exc).__name__}: {exc}") from exc
    return out


def _in_sandbox(path: Path, task: Task, seed: int, threads: int, steps: list[Step], *, trust: bool,
                hide: Sequence) -> list[np.ndarray]:
    """The steps in one sandboxed child (kept for every step: what the module keeps between fits is seen)."""
    limits = Limits(threads=threads, timeout_s=CHECK_TIMEOUT_S)
    out = []
    with ModelSession(path, task, seed=seed, limits=limits, trust=trust, hide=hide, fresh_folds=False) as session:
        info = None
        for step in steps:
            if step[0] == "fit":
                info = session.fit(step[1], step[2])
            else:
                measures = info is not None and info.uses_measurements
                out.append(session.predict(step[1], problems=step[2]() if measures and step[2] else None))
    return out


def _differs(a: np.ndarray, b: np.ndarray) -> str | None:
    """None when ``a`` and ``b`` are identical, else how they differ (one phrase)."""
    if np.array_equal(a, b):
        return None
    diff = a != b
    rel = np.abs(a - b) / np.maximum(np.abs(a), np.finfo(float).tiny)
    return f"{int(diff.sum())} of {len(a)} predictions differ (largest relative difference {float(rel.max()):.3g})"


def run_model_checks(model: Path | str, task: Task | str, *, seed: int = 0, table: pa.Table | None = None,
                     data_dir: Path | str | None = None, sandbox: bool = True, trust: bool = False,
                     sample: CheckSample | None = None) -> list[CheckOutcome]:
    """Every check of :data:`CHECKS` on the model file ``model`` for ``task``, on :func:`check_sample` (or
    ``sample``); returns their outcomes in that order (never raises for a failed check).

    ``sandbox``: run the model in :class:`~kgpubench.sandbox.session.ModelSession` (default; ``trust`` as there),
    else in this process (trusted code only). Errors before any model code runs (no such file, unknown task, no
    data) are raised as they are.
    """
    the_task = as_task(task)
    path = Path(model)
    if sample is None:
        sample = check_sample(the_task, table=table, data_dir=data_dir)
    measure = sample.problems if the_task.measures else None
    one_row = None if the_task.measures else sample.X_test.iloc[:1].reset_index(drop=True)

    def run(threads: int, steps: list[Step]) -> list[np.ndarray]:
        if sandbox:
            return _in_sandbox(path, the_task, seed, threads, steps, trust=trust, hide=[data_dir])
        return _in_process(path, the_task, seed, threads, steps)

    fit = ("fit", sample.X_fit, sample.y_fit)
    predict = ("predict", sample.X_test, measure)
    first = [fit, predict] + ([("predict", one_row, None)] if one_row is not None else [])
    try:
        runs = run(THREADS[0], [*first, fit, predict, ("fit", sample.X_other, sample.y_other), fit, predict])
    except SubmissionError as exc:
        return [CheckOutcome("predictions", "fail", str(exc)),
                *(CheckOutcome(c, "skip", "not run: the model did not fit and predict") for c in CHECKS[1:])]
    base = runs[0]
    said = f"{len(base)} finite predictions" + (", and one for a single row" if one_row is not None else "")
    out = [CheckOutcome("predictions", "pass", said)]

    def fit_again(check: str, threads: int, differs: str, failed: str, same: str) -> CheckOutcome:
        """A second fit and prediction with ``threads``, compared with the first: ``differs`` + how they differ,
        ``failed`` + the error when the model fails, else ``same``."""
        try:
            why = _differs(base, run(threads, [fit, predict])[0])
        except SubmissionError as exc:
            return CheckOutcome(check, "fail", f"{failed}{exc}")
        return CheckOutcome(check, "fail", f"{differs}{why}") if why else CheckOutcome(check, "pass", same)

    seeded = fit_again("seed-determinism", THREADS[0], f"a second model of seed {seed}: ",
                       f"a second model of seed {seed}: ", f"a second model of seed {seed} predicts the same "
                                                           f"{len(base)} values")
    out.append(seeded)
    if seeded.status == "fail":
        out.append(CheckOutcome("thread-invariance", "skip", "not decided: one thread already gives varying "
                                                             "predictions"))
    else:
        out.append(fit_again("thread-invariance", THREADS[1], f"with {THREADS[1]} threads ",
                             f"with {THREADS[1]} threads: ", f"{THREADS[1]} threads predict what {THREADS[0]} does"))
    refit = [f"fitting again on the same rows: {w}" for w in [_differs(base, runs[-2])] if w]
    refit += [f"fitting on them after a fit on other rows: {w}" for w in [_differs(base, runs[-1])] if w]
    out.append(CheckOutcome("refit", "fail" if refit else "pass", "; ".join(refit) if refit else
                            "a refit, and a refit after a fit on other rows, predict the same values"))
    return out


def failed(outcomes: Sequence[CheckOutcome]) -> list[CheckOutcome]:
    """The outcomes that failed."""
    return [o for o in outcomes if o.status == "fail"]


def refusal(model: Path | str, task: Task | str, outcomes: Sequence[CheckOutcome]) -> str | None:
    """One line naming the failed checks and the first failure's detail (None when none failed)."""
    bad = failed(outcomes)
    if not bad:
        return None
    return (f"{Path(model).name} on {as_task(task).name}: fails {', '.join(o.check for o in bad)} ({bad[0].detail}); "
            "the board re-runs every result and must get the same predictions: seed every random choice from "
            "make_model's seed and keep nothing between fits (see leaderboard/SUBMITTING.md).")

