"""``kgpubench collect --ray``: one Ray actor per GPU measures its partition of every suite into its own
shard; the driver merges each shard into the suite's shard folder as it arrives.

How the work is shared
----------------------
Every GPU Ray can see gets one :class:`GpuCollector` actor (``num_gpus=1``: Ray sets
``CUDA_VISIBLE_DEVICES``, so the actor measures on its device 0). The actors are grouped by the GPU's
catalogue name (the ``gpu_name`` key column): every group measures the whole plan, under its own name, so a
cluster with H100s and A100s yields rows of both. Within a group of ``n`` GPUs, partition ``k`` holds the
configurations whose row id falls in it (:func:`kgpubench.ray.partition_of`): a pure function of the row
id, so each configuration is measured exactly once and a rerun gives every partition the same share.

Each actor runs the ordinary harness (:func:`kgpubench.measure.runner.run_suite`, the same for every suite)
on its device: protocol 2, its own run id and device provenance
(:func:`kgpubench.measure.provenance.process_run_id` is per process and device), its clock lock.

Where the rows go
-----------------
An actor writes its partition into its own shard folder, ``OUT/.ray/<suite>/<gpu>-<k>of<n>/`` (a
:class:`kgpubench.measure.output.ShardWriter`: each row is journaled and synced before the next
configuration starts), on the node where it runs. When the partition is done, the actor hands its rows to
the driver, which appends those not yet there to the suite's shard folder ``OUT/<suite>/`` (the folder a
serial ``kgpubench collect`` writes), compacts it, and only then removes the actor's folder. A run starts by
merging the actor folders a killed run left on this node, so a serial and a Ray collection resume each
other's folders; as in a serial resume, a folder whose rows were timed another way (another L2 policy or cold
timer) is refused in one line naming it, before any partition starts, and so is an actor's own folder.

When an actor dies (a crash, a lost node) or its CUDA context breaks (a sticky error: the row is saved, the
process must go), Ray restarts it and the partition runs again, skipping the rows in its own folder: a
killed actor loses at most the configuration in flight. After ``retries`` such restarts the partition is
left for the next run (its rows stay in its folder), and the others go on. On a cluster of several nodes,
``OUT`` should be on a shared file system so that a partition that moves to another node finds its rows.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kgpubench.errors import ClusterError, ContextLostError, NoGpuError
from kgpubench.measure.backends.registry import get_backend
from kgpubench.measure.conditions import ClockLock
from kgpubench.measure.output import ShardWriter
from kgpubench.measure.provenance import gpu_columns
from kgpubench.measure.runner import CollectOptions, CollectSummary, check_shard_timing, run_suite
from kgpubench.measure.suites import load_suite
from kgpubench.ray import partition_of

GPU = "GPU"
RAY_DIR = ".ray"
DEFAULT_RETRIES = 2
ACTOR_START_TIMEOUT_S = 600.0


# ----- what runs in the actors -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CupyBackends:
    """Makes an actor's backend: CuPy on the GPU Ray assigned to it (device 0 of its ``CUDA_VISIBLE_DEVICES``).

    Any picklable callable ``make_backend(slot) -> Backend`` may take its place (tests use fake backends).
    """

    def __call__(self, slot: int) -> Any:
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
    options: CollectOptions


def _load_suite(ref: str | Callable[[], Any]) -> Any:
    if callable(ref):
        return ref()
    return load_suite(ref)


def partition_folder(out: Path | str, suite: str, gpu_name: str, part: int, parts: int) -> Path:
    """The shard folder of partition ``part`` of ``parts`` of ``suite`` on GPUs named ``gpu_name``:
    ``OUT/.ray/<suite>/<gpu>-<part + 1>of<parts>``."""
    slug = re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-") or "gpu"
    return Path(out) / RAY_DIR / suite / f"{slug}-{part + 1}of{parts}"


class _PartitionWriter:
    """What the harness writes to inside an actor: rows of other partitions and rows already in the suite's
    folder count as present (skipped); a new row goes to the actor's own shard (on the disk before
    ``append`` returns).

    ``folder`` and ``rows()`` are the actor's own shard's, so that the harness refuses to resume a partition
    folder whose rows were timed another way, in the same line as a serial collection's folder
    (:func:`kgpubench.measure.runner.collect_suite`)."""

    def __init__(self, own: Any, present: frozenset[str], part: int, parts: int) -> None:
        self.own, self.present = own, present
        self.part, self.parts = part, parts
        self.mine: set[str] = set()

    @property
    def folder(self) -> Path:
        return self.own.folder

    def rows(self) -> list[dict[str, Any]]:
        """The rows of the actor's own shard folder (read when it was opened, and those appended since)."""
        return self.own.rows()

    def has(self, row_id: str) -> bool:
        if row_id not in self.mine:
            if partition_of(row_id, self.parts) != self.part:
                return True
            self.mine.add(row_id)
        return row_id in self.present or self.own.has(row_id)

    def append(self, row: Any) -> str:
        return self.own.append(row)


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
        """The device (``DeviceInfo``), its catalogue name, this process's id and the backend's cold timer."""
        dev = self.backend.device()
        return {"slot": self.slot, "device": dev, "gpu_name": gpu_columns(dev)["gpu_name"], "pid": os.getpid(),
                "cold_timer": getattr(self.backend, "cold_timer", None)}

    def collect(self, job: SuiteJob, part: int, parts: int, present: frozenset[str], folder: str,
                lock_mode: str | float) -> dict[str, Any]:
        """Measure partition ``part`` of ``parts`` of ``job`` on this GPU into the shard folder ``folder``.

        ``present`` holds the row ids already in the suite's folder (skipped). Returns ``summary``, the
        partition's :class:`~kgpubench.measure.runner.CollectSummary` (``total``: its configurations,
        ``skipped``: those already in the suite's folder or in ``folder`` when it started; ``None`` when a
        sticky CUDA error ended it), ``lock_note``, ``pid`` and ``rows``, every row of ``folder``;
        ``context_lost`` holds the message when a sticky CUDA error ended it (its row is saved; the process must
        be replaced).
        """
        suite = _load_suite(job.ref)
        own = ShardWriter(Path(folder), job.table)
        resumed = frozenset(own.row_ids)
        writer = _PartitionWriter(own, present, part, parts)
        out: dict[str, Any] = {"slot": self.slot, "part": part, "parts": parts, "context_lost": None,
                               "pid": os.getpid(), "summary": None}
        summary = None
        try:
            with ClockLock(self.backend.nvml() if self.backend.capabilities.clocks else None, lock_mode) as lock:
                options = replace(job.options, clocks_locked=lock.locked)
                try:
                    summary = run_suite(suite, self.backend, writer, options)  # the harness, as in a serial collect
                except ContextLostError as exc:
                    out["context_lost"] = str(exc)
                out["lock_note"] = lock.note
        finally:
            own.close()
        if summary is not None:
            out["summary"] = replace(summary, total=len(writer.mine), skipped=len(writer.mine & (present | resumed)),
                                     out=str(own.folder))
        out["rows"] = own.rows()
        return out

    def ping(self) -> int:
        """This actor's process id (answers once the actor is up, e.g. after a restart)."""
        return os.getpid()


