"""``kgpubench collect --ray``: one Ray actor per GPU measures its partition of every suite; the rows land in
the suite's shard folder as they arrive.

How the work is shared
----------------------
Every GPU Ray can see gets one :class:`GpuCollector` actor (``num_gpus=1``: Ray sets
``CUDA_VISIBLE_DEVICES``, so the actor measures on its device 0). The actors are grouped by the GPU's
catalogue name (the ``gpu_name`` key column): every group measures the whole plan, under its own name, so a
cluster with H100s and A100s yields rows of both. Within a group of ``n`` GPUs, actor ``k`` measures the
configurations whose row id falls in partition ``k`` (:func:`kgpubench.scale.partition_of`): a pure function
of the row id, so each configuration is measured exactly once and a rerun gives every actor the same share.

Each actor runs the ordinary harness (:func:`kgpubench.measure.runner.collect_suite`, or the suite's own
``collect_into`` for npb) on its device: protocol 2, its own run id and device provenance
(:func:`kgpubench.measure.provenance.process_run_id` is per process and device), its clock lock.

Where the rows go
-----------------
A :class:`ShardSink` actor on the driver's node holds the suite's shard folder ``OUT/<suite>/`` (a
:class:`kgpubench.measure.output.ShardWriter`, the same folder the serial command writes). An actor hands it
each row as soon as the row is measured and waits until the row is in the journal (synced to the disk)
before it starts the next configuration: a killed actor, driver or machine loses at most the configurations
in flight. The actors read the row ids already in the folder from the sink when they start, so a rerun -- or
the retry of a partition whose actor died -- skips them; a serial ``kgpubench collect`` and a Ray one resume
each other's folders.

When an actor dies (a crash, a lost node) or its CUDA context breaks (a sticky error: the row is saved, the
process must go), Ray restarts it and its partition runs again, skipping what is there; after ``retries``
such restarts the partition is left for the next run, and the others go on.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgpubench.errors import ClusterError, NoGpuError
from kgpubench.scale import partition_of

GPU = "GPU"
DEFAULT_RETRIES = 2
ACTOR_START_TIMEOUT_S = 600.0


# ----- what runs in the actors -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CupyBackends:
    """Makes an actor's backend: CuPy on the GPU Ray assigned to it (device 0 of its ``CUDA_VISIBLE_DEVICES``).

    Any picklable callable ``make_backend(slot) -> Backend`` may take its place (tests use fake backends).
    """

    def __call__(self, slot: int) -> Any:
        from kgpubench.measure.backend import get_backend

        return get_backend("cupy", device=0)


@dataclass(frozen=True)
class SuiteJob:
    """One suite to collect: its name and table, how an actor gets the suite object, and the options.

    ``ref`` is the suite name (the actor loads ``collectors/<name>/`` itself, as the serial command does) or a
    picklable zero-argument callable returning a suite object.
    """

    name: str
    table: str
    ref: str | Callable[[], Any]
    options: Any  # kgpubench.measure.runner.CollectOptions


def _load_suite(ref: str | Callable[[], Any]) -> Any:
    if callable(ref):
        return ref()
    from kgpubench.measure.suites import load_suite

    return load_suite(ref)


class ShardSink:
    """The shard folder of one suite, on the driver's node: rows are appended (journaled, synced) one by one.

    Parameters
    ----------
    folder : str
        The suite's shard folder (absolute; created if missing).
    table : str
        The table of the suite's rows.
    """

    def __init__(self, folder: str, table: str) -> None:
        from kgpubench.measure.output import ShardWriter

        self.writer = ShardWriter(Path(folder), table)
        self.initial = frozenset(self.writer.row_ids)
        self.written = 0
        self.statuses: Counter = Counter()
        self.run_ids: dict[str, None] = {}

    def row_ids(self) -> tuple[frozenset[str], frozenset[str]]:
        """(rows there when the sink opened, rows there now)."""
        return self.initial, frozenset(self.writer.row_ids)

    def append(self, row: dict[str, Any]) -> str:
        """Validate and journal ``row``; return its row id once it is on the disk."""
        before = len(self.writer)
        rid = self.writer.append(row)
        if len(self.writer) > before:  # not a second copy of a row already there
            self.written += 1
            self.statuses[row.get("status")] += 1
            if row.get("run_id"):
                self.run_ids[row["run_id"]] = None
        return rid

    def stats(self) -> dict[str, Any]:
        """Rows written through this sink, by status, and their run ids."""
        return {"written": self.written, "statuses": dict(self.statuses), "run_ids": list(self.run_ids),
                "rows": len(self.writer)}

    def close(self) -> dict[str, Any]:
        """Compact the folder into one parquet part; return :meth:`stats`."""
        self.writer.close()
        return self.stats()


class _PartitionWriter:
    """What the harness writes to inside an actor: rows of other partitions and rows already in the shard
    count as present (skipped); a new row goes to the sink and is on the disk before ``append`` returns."""

    def __init__(self, sink: Any, table: str, initial: frozenset[str], present: frozenset[str], part: int,
                 parts: int) -> None:
        from kgpubench.schema import get_table

        self.sink, self.table = sink, get_table(table)
        self.initial, self.present = initial, set(present)
        self.part, self.parts = part, parts
        self.mine: set[str] = set()

    def has(self, row_id: str) -> bool:
        if row_id in self.mine:
            return row_id in self.present
        if partition_of(row_id, self.parts) != self.part:
            return True
        self.mine.add(row_id)
        return row_id in self.present

    def append(self, row: Any) -> str:
        import ray

        rid = ray.get(self.sink.append.remote(dict(row)))
        self.present.add(rid)
        return rid


class GpuCollector:
    """The Ray actor of one GPU: its backend, and :meth:`collect` for one partition of one suite.

    Parameters
    ----------
    make_backend : callable
        ``make_backend(slot)`` returns the backend (default in :func:`collect_on_ray`: :class:`CupyBackends`).
    slot : int
        The actor's number (0 .. GPUs - 1), for messages and for test backends.
    """

    def __init__(self, make_backend: Callable[[int], Any], slot: int) -> None:
        self._make, self.slot = make_backend, slot
        self._backend: Any = None

    @property
    def backend(self) -> Any:
        if self._backend is None:
            self._backend = self._make(self.slot)
        return self._backend

    def describe(self) -> dict[str, Any]:
        """The device (``DeviceInfo``), its catalogue name and this process's id."""
        from kgpubench.measure.provenance import gpu_columns

        dev = self.backend.device()
        return {"slot": self.slot, "device": dev, "gpu_name": gpu_columns(dev)["gpu_name"], "pid": os.getpid()}

    def collect(self, job: SuiteJob, part: int, parts: int, sink: Any, lock_mode: str | float) -> dict[str, Any]:
        """Measure partition ``part`` of ``parts`` of ``job`` on this GPU; every row goes to ``sink`` at once.

        Returns the partition's summary (``total``: its configurations, ``skipped``: those already in the
        shard when the sink opened, ``stopped_early``, ``lock_note``); ``context_lost`` holds the message when
        a sticky CUDA error ended it (its row is saved; the process must be replaced).
        """
        import ray

        from kgpubench.measure.backend import ContextLostError
        from kgpubench.measure.conditions import ClockLock
        from kgpubench.measure.runner import collect_suite

        suite = _load_suite(job.ref)
        initial, present = ray.get(sink.row_ids.remote())
        writer = _PartitionWriter(sink, job.table, initial, present, part, parts)
        out: dict[str, Any] = {"slot": self.slot, "part": part, "parts": parts, "context_lost": None}
        with ClockLock(self.backend.nvml(), lock_mode) as lock:
            options = replace(job.options, clocks_locked=lock.locked)
            own = getattr(suite, "collect_into", None)
            try:
                summary = (own(self.backend, writer, options) if own is not None
                           else collect_suite(suite, self.backend, writer, options))
                out.update(stopped_early=summary.stopped_early, measured_ms=summary.measured_ms,
                           wall_s=summary.wall_s, run_id=summary.run_id)
            except ContextLostError as exc:
                out["context_lost"] = str(exc)
            out["lock_note"] = lock.note
        out.update(total=len(writer.mine), skipped=len(writer.mine & initial))
        return out

    def ping(self) -> int:
        """This actor's process id (answers once the actor is up, e.g. after a restart)."""
        return os.getpid()


