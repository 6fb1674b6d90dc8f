"""The reproducible leaderboard: evaluate every baseline on every task with data, write result files,
re-run them (``verify``) and render the board.

Results live in ``leaderboard/results/<task>/<scheme>/<model>.json``; a result names its model file
relative to the project root (``baselines/knn.py``, ``leaderboard/submissions/mine.py``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kgpubench.errors import KgpubenchError
from kgpubench.evaluation import (
    NoDataError,
    SubmissionError,
    TaskData,
    evaluate,
    result_json,
    task_data,
)
from kgpubench.shards import atomic_write_bytes
from kgpubench.submission import declared_tasks, model_file_in
from kgpubench.tasks import get_task, list_tasks

# Scores may differ across machines in the last digits (BLAS, compilers); verify allows this much.
REL_TOL = 1e-4
ABS_TOL = 1e-6
# Baselines CI re-runs (`make test`): quick to fit on the packaged data.
FAST_BASELINES = ("median", "regression_tree")


class VerifyError(KgpubenchError, AssertionError):
    """Re-running committed results gave other scores or other hashes; ``problems`` lists them all."""

    def __init__(self, message: str, problems: list[str]) -> None:
        super().__init__(message)
        self.problems = problems


def project_root() -> Path:
    """The folder holding ``baselines/`` and ``leaderboard/`` (a checkout, or the wheel's ``_bundled``)."""
    from kgpubench.resources import bundled_path

    return bundled_path("leaderboard").parent


def leaderboard_dir() -> Path:
    from kgpubench.resources import bundled_path

    return bundled_path("leaderboard")


def results_dir() -> Path:
    return leaderboard_dir() / "results"


def baseline_files() -> list[Path]:
    """Every baseline model file (``baselines/*.py`` not starting with ``_``), sorted by name."""
    from kgpubench.resources import bundled_path

    return sorted(p for p in bundled_path("baselines").glob("*.py") if not p.name.startswith("_"))


def result_path(root: Path, task: str, scheme: str, model: str) -> Path:
    return Path(root) / task / scheme / f"{model}.json"


def model_label(path: Path) -> str:
    """A model file's path relative to the project root when inside it, else its name."""
    try:
        return Path(path).resolve().relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return Path(path).name


@dataclass(frozen=True)
class Job:
    model: Path
    task: str
    scheme: str


def plan(models: Iterable[Path] | None = None, only: Iterable[str] | None = None,
         tasks: Iterable[str] | None = None) -> list[Job]:
    """Jobs for every model x task it declares (``TASKS``) x the task's board schemes."""
    only = set(only or ())
    wanted = set(tasks or ())
    jobs = []
    for path in models if models is not None else baseline_files():
        path = Path(path)
        if only and path.stem not in only:
            continue
        declared = declared_tasks(path)  # read, not run: a model's code runs only in the sandbox
        for task in list_tasks():
            if (declared and task.name not in declared) or (wanted and task.name not in wanted):
                continue
            jobs.extend(Job(path, task.name, s) for s in task.evaluated_schemes)
    return jobs


def run(*, data_dir: Path | str | None = None, out_dir: Path | None = None, only: Iterable[str] | None = None,
        tasks: Iterable[str] | None = None, models: Iterable[Path] | None = None, render: bool = True,
        progress: Callable[[str], None] | None = None, trust: bool = False) -> list[Path]:
    """Evaluate the jobs of :func:`plan` whose task has data; write results; render the board.

    Returns the result files written. Tasks without rows are skipped (the board says "no data yet").
    """
    out_dir = Path(out_dir or results_dir())
    cache: dict[tuple[str, str], TaskData | None] = {}
    written = []
    for job in plan(models, only, tasks):
        key = (job.task, job.scheme)
        if key not in cache:
            try:
                cache[key] = task_data(job.task, job.scheme, data_dir)
            except NoDataError:
                cache[key] = None
        if cache[key] is None:
            continue
        if progress:
            progress(f"{job.task} / {job.scheme} / {job.model.stem}")
        try:
            result = evaluate(job.model, job.task, job.scheme, data=cache[key], trust=trust)
        except NoDataError:
            continue
        path = result_path(out_dir, job.task, job.scheme, job.model.stem)
        atomic_write_bytes(path, result_json(result).encode())
        written.append(path)
    if render:
        from kgpubench.leaderboard_render import render_all

        render_all(load_results(out_dir), out_dir.parent)
    return written


def load_results(root: Path | None = None) -> list[dict]:
    """Every result file under ``root`` (default ``leaderboard/results``), in path order."""
    root = Path(root or results_dir())
    out = []
    for path in sorted(root.glob("*/*/*.json")):
        data = json.loads(path.read_text())
        data["_path"] = str(path)
        out.append(data)
    return out


def _close(a, b, rel: float, abs_: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def compare(committed: dict, fresh: dict, *, rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL) -> list[str]:
    """Every difference between a committed result and a fresh re-run: hashes and scores beyond tolerance."""
    where = f"{committed['task']}/{committed['scheme']}/{committed['model']}"
    out = []
    for name, a, b in (("model sha256", committed["model_sha256"], fresh["model_sha256"]),
                       ("split file sha256", committed.get("split_sha256"), fresh.get("split_sha256")),
                       ("dataset manifest sha256", committed["dataset"].get("manifest_sha256"),
                        fresh["dataset"].get("manifest_sha256"))):
        if a != b:
            out.append(f"{where}: {name} is {str(b)[:12]}..., the result was made with {str(a)[:12]}...")
    fresh_folds = fresh["folds"]
    for fold, rec in committed["folds"].items():
        if fold not in fresh_folds:
            out.append(f"{where}: fold {fold!r} no longer exists")
            continue
        for metric, value in rec["scores"].items():
            new = fresh_folds[fold]["scores"].get(metric)
            if not _close(value, new, rel_tol, abs_tol):
                out.append(f"{where}: fold {fold} {metric} = {new}, committed {value}")
    extra = sorted(set(fresh_folds) - set(committed["folds"]))
    if extra:
        out.append(f"{where}: new folds {extra} not in the committed result")
    return out


def verify(*, root: Path | None = None, only: Iterable[str] | None = None, data_dir: Path | str | None = None,
           rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL,
           progress: Callable[[str], None] | None = None, trust: bool = False) -> int:
    """Re-run committed results (only the models named in ``only``, if given) and compare.

    Returns the number of results verified; raises :class:`VerifyError` listing every problem.
    Tolerance: ``|a - b| <= max(abs_tol, rel_tol * max(|a|, |b|))`` per score, hashes exact.
    """
    from kgpubench.evaluation import round_floats

    only = set(only or ())
    results = [r for r in load_results(root) if not only or r["model"] in only]
    if only and not results:
        raise VerifyError(f"no committed result for model(s) {sorted(only)} under {root or results_dir()}.", [])
    problems: list[str] = []
    cache: dict[tuple[str, str], TaskData] = {}
    for res in results:
        if progress:
            progress(f"{res['task']} / {res['scheme']} / {res['model']}")
        try:
            model = model_file_in(project_root(), res["model_file"])
        except SubmissionError as exc:
            problems.append(f"{res['_path']}: {exc}")
            continue
        if not model.exists():
            problems.append(f"{res['_path']}: model file {res['model_file']} is missing")
            continue
        key = (res["task"], res["scheme"])
        try:
            if key not in cache:
                cache[key] = task_data(res["task"], res["scheme"], data_dir)
        except NoDataError as exc:
            problems.append(f"{res['_path']}: {exc}")
            continue
        try:
            if res.get("kind") == "predictions":  # scored predictions: re-score the committed file
                from kgpubench.submission import score_predictions

                fresh = round_floats(score_predictions(model, res["task"], res["scheme"], data_dir=data_dir))
            else:
                fresh = round_floats(evaluate(model, res["task"], res["scheme"], seed=res["seed"], data=cache[key],
                                              trust=trust))
        except SubmissionError as exc:  # the sandboxed model failed: a problem of this result, not of verify
            problems.append(f"{res['_path']}: {exc}")
            continue
        problems.extend(compare(res, fresh, rel_tol=rel_tol, abs_tol=abs_tol))
    if problems:
        raise VerifyError(f"verify failed: {len(problems)} problem(s) in {len(results)} result(s) "
                          f"(tolerance rel {rel_tol:g}, abs {abs_tol:g}):\n" + "\n".join(f"  {p}" for p in problems),
                          problems)
    return len(results)


def timed(fn, *args, **kwargs):
    start = time.perf_counter_ns()
    out = fn(*args, **kwargs)
    return out, (time.perf_counter_ns() - start) / 1e9


__all__ = [
    "ABS_TOL",
    "FAST_BASELINES",
    "REL_TOL",
    "Job",
    "VerifyError",
    "baseline_files",
    "compare",
    "get_task",
    "load_results",
    "plan",
    "result_path",
    "run",
    "verify",
]
