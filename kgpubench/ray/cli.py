"""The ``--ray`` branches of ``kgpubench collect`` and ``kgpubench leaderboard run|verify`` (imported only when
``--ray`` is given, so that Ray is never imported otherwise)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgpubench.errors import ClusterError

RAY_HELP = ("Run on Ray: ADDRESS of a cluster (auto, HOST:PORT), or none to start Ray on this machine "
            "(docs/RAY.md).")


def collect(address: str | None, suites: Sequence[Any], selected: dict[str, Any], *, quick: bool, out: Path,
            max_minutes: float | None, lock_mode: str | float, l2: str | None,
            store: Path | None = None) -> dict[str, dict]:
    """``kgpubench collect --ray``: every suite on every GPU of the cluster, then the contribution bundle.

    With ``store``, the configurations that dataset store holds for each GPU model are skipped, as in a serial
    collection (:mod:`kgpubench.measure.stored`; Ray collects with the event cold timer only).

    Returns the per-suite summaries (as the serial command's, with ``run_ids`` and ``gpus``). Raises
    :class:`~kgpubench.errors.ClusterError` after writing the bundle when some partition did not finish.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from kgpubench.measure.runner import CollectOptions, CollectSummary
    from kgpubench.measure.stored import stored_rows
    from kgpubench.ray.collect import SuiteJob, collect_on_ray
    from kgpubench.ray.session import ray_session

    console = Console(stderr=True, highlight=False)
    jobs = []
    for s in suites:
        options = CollectOptions(quick=quick, kernels=selected[s.name], max_minutes=max_minutes, l2_policy=l2)
        if store is not None:
            options = replace(options, stored=stored_rows(store, s.table, l2_policy=options.policy_for(s)))
            console.print(escape(f"{s.name}: the configurations the store {store} (dataset "
                                 f"{options.stored.version}) holds for each GPU model are skipped"))
        jobs.append(SuiteJob(s.name, s.table, s.name, options))
    with ray_session(address, allow_client=False):
        columns = (SpinnerColumn(), TextColumn("[bold]{task.fields[suite]}"), TextColumn("{task.description}"),
                   TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as bar:
            tasks: dict[str, Any] = {}

            def progress(suite: str, finished: int, running: int) -> None:
                if suite not in tasks:
                    tasks[suite] = bar.add_task("", total=None, suite=suite)
                bar.update(tasks[suite], description=f"{finished} partition(s) merged, {running} GPU(s) measuring")

            report = collect_on_ray(jobs, out, lock_mode=lock_mode, progress=progress)
    for note in report.lock_notes:
        console.print(escape(note))
    console.print(f"Ray: {len(report.devices)} GPU(s): {escape(_gpu_list(report.devices))}")
    for name, s in report.summaries.items():  # the serial collect's line
        console.print(escape(CollectSummary.from_dict(s).line(name)))
    from kgpubench.store.bundle import finish_collect

    finish_collect(out, [Path(out) / j.name for j in jobs], report.devices[0] if report.devices else None,
                   report.summaries, devices=report.devices)
    if report.unfinished:
        for line in report.unfinished:
            console.print(f"[yellow]unfinished:[/] {escape(line)}")
        raise ClusterError(f"{len(report.unfinished)} partition(s) did not finish (their actors died repeatedly; "
                           "see above); the rows measured are kept: rerun the same command to measure the rest.")
    return report.summaries


def _gpu_list(devices: Sequence[Any]) -> str:
    """``2 x NVIDIA H100 80GB HBM3, 1 x ...`` for the devices of the actors."""
    from collections import Counter

    counts = Counter(getattr(d, "name", "?") for d in devices)
    return ", ".join(f"{n} x {name}" for name, n in counts.items()) or "none"


@contextlib.contextmanager
def board_executor(address: str | None, threads: int = 1) -> Iterator[Any]:
    """A :class:`~kgpubench.ray.board.RayExecutor` on the cluster at ``address`` for ``leaderboard run|verify``."""
    from kgpubench.ray.board import RayExecutor
    from kgpubench.ray.session import ray_session

    with ray_session(address):
        executor = RayExecutor(threads=threads)
        try:
            yield executor
        finally:
            executor.shutdown(cancel_futures=True)


OPTIONAL_VALUE_OPTIONS = ("--ray",)


def optional_values(args: list[str]) -> list[str]:
    """Command-line arguments with ``--ray`` given no value (last, or followed by an option) written as
    ``--ray=`` (click options cannot take an optional value)."""
    out = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if arg in OPTIONAL_VALUE_OPTIONS and (nxt is None or nxt.startswith("-")):
            arg = f"{arg}="
        out.append(arg)
    return out


__all__ = ["RAY_HELP", "board_executor", "collect", "optional_values"]
