"""``kgpubench import kernel-tuner``, ``kgpubench import gpuperfpredict`` and ``kgpubench export t4``."""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path

import typer

import_app = typer.Typer(help="Import public measurements as shards (`autotune`, `profiles`).", no_args_is_help=True)
export_app = typer.Typer(help="Export kgpubench rows in the community's formats.", no_args_is_help=True)

_FILES = typer.Argument(..., help="Kernel Tuner cache files or T4 results files (.json / .json.gz).",
                        readable=False)
_GPU = typer.Option(None, "--gpu", help="GPU name as the device reports it (or a short name of "
    "kgpubench.hardware.OTHER_NAMES); required when a file's device_name is empty (e.g. --gpu MI250X).")
_SOURCE = typer.Option("benchmark_hub", "--source", help="Provenance name: rows get "
    "source=imported:<NAME>.")
_OUT = typer.Option(None, "--out", help="Shard to write (default: <NAME>-autotune.parquet).")
_KERNEL = typer.Option(None, "--kernel", help="Kernel name for T4 files that do not say it.")
_PROBLEM_SIZE = typer.Option(None, "--problem-size", help="Problem size for such T4 files.")
_LICENSE = typer.Option(None, "--license", help="SPDX licence of the data (required for a "
    "source kgpubench does not know).")
_COMMIT = typer.Option(None, "--commit", help="Upstream commit of the files.")
_DOI = typer.Option(None, "--doi", help="DOI of the upstream data set.")
_COLLECTED_AT = typer.Option(None, "--collected-at", help="ISO date for configurations "
    "without a timestamp.")
_CONFIG = typer.Option(..., "--config", help="Config to export: autotune, stencil, npb or kernels.")
_OUT_DIR = typer.Option(..., "--out", help="Folder for the T4 results files.")
_WHERE = typer.Option([], "--where", help="COLUMN=VALUE or COLUMN!=VALUE filter (repeatable).")
_DATA = typer.Option(None, "--data", help="Dataset store folder (default: the packaged data).")
_FORCE = typer.Option(False, "--force", help="Overwrite existing output files (default: refuse).")


def kernel_tuner(
    files: list[Path] = _FILES,
    gpu: str | None = _GPU,
    source: str = _SOURCE,
    out: Path | None = _OUT,
    kernel: str | None = _KERNEL,
    problem_size: str | None = _PROBLEM_SIZE,
    license: str | None = _LICENSE,
    commit: str | None = _COMMIT,
    doi: str | None = _DOI,
    collected_at: str | None = _COLLECTED_AT,
    force: bool = _FORCE,
) -> None:
    """Import Kernel Tuner caches / T4 results into an `autotune` shard (then `kgpubench merge SHARD`)."""
    import pyarrow.compute as pc

    from kgpubench.importers import import_to_shard
    from kgpubench.importers.common import source_name

    target = out or Path(f"{source_name(source)}-autotune.parquet")
    with gpu_warnings_as_lines():
        path, table = import_to_shard(files, target, gpu=gpu, source=source, kernel=kernel,
                                      problem_size=problem_size, license=license, commit=commit, doi=doi,
                                      collected_at=collected_at, force=force)
    counts = {d["values"]: d["counts"] for d in pc.value_counts(table["status"]).to_pylist()}
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    typer.echo(f"wrote {table.num_rows} autotune rows ({summary}) from {len(files)} file(s) to {path}; "
               f"merge with: kgpubench merge {path}")


@contextlib.contextmanager
def gpu_warnings_as_lines():
    """Show each distinct :class:`kgpubench.hardware.UnknownGpuWarning` as one ``warning:`` line on stderr."""
    from kgpubench.hardware import UnknownGpuWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnknownGpuWarning)
        try:
            yield
        finally:
            shown = []
            for w in caught:
                if issubclass(w.category, UnknownGpuWarning) and str(w.message) not in shown:
                    shown.append(str(w.message))
                elif not issubclass(w.category, UnknownGpuWarning):
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            for line in shown:
                typer.echo(f"warning: {line}", err=True)


_GPP_DIR = typer.Argument(..., help="The gpuperfpredict snapshot folder (holding datasets/<kernel>-<GPU>.csv[.gz]).",
                          readable=False)
_GPP_OUT = typer.Option(None, "--out", help="Shard to write (default: gpuperfpredict-profiles.parquet).")


def gpuperfpredict(folder: Path = _GPP_DIR, out: Path | None = _GPP_OUT, force: bool = _FORCE) -> None:
    """Import gpuperfpredict's Rodinia nvprof profiles into a `profiles` shard (then `kgpubench merge SHARD`)."""
    import time

    import pyarrow.compute as pc

    from kgpubench.importers.gpuperfpredict import import_to_shard

    start = time.perf_counter()
    target = out or Path("gpuperfpredict-profiles.parquet")
    with gpu_warnings_as_lines():
        path, table = import_to_shard(folder, target, force=force)
    gpus = len(pc.unique(table["gpu_name"]))
    typer.echo(f"wrote {table.num_rows} profiles rows ({gpus} GPUs) to {path} in {time.perf_counter() - start:.1f} s; "
               f"merge with: kgpubench merge {path}")


def t4(
    config: str = _CONFIG,
    out: Path = _OUT_DIR,
    where: list[str] = _WHERE,
    data: Path | None = _DATA,
    force: bool = _FORCE,
) -> None:
    """Write rows with tunable parameters as T4 results files, one per GPU x kernel x problem size."""
    from kgpubench.importers import export_t4

    paths = export_t4(config, out, where=where, data_dir=data, force=force)
    typer.echo(f"wrote {len(paths)} T4 results file(s) to {out}")


def register(app: typer.Typer) -> None:
    import_app.command("kernel-tuner")(kernel_tuner)
    import_app.command("gpuperfpredict")(gpuperfpredict)
    export_app.command("t4")(t4)
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
