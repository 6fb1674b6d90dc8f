"""The ``kgpubench`` command line: thin typer commands over the library.

Each command group lives in its own module under ``kgpubench.cli`` and exposes ``register(app)``;
:data:`COMMAND_MODULES` lists them in the order they appear in ``--help``.
"""

from __future__ import annotations

import importlib
import sys

import typer

from kgpubench.cli.failure import DEBUG_ENV, debug_enabled, escape, fail, one_line
from kgpubench.errors import KgpubenchError
from kgpubench.ray.cli import optional_values

COMMAND_MODULES = ["data", "tasks", "collect", "importexport", "leaderboard", "submission", "features", "predict"]

app = typer.Typer(
    name="kgpubench",
    help="kgpubench: datasets, collectors and a leaderboard for learning GPU kernel performance.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for _name in COMMAND_MODULES:
    importlib.import_module(f"kgpubench.cli.{_name}").register(app)

_DETAIL_LINES = 50


def main() -> None:
    """Entry point: run the app; an error is one red line and a non-zero exit (``KGPUBENCH_DEBUG=1`` for traces).

    A kgpubench error (bad input) exits 1, after listing its details (every violation or conflict, one per line)
    on stdout. An operating-system error (a path that cannot be read or written) is one line too. Anything
    else is a kgpubench bug: one line asking for a report, exit 2.
    """
    sys.argv[1:] = optional_values(sys.argv[1:])  # `--ray` with no address
    try:
        app()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130) from None
    except KgpubenchError as exc:
        if debug_enabled():
            raise
        _print_details(exc)
        fail(escape(one_line(str(exc))), getattr(exc, "exit_code", 1))
    except OSError as exc:
        if debug_enabled():
            raise
        fail(escape(one_line(_os_message(exc))))
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback unless asked for
        if debug_enabled():
            raise
        fail(escape(one_line(f"internal error ({type(exc).__name__}: {exc}); this is a kgpubench bug: please "
                               f"report it with the command you ran ({DEBUG_ENV}=1 shows the traceback).")), 2)


def _print_details(exc: KgpubenchError) -> None:
    details = getattr(exc, "details", None)
    lines = details() if callable(details) else []
    if len(lines) <= 1:
        return
    for line in lines[:_DETAIL_LINES]:
        print(one_line(line))
    if len(lines) > _DETAIL_LINES:
        print(f"... and {len(lines) - _DETAIL_LINES} more")


def _os_message(exc: OSError) -> str:
    where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    why = exc.strerror or str(exc) or type(exc).__name__
    fix = "check the path and its permissions"
    return f"{where}: {why}; {fix}." if where else f"{why}; {fix}."