# ----- the driver ------------------------------------------------------------------------------------------------
@dataclass
class _Partition:
    gpu: str
    part: int
    parts: int
    attempts: int = 0
    last_error: str = ""
    result: dict[str, Any] | None = None


@dataclass
class RayCollectReport:
    """What :func:`collect_on_ray` did.

    Attributes
    ----------
    summaries : dict
        Per suite: ``written``, ``skipped``, ``total``, ``statuses``, ``stopped_early``, ``wall_s``,
        ``measured_ms``, ``run_ids``, ``gpus``, ``out`` and ``unfinished`` (partitions left for a rerun).
    devices : list of DeviceInfo
        The device of every actor, in slot order.
    unfinished : list of str
        One line per partition that did not finish (its actor died ``retries + 1`` times).
    lock_notes : list of str
        Each actor's clock-lock note (once per distinct note).
    """

    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)
    devices: list[Any] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    lock_notes: list[str] = field(default_factory=list)


def _actor_options(resource: str, retries: int) -> dict[str, Any]:
    opts: dict[str, Any] = {"num_cpus": 1, "max_restarts": retries, "max_task_retries": 0}
    if resource == GPU:
        opts["num_gpus"] = 1
    else:  # a custom resource (tests declare fake GPUs this way)
        opts["resources"] = {resource: 1}
    return opts


