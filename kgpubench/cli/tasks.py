"""``kgpubench tasks``: every task's config, target, features by group, schemes, rows, problems and folds."""

from __future__ import annotations

import json
from pathlib import Path

import typer

_NAMES = typer.Argument(None, help="Tasks to show (default: all).")
_DATA = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
_JSON = typer.Option(False, "--json", help="One JSON object per task, in a list, on standard output.")


def tasks(names: list[str] | None = _NAMES, data: Path | None = _DATA, as_json: bool = _JSON) -> None:
    """List the tasks: what each predicts from which features, and the rows, problems and folds it has."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from kgpubench.tasks.overview import fold_summary, overviews

    found = overviews(data, names or None)
    if as_json:
        typer.echo(json.dumps([o.to_dict() for o in found], indent=2))
        return
    table = Table(show_lines=True)
    for head in ("task", "config -> target", "features", "rows / problems", "schemes (folds)"):
        table.add_column(head, overflow="fold")
    for o in found:
        feats = "\n".join(f"{g}: {', '.join(names)}" for g, names in o.features.items())
        counts = f"{o.rows:,} rows" + (f"\n{o.problems:,} problems" if o.problems is not None else "")
        cells = (o.name, f"{o.config} -> {o.target}\n{o.kind}, ranked by {o.ranked_by}", feats, counts,
                 "\n".join(fold_summary(s) for s in o.schemes))
        table.add_row(*map(escape, cells))
    Console(width=200).print(table)


def register(app: typer.Typer) -> None:
    app.command("tasks")(tasks)
