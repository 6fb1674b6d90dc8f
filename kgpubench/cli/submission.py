"""Submission commands: ``submission check|run|accept`` (a submission folder added by pull request)."""

from __future__ import annotations

from pathlib import Path

import typer

from kgpubench.cli.leaderboard import DATA, TRUST, _progress
from kgpubench.errors import escape_text

sub_app = typer.Typer(help="Submissions by pull request: check a folder, run it as CI does, add it to the board.",
                      no_args_is_help=True)
FOLDER = typer.Argument(..., help="Submission folder (leaderboard/submissions/NAME).")
OUT = typer.Option(Path("build/submission-results"), "--out", "-o", help="Folder for the result files "
                   "(TASK/SCHEME/NAME.json).")
# What only `submission run` finds: it needs the model's code to run. Both commands' help lists it.
RUN_ONLY = ("Only running the model finds: an import that fails (a missing package, an error at the top of model.py) "
            "or a make_model that is not callable; make_model, fit or predict raising, timing out or running out of "
            "memory; predict returning anything but one finite number per test row; a machine that cannot isolate "
            "model code (--trust).")


@sub_app.command("check", help="Check a submission folder without running its model: everything `submission run` "
                 "checks before it runs model code (one shared check): the folder and submission.yaml, model.py "
                 "read as Python (make_model, TASKS), each run's data, each predictions file against the test rows "
                 "of every fold (columns, row ids, folds, finite numbers, sizes), and that the result files can be "
                 "written to --out. " + RUN_ONLY + " With --model-checks it then runs the model, in the sandbox, on a "
                 "small sample of each run's task (`kgpubench check-model`): one finite prediction per row, the same "
                 "predictions from the same seed, with 2 threads as with 1, and after a refit.")
def check(folder: Path = FOLDER, out: Path = OUT, data: Path | None = DATA,
          force: bool = typer.Option(False, "--force", help="Accept result files already in --out (run will "
                                     "overwrite them with --force)."),
          model_checks: bool = typer.Option(False, "--model-checks", help="Also run the model's contract checks "
                                            "(its code in the sandbox, a few seconds per task)."),
          trust: bool = TRUST) -> None:
    from kgpubench.board.pull_request import check_submission, check_submission_model

    checked = check_submission(folder, out, data_dir=data, force=force)
    sub = checked.submission
    runs = ", ".join(f"{r.task}/{r.scheme}" for r in checked.runs)
    typer.echo(escape_text(f"{sub.name}: {sub.kind} by {', '.join(sub.authors)}; runs {runs}"))
    if model_checks:
        for task, outcome in check_submission_model(checked, data_dir=data, trust=trust):
            typer.echo(escape_text(f"{task}: {outcome.line}"))


@sub_app.command("run", help="The CI job: check the folder as `submission check` does, then score every run of "
                 "the submission (a model in the sandbox, predictions as given) and write the result files. "
                 + RUN_ONLY)
def run(folder: Path = FOLDER, out: Path = OUT, data: Path | None = DATA,
        timeout: float | None = typer.Option(None, "--timeout", help="Time limit for all folds of a run, seconds."),
        memory_gb: float | None = typer.Option(None, "--memory-gb", help="Memory limit (address space), GiB."),
        threads: int = typer.Option(1, "--threads", help="OpenMP/BLAS threads of the model."),
        trust: bool = TRUST,
        force: bool = typer.Option(False, "--force", help="Overwrite result files already in --out (default: "
                                   "refuse, before running).")) -> None:
    from kgpubench.board.pull_request import run_submission
    from kgpubench.board.summary import committed_board, result_summary
    from kgpubench.results.result import Result, read_result_json

    written = run_submission(folder, out, data_dir=data, timeout_s=timeout, memory_gb=memory_gb, threads=threads,
                             trust=trust, progress=_progress(), force=force)
    board = committed_board()
    for path in written:
        result = Result.from_dict(read_result_json(path), where=str(path))
        typer.echo(result_summary(result, board=board, path=path), nl=False)


@sub_app.command("accept")
def accept(folder: Path = FOLDER,
           results: Path = typer.Option(Path("build/submission-results"), "--results", help="Folder the CI job "
                                        "wrote (`kgpubench submission run --out`)."),
           board: Path | None = typer.Option(None, "--board", help="The board's results folder (default "
                                             "leaderboard/results); the board is re-rendered next to it."),
           force: bool = typer.Option(False, "--force", help="Replace this submission's results already there."),
           data: Path | None = DATA) -> None:
    """The maintainer's step: add the CI results of a submission to the board and re-render it. Each result's
    scores are recomputed from its predictions (the file beside it) and the data first; a forged score is
    refused."""
    from kgpubench.board.pull_request import accept as run_accept

    for path in run_accept(folder, results, board=board, force=force, data_dir=data):
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    app.add_typer(sub_app, name="submission")
