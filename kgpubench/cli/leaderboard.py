"""Leaderboard commands: ``evaluate``, ``check-model``, ``leaderboard run|verify|splits|render``, ``submit``,
``score``."""

from __future__ import annotations

from pathlib import Path

import typer

from kgpubench.cli.failure import escape
from kgpubench.errors import escape_text

DATA = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
TASK = typer.Option(..., "--task", "-t", help="Task name (`kgpubench leaderboard tasks` lists them).")
SCHEME = typer.Option(None, "--scheme", "-s", help="Split scheme (default: the task's first).")
ONLY = typer.Option(None, "--only", help="Only this model (file stem); repeat for several.")

board_app = typer.Typer(help="Run, verify and render the leaderboard.", no_args_is_help=True)


def _err(msg: str) -> None:
    typer.echo(escape_text(msg), err=True)


def _progress():
    from rich.console import Console

    console = Console(stderr=True, highlight=False)
    return lambda msg: console.print(f"[dim]…[/] {escape(msg)}")


SEED = typer.Option(0, "--seed", help="Seed handed to make_model(task, seed): changes what the model draws at random.")
THREADS = typer.Option(1, "--threads", help="Threads the model may use (OpenMP, BLAS, LightGBM, XGBoost).")
JOBS = typer.Option(1, "--jobs", "-j", help="Models evaluated at once, each in its own process with --threads.")
FORCE = typer.Option(False, "--force", help="Overwrite files in the way that kgpubench did not write.")
OUT_FORCE = typer.Option(False, "--force", help="Overwrite an existing --out file (default: refuse, before running).")
RAY = typer.Option(None, "--ray", metavar="[ADDRESS]", help="Run every (model, task, scheme, fold) as a Ray task on "
                   "the cluster at ADDRESS (auto, HOST:PORT; none: Ray on this machine); --jobs is then Ray's choice. "
                   "docs/RAY.md.")
TRUST = typer.Option(False, "--trust", help="Where the kernel cannot isolate model code, run it anyway, unisolated "
                     "(only for code you trust; see docs/SECURITY.md).")


def evaluate(model: Path = typer.Argument(..., help="Model file defining make_model(task, seed)."),
             task: str = TASK, scheme: str | None = SCHEME,
             fold: list[str] | None = typer.Option(
                 None, "--fold", help="Only this fold (for by-gpu: any GPU of the data); repeat for several."),
             data: Path | None = DATA, seed: int = SEED, threads: int = THREADS,
             out: Path | None = typer.Option(None, "--out", "-o", help="Result file (default "
                                             "MODEL--TASK--SCHEME.json; '-' prints the JSON instead)."),
             trust: bool = TRUST, force: bool = OUT_FORCE) -> None:
    """Train and score MODEL on every fold of TASK (its code in the sandbox), write the result JSON to a file and
    print a short summary. The output file is checked (exists, writable) before anything runs."""
    from kgpubench.board.summary import write_and_summarise
    from kgpubench.foundation.files import check_writable, is_stdout
    from kgpubench.models.evaluation import evaluate as run_eval
    from kgpubench.sandbox.limits import Limits
    from kgpubench.tasks import get_task

    the_task = get_task(task)
    if out is None:
        out = Path(f"{model.stem}--{the_task.name}--{scheme or the_task.schemes[0]}.json")
    if not is_stdout(out):
        check_writable(out, force=force)
    result = run_eval(model, the_task, scheme, folds=fold or None, data_dir=data, seed=seed,
                      limits=Limits(threads=threads), trust=trust)
    if is_stdout(out):
        typer.echo(result.to_json(), nl=False)
        return
    typer.echo(write_and_summarise(result, out, force=force), nl=False)


def check_model(model: Path = typer.Argument(..., help="Model file defining make_model(task, seed)."),
                task: str = TASK, data: Path | None = DATA, seed: int = SEED, trust: bool = TRUST) -> None:
    """Check that MODEL gives reproducible predictions on a small sample of TASK's rows (its code in the sandbox):
    one finite prediction per row (also for a single row), the same predictions from a second model of the same
    seed, with 2 threads as with 1, and after a refit (also after a fit on other rows). Prints one line per check;
    exit 1 if one fails."""
    from kgpubench.errors import ContractError
    from kgpubench.models.model_checks import refusal, run_model_checks

    outcomes = run_model_checks(model, task, seed=seed, data_dir=data, trust=trust)
    for outcome in outcomes:
        typer.echo(escape_text(outcome.line))
    why = refusal(model, task, outcomes)
    if why:
        raise ContractError(why)


