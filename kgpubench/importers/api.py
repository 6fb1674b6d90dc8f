"""Import entry points: files (Kernel Tuner caches or T4 results, detected by content) to `autotune` rows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa

from kgpubench.importers.common import ImportFormatError, load_json, provenance_for
from kgpubench.importers.kernel_tuner import is_kernel_tuner_cache, rows_from_cache
from kgpubench.importers.t4 import is_t4_results, rows_from_t4


def import_rows(paths: Iterable[Path | str], *, gpu: str | None = None, source: str = "benchmark_hub",
                kernel: str | None = None, problem_size: str | None = None, license: str | None = None,
                commit: str | None = None, doi: str | None = None, collected_at: str | None = None) -> list[dict]:
    """`autotune` rows (dicts without ``row_id``) from Kernel Tuner cache and T4 results files.

    Parameters
    ----------
    paths : iterable of path
        Plain or gzipped JSON files; the format is recognised by content (``cache`` -> Kernel Tuner,
        ``results`` -> T4).
    gpu : str, optional
        GPU name (or alias) from :mod:`kgpubench.hardware`; needed when a file's device name is empty or unknown.
    source : str
        Provenance name: rows get ``source = "imported:<source>"``. ``benchmark_hub`` (the default) brings its
        commit, DOI, MIT licence and documented fallback date.
    kernel, problem_size : str, optional
        For T4 files that do not name them in ``metadata``.
    license, commit, doi : str, optional
        Upstream facts; ``license`` is required for a source kgpubench does not know.
    collected_at : str, optional
        ISO date for configurations without a timestamp (overrides the source's documented fallback).
    """
    prov = provenance_for(source, license=license, commit=commit, doi=doi, collected_at=collected_at)
    rows: list[dict] = []
    for path in map(Path, paths):
        loaded = load_json(path)
        if is_kernel_tuner_cache(loaded.data):
            if kernel or problem_size:
                raise ImportFormatError(f"{path}: --kernel/--problem-size apply to T4 files only; a Kernel Tuner "
                                        "cache names its own kernel and problem size.")
            rows.extend(rows_from_cache(loaded, prov, gpu=gpu))
        elif is_t4_results(loaded.data):
            rows.extend(rows_from_t4(loaded, prov, gpu=gpu, kernel=kernel, problem_size=problem_size))
        else:
            raise ImportFormatError(
                f"{path}: neither a Kernel Tuner cache (top-level `cache` and `tune_params_keys`) nor a T4 results "
                f"file (top-level `results` array); top-level keys are {sorted(loaded.data)[:8]}.")
    return rows


def import_table(paths: Sequence[Path | str], **options) -> pa.Table:
    """Like :func:`import_rows`, as an arrow table of the `autotune` schema (``row_id`` computed)."""
    from kgpubench.schema import get_table

    return get_table("autotune").from_rows(import_rows(paths, **options))


def import_to_shard(paths: Sequence[Path | str], out: Path | str, **options) -> tuple[Path, pa.Table]:
    """Import ``paths`` and write the rows as an `autotune` shard at ``out`` (validated first).

    Raises
    ------
    kgpubench.errors.SchemaValidationError
        When a row breaks the schema (every violation listed); nothing is written.
    """
    from kgpubench.errors import SchemaValidationError
    from kgpubench.shards import write_shard
    from kgpubench.validation import validate_table

    table = import_table(paths, **options)
    violations = validate_table(table, "autotune", file=str(out))
    if violations:
        shown = "\n".join(f"  {v}" for v in violations[:20])
        raise SchemaValidationError(f"imported rows break the autotune schema ({len(violations)} violation(s)); "
                                    f"no shard written:\n{shown}", violations)
    return write_shard(table, Path(out), "autotune"), table
