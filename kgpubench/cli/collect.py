"""``kgpubench collect``: run suites on this machine's GPU and write resumable shards.

Imports only the harness (NumPy, pyarrow, rich, typer; CuPy and nvidia-ml-py when measuring): never
datasets, lightgbm or xgboost.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import typer

from kgpubench.errors import DataFileNotFoundError, NoGpuError, OptionError, unknown_name
from kgpubench.measure.conditions import ClockLock, parse_lock_mode

# The harness (the backend registry, the suite registry, kgpubench.measure.api / runner: NumPy, pyarrow) and
# rich's progress bar are imported inside the functions that run a collection: every kgpubench command imports
# this module at start-up.
NO_GPU_EXIT = NoGpuError.exit_code
DEFAULT_OUT = Path("kgpubench-shards")  # kgpubench.measure.api.DEFAULT_OUT
L2_CHOICES = ("warm", "flushed")  # kgpubench.measure.runner.L2_POLICIES


SUITE_OPTION = typer.Option(None, "--suite", "-s", help="Suite to run (regular, power, stencil, npb); repeat "
                            "for several. Default: all, in that order.")
KERNEL_OPTION = typer.Option(None, "--kernel", "-k", help="Only this kernel; repeatable.")
OUT_OPTION = typer.Option(DEFAULT_OUT, "--out", "-o", help="Output folder; each suite writes the shard folder "
                          "OUT/<suite>/. Rerunning skips rows already there (and --store's).")
STORE_OPTION = typer.Option(None, "--store", help="Dataset store whose configurations are not measured again: "
                            "a stored row of this GPU model, measurement protocol, L2 policy (and, flushed, cold "
                            "timer) with status ok is skipped; failures are measured again. Default: the packaged "
                            "store (kgpubench/data). docs/GPU_SESSION.md, 'Resuming across calls'.")
REMEASURE_OPTION = typer.Option(False, "--remeasure-stored", help="Measure the configurations the store already "
                                "holds too (a repeat study); only the rows of --out are skipped.")
GPU_NAME_OPTION = typer.Option(None, "--gpu-name", help="With --dry-run: also count, per suite, the configurations "
                               "the store holds for this GPU (its name as rows record it, e.g. 'NVIDIA H200') and "
                               "those left to measure.")
MAX_MINUTES_OPTION = typer.Option(None, "--max-minutes", min=0.0,
                                  help="Per suite: start no new configuration after this many minutes.")


def collect(
    suite: Optional[list[str]] = SUITE_OPTION,  # noqa: UP045 - typer reads the annotation
    kernel: Optional[list[str]] = KERNEL_OPTION,  # noqa: UP045
    quick: bool = typer.Option(False, "--quick", help="A few sizes per kernel: a smoke run."),
    out: Path = OUT_OPTION,
    max_minutes: Optional[float] = MAX_MINUTES_OPTION,  # noqa: UP045
    device: int = typer.Option(0, "--device", min=0, help="CUDA device index."),
    dry_run: bool = typer.Option(False, "--dry-run", help="List suites, kernels and case counts; no GPU needed."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary (or dry-run plan) as JSON."),
    lock_clocks: str = typer.Option("none", "--lock-clocks", help="Lock the SM clock through NVML for the run "
                                    "(needs root; always undone): auto (the default applications clock), a "
                                    "clock in MHz, or none (the default: a shared or lent GPU must keep its "
                                    "settings)."),
    l2: Optional[str] = typer.Option(None, "--l2", help="L2 policy for every suite: warm (samples back to "  # noqa: UP045
                                     "back) or flushed (L2 written over before each sample). Default: each "
                                     "suite's declared policy."),
    cold_timer: str = typer.Option("events", "--cold-timer", help="How flushed (cold) samples are timed: events "
                                   "(a CUDA event pair around each launch; reads about 2 us of launch too), "
                                   "cupti (the kernels' own GPU timestamps from CUPTI; needs `pip install "
                                   "cupti-python`) or cupti-drained (cupti with a short wait after each L2 "
                                   "flush). Rows record it as timing_method cold, cupti or cupti-drained."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="[ADDRESS]", help="One Ray actor per GPU of the "  # noqa: UP045
                                      "cluster at ADDRESS (auto, HOST:PORT; none: Ray on this machine), each "
                                      "measuring its share; --device is then Ray's choice. docs/RAY.md."),
    store: Optional[Path] = STORE_OPTION,  # noqa: UP045
    remeasure_stored: bool = REMEASURE_OPTION,
    gpu_name: Optional[str] = GPU_NAME_OPTION,  # noqa: UP045
) -> None:
    """Measure the suites on this GPU: verify, time, power, features, provenance; one row per configuration.

    Configurations whose rows are already in --out, or in the dataset store (--store, default the packaged
    one), are skipped: a session continues where the store stops.
    """
    from kgpubench.foundation.files import refuse_stdout
    from kgpubench.measure.backends.registry import get_backend
    from kgpubench.measure.suites import available_suites, load_suite

    refuse_stdout(out, "a folder of shards and a bundle")
    names = list(suite) if suite else available_suites()  # every registered suite, built-in or plugged in
    if not names:
        raise DataFileNotFoundError("no suite found under collectors/; pass --suite with an existing suite.")
    suites = [load_suite(n) for n in names]
    selected = {s.name: _kernels_for(s, kernel, len(suites) > 1) for s in suites}
    unknown = [k for k in kernel or () if k not in _all_kernels(suites)]
    if unknown:
        raise unknown_name("kernel", unknown[0], _all_kernels(suites))
    suites = [s for s in suites if selected[s.name] != []]
    lock_mode = parse_lock_mode(lock_clocks)
    if l2 is not None and l2 not in L2_CHOICES:
        raise unknown_name("L2 policy", l2, list(L2_CHOICES))
    from kgpubench.measure.backends.cupy_backend import check_cold_timer  # needs NumPy only, not CuPy

    check_cold_timer(cold_timer)
    if ray is not None and cold_timer != "events":
        raise OptionError(f"--cold-timer {cold_timer} is not available with --ray yet; collect without --ray, "
                          "or drop --cold-timer.")
    store_path = _store_path(store, remeasure_stored, gpu_name, dry_run)
    if dry_run:
        _print_plan(suites, selected, quick, out, as_json,
                    against=(gpu_name, store_path, l2, cold_timer) if gpu_name else None)
        return
    # a bad store: one line, before any GPU work; what it holds is read once, here
    stored = _check_store(store_path, suites, l2, cold_timer) if store_path is not None else {}
    if ray is not None:  # the only place Ray is reached from this command
        from kgpubench.ray import cli as ray_cli


        # no usable GPU in the cluster: NoGpuError, one line and exit NO_GPU_EXIT
        summaries = ray_cli.collect(ray, suites, selected, quick=quick, out=out, max_minutes=max_minutes,
                                    lock_mode=lock_mode, l2=l2, store=store_path)
        if as_json:
            typer.echo(json.dumps(summaries, sort_keys=True, indent=1))
        return
    # no GPU: NoGpuError; no CUPTI for --cold-timer cupti: one line each
    backend = get_backend("cupy", device=device, cold_timer=cold_timer)
    from rich.console import Console

    with ClockLock(backend.nvml() if backend.capabilities.clocks else None, lock_mode) as lock:
        Console(stderr=True).print(lock.note)
        summaries = {s.name: _run_one(s, backend, selected[s.name], quick, out, max_minutes,
                                      clocks_locked=lock.locked, l2=l2, store=stored.get(s.name))
                     for s in suites}
    from kgpubench.store.bundle import finish_collect  # one file to send: validated shards, machine report, summary

    finish_collect(out, [out / s.name for s in suites], backend.device(), summaries)
    if as_json:
        typer.echo(json.dumps(summaries, sort_keys=True, indent=1))


def _store_path(store: Path | None, remeasure: bool, gpu_name: str | None, dry_run: bool) -> Path | None:
    """The store whose configurations are skipped (``None``: none, with --remeasure-stored)."""
    if remeasure and store is not None:
        raise OptionError(f"--store {store} and --remeasure-stored contradict each other: --store names the store "
                          "whose configurations are skipped, --remeasure-stored skips none; pass one of them.")
    if gpu_name is not None and not dry_run:
        raise OptionError("--gpu-name is for --dry-run only (a collection takes the name of the GPU it measures "
                          "on); drop it, or add --dry-run.")
    if remeasure:
        return None
    if store is not None:
        return store
    from kgpubench.resources import default_data_dir

    return default_data_dir()


def _check_store(store: Path, suites, l2: str | None, cold_timer: str) -> dict[str, Any]:
    """Read what ``store`` holds for each suite now, so that a malformed store fails before the GPU is touched;
    the readings (:class:`~kgpubench.measure.stored.StoredRows`) by suite name, for the collection to use."""
    from kgpubench.measure.runner import CollectOptions
    from kgpubench.measure.stored import stored_rows

    return {s.name: stored_rows(store, s.table, l2_policy=CollectOptions(l2_policy=l2).policy_for(s),
                                cold_timer=cold_timer) for s in suites}


def _kernels_for(s, kernel: list[str] | None, several: bool) -> list[str] | None:
    """The --kernel names for suite ``s``: all of them for a single suite (unknown ones are an error), those
    it knows when several suites run ([] when none: the suite is skipped)."""
    if not kernel:
        return None
    if not several:
        return list(kernel)
    from kgpubench.measure.runner import suite_kernels

    known = set(suite_kernels(s))
    return [k for k in kernel if k in known]


def _all_kernels(suites) -> list[str]:
    from kgpubench.measure.runner import suite_kernels

    return sorted({k for s in suites for k in suite_kernels(s)})


def _print_plan(suites, selected: dict, quick: bool, out: Path, as_json: bool, against: tuple | None = None) -> None:
    """The plan per suite; with ``against`` (GPU name, store or None, --l2, --cold-timer), also how many of its
    configurations the store holds for that GPU and how many are left."""
    from kgpubench.measure.api import left_to_measure
    from kgpubench.measure.api import plan as plan_cases

    plan = {}
    for s in suites:
        cases = plan_cases(s, quick=quick, kernels=selected[s.name])
        per_kernel = Counter(c.key.get("kernel", c.source.kernel) for c in cases)
        plan[s.name] = {"table": s.table, "out": str(out / s.name), "cases": len(cases),
                        "kernels": dict(sorted(per_kernel.items()))}
        if against is not None:
            gpu_name, store, l2, cold_timer = against
            found = {"gpu_name": gpu_name, "store": None, "store_version": None, "stored": 0, "left": len(cases)}
            if store is not None:
                left = left_to_measure(s, gpu_name=gpu_name, store=store, quick=quick, kernels=selected[s.name],
                                       l2_policy=l2, cold_timer=cold_timer)
                found.update(store=str(left.stored.path), store_version=left.stored.version, stored=left.held,
                             left=left.left)
            plan[s.name].update(found)
    if as_json:
        typer.echo(json.dumps(plan, sort_keys=True, indent=1))
        return
    for name, p in plan.items():
        typer.echo(f"{name}: {p['cases']} cases -> {p['out']} (table {p['table']})")
        if "left" in p:
            where = (f"the store {p['store']} (dataset {p['store_version']}) holds {p['stored']:,}"
                     if p["store"] is not None else "nothing skipped (--remeasure-stored)")
            typer.echo(f"  for {p['gpu_name']}: {where}; {p['left']:,} left to measure")
        for k, n in p["kernels"].items():
            typer.echo(f"  {k}: {n}")


def _run_one(s, backend, kernels, quick: bool, out: Path, max_minutes: float | None, *, clocks_locked: bool = False,
             l2: str | None = None, store: Any = None) -> dict[str, Any]:
    """One suite through :func:`kgpubench.measure.api.collect`, with a progress bar and a line at the end; its
    :class:`~kgpubench.measure.runner.CollectSummary` as the ``--json`` dict. ``store``: a store folder, or what
    :func:`_check_store` read from it for this suite."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from kgpubench.measure.api import collect as collect_suite

    console = Console(stderr=True)
    columns = (TextColumn("[bold]{task.fields[suite]}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.description}"))
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("", total=None, suite=s.name)

        def progress(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label[:60])

        def notice(line: str) -> None:
            bar.console.print(line, markup=False, highlight=False)

        summary = collect_suite(s, backend=backend, out=out, quick=quick, kernels=kernels, max_minutes=max_minutes,
                                clocks_locked=clocks_locked, l2_policy=l2, store=store, progress=progress,
                                notice=notice).summary
    console.print(summary.line(s.name))
    return summary.to_dict()


def register(app: typer.Typer) -> None:
    app.command("collect")(collect)
