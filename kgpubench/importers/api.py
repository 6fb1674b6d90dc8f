"""Import entry points: files (Kernel Tuner caches or T4 results, detected by content) to `autotune` rows."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgpubench.errors import KgpubenchError
from kgpubench.foundation.files import check_output
from kgpubench.importers.common import ImportFormatError, LoadedFile, Provenance, load_json, provenance_for
from kgpubench.importers.kernel_tuner import columns_from_cache, is_kernel_tuner_cache, rows_from_cache
from kgpubench.importers.t4 import is_t4_results, rows_from_t4
from kgpubench.registry import Registry
from kgpubench.schema import get_table
from kgpubench.store.shards import write_shard
from kgpubench.store.validation import refusal, validate_table


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
        rows.extend(_guarded(path, lambda p=path: _rows_of(p, prov, gpu=gpu, kernel=kernel, problem_size=problem_size)))
    return rows


def _guarded(path: Path, read: Callable[[], Any]) -> Any:
    """``read()``, with an unexpected shape of the file's JSON turned into one line naming the file."""
    try:
        return read()
    except KgpubenchError:
        raise
    except (RecursionError, OverflowError, TypeError, ValueError, AttributeError) as exc:
        why = " ".join(str(exc).split())[:120]
        raise ImportFormatError(f"{path}: cannot import ({type(exc).__name__}: {why}); expected a Kernel Tuner "
                                "cache or T4 results file of the documented shape.") from None


@dataclass(frozen=True)
class ImportFormat:
    """A file format the importer reads, recognised by the content of the parsed JSON.

    Parameters
    ----------
    name : str
        The format (``source_format`` of its rows; one of the schema's ``SOURCE_FORMATS``).
    looks_like : callable
        ``(parsed JSON) -> bool``: whether a file is in this format.
    rows : callable
        ``(LoadedFile, Provenance, *, gpu) -> list of row dicts`` (without ``row_id``).
    short : str
        What a file of the format is called in messages (``T4``).
    describe : str
        What identifies the format, for the error when no format matches.
    names_itself : bool
        Whether the file names its kernel and problem size (then ``--kernel``/``--problem-size`` are refused);
        otherwise ``rows`` also takes ``kernel`` and ``problem_size``.
    columns : callable, optional
        A faster way to the same rows: ``(LoadedFile, Provenance, *, gpu[, kernel, problem_size]) ->
        (columns, num_rows, constants)`` for :meth:`~kgpubench.schema.Table.from_columns`; for a file not of a
        shape it reads, the file's row dicts (or None, then ``rows`` reads it). It must give the table ``rows``
        gives.
    """

    name: str
    looks_like: Callable[[Any], bool]
    rows: Callable[..., list[dict]]
    short: str
    describe: str
    names_itself: bool = True
    columns: Callable[..., tuple[dict, int, dict] | list[dict] | None] | None = None


_BUILT_IN = (
    ImportFormat("kernel-tuner-cache", is_kernel_tuner_cache, rows_from_cache, "Kernel Tuner cache",
                 "a Kernel Tuner cache (top-level `cache` and `tune_params_keys`)", columns=columns_from_cache),
    ImportFormat("t4", is_t4_results, rows_from_t4, "T4", "a T4 results file (top-level `results` array)",
                 names_itself=False),
)
# Tried in order (the built-in formats, then those plugged in through the entry-point group
# ``kgpubench.importers``, by name; kgpubench.registry); the first that recognises a file reads it.
FORMATS: Registry[ImportFormat] = Registry("import format", "kgpubench.importers", ImportFormat,
                                           builtins=lambda: ((f.name, f) for f in _BUILT_IN),
                                           name_of=lambda f: f.name)


def _rows_of(path: Path, prov: Provenance, *, gpu: str | None, kernel: str | None,
             problem_size: str | None) -> list[dict]:
    """The rows of one input file (see :func:`import_rows`), read by the first of :data:`FORMATS` that
    recognises it."""
    return _read(path, prov, gpu=gpu, kernel=kernel, problem_size=problem_size)


def _read(path: Path, prov: Provenance, *, gpu: str | None, kernel: str | None, problem_size: str | None,
          columns: bool = False) -> Any:
    """One input file read by the first of :data:`FORMATS` that recognises it: its rows, or with ``columns``
    the format's columns (``(columns, num_rows, constants)``), falling back to its rows."""
    loaded: LoadedFile = load_json(path)
    for fmt in FORMATS.values():
        if not fmt.looks_like(loaded.data):
            continue
        options: dict[str, Any] = {"gpu": gpu}
        if fmt.names_itself:
            if kernel or problem_size:
                others = " or ".join(f.short for f in FORMATS.values() if not f.names_itself)
                raise ImportFormatError(f"{path}: --kernel/--problem-size apply to {others} files only; a "
                                        f"{fmt.short} names its own kernel and problem size.")
        else:
            options.update(kernel=kernel, problem_size=problem_size)
        if columns and fmt.columns is not None:
            read = fmt.columns(loaded, prov, **options)
            if read is not None:
                return read
        return fmt.rows(loaded, prov, **options)
    raise ImportFormatError(
        f"{path}: neither {' nor '.join(f.describe for f in FORMATS.values())}; top-level keys are "
        f"{sorted(loaded.data)[:8]}.")


