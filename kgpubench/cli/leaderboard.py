"""Leaderboard commands: ``evaluate``, ``leaderboard run|verify|splits|render``, ``submit``, ``score``."""

from __future__ import annotations

from pathlib import Path

import typer

DATA = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
TASK = typer.Option(..., "--task", "-t", help="Task name (`kgpubench leaderboard tasks` lists them).")
SCHEME = typer.Option(None, "--scheme", "-s", help="Split scheme (default: the task's first).")
ONLY = typer.Option(None, "--only", help="Only this model (file stem); repeat for several.")
TRUST = typer.Option(False, "--trust", help="Where the kernel cannot isolate model code, run it anyway, unisolated "
                     "(only for code you trust; see docs/SECURITY.md).")

board_app = typer.Typer(help="Run, verify and render the leaderboard.", no_args_is_help=True)


def _err(msg: str) -> None:
    typer.echo(msg, err=True)


def _progress():
    from rich.console import Console

    console = Console(stderr=True, highlight=False)
    return lambda msg: console.print(f"[dim]…[/] {msg}")


def evaluate(model: Path = typer.Argument(..., help="Model file defining make_model(task, seed)."),
             task: str = TASK, scheme: str | None = SCHEME,
             fold: list[str] | None = typer.Option(None, "--fold", help="Only this fold; repeat for several."),
             data: Path | None = DATA, seed: int = typer.Option(0, "--seed"),
             out: Path | None = typer.Option(None, "--out", "-o", help="Result file (default: print it)."),
             trust: bool = TRUST) -> None:
    """Train and score MODEL on every fold of TASK (its code in the sandbox) and write the result JSON."""
    from kgpubench.evaluation import evaluate as run_eval
    from kgpubench.evaluation import result_json

    text = result_json(run_eval(model, task, scheme, folds=fold or None, data_dir=data, seed=seed, trust=trust))
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        _err(f"wrote {out}")
    else:
        typer.echo(text, nl=False)


def submit(model: Path = typer.Argument(..., help="Model file defining make_model(task, seed)."),
           task: str = TASK, scheme: str | None = SCHEME, data: Path | None = DATA,
           timeout: float = typer.Option(1800, "--timeout", help="Time limit for every fold together, seconds."),
           memory_gb: float = typer.Option(8.0, "--memory-gb", help="Memory limit (address space), GiB."),
           threads: int = typer.Option(1, "--threads", help="OpenMP/BLAS threads of the model."),
           out: Path | None = typer.Option(None, "--out", "-o", help="Result file."), trust: bool = TRUST) -> None:
    """Evaluate MODEL with its code in the sandbox (isolated, limited); write a result file ready for a pull
    request."""
    from kgpubench.submission import submit as run_submit

    path = run_submit(model, task, scheme, out=out, data_dir=data, timeout_s=timeout, memory_gb=memory_gb,
                      threads=threads, trust=trust)
    typer.echo(str(path))


def score(predictions: Path = typer.Argument(..., help="Parquet/CSV with row_id, fold, prediction."),
          task: str = TASK, scheme: str = typer.Option(..., "--scheme", "-s", help="Split scheme."),
          data: Path | None = DATA,
          out: Path | None = typer.Option(None, "--out", "-o", help="Result file (default: print it).")) -> None:
    """Score predictions made elsewhere; they must cover exactly the test rows of every fold."""
    from kgpubench.evaluation import result_json
    from kgpubench.submission import score_predictions

    text = result_json(score_predictions(predictions, task, scheme, data_dir=data))
    if out:
        out.write_text(text)
        _err(f"wrote {out}")
    else:
        typer.echo(text, nl=False)


@board_app.command("run")
def run(only: list[str] | None = ONLY,
        task: list[str] | None = typer.Option(None, "--task", "-t", help="Only this task; repeat."),
        data: Path | None = DATA,
        out: Path | None = typer.Option(None, "--out", help="Results folder (default leaderboard/results)."),
        trust: bool = TRUST) -> None:
    """Evaluate every baseline on every task and scheme with data; write results and render the board."""
    import time

    from kgpubench import leaderboard

    start = time.perf_counter()
    written = leaderboard.run(data_dir=data, out_dir=out, only=only, tasks=task, progress=_progress(), trust=trust)
    _err(f"{len(written)} result(s) in {time.perf_counter() - start:.1f} s; board: "
         f"{(Path(out).parent if out else leaderboard.leaderboard_dir()) / 'README.md'}")


@board_app.command("verify")
def verify(only: list[str] | None = ONLY, data: Path | None = DATA,
           rel_tol: float = typer.Option(1e-4, "--rel-tol", help="Relative tolerance per score."),
           abs_tol: float = typer.Option(1e-6, "--abs-tol", help="Absolute tolerance per score."),
           results: Path | None = typer.Option(None, "--results", help="Results folder to verify."),
           trust: bool = TRUST) -> None:
    """Re-run committed results (model code in the sandbox); fail listing every score beyond tolerance and
    every changed hash."""
    from kgpubench import leaderboard

    n = leaderboard.verify(root=results, only=only, data_dir=data, rel_tol=rel_tol, abs_tol=abs_tol,
                           progress=_progress(), trust=trust)
    typer.echo(f"verified {n} result(s): every score within tolerance, every hash matches")


@board_app.command("splits")
def splits(data: Path | None = DATA,
           out: Path | None = typer.Option(None, "--out", help="Splits folder (default: splits/).")) -> None:
    """(Re)write the committed split files of every task with data (byte-identical for unchanged data)."""
    from kgpubench.resources import default_data_dir
    from kgpubench.splits import write_split_files
    from kgpubench.store import Store
    from kgpubench.tasks import list_tasks

    store = Store(data or default_data_dir())
    tables = {}
    for task in list_tasks():
        if task.config not in tables:
            tables[task.config] = store.read(task.config)
        for path in write_split_files(tables[task.config], task, out):
            typer.echo(str(path))


@board_app.command("render")
def render(results: Path | None = typer.Option(None, "--results", help="Results folder.")) -> None:
    """Re-render README.md, index.html and the plots from the result files (no model is run)."""
    from kgpubench import leaderboard
    from kgpubench.leaderboard_render import render_all

    root = results or leaderboard.results_dir()
    for path in render_all(leaderboard.load_results(root), Path(root).parent):
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
    app.command("submit")(submit)
    app.command("score")(score)
    app.add_typer(board_app, name="leaderboard")
