"""The ``kgpubench`` command line: thin typer commands over the library.

Each command group lives in its own module under ``kgpubench.cli`` and exposes ``register(app)``;
:data:`COMMAND_MODULES` lists them in the order they appear in ``--help``.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from kgpubench.errors import KgpubenchError

COMMAND_MODULES = ["data", "collect", "importexport", "leaderboard", "features"]

app = typer.Typer(
    name="kgpubench",
    help="kgpubench: datasets, collectors and a leaderboard for learning GPU kernel performance.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"kgpubench.cli.{_name}").register(app)

DEBUG_ENV = "KGPUBENCH_DEBUG"


def fail(message: str, code: int = 1) -> None:
    """Print one red line on stderr and exit with ``code``."""
    from rich.console import Console

    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {message}", markup=True)
    raise SystemExit(code)


def main() -> None:
    """Entry point: run the app; a user error is one red line and exit 1 (``KGPUBENCH_DEBUG=1`` for traces)."""
    try:
        app()
    except KgpubenchError as exc:
        if os.environ.get(DEBUG_ENV):
            raise
        fail(_escape(str(exc)), getattr(exc, "exit_code", 1))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
