"""``kgpubench leaderboard run|verify --ray``: every (model, task, scheme, fold) as a Ray task.

:class:`RayExecutor` is a :class:`concurrent.futures.Executor`; :func:`kgpubench.board.leaderboard.run_jobs` hands it
:func:`kgpubench.board.leaderboard.run_job` exactly as it hands it to its process pool. The executor splits a model's
job into one Ray task per fold (:func:`run_fold`) on a cluster of :data:`FOLD_TASKS_FROM` task slots or more
(on a smaller one, a job is one task: faster there, same result): each fold task evaluates the model on its fold with
:func:`kgpubench.models.evaluation.evaluate`, so the model runs in the sandbox (an isolated child, with the sandbox's
time, memory and output limits) with the same thread count, seed and data as in a serial run. The driver
joins the folds into the result the serial run writes (:func:`join_folds`): the folds and their aggregate,
the scatter sample (the first points of each fold's, as many as the serial run keeps per fold), and the
predictions hash over every fold's predictions in fold order. Results are written by the driver as before.
The task data of each (task, scheme) is loaded once, by a Ray task, into Ray's object store
(:func:`load_data`); the fold tasks of every model read it from there.

The serial run's time budget is one per model and scheme, shared by its folds; a fold task has the whole
budget for itself. So that parallel and serial runs agree, a job whose folds used more than the budget
together, or in which some fold failed (or no fold could be evaluated), is run again as one task with all its
folds (:func:`kgpubench.board.leaderboard.run_job`): the result is then the serial run's, failure message included.
The oracle reference and skipped schemes run as one task too (they run no model code).

Each task declares one CPU per model thread and memory (at most the sandbox's memory limit), so Ray never
starts more models on a node than it has cores and memory for. On a cluster, every node needs the same
kgpubench (with its baselines) and the data folder at the same path (a shared file system, or the packaged
data).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from kgpubench.board.leaderboard import run_job
from kgpubench.errors import ClusterError
from kgpubench.models.evaluation import SAMPLE_POINTS, NoDataError, SubmissionError, aggregate, evaluate
from kgpubench.results.result import Result, Skipped
from kgpubench.sandbox.limits import DEFAULT_MEMORY_GB, DEFAULT_TIMEOUT_S, Limits
from kgpubench.sandbox.session import predictions_sha256
from kgpubench.tasks.data import Unusable, usable_task_data
from kgpubench.tasks.reference import ORACLE

GIB = 1 << 30
# From this many task slots on, a job runs as one task per fold (below, one task per job is faster: on the full
# board the longest job only sets the wall time beyond about 16 workers; docs/RAY.md).
FOLD_TASKS_FROM = 16


def _call(env: dict[str, str], fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Run ``fn`` in a Ray worker with the thread-count environment a board worker process gets."""
    os.environ.update(env)
    return fn(*args, **kwargs)


def _call_fold(env: dict[str, str], job: Any, fold: str, data: Any, *rest: Any) -> dict[str, Any]:
    """:func:`run_fold` in a Ray worker (``data`` a top-level argument, so Ray hands over the object)."""
    os.environ.update(env)
    return run_fold(job, fold, data, *rest)


def fold_names(data: Any) -> list[str] | None:
    """The folds of a job's task data that have training rows (one Ray task each), or ``None`` when the job
    runs as one task (a scheme skipped for want of data: :func:`kgpubench.tasks.data.usable_task_data` gave a
    reason)."""
    if isinstance(data, (Unusable, Skipped)):
        return None
    return [f for f in data.fold_names if np.any(data.folds != f)]


def fold_plan(job: Any, data_dir: Any = None) -> list[str] | None:
    """The folds of ``job`` that run as Ray tasks of their own, or ``None`` when it runs as one task (the
    oracle reference, a scheme skipped for want of data)."""
    if ORACLE.is_oracle(job.model):
        return None
    return fold_names(usable_task_data(job.task, job.scheme, data_dir))