def submit(model: Path = typer.Argument(..., help="Model file defining make_model(task, seed)."),
           task: str = TASK, scheme: str | None = SCHEME, data: Path | None = DATA,
           timeout: float = typer.Option(1800, "--timeout", help="Time limit for every fold together, seconds."),
           memory_gb: float = typer.Option(8.0, "--memory-gb", help="Memory limit (address space), GiB."),
           threads: int = typer.Option(1, "--threads", help="OpenMP/BLAS threads of the model."),
           out: Path | None = typer.Option(None, "--out", "-o", help="Result file (default MODEL--TASK--SCHEME.json; "
                                           "'-' prints the JSON instead)."),
           trust: bool = TRUST, force: bool = OUT_FORCE) -> None:
    """Evaluate MODEL with its code in the sandbox (isolated, limited); write a result file ready for a pull
    request."""
    from kgpubench.foundation.files import is_stdout
    from kgpubench.models.submission import submit as run_submit

    path = run_submit(model, task, scheme, out=out, data_dir=data, timeout_s=timeout, memory_gb=memory_gb,
                      threads=threads, trust=trust, force=force)
    if not is_stdout(path):
        typer.echo(str(path))


def score(predictions: Path = typer.Argument(..., help="Parquet/CSV with row_id, fold, prediction."),
          task: str = TASK, scheme: str = typer.Option(..., "--scheme", "-s", help="Split scheme."),
          data: Path | None = DATA,
          out: Path | None = typer.Option(None, "--out", "-o", help="Result file (default, or '-': print it)."),
          force: bool = OUT_FORCE) -> None:
    """Score predictions made elsewhere; they must cover exactly the test rows of every fold."""
    from kgpubench.foundation.files import atomic_write_bytes, check_writable, is_stdout
    from kgpubench.models.submission import score_predictions

    to_file = out is not None and not is_stdout(out)
    if to_file:
        check_writable(out, force=force)
    text = score_predictions(predictions, task, scheme, data_dir=data).to_json()
    if to_file:
        atomic_write_bytes(out, text.encode(), overwrite=force)
        _err(f"wrote {out}")
    else:
        typer.echo(text, nl=False)


def _executor(address: str | None):
    """A Ray executor for ``--ray`` (Ray is imported only then), else a context yielding ``None``."""
    if address is None:
        import contextlib

        return contextlib.nullcontext()
    from kgpubench.ray.cli import board_executor

    return board_executor(address)


@board_app.command("run")
def run(only: list[str] | None = ONLY,
        task: list[str] | None = typer.Option(None, "--task", "-t", help="Only this task; repeat."),
        data: Path | None = DATA,
        out: Path | None = typer.Option(None, "--out", help="Results folder (default leaderboard/results); the "
                                        "board goes next to it, the split files into ../splits."),
        seed: int = SEED, jobs: int = JOBS, force: bool = FORCE, trust: bool = TRUST, ray: str | None = RAY,
        reuse: bool = typer.Option(False, "--reuse", help="Keep a result already in the results folder when it "
                                   "was computed from the same task declaration and task rows, split, model file, "
                                   "seed and threads (library code and packages are not compared: `leaderboard "
                                   "verify` is what catches a code change); run only the others."),
        reuse_from: Path | None = typer.Option(None, "--from", help="With --reuse: copy a result that is reusable "
                                               "from this results folder too (e.g. leaderboard/results; copied, "
                                               "never modified) instead of running it.")) -> None:
    """Write the split files, evaluate every baseline on every task and scheme with data, write results (failures
    and skipped schemes with their reason included) and render the board."""
    import time

    from kgpubench.board import leaderboard
    from kgpubench.foundation.files import refuse_stdout

    refuse_stdout(out, "a results folder")
    if reuse_from is not None and not reuse:
        raise typer.BadParameter("--from needs --reuse (it names where reusable results are copied from).")
    start = time.perf_counter()
    with _executor(ray) as executor:
        written = leaderboard.run(data_dir=data, out_dir=out, only=only, tasks=task, seed=seed, workers=jobs,
                                  force=force, progress=_progress(), trust=trust, executor=executor, reuse=reuse,
                                  reuse_from=reuse_from, warn=lambda msg: _err(f"warning: {msg}"))
    _err(f"{len(written)} result(s) in {time.perf_counter() - start:.1f} s; board: "
         f"{(Path(out).parent if out else leaderboard.leaderboard_dir()) / 'README.md'}")


