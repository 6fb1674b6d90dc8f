"""The reproducible leaderboard: evaluate every baseline on every task with data, write result files,
re-run them (``verify``) and render the board.

Results live in ``leaderboard/results/<task>/<scheme>/<model>.json``; a result names its model file
relative to the project root (``baselines/knn.py``, ``leaderboard/submissions/mine.py``). A model that fails
is a result too (``status: failed`` with its message); a scheme that cannot be evaluated gets
``<task>/<scheme>/_status.json`` with the reason (a :class:`~kgpubench.results.result.Skipped`). Every model runs
with one thread (:class:`Limits`), in ``jobs`` worker processes started with that thread count in their
environment. Records travel as :class:`~kgpubench.results.result.Result` and :class:`~kgpubench.results.result.Skipped`
from the job to the file and to the board: :func:`load_results` hands the renderer each as a
:class:`~kgpubench.results.result.BoardEntry` (the record, its file, whether it is stale).
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import os
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from kgpubench.board.baselines import BASELINES, baseline_files, runs_on  # noqa: F401 - BASELINES re-exported
from kgpubench.board.moved_tasks import stands_for
from kgpubench.board.site import board_files, render_all
from kgpubench.board.tolerance import ABS_TOL, MODEL_TOLERANCES, REL_TOL, tolerance  # noqa: F401 - re-exported
from kgpubench.errors import BoardWriteError, DataFileNotFoundError, ResultFormatError, VerifyError
from kgpubench.foundation.capped import loads_json
from kgpubench.foundation.files import atomic_write_bytes
from kgpubench.models.evaluation import (
    NoDataError,
    SubmissionError,
    evaluate,
    failure_record,
    predictions_path,
    rescore_problem,
    store_predictions,
)
from kgpubench.models.submission import model_file_in, score_predictions
from kgpubench.resources import bundled_path, default_data_dir
from kgpubench.results.ownership import BOARD_MARKER, LEGACY_MARKER, PNG_MARKER, check_writable, is_submission_result  # noqa: F401 - re-exported
from kgpubench.results.ownership import ours as _ours
from kgpubench.results.records import DatasetRef
from kgpubench.results.result import (
    ABSENT,
    RESULT_MAX_BYTES,
    BoardEntry,
    Record,
    Result,
    Skipped,
    model_label,
    project_root,
    read_record,
    read_result_json,
)
from kgpubench.sandbox.limits import Limits
from kgpubench.store.store import Store
from kgpubench.tasks import Task, as_task, list_tasks
from kgpubench.tasks.data import TaskData, Unusable, current_rows_sha256, files_sha256, task_sha256, usable_task_data
from kgpubench.tasks.reference import ORACLE
from kgpubench.tasks.splits import split_path, write_split_files

# The fast baselines: the floor and the reference rows, quick on the packaged data (`make test` re-runs a subset
# of their committed results that covers every metric: tests/board/test_ci_verify.py).
FAST_BASELINES = ("median", ORACLE.name)
STATUS_FILE = "_status.json"


def leaderboard_dir() -> Path:
    return bundled_path("leaderboard")


def results_dir() -> Path:
    return leaderboard_dir() / "results"


def result_path(root: Path, task: str, scheme: str, model: str) -> Path:
    """``<root>/<task name>/<scheme>/<model>.json``."""
    return Path(root) / task / scheme / f"{model}.json"


@dataclass(frozen=True)
class Job:
    """One evaluation: a model file (or ``"oracle"``) on a :class:`~kgpubench.tasks.Task` under one scheme (a task
    name given here is looked up once, when the job is made)."""

    model: Path | str
    task: Task
    scheme: str

    def __post_init__(self) -> None:
        if not isinstance(self.task, Task):
            object.__setattr__(self, "task", as_task(self.task))

    @property
    def name(self) -> str:
        return ORACLE.name if ORACLE.is_oracle(self.model) else Path(self.model).stem


def plan(models: Iterable[Path] | None = None, only: Iterable[str] | None = None,
         tasks: Iterable[str] | None = None, *, references: bool = True) -> list[Job]:
    """Jobs for every model x task it runs on (:func:`kgpubench.board.baselines.runs_on`: a baseline's rule, else
    the file's ``TASKS``) x the task's board schemes, plus the oracle reference on every task and scheme (unless
    ``only`` leaves it out)."""
    only = set(only or ())
    wanted = set(tasks or ())
    jobs = []
    for path in models if models is not None else baseline_files():
        path = Path(path)
        if only and path.stem not in only:
            continue
        applies = runs_on(path)  # declared or read, never run: a model's code runs only in the sandbox
        for task in list_tasks():
            if not applies(task) or (wanted and task.name not in wanted):
                continue
            jobs.extend(Job(path, task, s) for s in task.evaluated_schemes)
    if references and (not only or any(ORACLE.is_oracle(o) for o in only)):
        jobs += [Job(ORACLE.name, t, s) for t in list_tasks() if not wanted or t.name in wanted
                 for s in t.evaluated_schemes]
    return jobs


# ----- running jobs (in this process or in worker processes) -----------------------------------------------
def run_job(job: Job, data_dir=None, seed: int = 0, threads: int = 1, trust: bool = False) -> Record:
    """One job's record: a :class:`~kgpubench.results.result.Result` (scores, or a failure with its message) or a
    :class:`~kgpubench.results.result.Skipped` with its reason. The model runs in the sandbox
    (:class:`kgpubench.sandbox.session.ModelSession`); ``trust`` lets it run unisolated where the kernel cannot
    isolate it."""
    data = usable_task_data(job.task, job.scheme, data_dir)
    if isinstance(data, Unusable):
        return Skipped.of(data)
    limits = Limits(threads=threads)
    try:
        return evaluate(job.model, job.task, job.scheme, data=data, seed=seed, limits=limits, trust=trust)
    except (SubmissionError, NoDataError) as exc:
        return failure_record(job.model, job.task, job.scheme, str(exc), data=data, seed=seed, limits=limits)


def _worker_init(env: dict[str, str]) -> None:
    os.environ.update(env)


def run_jobs(jobs: list[Job], *, data_dir=None, seed: int = 0, threads: int = 1, workers: int = 1,
             trust: bool = False, progress: Callable[[str], None] | None = None,
             on_result: Callable[[Job, Record], None] | None = None,
             executor: Executor | None = None, wall_times: list[float | None] | None = None
             ) -> list[tuple[Job, Record]]:
    """Run ``jobs``; with ``workers > 1`` in spawned processes whose environment pins ``threads``, or on
    ``executor`` when given (e.g. :class:`kgpubench.ray.board.RayExecutor`; it is not shut down here).

    ``on_result`` sees each result as it arrives (to write it at once); the return value lists them in job
    order whatever the completion order. Jobs start longest first (:func:`job_order`, from ``wall_times``: each
    job's last wall time, None when unknown), so that the workers finish together.
    """
    order = job_order(jobs, wall_times)
    out: dict[int, Record] = {}
    if workers <= 1 and executor is None:
        for i in order:
            if progress:
                progress(f"{jobs[i].task.name} / {jobs[i].scheme} / {jobs[i].name}")
            out[i] = run_job(jobs[i], data_dir, seed, threads, trust)
            if on_result:
                on_result(jobs[i], out[i])
    else:
        own = executor is None
        if own:
            executor = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                                           initializer=_worker_init, initargs=(Limits(threads=threads).env(),))
        try:
            futures = {executor.submit(run_job, jobs[i], data_dir, seed, threads, trust): i for i in order}
            for fut in as_completed(futures):
                i = futures[fut]
                out[i] = fut.result()
                if on_result:
                    on_result(jobs[i], out[i])
                if progress:
                    progress(f"{jobs[i].task.name} / {jobs[i].scheme} / {jobs[i].name}: {out[i].status}")
        finally:
            if own:
                executor.shutdown()
    return [(jobs[i], out[i]) for i in range(len(jobs))]


def previous_wall_time(root: Path, job: Job) -> float | None:
    """The wall time (s) of ``job``'s result under ``root`` when there is a readable one, else None."""
    path = result_path(root, job.task.name, job.scheme, job.name)
    try:
        record = read_record(read_result_json(path), where=str(path))
    except (OSError, ValueError):
        return None
    return wall_time_of(record.wall_time_s) if isinstance(record, Result) else None


def wall_time_of(value: object) -> float | None:
    """``value`` as a wall time in seconds (a non-negative number), else None."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def job_order(jobs: list[Job], wall_times: list[float | None] | None = None) -> list[int]:
    """Indices of ``jobs``, longest first: jobs without a known wall time (never run) first, costliest task
    first (its declared ``relative_cost``), then the others by their last wall time; ties in job order."""
    known = wall_times or [None] * len(jobs)

    def key(i: int) -> tuple:
        t = known[i]
        return (0, -jobs[i].task.relative_cost, i) if t is None else (1, -t, i)
    return sorted(range(len(jobs)), key=key)


# ----- reusing results that nothing has changed ------------------------------------------------------------
_ANY_SPLIT = object()  # same_data's default: the split is not compared


_FILES: dict[tuple, str] = {}


def _files_sha256(task: Task, store: Store) -> str:
    """:func:`~kgpubench.tasks.data.files_sha256`, kept per (config, store folder, manifest): the manifest is
    parsed once per config, not once per result."""
    key = (task.config, str(store.path), store.manifest_sha256())
    if key not in _FILES:
        _FILES[key] = files_sha256(task, store)
    return _FILES[key]


def same_data(dataset: object, task: Task, scheme: str, store: Store, split_sha256: object = _ANY_SPLIT) -> bool:
    """Whether a result's dataset block (and, given ``split_sha256``, the result's split hash) describes the rows
    ``task`` reads in ``store`` now: the same task declaration (:func:`~kgpubench.tasks.data.task_sha256`) and
    either the same config files (:func:`~kgpubench.tasks.data.files_sha256`) and the same task rows
    (:func:`~kgpubench.tasks.data.current_rows_sha256`: the rows are selected, no feature or fold built), or,
    when the files changed, the same task rows and split (:func:`~kgpubench.tasks.data.usable_task_data`).
    The rows are compared on the fast path too: the same files and declaration give other rows when the selection
    code changed (a rule of :mod:`kgpubench.tasks.selection`), and such a result was made from rows the task no
    longer reads. Other library code and package versions are not compared (``leaderboard verify`` is what
    catches a code change that moves a score). A block without ``task_sha256`` (a result made before it existed)
    never matches."""
    if not isinstance(dataset, DatasetRef) or dataset.task_sha256 != task_sha256(task):
        return False
    if dataset.files_sha256 == _files_sha256(task, store):
        rows = _known(dataset.rows_sha256)  # none: the task had no rows then (a skip), and the files are the same
        return rows is None or rows == current_rows_sha256(task, store.path)
    now = usable_task_data(task, scheme, store.path)
    if not now.dataset or now.dataset.get("rows_sha256") != _known(dataset.rows_sha256):
        return False
    return split_sha256 is _ANY_SPLIT or (isinstance(now, TaskData) and split_sha256 == now.split_sha256)


def reusable_file(folder: Path, job: Job, *, seed: int, threads: int, store: Store,
                  warn: Callable[[str], None] | None = None, rescore: bool = False
                  ) -> tuple[Path, bytes, Record] | None:
    """The result (or skip status) file under ``folder`` for ``job`` that a rerun would write, with its bytes
    (read once, at most :data:`~kgpubench.results.result.RESULT_MAX_BYTES`) and its record, else None.

    Kept when it names the job's task, scheme and model, has a model sha256 that stands for the model file
    (:func:`kgpubench.board.moved_tasks.stands_for`: its sha256, or the one it had before its TASKS moved out),
    the same seed and threads, and
    :func:`same_data` (for a scored result also the same ``split_sha256``, when the rows were compared). A failed
    result is kept like a scored one (the same inputs fail the same way). An unreadable, foreign (not a result,
    or another job's) or linked file is never kept and, with ``warn``, named there. With ``rescore`` (a folder
    other than the run's own output and the committed board), a scored result is kept only when every fold's
    scores equal what its predictions (the file beside it, sha256 recorded in the result) score on the data
    (:func:`kgpubench.models.evaluation.rescore_problem`): a score without its predictions is never trusted."""
    where = Path(folder) / job.task.name / job.scheme
    for path in (where / f"{job.name}.json", where / STATUS_FILE):
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink() or not path.is_file():
            if warn:
                warn(f"not reused: {path} is a link or not a file")
            continue
        try:
            raw = _read_capped(path)
            old = read_record(loads_json(raw, path, expected="a result file as `kgpubench leaderboard run` "
                                                             "writes it"), where=str(path))
        except (OSError, ValueError) as exc:
            if warn:
                warn(f"not reused: {str(exc).splitlines()[0]}")
            continue
        if _known(old.task) != job.task.name or _known(old.scheme) != job.scheme:
            if warn:
                warn(f"not reused: {path} holds a result of {old.task}/{old.scheme}, not {job.task.name}/{job.scheme}")
            continue
        if isinstance(old, Skipped):  # the scheme cannot be evaluated on these rows, whatever the model
            if path.name == STATUS_FILE and same_data(old.dataset, job.task, job.scheme, store):
                return path, raw, old
            continue
        same_model = (_known(old.model_sha256) is None if ORACLE.is_oracle(job.name)
                      else stands_for(_known(old.model_sha256), Path(job.model)))
        if not (_known(old.model) == job.name and same_model and _known(old.seed) == seed
                and isinstance(old.limits, dict) and old.limits.get("threads") == threads):
            continue
        if not same_data(old.dataset, job.task, job.scheme, store, split_sha256=_known(old.split_sha256)):
            continue
        if rescore:
            data = usable_task_data(job.task, job.scheme, store.path)
            why = (rescore_problem(old, path, data) if isinstance(data, TaskData)
                   else "its scheme cannot be evaluated on the data")
            if why:
                if warn:
                    warn(f"not reused: {path}: {why}")
                continue
        return path, raw, old
    return None


def reusable(out_dir: Path, job: Job, *, seed: int, threads: int, store: Store) -> bool:
    """Whether the result (or skip status) already under ``out_dir`` for ``job`` is what a rerun would write
    (:func:`reusable_file`)."""
    return reusable_file(out_dir, job, seed=seed, threads=threads, store=store) is not None


def _read_capped(path: Path) -> bytes:
    with path.open("rb") as fh:
        raw = fh.read(RESULT_MAX_BYTES + 1)
    if len(raw) > RESULT_MAX_BYTES:
        raise ResultFormatError(f"{path}: larger than {RESULT_MAX_BYTES:,} bytes; a result file is a few kilobytes.")
    return raw


def results_splits_root(results: Path) -> Path | None:
    """The splits folder that belongs with a results folder: the committed ``splits/`` (None) for the committed
    ``leaderboard/results``, else ``<results>/../splits`` (where :func:`run` writes them)."""
    try:
        committed = Path(results).resolve() == results_dir().resolve()
    except OSError:
        committed = False
    return None if committed else Path(results).parent / "splits"


# ----- writing ------------------------------------------------------------------------------------------------
def run(*, data_dir: Path | str | None = None, out_dir: Path | None = None, only: Iterable[str] | None = None,
        tasks: Iterable[str] | None = None, models: Iterable[Path] | None = None, render: bool = True,
        seed: int = 0, workers: int = 1, force: bool = False, splits_dir: Path | None = None,
        progress: Callable[[str], None] | None = None, trust: bool = False,
        executor: Executor | None = None, reuse: bool = False, reuse_from: Path | None = None,
        warn: Callable[[str], None] | None = None) -> list[Path]:
    """Evaluate the jobs of :func:`plan`, write results (scores, failures, skipped schemes with their reason),
    write the split files of the tasks with data, and render the board next to ``out_dir``. The jobs run on
    ``executor`` when given (:func:`run_jobs`), else in ``workers`` processes.

    With ``reuse``, a job whose result under ``out_dir`` is :func:`reusable` is not run again; with
    ``reuse_from`` too (another results folder, e.g. the committed ``leaderboard/results``), a job whose result
    there is reusable is copied byte for byte into ``out_dir`` (never modified) instead of run, and so are its
    task's split files from the folder's splits (:func:`results_splits_root`) when their sha256 are the results'
    ``split_sha256``. A task's split files are not rewritten when every job of the task is reused and they exist.
    ``progress`` says what was reused and what runs again; ``warn`` (default :func:`warnings.warn`) names every
    file of ``reuse_from`` that could not be read or is not a result of its job.

    Returns the result files written (kept and copied ones are not). ``splits_dir`` defaults to the committed
    ``splits/`` when writing the committed results, else ``<out_dir>/../splits``. Existing files not written by
    kgpubench are refused unless ``force``.
    """
    default = out_dir is None
    out_dir = Path(out_dir or results_dir())
    splits_root = Path(splits_dir) if splits_dir else (None if default else out_dir.parent / "splits")
    jobs = plan(models, only, tasks)
    targets = [result_path(out_dir, j.task.name, j.scheme, j.name) for j in jobs]
    targets += [out_dir / j.task.name / j.scheme / STATUS_FILE for j in jobs]
    if render:
        targets += board_files(out_dir.parent)
    check_writable(targets, force)
    planned = jobs
    if reuse:
        store = Store(data_dir or default_data_dir())
        jobs, seeded = _reuse(planned, out_dir, reuse_from, seed=seed, store=store, progress=progress,
                              warn=warn or _warn)
        fresh_tasks = {j.task for j in jobs}
        fresh_tasks |= {j.task for j in planned if j.task.split_files and not all(
            split_path(j.task.name, s, splits_root).exists() for s in j.task.schemes)}
        if reuse_from is not None:
            fresh_tasks -= _copy_splits(fresh_tasks - {j.task for j in jobs}, seeded,
                                        results_splits_root(Path(reuse_from)), splits_root)
    else:
        fresh_tasks = {j.task for j in jobs}
    write_splits(data_dir, fresh_tasks, splits_root, force=force)  # before any model runs
    written: list[Path] = []
    # The committed board holds no predictions (a full run would add over 100 MB to the repository): its
    # results are trusted as the committed folder; any other output carries them (CI artefacts, --from).
    keep_predictions = results_splits_root(out_dir) is not None

    def write(job: Job, record: Record) -> None:
        status_path = out_dir / job.task.name / job.scheme / STATUS_FILE
        path = result_path(out_dir, job.task.name, job.scheme, job.name)
        if isinstance(record, Skipped):
            path.unlink(missing_ok=True)  # a stale result of this model
            if status_path not in written:
                atomic_write_bytes(status_path, record.to_json().encode())
                written.append(status_path)
            return
        status_path.unlink(missing_ok=True)
        if keep_predictions:  # first: the result names them by sha256
            record = store_predictions(record, path)
        atomic_write_bytes(path, record.to_json().encode())
        written.append(path)

    run_jobs(jobs, data_dir=data_dir, seed=seed, workers=workers, trust=trust, progress=progress, on_result=write,
             executor=executor, wall_times=[previous_wall_time(out_dir, job) for job in jobs])
    pruned = prune(out_dir, planned) if only is None and tasks is None and models is None else []
    if render and not (reuse and not jobs and not pruned and _board_is_current(out_dir)):
        render_all(load_results(out_dir, data_dir=data_dir, mark_stale=True), out_dir.parent, force=True,
                   results_dir=out_dir, data_dir=data_dir)  # checked above
    elif render and progress:
        progress("board kept: no result changed and every board file is newer than the results (--reuse)")
    return written


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def _reuse(jobs: list[Job], out_dir: Path, reuse_from: Path | None, *, seed: int, store: Store,
           progress: Callable[[str], None] | None, warn: Callable[[str], None]
           ) -> tuple[list[Job], dict[Job, Record]]:
    """The jobs of ``jobs`` to run again: those without a :func:`reusable_file` under ``out_dir`` nor (copied
    into ``out_dir``) under ``reuse_from``. Also returns the records of the reused jobs."""
    threads = Limits().threads
    rerun: list[Job] = []
    reused: dict[Job, Record] = {}
    here = copied = 0
    done: set[Path] = set()
    # checked config by config, task by task: the rows a changed config's results are compared with are read once per
    # (task, scheme) (usable_task_data keeps the last few), not once per result; the jobs keep their order
    for job in sorted(jobs, key=lambda j: (j.task.config, j.task.name, j.scheme)):
        found = reusable_file(out_dir, job, seed=seed, threads=threads, store=store)
        if found is not None:  # a skip status copied for another model of this scheme counts as copied
            copied, here = (copied + 1, here) if found[0] in done else (copied, here + 1)
        elif reuse_from is not None:
            found = reusable_file(Path(reuse_from), job, seed=seed, threads=threads, store=store, warn=warn,
                                  rescore=results_splits_root(Path(reuse_from)) is not None)
            if found is not None:
                source, raw, _ = found
                named = predictions_path(source)
                if named.is_file() and not named.is_symlink() and results_splits_root(out_dir) is not None:
                    atomic_write_bytes(predictions_path(out_dir / job.task.name / job.scheme / source.name),
                                       named.read_bytes())
                target = out_dir / job.task.name / job.scheme / source.name
                other = (out_dir / job.task.name / job.scheme /
                         (f"{job.name}.json" if source.name == STATUS_FILE else STATUS_FILE))
                other.unlink(missing_ok=True)  # a result where the scheme is now skipped, or the reverse
                if target not in done:
                    atomic_write_bytes(target, raw)
                    done.add(target)
                copied += 1
        if found is None:
            rerun.append(job)
        else:
            reused[job] = found[2]
    rerun = [j for j in jobs if j in set(rerun)]
    reused = {j: reused[j] for j in jobs if j in reused}
    if progress:
        source = f", {copied} copied from {reuse_from}" if reuse_from is not None else ""
        progress(f"reused {len(reused)} of {len(jobs)} results (same task declaration and rows, split, model file, "
                 f"seed and threads; --reuse): {here} already in {out_dir}{source}")
        per_task: dict[str, int] = {}
        for job in reused:
            per_task[job.task.name] = per_task.get(job.task.name, 0) + 1
        if per_task:
            progress("reused per task: " + ", ".join(f"{t} {n}" for t, n in per_task.items()))
        failed = [f"{j.task.name}/{j.scheme}/{j.name}" for j, r in reused.items() if r.status == "failed"]
        if failed:  # kept like a scored one, but a failure from the environment would hide here: say which
            progress(f"of them {len(failed)} failed (kept: the same inputs fail the same way; a failure that came "
                     "from the environment runs again without --reuse (--only MODEL --task TASK) or once its file is "
                     "deleted): "
                     + ", ".join(failed[:20]) + (f" and {len(failed) - 20} more" if len(failed) > 20 else ""))
        names = [f"{j.task.name}/{j.scheme}/{j.name}" for j in rerun]
        progress(f"running {len(rerun)} again" + (": " + ", ".join(names[:20]) if names else "")
                 + (f" and {len(names) - 20} more" if len(names) > 20 else ""))
    return rerun, reused


def _copy_splits(tasks: set[Task], reused: dict[Job, Record], source: Path | None, target: Path | None) -> set[Task]:
    """Copy the split files of ``tasks`` (every job of each reused) from ``source`` to ``target`` where every
    scheme's file is there, is a split file and has the sha256 its reused results record as ``split_sha256``;
    returns the tasks copied."""
    if (source and source.resolve()) == (target and target.resolve()):
        return set()
    done = set()
    for task in tasks:
        want = {j.scheme: _known(r.split_sha256) for j, r in reused.items()
                if j.task == task and isinstance(r, Result) and _known(r.split_sha256)}
        files = {}
        for scheme in task.schemes:
            path = split_path(task.name, scheme, source)
            try:
                raw = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            except OSError:
                raw = b""
            if not raw.startswith(b"row_id,fold\n") or (
                    scheme in want and hashlib.sha256(raw).hexdigest() != want[scheme]):
                break
            files[scheme] = raw
        else:
            if not want:  # nothing recorded to check the files against
                continue
            for scheme, raw in files.items():
                atomic_write_bytes(split_path(task.name, scheme, target), raw)
            done.add(task)
    return done


def _board_is_current(out_dir: Path) -> bool:
    """Whether every board file next to ``out_dir`` exists and is newer than every result file under it."""
    files = board_files(out_dir.parent)
    results = list(Path(out_dir).glob("*/*/*.json"))
    if not files or not all(f.exists() for f in files):
        return False
    newest_result = max((p.stat().st_mtime for p in results), default=0.0)
    return min(f.stat().st_mtime for f in files) >= newest_result


def prune(out_dir: Path, jobs: list[Job]) -> list[Path]:
    """Remove result files (written by kgpubench) of model, task and scheme combinations no longer planned:
    after a full run the folder holds exactly the current board plus the results added from submission
    folders (:mod:`kgpubench.board.pull_request`)."""
    planned = {result_path(out_dir, j.task.name, j.scheme, j.name) for j in jobs}
    planned |= {out_dir / j.task.name / j.scheme / STATUS_FILE for j in jobs}
    stale = [p for p in sorted(Path(out_dir).glob("*/*/*.json"))
             if p not in planned and _ours(p) and not is_submission_result(p)]
    for path in stale:
        path.unlink()
        sidecar = predictions_path(path)  # its predictions go with it
        if sidecar.is_file() and not sidecar.is_symlink():
            sidecar.unlink()
    return stale


def write_splits(data_dir, tasks: Iterable[Task], root: Path | None, *, force: bool = False) -> list[Path]:
    """(Re)write the split files of ``tasks`` from the store, in registry order (tasks without rows write none)."""
    store = Store(data_dir or default_data_dir())
    tables = {}
    out = []
    wanted = {t.name for t in tasks}
    for task in list_tasks():
        if task.name not in wanted:
            continue
        if not task.split_files:
            continue
        check_writable([split_path(task.name, s, root) for s in task.schemes], force)
        if task.config not in tables:
            tables[task.config] = store.read(task.config)
        out += write_split_files(tables[task.config], task, root)
    return out


def load_results(root: Path | None = None, *, data_dir: Path | str | None = None,
                 mark_stale: bool = False) -> list[BoardEntry]:
    """Every result and status file under ``root`` (default ``leaderboard/results``), in path order, read
    through :func:`read_results`, each as a :class:`~kgpubench.results.result.BoardEntry` with its file: the
    renderer's input (:func:`kgpubench.board.site.render_all`); everything else reads :func:`read_results`.

    With ``mark_stale``, each entry's ``stale`` says whether it was made from other rows than its task reads in
    the store at ``data_dir`` (default: the packaged data) now (:func:`is_stale`); the board marks those. Without
    it, no entry is stale."""
    out = []
    store = Store(data_dir or default_data_dir()) if mark_stale else None
    known = {t.name: t for t in list_tasks()}
    for path, record in read_results(root):
        stale = False
        if store is not None:
            task = known.get(_known(record.task))
            stale = task is not None and is_stale(record.dataset, task, store)
        out.append(BoardEntry(record, path, stale))
    return out


def rescore_folder(root: Path, data_dir: Path | str | None = None) -> int:
    """Recompute the scores of every scored result under ``root`` that names its predictions file
    (:func:`kgpubench.models.evaluation.rescore_problem`) before they are shown; returns how many results name
    none (not rescored: the committed board's, or a Ray run's). Raises :class:`VerifyError` (one line) on the
    first result whose scores its predictions do not give."""
    data: dict[tuple[str, str], object] = {}
    unchecked = 0
    for path, res in read_results(root):
        if not isinstance(res, Result) or res.status != "ok" or res.kind == "reference":
            continue
        if "predictions_file" not in res.extra:
            unchecked += 1
            continue
        key = (str(res.task), str(res.scheme))
        if key not in data:
            data[key] = usable_task_data(res.task, res.scheme, data_dir)
        why = rescore_problem(res, path, data[key]) if isinstance(data[key], TaskData) else None
        if why:
            raise VerifyError(f"{path}: refused, its scores are not trusted: {why}; re-run it (`kgpubench "
                              "leaderboard run`).", [f"{path}: {why}"])
    return unchecked


def is_stale(dataset: object, task: Task, store: Store) -> bool:
    """Whether a result (scored, failed, skipped, or scored predictions) was made from other rows of ``task``
    than ``store`` holds now (data merged since): its recorded ``rows_sha256`` is not the rows' hash now. The rows
    are compared even when the config files are those it records: the same files give other rows after a change of
    the selection code. A result that records no rows (it failed before reading any) is never stale."""
    if not isinstance(dataset, DatasetRef) or not isinstance(dataset.rows_sha256, str):
        return False
    return dataset.rows_sha256 != current_rows_sha256(task, store.path)


def read_results(root: Path | None = None) -> list[tuple[Path, Record]]:
    """(path, :class:`~kgpubench.results.result.Result` or :class:`~kgpubench.results.result.Skipped`) of every result
    and status file under ``root`` (default ``leaderboard/results``), in path order."""
    root = Path(root or results_dir())
    return [(path, read_record(read_result_json(path), where=str(path)))
            for path in sorted(root.glob("*/*/*.json"))]


def _known(value):
    return None if value is ABSENT else value


def _close(a, b, rel: float, abs_: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def compare(committed: Result, fresh: Result, *, rel_tol: float | None = None,
            abs_tol: float = ABS_TOL, model_path: Path | None = None) -> list[str]:
    """Every difference between a committed result and a fresh re-run: status, hashes, and scores beyond their
    tolerance (:func:`kgpubench.board.tolerance.tolerance`: the metric's, or the committed model file's when it
    declares a larger one; ``rel_tol`` overrides both). Given the ``model_path`` the re-run ran, a committed model
    sha256 that stands for that file (:func:`kgpubench.board.moved_tasks.stands_for`) is no difference."""
    where = f"{committed.task}/{committed.scheme}/{committed.model}"
    out = []
    if committed.status != fresh.status:
        return [f"{where}: status is {fresh.status} ({fresh.message or ''}), the result says {committed.status}"]
    for name, a, b in (("model sha256", _known(committed.model_sha256), _known(fresh.model_sha256)),
                       ("split sha256", _known(committed.split_sha256), _known(fresh.split_sha256)),
                       ("task rows sha256", committed.rows_sha256, fresh.rows_sha256)):
        if a != b and not (name == "model sha256" and model_path is not None and stands_for(a, model_path)
                           and stands_for(b, model_path, moved={})):
            out.append(f"{where}: {name} is {str(b)[:12]}..., the result was made with {str(a)[:12]}...")
    if committed.status == "failed":
        if _known(committed.message) != _known(fresh.message):
            out.append(f"{where}: fails with {_known(fresh.message)!r}, the result says {_known(committed.message)!r}")
        return out
    fresh_folds = fresh.folds
    model_file = _known(committed.model_file)
    for fold, rec in committed.folds.items():
        if fold not in fresh_folds:
            out.append(f"{where}: fold {fold!r} no longer exists")
            continue
        for metric, value in rec.scores.items():
            new = fresh_folds[fold].score(metric)
            if not _close(value, new, tolerance(metric, model_file) if rel_tol is None else rel_tol, abs_tol):
                out.append(f"{where}: fold {fold} {metric} = {new}, committed {value}")
    extra = sorted(set(fresh_folds) - set(committed.folds))
    if extra:
        out.append(f"{where}: new folds {extra} not in the committed result")
    return out


def verify(*, root: Path | None = None, only: Iterable[str] | None = None, tasks: Iterable[str] | None = None,
           data_dir: Path | str | None = None,
           rel_tol: float | None = None, abs_tol: float = ABS_TOL, workers: int = 1,
           progress: Callable[[str], None] | None = None, trust: bool = False,
           executor: Executor | None = None) -> int:
    """Re-run committed results (only the models named in ``only`` and the tasks named in ``tasks``, if given)
    and compare (the jobs on ``executor`` when given, see :func:`run_jobs`); a result that names its predictions
    file has its scores recomputed from it too (:func:`kgpubench.models.evaluation.rescore_problem`).

    Returns the number of results verified; raises :class:`VerifyError` listing every problem, and
    :class:`~kgpubench.errors.DataFileNotFoundError` when ``root`` does not exist. Tolerance per score:
    ``|a - b| <= max(abs_tol, rel * max(|a|, |b|))`` with ``rel`` the metric's, or the model's where it
    declares a larger one (:func:`kgpubench.board.tolerance.tolerance`), unless ``rel_tol`` is given; hashes
    exact.
    """
    where = Path(root or results_dir())
    if not where.is_dir():
        raise DataFileNotFoundError(f"{where}: no such results folder; pass the folder `leaderboard run --out` "
                                    "wrote (default leaderboard/results).")
    only, wanted = set(only or ()), set(tasks or ())
    results = [(path, r) for path, r in read_results(where)
               if isinstance(r, Result) and (not only or r.model in only) and (not wanted or r.task in wanted)]
    if (only or wanted) and not results:
        which = " and ".join(x for x in (f"model(s) {sorted(only)}" if only else "",
                                        f"task(s) {sorted(wanted)}" if wanted else "") if x)
        raise VerifyError(f"no committed result for {which} under {where}.", [])
    problems: list[str] = []
    jobs, committed = [], []
    for path, res in results:
        if res.kind == "predictions":  # scored predictions: re-score the committed file
            try:
                model = model_file_in(project_root(), res.model_file)
                if not model.exists():
                    problems.append(f"{path}: predictions file {res.model_file} is missing")
                    continue
                fresh = score_predictions(model, res.task, res.scheme, data_dir=data_dir).rounded()
            except SubmissionError as exc:
                problems.append(f"{path}: {exc}")
                continue
            problems.extend(compare(res, fresh, rel_tol=rel_tol, abs_tol=abs_tol, model_path=model))
            continue
        try:  # never a file outside the project ('..', absolute paths, symlinks out)
            model = ORACLE.name if ORACLE.names(res) else model_file_in(project_root(), res.model_file)
        except SubmissionError as exc:
            problems.append(f"{path}: {exc}")
            continue
        if not ORACLE.is_oracle(model) and not Path(model).exists():
            problems.append(f"{path}: model file {res.model_file} is missing")
            continue
        if "predictions_file" in res.extra:  # its scores against its own predictions too, not only a rerun's
            data = usable_task_data(res.task, res.scheme, data_dir)
            why = rescore_problem(res, path, data) if isinstance(data, TaskData) else None
            if why:
                problems.append(f"{path}: {why}")
        jobs.append(Job(model, res.task, res.scheme))
        committed.append((path, res))
    seeds = {res.seed or 0 for _, res in committed}
    fresh_all: list[tuple[int, Record]] = []
    for seed in sorted(seeds):
        idx = [i for i, (_, r) in enumerate(committed) if (r.seed or 0) == seed]
        ran = run_jobs([jobs[i] for i in idx], data_dir=data_dir, seed=seed, workers=workers, trust=trust,
                       progress=progress, executor=executor,
                       wall_times=[wall_time_of(committed[i][1].wall_time_s) for i in idx])
        fresh_all += [(i, result) for i, (_, result) in zip(idx, ran)]
    for i, fresh in sorted(fresh_all, key=lambda t: t[0]):
        path, res = committed[i]
        if isinstance(fresh, Skipped):
            problems.append(f"{path}: {fresh.reason}")
            continue
        model = jobs[i].model
        problems.extend(compare(res, fresh.rounded(), rel_tol=rel_tol, abs_tol=abs_tol,
                                model_path=None if ORACLE.is_oracle(model) else Path(model)))
    if problems:
        raise VerifyError(f"verify failed: {len(problems)} problem(s) in {len(results)} result(s):\n"
                          + "\n".join(f"  {p}" for p in problems), problems)
    return len(results)


__all__ = [
    "ABS_TOL",
    "FAST_BASELINES",
    "REL_TOL",
    "BoardWriteError",
    "MODEL_TOLERANCES",
    "Job",
    "VerifyError",
    "baseline_files",
    "check_writable",
    "compare",
    "load_results",
    "model_label",
    "plan",
    "project_root",
    "read_results",
    "result_path",
    "run",
    "run_job",
    "tolerance",
    "verify",
    "write_splits",
]
