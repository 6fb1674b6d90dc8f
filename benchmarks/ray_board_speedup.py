"""Speed-up of ``kgpubench leaderboard run --ray`` over the serial run, and the full board on N Ray workers.

Usage: python benchmarks/ray_board_speedup.py [--task kernel-time-compute] [--only MODEL] [--cpus N]

1. The board's jobs for ``--task`` (every baseline and scheme, the packaged data) run three times in this
   process: serially (one fold after the other, as ``leaderboard run`` without ``--jobs``), then on a local
   Ray with ``--cpus`` CPUs (default: this machine's), once with one Ray task per fold (what ``--ray`` does
   on 16 CPUs or more) and once with one task per job (below 16). All are timed here; the results must be
   identical to the serial ones (times and dates aside), and the speed-up is serial / Ray. Ray's start-up is
   timed apart (a cluster that is already up does not pay it).
2. The projection: every committed result's wall time (``leaderboard/results``, the last full board), split
   evenly over its folds or kept whole, scaled by this run's serial time over the committed time of the same
   jobs (this machine against the one that made the board), scheduled longest first on N workers of one CPU
   each. The projected wall time is that schedule's length times this run's Ray overhead for that
   granularity (Ray time x CPUs / serial time: the tasks' start-up, the driver's joins, and on a busy
   machine other people's work), plus the start-up.

On a shared 2-core machine the times also count other people's work: compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_KEYS = {"wall_time_s", "cpu_time_s", "date"}
WORKERS = (1, 2, 4, 8, 16, 32, 64)


def _normal(result) -> str:
    """A job's record (Result or Skipped) without what changes from run to run, as text."""
    return json.dumps({k: v for k, v in result.to_dict().items() if k not in RUN_KEYS}, sort_keys=True, default=str)


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def committed_folds(results: Path) -> dict[tuple[str, str, str], list[float]]:
    """(task, scheme, model) -> the committed job's wall time split evenly over its folds."""
    out = {}
    for path in sorted(results.rglob("*.json")):
        res = json.loads(path.read_text())
        if not res.get("wall_time_s"):
            continue
        folds = max(1, len(res.get("folds") or {}))
        task, scheme = path.relative_to(results).parts[:2]
        out[(task, scheme, path.stem)] = [res["wall_time_s"] / folds] * folds
    return out


def makespan(durations: list[float], workers: int) -> float:
    """Length of the longest-first schedule of ``durations`` on ``workers`` identical workers."""
    loads = [0.0] * workers
    for d in sorted(durations, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + d)
    return max(loads)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", help="Task(s) to run (default: kernel-time-compute).")
    parser.add_argument("--only", action="append", help="Only these models (file stems).")
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="CPUs of the local Ray.")
    args = parser.parse_args(argv)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    from kgpubench.board import leaderboard as lb
    from kgpubench.sandbox.session import TRUST_ENV, isolation_support

    if not isolation_support()[0]:
        os.environ[TRUST_ENV] = "1"  # the project's own baselines, where this kernel cannot isolate them
    tasks = args.task or ["kernel-time-compute"]
    jobs = lb.plan(only=args.only, tasks=tasks)
    print(f"{len(jobs)} jobs: tasks {', '.join(tasks)}; this machine: {os.cpu_count()} CPUs")

    serial, serial_s = _timed(lambda: lb.run_jobs(jobs))
    print(f"serial: {serial_s:.1f} s")

    import ray

    from kgpubench.ray.board import RayExecutor, fold_plan

    _, start_s = _timed(lambda: ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="ERROR"))
    runs = {}
    try:
        for split in (True, False):
            executor = RayExecutor(split_folds=split)
            n = sum(len(fold_plan(j) or [None]) for j in jobs) if split else len(jobs)
            ran, seconds = _timed(lambda: lb.run_jobs(jobs, executor=executor))  # noqa: B023 - called at once
            executor.shutdown()
            same = sum(_normal(a) == _normal(b) for (_, a), (_, b) in zip(serial, ran))
            label = "one task per fold" if split else "one task per job"
            runs[split] = (seconds, same)
            print(f"Ray, {args.cpus} CPUs, {label} ({n} tasks, {executor.memory_gb:.1f} GiB declared each): "
                  f"{seconds:.1f} s, speed-up {serial_s / seconds:.2f}x (parallel efficiency "
                  f"{serial_s / seconds / args.cpus:.0%}); results identical to serial: {same}/{len(jobs)}")
    finally:
        ray.shutdown()
    print(f"Ray's start-up: {start_s:.1f} s (a cluster already up does not pay it)")

    committed = committed_folds(ROOT / "leaderboard" / "results")
    mine = [committed.get((j.task.name, j.scheme, j.name)) for j in jobs]
    base = sum(sum(m) for m in mine if m)
    scale = serial_s / base if base else 1.0
    overhead = {split: seconds * args.cpus / serial_s for split, (seconds, _) in runs.items()}
    folds = [d * scale for fs in committed.values() for d in fs]
    whole = [sum(fs) * scale for fs in committed.values()]
    print(f"\nprojection, full board ({len(committed)} results, {len(folds)} folds): committed wall "
          f"{sum(whole) / scale:.0f} s x {scale:.2f} (this machine) = {sum(whole):.0f} s serial; Ray overhead "
          f"x{overhead[True]:.2f} per fold, x{overhead[False]:.2f} per job (this run); longest fold "
          f"{max(folds):.0f} s, longest job {max(whole):.0f} s; + {start_s:.0f} s start-up")
    print("  workers   one task per fold   one task per job")
    for n in WORKERS:
        print(f"  {n:7d}   {makespan(folds, n) * overhead[True] + start_s:15.0f} s   "
              f"{makespan(whole, n) * overhead[False] + start_s:14.0f} s")
    return 0 if all(same == len(jobs) for _, same in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