@board_app.command("verify")
def verify(only: list[str] | None = ONLY, data: Path | None = DATA,
           rel_tol: float | None = typer.Option(None, "--rel-tol", help="One relative tolerance for every score "
                                                "(default: each metric's, or a model's own where larger; printed "
                                                "first, see docs/METRICS.md)."),
           abs_tol: float = typer.Option(1e-6, "--abs-tol", help="Absolute tolerance per score."),
           results: Path | None = typer.Option(None, "--results", help="Results folder to verify."),
           task: list[str] | None = typer.Option(None, "--task", "-t", help="Only the results of this task; repeat."),
           jobs: int = JOBS, trust: bool = TRUST, ray: str | None = RAY) -> None:
    """Re-run committed results (model code in the sandbox); fail listing every score beyond tolerance and
    every changed hash."""
    from kgpubench.board import leaderboard
    from kgpubench.errors import DataFileNotFoundError
    from kgpubench.tasks.metrics import METRICS

    root = Path(results or leaderboard.results_dir())
    if not root.is_dir():
        raise DataFileNotFoundError(f"{root}: no such results folder; pass the folder `leaderboard run --out` wrote.")
    if rel_tol is None:
        _err("tolerances (relative): " + ", ".join(f"{m} {leaderboard.tolerance(m):g}" for m in METRICS)
             + f", other scores {leaderboard.REL_TOL:g}; absolute floor {abs_tol:g}; models of their own: "
             + ", ".join(f"{t.model_file} {t.rel_tol:g}" for t in leaderboard.MODEL_TOLERANCES.values()))
    else:
        _err(f"tolerance: relative {rel_tol:g} for every score, absolute floor {abs_tol:g}")
    with _executor(ray) as executor:
        n = leaderboard.verify(root=results, only=only, tasks=task, data_dir=data, rel_tol=rel_tol, abs_tol=abs_tol,
                               workers=jobs, progress=_progress(), trust=trust, executor=executor)
    typer.echo(f"verified {n} result(s): every score within tolerance, every hash matches")


@board_app.command("splits")
def splits(data: Path | None = DATA,
           out: Path | None = typer.Option(None, "--out", help="Splits folder (default: splits/)."),
           force: bool = FORCE) -> None:
    """(Re)write the split files of every task with data (byte-identical for unchanged data). `leaderboard run`
    does this itself; run it alone after merging data when you only need the splits."""
    from kgpubench.board.leaderboard import write_splits
    from kgpubench.foundation.files import refuse_stdout
    from kgpubench.tasks import list_tasks

    refuse_stdout(out, "a splits folder")
    for path in write_splits(data, list_tasks(), out, force=force):
        typer.echo(str(path))


@board_app.command("render")
def render(results: Path | None = typer.Option(None, "--results", help="Results folder."),
           data: Path | None = typer.Option(None, "--data", help="Dataset store the results are checked against: "
                                            "one made from other task rows is marked stale (default: the packaged "
                                            "data)."),
           out: Path | None = typer.Option(None, "--out", help="Folder to write the board into (created if "
                                           "missing; default: the results folder's parent). A result links its "
                                           "file only where the results lie inside it."),
           force: bool = FORCE) -> None:
    """Re-render README.md, index.html and the plots (no model is run) next to the results folder, or into --out;
    results made from other task rows than the store holds now are marked stale. Outside the committed board, a
    result whose scores its predictions (the file beside it) do not give is refused."""
    from kgpubench.board import leaderboard
    from kgpubench.board.site import render_all
    from kgpubench.errors import DataFileNotFoundError, OptionError

    root = Path(results or leaderboard.results_dir())
    if not root.is_dir():
        raise DataFileNotFoundError(f"{root}: no such results folder; pass the folder `leaderboard run --out` wrote.")
    if out is not None and out.exists() and not out.is_dir():
        raise OptionError(f"--out {out}: a file is in the way; --out takes a folder to write the board into.")
    if leaderboard.results_splits_root(root) is not None:  # not the committed board: scores from predictions
        unchecked = leaderboard.rescore_folder(root, data)
        if unchecked:
            _err(f"warning: {unchecked} result(s) under {root} name no predictions file; their scores are shown "
                 "unchecked")
    records = leaderboard.load_results(root, data_dir=data, mark_stale=True)
    for path in render_all(records, out if out is not None else root.parent, force=force, results_dir=root,
                           data_dir=data):
        typer.echo(str(path))


@board_app.command("tasks")
def tasks() -> None:
    """List the tasks: config, target, kind, metrics, schemes."""
    from kgpubench.tasks import list_tasks

    for t in list_tasks():
        typer.echo(f"{t.name:20s} {t.config:9s} {t.target:15s} {t.kind:15s} metrics={','.join(t.metrics)} "
                   f"schemes={','.join(t.schemes)}")


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate)
    app.command("check-model")(check_model)
    app.command("submit")(submit)
    app.command("score")(score)
    app.add_typer(board_app, name="leaderboard")