# ----- the driver ------------------------------------------------------------------------------------------------
def merge_rows(main: Any, rows: Sequence[dict[str, Any]]) -> Counter:
    """Append the ``rows`` not yet in the shard writer ``main`` and compact it; the statuses of those added."""
    added: Counter = Counter()
    for row in rows:
        if not main.has(row["row_id"]):
            main.append(row)
            added[row.get("status")] += 1
    main.compact()
    return added


def merge_leftovers(out: Path | str, suite: str, main: Any,
                    check: Callable[[ShardWriter], None] | None = None) -> Counter:
    """Merge the partition folders a stopped run left under ``OUT/.ray/<suite>/`` into ``main`` (the suite's
    shard writer), then remove them; the statuses of the rows added. ``check(writer)`` is called on each folder
    before its rows are merged (it raises to refuse the folder, which is then left as it is)."""
    added: Counter = Counter()
    root = Path(out) / RAY_DIR / suite
    for folder in sorted(p for p in root.glob("*") if p.is_dir()):
        left = ShardWriter(folder, main.table.name)
        if check is not None:
            check(left)
        added += merge_rows(main, left.rows())
        shutil.rmtree(folder)
    _remove_empty(root)
    return added


def _remove_empty(folder: Path) -> None:
    """Remove ``folder`` and then ``OUT/.ray`` when they are empty."""
    for path in (folder, folder.parent):
        try:
            path.rmdir()
        except OSError:
            return


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
        ``measured_ms``, ``run_ids``, ``gpus``, ``gpu_count``, ``partitions``, ``out`` and ``unfinished``.
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