def _gpu_count(ray: Any, resource: str, gpus: int | None) -> int:
    total = int(ray.cluster_resources().get(resource, 0))
    free = int(ray.available_resources().get(resource, 0))
    if total == 0:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        raise NoGpuError(f"the Ray cluster has no GPU ({cpus} CPUs, 0 GPUs): start Ray on the GPU machines "
                         "(`ray start --head` there, or `--num-gpus N`), or collect without --ray.")
    if free == 0:
        raise ClusterError(f"all {total} GPUs of the Ray cluster are held by other Ray work; wait for it or stop "
                           "it, then rerun.")
    if gpus is not None:
        if gpus < 1 or gpus > free:
            raise ClusterError(f"gpus={gpus}: the Ray cluster has {free} free GPUs (of {total}); ask for 1 to "
                               f"{free}.")
        return gpus
    return free


def _cause(exc: BaseException) -> BaseException:
    """The exception raised inside a Ray task (``RayTaskError.cause``), else ``exc``."""
    return getattr(exc, "cause", None) or exc


def collect_on_ray(jobs: Sequence[SuiteJob], out: Path, *, make_backend: Callable[[int], Any] | None = None,
                   lock_mode: str | float = "none", resource: str = GPU, gpus: int | None = None,
                   retries: int = DEFAULT_RETRIES, progress: Callable[[str, int, int], None] | None = None,
                   poll_s: float = 1.0) -> RayCollectReport:
    """Collect ``jobs`` (one suite after the other) on every GPU of the connected Ray cluster.

    Call inside :func:`kgpubench.scale.session.ray_session`. See the module docstring for the scheme.

    Parameters
    ----------
    jobs : sequence of SuiteJob
        The suites, each with its :class:`~kgpubench.measure.runner.CollectOptions` (``row_ids`` restricts
        it to chosen configurations, as in a serial run).
    out : Path
        Output folder; suite ``s`` fills ``out/<s>/``.
    make_backend : callable, optional
        ``make_backend(slot)``, run inside each actor (default :class:`CupyBackends`).
    lock_mode : str or float
        ``--lock-clocks`` (:func:`kgpubench.measure.conditions.parse_lock_mode`), applied by each actor.
    resource : str
        The Ray resource one actor holds: ``GPU``, or a custom resource standing for one.
    gpus : int, optional
        Use this many GPUs (default: every free one).
    retries : int
        Restarts of a dead actor, and new attempts of its partition, before the partition is left for a rerun.
    progress : callable, optional
        ``progress(suite, rows_written, actors_running)``, about every ``poll_s`` seconds.

    Raises
    ------
    kgpubench.errors.NoGpuError
        The cluster has no GPU (exit status 2 from the command line, as without --ray).
    kgpubench.errors.ClusterError
        No free GPU, or actors that never started.
    kgpubench.errors.KgpubenchError
        Any other error an actor raised (the same one the serial command raises); the rows are kept.
    """
    import ray

    make_backend = make_backend or CupyBackends()
    n = _gpu_count(ray, resource, gpus)
    actor_cls = ray.remote(GpuCollector).options(**_actor_options(resource, retries))
    actors = [actor_cls.remote(make_backend, slot) for slot in range(n)]
    sink_cls = ray.remote(ShardSink).options(num_cpus=0, scheduling_strategy=_here(ray))
    report = RayCollectReport()
    try:
        described = _describe(ray, actors)
        report.devices = [d["device"] for d in described]
        groups: dict[str, list[int]] = {}
        for d in described:
            groups.setdefault(d["gpu_name"], []).append(d["slot"])
        for job in jobs:
            folder = (Path(out) / job.name).resolve()
            sink = sink_cls.remote(str(folder), job.table)
            try:
                summary = _collect_suite(ray, job, actors, groups, sink, lock_mode, retries, report, progress,
                                         poll_s)
            finally:
                stats = _close(ray, sink)
            summary.update(written=stats["written"], statuses=stats["statuses"], run_ids=stats["run_ids"],
                           out=str(Path(out) / job.name))
            report.summaries[job.name] = summary
    finally:
        for actor in actors:
            ray.kill(actor)
    return report