def import_table(paths: Sequence[Path | str], *, gpu: str | None = None, source: str = "benchmark_hub",
                 kernel: str | None = None, problem_size: str | None = None, license: str | None = None,
                 commit: str | None = None, doi: str | None = None, collected_at: str | None = None) -> pa.Table:
    """Like :func:`import_rows`, as an arrow table of the `autotune` schema (``row_id`` computed).

    A format with a column reader (:attr:`ImportFormat.columns`) skips the row dicts; the table is the same.
    """
    table = get_table("autotune")
    prov = provenance_for(source, license=license, commit=commit, doi=doi, collected_at=collected_at)
    parts: list = []  # per file: its columns, or its rows (runs of row files are built together)
    for path in map(Path, paths):
        read = _guarded(path, lambda p=path: _read(p, prov, gpu=gpu, kernel=kernel, problem_size=problem_size,
                                                   columns=True))
        if isinstance(read, list):
            if parts and isinstance(parts[-1], list):
                parts[-1].extend(read)
            else:
                parts.append(list(read))
        else:
            parts.append(read)
    try:
        tables = [table.from_rows(p) if isinstance(p, list) else table.from_columns(p[0], p[1], constants=p[2])
                  for p in parts] or [table.from_rows([])]
    except ValueError as exc:
        if isinstance(exc, KgpubenchError):
            raise
        where = str(paths[0]) if len(paths) == 1 else f"import of {len(paths)} files"
        raise ImportFormatError(f"{where}: {exc}; fix the value in the input file.") from None
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables)


def import_to_shard(paths: Sequence[Path | str], out: Path | str, *, force: bool = False,
                    **options) -> tuple[Path, pa.Table]:
    """Import ``paths`` and write the rows as an `autotune` shard at ``out`` (validated first).

    An existing ``out`` is refused unless ``force`` is given.

    Raises
    ------
    kgpubench.errors.SchemaValidationError
        When a row breaks the schema (every violation attached); nothing is written.
    kgpubench.errors.OutputExistsError
        When ``out`` exists and ``force`` is false.
    """
    check_output(Path(out), force=force)
    table = import_table(paths, **options)
    where = str(paths[0]) if len(paths) == 1 else f"import of {len(paths)} files (rows in input order)"
    return write_import_shard(table, "autotune", out, where=where, force=force), table


def write_import_shard(table: pa.Table, config: str, out: Path | str, *, where: str, force: bool = False) -> Path:
    """Validate imported rows of ``config`` and write them as one shard at ``out``, atomically.

    The shared last step of every importer: nothing is written when a row breaks the schema, and an existing
    ``out`` is refused unless ``force``. ``where`` names the input in violation messages.

    Raises
    ------
    kgpubench.errors.SchemaValidationError
        When a row breaks the schema (every violation attached); nothing is written.
    kgpubench.errors.OutputExistsError
        When ``out`` exists and ``force`` is false.
    """
    check_output(Path(out), force=force)
    violations = validate_table(table, config, file=where)
    if violations:
        raise refusal(violations, "no shard was written", "Fix the input file(s) or the import options.")
    return write_shard(table, Path(out), config, overwrite=force)


def table_of_rows(config: str, rows: list[dict], where: Path | str) -> pa.Table:
    """``rows`` as an arrow table of ``config`` (``row_id`` computed); a value the column cannot hold is one
    :class:`ImportFormatError` naming ``where``, the row and the column."""
    try:
        return get_table(config).from_rows(rows)
    except ValueError as exc:
        if isinstance(exc, KgpubenchError):
            raise
        raise ImportFormatError(f"{where}: {exc}; fix the value in the input file.") from None


def folder_to_shard(build: Callable[[Path | str], pa.Table], config: str, folder: Path | str, out: Path | str, *,
                    force: bool = False, where: str | None = None) -> tuple[Path, pa.Table]:
    """The importers of a staged folder: refuse an existing ``out`` first (unless ``force``), build the table
    with ``build(folder)``, then validate and write it (:func:`write_import_shard`; ``where``, default the
    folder, names the input in violation messages)."""
    check_output(Path(out), force=force)
    refuse_links_out(folder)
    require_licence_file(folder)
    table = build(folder)
    return write_import_shard(table, config, out, where=where or str(folder), force=force), table


LICENCE_NAMES = ("LICENSE", "LICENCE", "COPYING")


def require_licence_file(folder: Path | str) -> Path | None:
    """The upstream's licence file staged with the data: a ``LICENSE``/``LICENCE``/``COPYING`` file (any suffix)
    in the staged folder (the folder of a file given directly) or the folder above it (a staged ``data/``
    passed on its own). None when the folder does not exist (the importer says what is missing); otherwise an
    :class:`ImportFormatError` when there is none: the rows would be stamped with a licence nothing stages."""
    root = Path(folder)
    if root.is_file():
        root = root.parent
    if not root.is_dir():
        return None
    for where in (root, root.parent):
        for path in sorted(where.iterdir()):
            if path.name.upper().startswith(LICENCE_NAMES) and path.is_file() and not path.is_symlink():
                return path
    raise ImportFormatError(f"{root}: no LICENSE file in the staged folder (or the folder above it); the rows would "
                            "carry the upstream's licence with nothing to show it: stage the upstream's LICENSE "
                            "with its data (see its PROVENANCE.md).")


def refuse_links_out(folder: Path | str) -> None:
    """Refuse (:class:`ImportFormatError`, one line, before anything is read) a symbolic link under the staged
    ``folder`` (the folder of a file given directly) that leads out of it, or that is broken: an importer would
    otherwise read a host file (``data/x.csv -> /etc/passwd``) as upstream data."""
    root = Path(folder)
    if root.is_file():
        root = root.parent
    if not root.is_dir():
        return  # the importer says what is missing
    real = root.resolve()
    for here, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(here) / name
            if not path.is_symlink():
                continue
            target = path.resolve()
            if not target.exists() or not (target == real or target.is_relative_to(real)):
                where = "which does not exist" if not target.exists() else f"outside the staged folder {root}"
                raise ImportFormatError(f"{path}: a symbolic link to {os.readlink(path)!r}, {where}; nothing was "
                                        "read: copy the upstream file into the folder instead.")
