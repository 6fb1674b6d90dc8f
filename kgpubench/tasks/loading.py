"""``load_dataset``: packaged (or any store's) data as a Hugging Face dataset, pandas or arrow."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

import pyarrow as pa

from kgpubench.errors import DataFileNotFoundError, MissingDependencyError, SchemaValidationError
from kgpubench.resources import default_data_dir
from kgpubench.schema import get_table
from kgpubench.store.store import Store
from kgpubench.tasks.splits import select_rows

Format = Literal["datasets", "pandas", "arrow"]
FORMATS = ("datasets", "pandas", "arrow")


def load_dataset(
    config: str,
    split: str | None = None,
    fold: str | int | None = None,
    scheme: str | None = None,
    format: Format = "datasets",
    data_dir: Path | str | None = None,
    task: str | None = None,
):
    """Load the rows of one config.

    Parameters
    ----------
    config : str
        ``kernels``, ``npb``, ``stencil`` or ``autotune``.
    split : {"train", "test"}, optional
        With ``scheme`` and ``fold``: the training or test rows of that fold.
    fold : str or int, optional
        Fold of the scheme (GPU name for ``by-gpu``).
    scheme : str, optional
        Split scheme (``random10``, ``holdout80``, ``by-kernel``, ``by-gpu``, ...).
    format : {"datasets", "pandas", "arrow"}
        Return a ``datasets.Dataset``, a ``pandas.DataFrame`` or a ``pyarrow.Table``.
    data_dir : path, optional
        A store folder; defaults to the packaged data.
    task : str, optional
        Task whose split files to use (default: the config's main task).

    Returns
    -------
    datasets.Dataset or pandas.DataFrame or pyarrow.Table
        An empty config gives an empty table with the declared columns.
    """
    get_table(config)
    if format not in FORMATS:
        raise SchemaValidationError(f"format={format!r} is not supported; use one of {', '.join(FORMATS)}.")
    store = Store(data_dir or default_data_dir())
    if data_dir is not None and not store.manifest_path.is_file():
        what = "no such folder" if not store.path.is_dir() else f"no {store.manifest_path.name}, so not a dataset store"
        raise DataFileNotFoundError(f"data_dir={str(data_dir)!r}: {what}; pass a store folder (one `kgpubench merge "
                                    "SHARD --into DIR` made), or leave data_dir out for the packaged data.")
    table = store.read(config)
    if scheme is not None or fold is not None or split is not None:
        table = _apply_split(table, config, split=split, fold=fold, scheme=scheme, task=task)
    return _as_format(table, format, _fingerprint(store, config, split, fold, scheme, task))


def _fingerprint(store: Store, config: str, *selection) -> str:
    """A cheap, exact fingerprint for ``datasets`` caching: the files' hashes plus the selection.

    Without it ``datasets`` fingerprints by pickling the whole table, which costs more than reading it.
    """
    files = [f["sha256"] for f in store.files(config)]
    return hashlib.sha256(json.dumps([config, files, [str(s) for s in selection]]).encode()).hexdigest()[:32]


def _apply_split(table: pa.Table, config: str, *, split, fold, scheme, task) -> pa.Table:
    return select_rows(table, config, split=split, fold=fold, scheme=scheme, task=task)


def _as_format(table: pa.Table, format: Format, fingerprint: str):
    if format == "arrow":
        return table
    if format == "pandas":
        return table.to_pandas()
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is a core dependency
        raise MissingDependencyError("format='datasets' needs the `datasets` package: pip install datasets") from None
    # datasets casts a table whose schema differs from its features' (all fields nullable) column by column;
    # giving it that schema up front (same types, so no data moves) skips the cast.
    target = _features_schema(table.schema)
    if target is not None:
        table = pa.Table.from_arrays(table.columns, schema=target)
    return datasets.Dataset(datasets.table.InMemoryTable(table), fingerprint=fingerprint)


_FEATURE_SCHEMAS: dict[pa.Schema, pa.Schema | None] = {}


def _features_schema(schema: pa.Schema) -> pa.Schema | None:
    """The arrow schema ``datasets`` derives for ``schema`` (cached), when its types are the same (else None)."""
    if schema not in _FEATURE_SCHEMAS:
        from datasets import Features

        target = Features.from_arrow_schema(schema).arrow_schema
        same = target.names == schema.names and all(a.type == b.type for a, b in zip(target, schema))
        _FEATURE_SCHEMAS[schema] = target if same else None
    return _FEATURE_SCHEMAS[schema]
