"""Data commands: ``info``, ``validate``, ``merge``, ``upgrade``, ``card``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import typer

from kgpubench import __version__
from kgpubench.errors import DataFileNotFoundError

DATA_OPTION = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
LOCK_TIMEOUT_OPTION = typer.Option(600.0, "--lock-timeout", help="Seconds to wait while another process writes "
                                   "the store (0: fail at once; inf: no limit).")
# A GPU name "has figures" when its rows carry this catalogue figure (the one every GPU figure set has).
FIGURE_COLUMN = "gpu_peak_fp32_gflops"


def _store(data: Path | None):
    from kgpubench.resources import default_data_dir
    from kgpubench.store.store import Store

    return Store(data or default_data_dir())


def info(data: Path | None = DATA_OPTION,
         as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table (every GPU name and "
                                      "status count)."),
         gpus: bool = typer.Option(False, "--gpus", help="Also list each config's GPU names, those without "
                                   "catalogue figures apart, and its row statuses.")) -> None:
    """A summary of a dataset store: configs, rows, GPU counts, versions (--gpus: the GPU names)."""
    import pyarrow.compute as pc

    from kgpubench.schema import TABLES

    store = _store(data)
    if data is not None and not Path(data).is_dir():
        raise DataFileNotFoundError(f"--data {data}: no such store folder.")
    configs = {}
    for name, decl in TABLES.items():
        table = store.read(name)
        gpus_all = sorted(pc.unique(table["gpu_name"]).to_pylist()) if table.num_rows else []
        figured = table.filter(pc.is_valid(table[FIGURE_COLUMN])) if FIGURE_COLUMN in table.column_names else table[:0]
        with_figures = sorted(pc.unique(figured["gpu_name"]).to_pylist()) if figured.num_rows else []
        statuses = {}
        if table.num_rows:
            vc = pc.value_counts(table["status"]).to_pylist()
            statuses = {d["values"]: d["counts"] for d in vc}
        configs[name] = {"rows": table.num_rows, "files": len(store.files(name)), "schema_version": decl.version,
                         "gpus": gpus_all, "gpus_with_figures": with_figures, "status": dict(sorted(statuses.items()))}
    from kgpubench.hardware import catalogue_name, vendor_devices

    all_gpus = sorted({g for c in configs.values() for g in c["gpus"]})
    cited = set(vendor_devices())  # GPUs whose figures the vendor table gives (GB200: no catalogue entry)
    unknown = [g for g in all_gpus if catalogue_name(g) is None and g not in cited]
    result = {"store": str(store.path), "dataset_version": store.version, "kgpubench_version": __version__,
              "configs": configs, "gpus_not_in_alias_table": unknown}
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
        return
    _print_summary(result, all_gpus)
    if gpus:
        _print_gpus(configs)


def _print_summary(result: dict, all_gpus: list[str]) -> None:
    """One screen: a line per config (rows, ok rows, GPU names and those with figures, schema, files)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from kgpubench.cli.failure import safe

    configs = result["configs"]
    typer.echo(safe(f"kgpubench {result['kgpubench_version']}, dataset {result['dataset_version']} "
                    f"({result['store']})", markup=False))
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in ("config", "rows", "ok rows", "GPUs", "with figures", "schema", "files"):
        t.add_column(col, justify="left" if col == "config" else "right", no_wrap=True)
    for name, c in configs.items():
        t.add_row(name, f"{c['rows']:,}", f"{c['status'].get('ok', 0):,}", str(len(c["gpus"])),
                  str(len(c["gpus_with_figures"])), c["schema_version"], str(c["files"]))
    with_figures = {g for c in configs.values() for g in c["gpus_with_figures"]}
    t.add_section()
    t.add_row("all", f"{sum(c['rows'] for c in configs.values()):,}",
              f"{sum(c['status'].get('ok', 0) for c in configs.values()):,}", str(len(all_gpus)),
              str(len(with_figures)), "", str(sum(c["files"] for c in configs.values())))
    width = _width()
    Console(width=width, highlight=False).print(t)
    typer.echo(textwrap.fill("GPUs: distinct GPU names (a config may also name CPUs or fallback entries); with "
                             "figures: those whose rows carry the catalogue's figures (peak FP32 and the rest). "
                             "The names: kgpubench info --gpus; everything as JSON: kgpubench info --json.",
                             width=width))


def _width() -> int:
    """The terminal's width, at most 100 columns (80 when the output is not a terminal)."""
    from rich.console import Console

    return min(100, Console().width)


def _print_gpus(configs: dict) -> None:
    """Each config's GPU names, those without catalogue figures apart, and its row statuses, wrapped to the
    terminal."""
    from kgpubench.cli.failure import safe

    width = _width()

    def para(head: str, names: list[str]) -> None:
        text = f"{head}: " + ", ".join(safe(g, markup=False) for g in names)
        typer.echo(textwrap.fill(text, width=width, initial_indent="  ", subsequent_indent="    ",
                                 break_on_hyphens=False, break_long_words=False))

    for name, c in configs.items():
        typer.echo("")
        statuses = ", ".join(f"{k} {v:,}" for k, v in c["status"].items()) or "no rows yet"
        typer.echo(f"{name}: {c['rows']:,} rows ({statuses})")
        figured = set(c["gpus_with_figures"])
        if figured:
            para(f"{len(figured)} with catalogue figures", sorted(figured))
        without = [g for g in c["gpus"] if g not in figured]
        if without:
            para(f"{len(without)} without (their figure columns are null)", without)


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
          lock_timeout: float = LOCK_TIMEOUT_OPTION,
          replace_derived: bool = typer.Option(
              False, "--replace-derived", help="Replace stored rows that the shards repeat with every measured value "
              "equal but other catalogue-derived figures (gpu_* figures, peak_tensor_tflops): a re-import with a "
              "corrected catalogue. Without it such rows are refused. A measured difference is always refused.")
          ) -> None:
    """Validate shards and bundles and merge their new rows into a store (all or nothing; bumps the minor version)."""
    from kgpubench.store.bundle import merge_bundles

    report = merge_bundles(shards, into, note=note, lock_timeout=lock_timeout, replace_derived=replace_derived)
    for line in report.finished:
        typer.echo(f"finished an interrupted write: {line}")
    added = ", ".join(f"{n} {c}" for c, n in sorted(report.added.items())) or "nothing new"
    dupes = sum(report.duplicates.values())
    replaced = "".join(f"; replaced {n} {c} rows ({', '.join(report.replaced_columns[c])} changed)"
                       for c, n in sorted(report.replaced.items()))
    typer.echo(f"merged {added}{replaced}; {dupes} exact duplicate(s) skipped; dataset version "
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
