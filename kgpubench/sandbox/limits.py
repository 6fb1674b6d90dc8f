"""What model code may use: one :class:`Limits` for the sandbox and for trusted in-process runs.

A sandboxed child gets all of it (time, memory, threads, processes, disk, output: :meth:`Limits.child_limits`
and :func:`thread_env`); a trusted in-process run (``kgpubench.models.evaluation.fit_predict``) only pins the
threads (:meth:`Limits.env`). Standard library only: the sandbox's launcher imports this before anything else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from kgpubench.errors import LimitsError

DEFAULT_TIMEOUT_S = 1800.0
DEFAULT_MEMORY_GB = 8.0
# Environment variables that set the thread count of OpenMP, the BLAS libraries, numexpr and the baselines
# (``KGPUBENCH_THREADS``: :func:`kgpubench.tasks.preprocess.thread_count`).
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "KGPUBENCH_THREADS")


def thread_env(threads: int) -> dict[str, str]:
    """The environment that pins ``threads`` threads (every name of :data:`THREAD_ENV`)."""
    return dict.fromkeys(THREAD_ENV, str(int(threads)))


def _positive(name: str, option: str, value: Any, unit: str, integer: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if ok and integer:
        ok = float(value).is_integer()
    if not ok:
        kind = "a whole number" if integer else "a finite number"
        raise LimitsError(f"{option}: got {value!r}; the {name} must be {kind} greater than 0 ({unit}).")


@dataclass(frozen=True, kw_only=True)  # by name only: the former Limits took threads first
class Limits:
    """What a model may use.

    Parameters
    ----------
    timeout_s : float
        Seconds the session may keep the parent waiting, every fold together (the parent's own work between
        folds does not count); CPU time is capped at ``timeout_s * threads`` (+10 s).
    memory_gb : float
        Address space of the model's process (``RLIMIT_AS``), GiB.
    threads : int
        OpenMP/BLAS/LightGBM/XGBoost threads (environment and threadpoolctl), for reproducible results. The
        board runs with one thread per model so its scores do not depend on the machine's core count.
    processes : int
        Processes and threads the model may start beyond its own (``RLIMIT_NPROC``, isolated runs).
    disk_mb : float
        Size of the private ``/tmp`` and of the largest file the model may write (``RLIMIT_FSIZE``), MiB.
    output_mb : float
        What the model may print (stdout and stderr together) before it is stopped, MiB.

    Raises
    ------
    kgpubench.errors.LimitsError
        A value that is not a finite number greater than 0 (a whole number for counts); one line naming the
        option.
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_gb: float = DEFAULT_MEMORY_GB
    threads: int = 1
    processes: int = 16
    disk_mb: float = 1024.0
    output_mb: float = 64.0

    def __post_init__(self) -> None:
        _positive("time limit", "--timeout", self.timeout_s, "seconds")
        _positive("memory limit", "--memory-gb", self.memory_gb, "GiB of address space")
        _positive("thread count", "--threads", self.threads, "threads", integer=True)
        _positive("process limit", "processes", self.processes, "processes", integer=True)
        _positive("disk limit", "disk_mb", self.disk_mb, "MiB")
        _positive("output limit", "output_mb", self.output_mb, "MiB")

    def child_limits(self) -> dict[str, int]:
        """The rlimits of the sandboxed child: bytes, CPU seconds, process count."""
        return {"memory_bytes": int(self.memory_gb * 2**30), "cpu_s": math.ceil(self.timeout_s * self.threads) + 10,
                "file_bytes": int(self.disk_mb * 2**20), "processes": int(self.processes + self.threads + 4)}

    def env(self) -> dict[str, str]:
        """The environment a process running model code gets (thread counts: :func:`thread_env`)."""
        return thread_env(self.threads)