def _here(ray: Any) -> Any:
    """Schedule on the driver's node (where ``out`` is)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)


def _describe(ray: Any, actors: list[Any]) -> list[dict[str, Any]]:
    refs = [a.describe.remote() for a in actors]
    ready, waiting = ray.wait(refs, num_returns=len(refs), timeout=ACTOR_START_TIMEOUT_S)
    if waiting:
        raise ClusterError(f"{len(waiting)} of {len(refs)} GPU actors did not start within "
                           f"{ACTOR_START_TIMEOUT_S:.0f} s (GPUs taken by other Ray work?); rerun when they are free.")
    out = []
    for ref in refs:
        try:
            out.append(ray.get(ref))
        except ray.exceptions.RayError as exc:
            cause = _cause(exc)
            if isinstance(cause, NoGpuError):
                raise NoGpuError(f"a GPU actor cannot use its GPU: {cause}") from None
            raise cause from None
    return out


def _close(ray: Any, sink: Any) -> dict[str, Any]:
    try:
        return ray.get(sink.close.remote())
    finally:
        ray.kill(sink)


def _collect_suite(ray: Any, job: SuiteJob, actors: list[Any], groups: dict[str, list[int]], sink: Any,
                   lock_mode: str | float, retries: int, report: RayCollectReport,
                   progress: Callable[[str, int, int], None] | None, poll_s: float) -> dict[str, Any]:
    """Run every partition of one suite to its end (or until it has used up its attempts)."""
    start = time.monotonic()
    pending = [_Partition(gpu, k, len(slots)) for gpu, slots in groups.items() for k in range(len(slots))]
    free = {gpu: list(slots) for gpu, slots in groups.items()}
    running: dict[Any, tuple[int, _Partition]] = {}
    done: list[_Partition] = []
    while pending or running:
        for p in list(pending):
            if free[p.gpu]:
                # a partition's own actor first, so a rerun gives every GPU the share it had
                slot = groups[p.gpu][p.part] if groups[p.gpu][p.part] in free[p.gpu] else free[p.gpu][0]
                free[p.gpu].remove(slot)
                pending.remove(p)
                running[actors[slot].collect.remote(job, p.part, p.parts, sink, lock_mode)] = (slot, p)
        if not running:
            break  # partitions left whose GPUs are all gone
        ready, _ = ray.wait(list(running), num_returns=1, timeout=poll_s)
        if progress is not None:
            progress(job.name, ray.get(sink.stats.remote())["written"], len(running))
        for ref in ready:
            slot, p = running.pop(ref)
            try:
                result = ray.get(ref)
            except ray.exceptions.RayActorError as exc:
                _retry(ray, p, slot, f"the actor died ({type(exc).__name__})", actors, free, pending, done, retries)
                continue
            except ray.exceptions.RayTaskError as exc:  # an error of the harness or the suite: as serial
                raise _cause(exc) from None
            if result["context_lost"]:
                ray.kill(actors[slot], no_restart=False)  # a fresh process gets a fresh CUDA context
                _retry(ray, p, slot, result["context_lost"], actors, free, pending, done, retries)
                continue
            p.result = result
            done.append(p)
            free[p.gpu].append(slot)
            if result.get("lock_note") and result["lock_note"] not in report.lock_notes:
                report.lock_notes.append(result["lock_note"])
    unfinished = [p for p in done + pending if p.result is None]
    lines = [f"{job.name}: partition {p.part + 1}/{p.parts} on {p.gpu} did not finish after {p.attempts} "
             f"attempt(s) (last: {p.last_error[:200]})" for p in unfinished]
    report.unfinished += lines
    finished = [p.result for p in done if p.result is not None]
    return {"total": sum(r["total"] for r in finished), "skipped": sum(r["skipped"] for r in finished),
            "stopped_early": any(r.get("stopped_early") for r in finished),
            "measured_ms": sum(r.get("measured_ms") or 0.0 for r in finished),
            "wall_s": time.monotonic() - start, "gpus": sorted(groups),
            "gpu_count": {g: len(s) for g, s in sorted(groups.items())}, "unfinished": lines}


def _retry(ray: Any, p: _Partition, slot: int, why: str, actors: list[Any], free: dict[str, list[int]],
           pending: list[_Partition], done: list[_Partition], retries: int) -> None:
    """Count a failed attempt of ``p``; queue it again while attempts are left; keep the actor if it restarts."""
    p.attempts += 1
    p.last_error = why
    if p.attempts <= retries:
        pending.insert(0, p)
    else:
        done.append(p)
    try:
        ray.get(actors[slot].ping.remote(), timeout=ACTOR_START_TIMEOUT_S)
    except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
        return  # gone for good: its partitions go to the other GPUs of its model
    free[p.gpu].append(slot)


__all__ = ["CupyBackends", "GpuCollector", "RayCollectReport", "ShardSink", "SuiteJob", "collect_on_ray"]
