"""``kgpubench leaderboard run|verify --ray``: every (model, task, scheme) job as a Ray task.

:class:`RayExecutor` is a :class:`concurrent.futures.Executor`; :func:`kgpubench.leaderboard.run_jobs` hands it
:func:`kgpubench.leaderboard.run_job` exactly as it hands it to its process pool, so a job computes the same
result wherever it runs: the model still runs in the sandbox (a fresh isolated child per fold, with the
sandbox's time, memory and output limits), with the same thread count, seed and data, and results are
written by the driver in the same way. Each task declares one CPU per model thread and the sandbox's memory
limit, so Ray never starts more models on a node than it has cores and memory for.

A job is one (model, task, scheme): all its folds run in one task, because a result's predictions hash and
its scatter sample span the folds (splitting folds would change them).

On a cluster, every node needs the same kgpubench (with its baselines) and the data folder at the same path
(a shared file system, or the packaged data).
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Callable
from typing import Any

from kgpubench.errors import ClusterError

GIB = 1 << 30


def _call(env: dict[str, str], fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """Run ``fn`` in a Ray worker with the thread-count environment a board worker process gets."""
    os.environ.update(env)
    return fn(*args, **kwargs)


class RayExecutor(concurrent.futures.Executor):
    """Submit calls as Ray tasks (Ray must be initialised: :func:`kgpubench.scale.session.ray_session`).

    Parameters
    ----------
    threads : int
        Threads a model may use: the CPUs each task declares, and the ``OMP_NUM_THREADS``-style environment
        (:meth:`kgpubench.evaluation.RunLimits.env`) it runs with.
    memory_gb : float, optional
        Memory each task declares (default: the sandbox's memory limit,
        :data:`kgpubench.sandbox.DEFAULT_MEMORY_GB`).
    retries : int
        Times Ray runs a task again when its worker process or node is lost (a job is a pure function of its
        inputs, so a rerun gives the same result).

    Raises
    ------
    kgpubench.errors.ClusterError
        No node of the cluster has the CPUs and memory one task declares.
    """

    def __init__(self, *, threads: int = 1, memory_gb: float | None = None, retries: int = 2) -> None:
        import ray

        from kgpubench.evaluation import RunLimits
        from kgpubench.sandbox import DEFAULT_MEMORY_GB

        self.threads = int(threads)
        self.memory_gb = float(memory_gb if memory_gb is not None else DEFAULT_MEMORY_GB)
        self._env = RunLimits(threads=self.threads).env()
        _check_fits(ray, self.threads, self.memory_gb)
        self._task = ray.remote(_call).options(num_cpus=self.threads, memory=int(self.memory_gb * GIB),
                                               max_retries=retries)
        self._refs: list[Any] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        """Start ``fn(*args, **kwargs)`` as a Ray task; its future resolves to the return value."""
        ref = self._task.remote(self._env, fn, args, kwargs)
        self._refs.append(ref)
        return ref.future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Cancel tasks not yet finished when ``cancel_futures``; the Ray session stays as it is."""
        if cancel_futures:
            import ray

            for ref in self._refs:
                ray.cancel(ref)
        self._refs = []


def _check_fits(ray: Any, cpus: int, memory_gb: float) -> None:
    nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
    if any(r.get("CPU", 0) >= cpus and r.get("memory", 0) >= memory_gb * GIB for r in nodes):
        return
    best = max(nodes, key=lambda r: r.get("memory", 0), default={})
    raise ClusterError(f"no node of the Ray cluster has {cpus} CPU(s) and {memory_gb:g} GiB of memory for one "
                       f"model (the largest has {best.get('CPU', 0):g} CPUs and {best.get('memory', 0) / GIB:.1f} "
                       "GiB for tasks); add a bigger node or run without --ray.")


__all__ = ["RayExecutor"]