def load_data(task: str, scheme: str, data_dir: Any = None) -> Any:
    """The task data of (task, scheme) (or why it is skipped), loaded once per board into Ray's object store
    and shared by the fold tasks of every model; its split hash and sample order are computed here, once,
    rather than in every fold task."""
    data = usable_task_data(task, scheme, data_dir)
    if isinstance(data, Unusable):
        return Skipped.of(data)
    _ = data.split_sha256, data.sample_rank  # both cached in the instance before pickling: every fold task has them
    return data


def run_fold(job: Any, fold: str, data: Any, seed: int = 0, threads: int = 1, trust: bool = False) -> dict[str, Any]:
    """Evaluate ``job``'s model on one fold of ``data`` (:func:`load_data`), in the sandbox, as
    :func:`kgpubench.board.leaderboard.run_job` does.

    Returns ``{"record": ..., "predictions": [...], "folds": n}`` (the one-fold result, the predictions the
    sandbox checked, the scheme's number of folds), or ``{"error": message}`` when the model failed.
    """
    preds: list[np.ndarray] = []
    try:
        record = evaluate(job.model, job.task, job.scheme, folds=[fold], data=data, seed=seed,
                          limits=Limits(threads=threads), trust=trust, predictions=preds)
    except (SubmissionError, NoDataError) as exc:
        return {"error": str(exc)}
    return {"record": record, "predictions": preds, "folds": len(data.fold_names)}


def join_folds(parts: list[dict[str, Any]]) -> Result:
    """The result of a whole job from its folds' :func:`run_fold` outputs (in the scheme's fold order), as
    :func:`kgpubench.models.evaluation.evaluate` makes it for all folds at once."""
    records = [p["record"] for p in parts]
    folds = {name: rec for r in records for name, rec in r.folds.items()}
    keep = SAMPLE_POINTS // max(1, parts[0]["folds"])
    return dataclasses.replace(
        records[0], folds=folds, aggregate=aggregate(folds), samples=[s for r in records for s in r.samples[:keep]],
        # as one ModelSession over every fold would hash them (fold index, row count, float64 values)
        predictions_sha256=predictions_sha256(pred for p in parts for pred in p["predictions"]),
        wall_time_s=sum(r.wall_time_s or 0.0 for r in records),
        cpu_time_s=sum(r.cpu_time_s or 0.0 for r in records))


