"""``kgpubench import kernel-tuner`` and ``kgpubench export t4``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import_app = typer.Typer(help="Import public tuning measurements as `autotune` shards.", no_args_is_help=True)
export_app = typer.Typer(help="Export kgpubench rows in the community's formats.", no_args_is_help=True)


def kernel_tuner(
    files: list[Path] = typer.Argument(..., help="Kernel Tuner cache files or T4 results files (.json / .json.gz)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU name or alias from the GPU table; required when a "
                                      "file's device_name is empty or unknown (e.g. --gpu MI250X)."),
    source: str = typer.Option("benchmark_hub", "--source", help="Provenance name: rows get "
                               "source=imported:<NAME>."),
    out: Optional[Path] = typer.Option(None, "--out", help="Shard to write (default: <NAME>-autotune.parquet)."),
    kernel: Optional[str] = typer.Option(None, "--kernel", help="Kernel name for T4 files that do not say it."),
    problem_size: Optional[str] = typer.Option(None, "--problem-size", help="Problem size for such T4 files."),
    license: Optional[str] = typer.Option(None, "--license", help="SPDX licence of the data (required for a "
                                          "source kgpubench does not know)."),
    commit: Optional[str] = typer.Option(None, "--commit", help="Upstream commit of the files."),
    doi: Optional[str] = typer.Option(None, "--doi", help="DOI of the upstream data set."),
    collected_at: Optional[str] = typer.Option(None, "--collected-at", help="ISO date for configurations "
                                               "without a timestamp."),
) -> None:
    """Import Kernel Tuner caches / T4 results into an `autotune` shard (then `kgpubench merge SHARD`)."""
    import pyarrow.compute as pc

    from kgpubench.importers import import_to_shard, provenance_for

    name = provenance_for(source, license=license or "unchecked").name
    target = out or Path(f"{name}-autotune.parquet")
    path, table = import_to_shard(files, target, gpu=gpu, source=source, kernel=kernel, problem_size=problem_size,
                                  license=license, commit=commit, doi=doi, collected_at=collected_at)
    counts = {d["values"]: d["counts"] for d in pc.value_counts(table["status"]).to_pylist()}
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    typer.echo(f"wrote {table.num_rows} autotune rows ({summary}) from {len(files)} file(s) to {path}; "
               f"merge with: kgpubench merge {path}")


def t4(
    config: str = typer.Option(..., "--config", help="Config to export: autotune, stencil, npb or kernels."),
    out: Path = typer.Option(..., "--out", help="Folder for the T4 results files."),
    where: list[str] = typer.Option([], "--where", help="COLUMN=VALUE or COLUMN!=VALUE filter (repeatable)."),
    data: Optional[Path] = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data)."),
) -> None:
    """Write rows with tunable parameters as T4 results files, one per GPU x kernel x problem size."""
    from kgpubench.importers import export_t4

    paths = export_t4(config, out, where=where, data_dir=data)
    typer.echo(f"wrote {len(paths)} T4 results file(s) to {out}")


def register(app: typer.Typer) -> None:
    import_app.command("kernel-tuner")(kernel_tuner)
    export_app.command("t4")(t4)
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
