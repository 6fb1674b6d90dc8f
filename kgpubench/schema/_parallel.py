"""Independent pieces of work spread over worker processes, with the results and side effects of one process.

``jobs=1`` runs every piece here, in order: the reference path. With more jobs, pieces run in a
:class:`concurrent.futures.ProcessPoolExecutor` (the ``forkserver`` start method: no fork of a process whose
arrow threads run), the costliest first when costs are given, and come back in the order of the inputs; the
warnings a piece raises (an unknown GPU, an import notice) are raised again here in that order, and the first
failing piece in input order raises its exception here, as the loop would.

A piece that returns a large arrow table passes it through :func:`to_parent`: in a worker, the table is written
to the call's spool folder (an arrow IPC file, in ``/dev/shm`` where there is one) and this process maps it
when the result arrives, instead of copying its buffers through a pickle and a pipe (about five copies); the
file is deleted once mapped, and the folder when the call ends. In this process (``jobs=1``) it is the table.
A worker keeps the memory its pieces free for its next piece (glibc's ``mallopt``: :func:`_keep_freed_memory`);
the calling process's allocator is left as it is.

The workers are started by ``forkserver``, which, like ``spawn``, imports the main module of the program in the
new processes: a script that calls a function with ``jobs`` above 1 must do so under
``if __name__ == "__main__":`` (as :mod:`multiprocessing` requires), or its own top level runs again there; the
call then stops with a :class:`~kgpubench.errors.WorkerProcessError` saying so (the worker processes print
multiprocessing's ``RuntimeError`` about the bootstrapping phase first). ``python -m kgpubench`` and any module
run with ``-m`` under that guard are not affected. ``fork``, which imports nothing again, is not used: it copies a
process whose threads (arrow's, the pool's own) may hold locks."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import forkserver
from typing import Any

import pyarrow as pa

from kgpubench.errors import WorkerProcessError

# More workers than this rarely pays: each holds its pieces' arrow tables, and the parent concatenates alone.
MAX_JOBS = 8
_worker_cpu = [0.0]  # CPU seconds the pieces took in worker processes, this process's calls together
_spool: list[str | None] = [None]  # in a worker: the folder its call's tables go to (see to_parent)
_kept = [False]  # in a worker: whether its C library's malloc keeps freed memory (see _keep_freed_memory)
# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
SHM = "/dev/shm"


def default_jobs() -> int:
    """The jobs an import uses unless told: the CPUs this process may run on, at most :data:`MAX_JOBS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_JOBS))


def check_jobs(jobs: Any) -> int:
    """``jobs`` as a whole number of at least 1; anything else is a ``ValueError`` saying what to pass."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs={jobs!r}: expected a whole number of worker processes, at least 1 (1 runs "
                         "everything in this process).")
    return jobs


def worker_cpu_seconds() -> float:
    """CPU seconds that pieces of :func:`parallel_map` took in worker processes so far (their own CPU clock; a
    worker's start and the transfer of its results not counted), for a benchmark's count of the work done."""
    return _worker_cpu[0]


class _Spooled:
    """A table a worker wrote to its call's spool folder: unpickled in the calling process as the table itself,
    mapped from the file (no copy), the file then deleted."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return _mapped, (self.path,)


def _mapped(path: str) -> pa.Table:
    table = pa.ipc.open_file(pa.memory_map(path)).read_all()
    os.unlink(path)
    return table


def to_parent(table: pa.Table) -> pa.Table | _Spooled:
    """What a piece of :func:`parallel_map` returns for the arrow table ``table`` (see the module docstring): in
    the calling process the table itself; in a worker a handle the calling process unpickles as the same table,
    read from a file of the spool folder without a copy. Where the file cannot be written (a full ``/dev/shm``),
    the table, pickled as any result."""
    if _spool[0] is None:
        return table
    try:
        fd, path = tempfile.mkstemp(suffix=".arrow", dir=_spool[0])
    except OSError:
        return table
    try:
        with os.fdopen(fd, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    except OSError:
        os.unlink(path)
        return table
    return _Spooled(path)


def _keep_freed_memory() -> bool:
    """Have glibc's malloc keep the memory a piece frees for the worker's next piece: blocks of up to 1 GiB taken
    from the heap instead of a mapping of their own (handed back to the system when freed), and the heap never
    trimmed. A page a process touches for the first time costs a page fault, dear in this project's VMs (one large
    find-db file: 157k faults, 1.2 to 1.5 s of system time); a worker's later pieces reuse its pages instead (four
    find-db files in one process: 10.0 to 10.3 s CPU against 11.4 to 11.7 s). False where the C library has no
    ``mallopt`` (not glibc): nothing changes there."""
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # a glibc that refuses a threshold above its 32 MiB maximum takes the maximum
    mapped = mallopt(_M_MMAP_THRESHOLD, 1 << 30) or mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    return bool(mapped) and bool(mallopt(_M_TRIM_THRESHOLD, 2**31 - 1))


def _worker_start(folder: str) -> None:
    """A worker process's set-up: its call's spool folder (:func:`to_parent`) and its allocator
    (:func:`_keep_freed_memory`)."""
    _spool[0] = folder
    _kept[0] = _keep_freed_memory()


def keeps_freed_memory(_: object = None) -> bool:
    """Whether this process keeps the memory its pieces free (a worker of :func:`parallel_map` where the C library
    is glibc; see :func:`_keep_freed_memory`); usable as a piece, to ask the workers."""
    return _kept[0]


def _spool_folder() -> str:
    """A new folder for one call's spooled tables: in ``/dev/shm`` (memory) where it is writable, else the
    temporary folder."""
    where = SHM if os.path.isdir(SHM) and os.access(SHM, os.W_OK) else None
    return tempfile.mkdtemp(prefix="kgpubench-", dir=where)


def _context(fn: Callable[[Any], Any]) -> multiprocessing.context.BaseContext:
    """The ``forkserver`` context, its server (started once per process) set to import the program's main module
    and ``fn``'s module, so that each worker forked from it starts with them; a later call's modules are imported
    by its workers."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", fn.__module__])
    return context


def start_workers(fn: Callable[[Any], Any], jobs: int) -> None:
    """Start the server that :func:`parallel_map`'s workers for ``fn`` fork from, without waiting for it (with
    ``jobs`` above 1; nothing otherwise): the server imports its modules (about a second of a fresh interpreter's
    imports) while this process prepares the pieces, instead of when the first worker is asked for."""
    if check_jobs(jobs) > 1:
        _context(fn)
        forkserver.ensure_running()


def _capturing(fn: Callable[[Any], Any], item: Any) -> tuple[Any, list[tuple[str, type[Warning]]], float]:
    """``fn(item)``, the warnings it raised (text and category, in order) and the CPU seconds it took."""
    start = time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(item)
    return out, [(str(w.message), w.category) for w in caught], time.process_time() - start


def parallel_map(fn: Callable[[Any], Any], items: Sequence[Any], *, jobs: int = 1,
                 costs: Sequence[float] | None = None) -> list[Any]:
    """``[fn(item) for item in items]``, over ``jobs`` worker processes when ``jobs > 1`` (see the module
    docstring). ``fn`` must be a module-level function and ``items`` and the results picklable; ``costs``
    (one per item) orders the submissions, costliest first, so the last piece to start is a small one."""
    jobs = check_jobs(jobs)
    items = list(items)
    if jobs == 1 or len(items) < 2:
        return [fn(item) for item in items]
    order = range(len(items)) if costs is None else sorted(range(len(items)), key=lambda i: -costs[i])
    context = _context(fn)
    spool = _spool_folder()
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=context, initializer=_worker_start,
                                 initargs=(spool,)) as pool:
            futures = {i: pool.submit(_capturing, fn, items[i]) for i in order}
            results = []
            try:
                for i in range(len(items)):
                    out, caught, cpu = futures[i].result()
                    _worker_cpu[0] += cpu
                    for message, category in caught:
                        warnings.warn(message, category, stacklevel=2)
                    results.append(out)
            except BrokenProcessPool:
                pool.shutdown(wait=True, cancel_futures=True)
                raise WorkerProcessError(
                    f"a worker process of jobs={jobs} stopped before it returned (killed, out of memory, or a "
                    f"script that calls this without `if __name__ == \"__main__\":`, whose top level the worker "
                    "processes run again): add the guard, or pass jobs=1 (--jobs 1).") from None
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    finally:  # the files of results never read (a failed call) go with the folder
        shutil.rmtree(spool, ignore_errors=True)
    return results