class RayExecutor(concurrent.futures.Executor):
    """Submit calls as Ray tasks (Ray must be initialised: :func:`kgpubench.ray.session.ray_session`);
    :func:`kgpubench.board.leaderboard.run_job` is split into one task per fold (see the module docstring).

    Parameters
    ----------
    threads : int
        Threads a model may use: the CPUs each task declares, and the ``OMP_NUM_THREADS``-style environment
        (:meth:`kgpubench.sandbox.limits.Limits.env`) it runs with.
    memory_gb : float, optional
        Memory each task declares. Default: the sandbox's memory limit
        (:data:`kgpubench.sandbox.limits.DEFAULT_MEMORY_GB`), or less where the largest node has less memory per
        CPU (its memory over its CPUs, times ``threads``), so that memory does not idle its CPUs.
    retries : int
        Times Ray runs a task again when its worker process or node is lost (a fold is a pure function of its
        inputs, so a rerun gives the same result).
    split_folds : bool, optional
        One task per fold, or one per job. Default: per fold on a cluster of at least
        :data:`FOLD_TASKS_FROM` task slots (CPUs over ``threads``), else per job
        (``benchmarks/ray_board_speedup.py``: a fold task costs more, and pays off only where there are more
        workers than the longest job leaves busy).

    Raises
    ------
    kgpubench.errors.ClusterError
        No node of the cluster has the CPUs and memory one task declares.
    """

    def __init__(self, *, threads: int = 1, memory_gb: float | None = None, retries: int = 2,
                 split_folds: bool | None = None) -> None:
        import ray  # optional: the ray extra

        self.threads = int(threads)
        self.memory_gb = float(memory_gb if memory_gb is not None
                               else min(DEFAULT_MEMORY_GB, _memory_per_cpu_gb(ray) * self.threads))
        slots = int(ray.cluster_resources().get("CPU", 0) // max(1, self.threads))
        self.split_folds = slots >= FOLD_TASKS_FROM if split_folds is None else bool(split_folds)
        self._env = Limits(threads=self.threads).env()
        _check_fits(ray, self.threads, self.memory_gb)
        self._task = ray.remote(_call).options(num_cpus=self.threads, memory=int(self.memory_gb * GIB),
                                               max_retries=retries)
        self._plan = ray.remote(fold_names).options(num_cpus=0)
        self._fold = ray.remote(_call_fold).options(num_cpus=self.threads, memory=int(self.memory_gb * GIB),
                                                    max_retries=retries)
        self._refs: list[Any] = []
        self._data: dict[tuple, Any] = {}  # (task, scheme, data folder) -> the task data in Ray's object store
        self._lock = threading.Lock()
        self._joiners = concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="ray-join")

    def _remote(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        ref = self._task.remote(self._env, fn, args, kwargs)
        self._refs.append(ref)
        return ref

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        """Start ``fn(*args, **kwargs)`` as Ray task(s); the future resolves to its return value."""
        if (fn is run_job and self.split_folds and not kwargs and len(args) >= 2
                and not ORACLE.is_oracle(args[0].model)):
            return self._joiners.submit(self._by_folds, args)
        return self._remote(fn, args, kwargs).future()

    def _data_ref(self, task: str, scheme: str, data_dir: Any) -> Any:
        key = (task, scheme, str(data_dir))
        with self._lock:
            if key not in self._data:
                self._data[key] = self._task.remote(self._env, load_data, (task, scheme, data_dir), {})
            return self._data[key]

    def _by_folds(self, args: tuple) -> dict[str, Any]:
        """Run a job (``run_job``'s arguments) as one task per fold and join them; run it as one task when
        that is what the serial run would report (a failed fold, or folds over the shared time budget)."""
        import ray  # optional: the ray extra

        job, data_dir, *rest = args
        data = self._data_ref(job.task, job.scheme, data_dir)
        folds = ray.get(self._plan.remote(data))
        if folds:
            refs = [self._fold.remote(self._env, job, f, data, *rest) for f in folds]
            self._refs += refs
            parts = ray.get(refs)
            if (not any("error" in p for p in parts)
                    and sum(p["record"].wall_time_s for p in parts) <= DEFAULT_TIMEOUT_S):
                return join_folds(parts)
        return ray.get(self._remote(run_job, args, {}))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel tasks not yet finished when ``cancel_futures``; the Ray session stays as it is."""
        if cancel_futures:
            import ray  # optional: the ray extra

            for ref in self._refs:
                ray.cancel(ref)
        self._joiners.shutdown(wait=wait and not cancel_futures, cancel_futures=cancel_futures)
        self._refs, self._data = [], {}


def _alive(ray: Any) -> list[dict[str, float]]:
    return [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]


def _memory_per_cpu_gb(ray: Any) -> float:
    """The largest memory per CPU of a node of the cluster, in GiB."""
    shares = [r.get("memory", 0) / r["CPU"] / GIB for r in _alive(ray) if r.get("CPU")]
    return max(shares, default=0.0)


def _check_fits(ray: Any, cpus: int, memory_gb: float) -> None:
    nodes = _alive(ray)
    if any(r.get("CPU", 0) >= cpus and r.get("memory", 0) >= memory_gb * GIB for r in nodes):
        return
    best = max(nodes, key=lambda r: r.get("memory", 0), default={})
    raise ClusterError(f"no node of the Ray cluster has {cpus} CPU(s) and {memory_gb:g} GiB of memory for one "
                       f"model (the largest has {best.get('CPU', 0):g} CPUs and {best.get('memory', 0) / GIB:.1f} "
                       "GiB for tasks); add a bigger node or run without --ray.")


__all__ = ["RayExecutor", "fold_plan", "join_folds", "run_fold"]