def _gpu_count(ray: Any, gpus: int | None) -> int:
    total = int(ray.cluster_resources().get(GPU, 0))
    free = int(ray.available_resources().get(GPU, 0))
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
                   lock_mode: str | float = "none", gpus: int | None = None, actor_cpus: float = 0.0,
                   retries: int = DEFAULT_RETRIES, progress: Callable[[str, int, int], None] | None = None,
                   poll_s: float = 1.0) -> RayCollectReport:
    """Collect ``jobs`` (one suite after the other) on every GPU of the connected Ray cluster.

    Call inside :func:`kgpubench.ray.session.ray_session`. See the module docstring for the scheme.

    Parameters
    ----------
    jobs : sequence of SuiteJob
        The suites, each with its :class:`~kgpubench.measure.runner.CollectOptions`.
    out : Path
        Output folder; suite ``s`` fills ``out/<s>/`` (partitions in flight: ``out/.ray/<s>/``).
    make_backend : callable, optional
        ``make_backend(slot)``, run inside each actor (default :class:`CupyBackends`).
    lock_mode : str or float
        ``--lock-clocks`` (:func:`kgpubench.measure.conditions.parse_lock_mode`), applied by each actor.
    gpus : int, optional
        Use this many GPUs (default: every free one).
    actor_cpus : float
        CPUs each actor declares besides its GPU (default none, as Ray's own default for a running actor:
        the GPU is what is scarce, and a node with fewer CPUs than GPUs still runs an actor per GPU).
    retries : int
        Restarts of a dead actor, and new attempts of its partition, before the partition is left for a rerun.
    progress : callable, optional
        ``progress(suite, partitions_done, actors_running)``, about every ``poll_s`` seconds.

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
    n = _gpu_count(ray, gpus)
    actor_cls = ray.remote(GpuCollector).options(num_gpus=1, num_cpus=actor_cpus, max_restarts=retries,
                                                 max_task_retries=0)
    actors = [actor_cls.remote(make_backend, slot) for slot in range(n)]
    report = RayCollectReport()
    try:
        described = _describe(ray, actors)
        report.devices = [d["device"] for d in described]
        groups: dict[str, list[int]] = {}
        for d in described:
            groups.setdefault(d["gpu_name"], []).append(d["slot"])
        cold_timer = described[0].get("cold_timer") if described else None  # one make_backend for every actor
        for job in jobs:
            report.summaries[job.name] = _collect_suite(ray, job, Path(out), actors, groups, lock_mode, retries,
                                                        report, progress, poll_s, cold_timer)
    finally:
        for actor in actors:
            ray.kill(actor)
        _await_release(ray, n)
    return report


def _await_release(ray: Any, n: int, timeout_s: float = 10.0) -> None:
    """Wait (a little) until the GPUs of the killed actors are free again, so the caller finds the cluster as
    it was (Ray frees them asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get(GPU, 0) < n and time.monotonic() < deadline:
        time.sleep(0.05)


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


def _collect_suite(ray: Any, job: SuiteJob, out: Path, actors: list[Any], groups: dict[str, list[int]],
                   lock_mode: str | float, retries: int, report: RayCollectReport,
                   progress: Callable[[str, int, int], None] | None, poll_s: float,
                   cold_timer: str | None = None) -> dict[str, Any]:
    """Run every partition of one suite to its end (or until it has used up its attempts), merging each
    partition's shard into ``out/<suite>/`` as it arrives.

    First, as a serial collection does, the suite's folder and the partition folders a stopped run left are
    refused in one line (:func:`kgpubench.measure.runner.check_shard_timing`) when their rows were timed
    another way than this collection times (its L2 policy, the actors' cold timer ``cold_timer``)."""
    start = time.monotonic()
    policy = job.options.policy_for(_load_suite(job.ref))

    def check(writer: ShardWriter) -> None:
        check_shard_timing(writer, policy, cold_timer)

    main = ShardWriter(out / job.name, job.table, durable=False)  # rows land in parts written atomically
    check(main)
    statuses = merge_leftovers(out, job.name, main, check)
    present = frozenset(main.row_ids)
    pending = [_Partition(gpu, k, len(slots)) for gpu, slots in groups.items() for k in range(len(slots))]
    free = {gpu: list(slots) for gpu, slots in groups.items()}
    running: dict[Any, tuple[int, _Partition]] = {}
    done: list[_Partition] = []
    try:
        while pending or running:
            for p in list(pending):
                if free[p.gpu]:
                    # a partition's own actor first, so a rerun gives every GPU the share it had
                    slot = groups[p.gpu][p.part] if groups[p.gpu][p.part] in free[p.gpu] else free[p.gpu][0]
                    free[p.gpu].remove(slot)
                    pending.remove(p)
                    folder = partition_folder(out, job.name, p.gpu, p.part, p.parts).resolve()
                    ref = actors[slot].collect.remote(job, p.part, p.parts, present, str(folder), lock_mode)
                    running[ref] = (slot, p)
            if not running:
                break  # partitions left whose GPUs are all gone
            ready, _ = ray.wait(list(running), num_returns=1, timeout=poll_s)
            if progress is not None:
                progress(job.name, len(done), len(running))
            for ref in ready:
                slot, p = running.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    _retry(ray, p, slot, f"the actor died ({type(exc).__name__})", actors, free, pending, done,
                           retries)
                    continue
                except ray.exceptions.RayTaskError as exc:  # an error of the harness or the suite: as serial
                    raise _cause(exc) from None
                statuses += merge_rows(main, result.pop("rows"))  # the partition's shard arrives
                if result["context_lost"]:
                    ray.kill(actors[slot], no_restart=False)  # a fresh process gets a fresh CUDA context
                    _retry(ray, p, slot, result["context_lost"], actors, free, pending, done, retries)
                    continue
                shutil.rmtree(partition_folder(out, job.name, p.gpu, p.part, p.parts), ignore_errors=True)
                p.result = result
                done.append(p)
                free[p.gpu].append(slot)
                if result.get("lock_note") and result["lock_note"] not in report.lock_notes:
                    report.lock_notes.append(result["lock_note"])
    finally:
        main.close()
    _remove_empty(out / RAY_DIR / job.name)
    unfinished = [p for p in done + pending if p.result is None]
    lines = [f"{job.name}: partition {p.part + 1}/{p.parts} on {p.gpu} did not finish after {p.attempts} "
             f"attempt(s) (last: {p.last_error[:200]})" for p in unfinished]
    report.unfinished += lines
    finished = sorted((p.result for p in done if p.result is not None), key=lambda r: r["slot"])
    parts = [r["summary"] for r in finished]
    summary = CollectSummary(total=sum(s.total for s in parts), skipped=sum(s.skipped for s in parts),
                             stored=sum(s.stored for s in parts), written=sum(statuses.values()),
                             statuses=Counter(statuses),
                             stopped_early=any(s.stopped_early for s in parts),
                             measured_ms=sum(s.measured_ms for s in parts), wall_s=time.monotonic() - start,
                             out=str(out / job.name))
    run_ids = sorted({r["run_id"] for r in main.rows() if r.get("run_id")})
    merged = {k: v for k, v in summary.to_dict().items() if k != "run_id"}  # one run per partition: run_ids
    return {**merged, "gpus": sorted(groups), "run_ids": run_ids,
            "gpu_count": {g: len(s) for g, s in sorted(groups.items())},
            "partitions": [{"slot": r["slot"], "part": r["part"], "parts": r["parts"], "total": s.total,
                            "skipped": s.skipped, "pid": r["pid"], "run_id": s.run_id}
                           for r, s in zip(finished, parts)],
            "unfinished": lines}


def _retry(ray: Any, p: _Partition, slot: int, why: str, actors: list[Any], free: dict[str, list[int]],
           pending: list[_Partition], done: list[_Partition], retries: int) -> None:
    """Count a failed attempt of ``p``; queue it again while attempts are left; keep the actor if it restarts."""
    p.attempts += 1
    p.last_error = why
    if p.attempts <= retries:
        pending.insert(0, p)
    else:
        done.append(p)
    if _restarted(ray, actors[slot]):
        free[p.gpu].append(slot)
    # else gone for good: its partitions go to the other GPUs of its model


def _restarted(ray: Any, actor: Any) -> bool:
    """Whether ``actor`` answers again (Ray restarts a dead actor while it has restarts left)."""
    deadline = time.monotonic() + ACTOR_START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            ray.get(actor.ping.remote(), timeout=max(1.0, deadline - time.monotonic()))
            return True
        except ray.exceptions.ActorUnavailableError:  # restarting: calls fail until it is up
            time.sleep(0.2)
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            return False
    return False


__all__ = ["CupyBackends", "GpuCollector", "RayCollectReport", "SuiteJob", "collect_on_ray", "merge_leftovers",
           "merge_rows", "partition_folder"]
