"""Checking the files named on the command line (``kgpubench validate``): shards and store folders alike.

Above both :mod:`kgpubench.store.validation` (rows against the schema) and :mod:`kgpubench.store.store` (a store
checks its own parts), so neither has to import the other's caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgpubench.schema import get_table
from kgpubench.store.shards import read_shard
from kgpubench.store.store import Store
from kgpubench.store.validation import Violation, provenance_warnings, validate_shard

# The columns provenance_warnings reads: a store's configs are read with only those of them they declare.
_PROVENANCE = ("source", "kgpubench_version", "kgpubench_commit")


def _provenance_columns(store: Store, config: str):
    declared = set(get_table(config).column_names)
    return store.read(config, verify=False, columns=[c for c in _PROVENANCE if c in declared])


def is_store(path: Path) -> bool:
    """Whether ``path`` is a store folder (holds ``manifest.json``)."""
    return Path(path).is_dir() and (Path(path) / "manifest.json").exists()


def validate_paths(paths: Iterable[Path], **store_options: Any) -> dict[str, list[Violation]]:
    """Validate shards or stores; returns violations keyed by path (empty lists for valid ones).

    A store folder (one with ``manifest.json``) is checked file by file, hashes included, and for what an
    interrupted write leaves behind (see :meth:`kgpubench.store.store.Store.validate`, which ``store_options`` go
    to).
    """
    result: dict[str, list[Violation]] = {}
    for path in map(Path, paths):
        if is_store(path):
            result[str(path)] = Store(path).validate(**store_options)
        else:
            result[str(path)] = validate_shard(path)[2]
    return result


def warnings_for_paths(paths: Iterable[Path]) -> dict[str, list[str]]:
    """:func:`provenance_warnings` of each shard or store (every config of a store), keyed by path."""
    result: dict[str, list[str]] = {}
    for path in map(Path, paths):
        if is_store(path):
            store = Store(path)
            result[str(path)] = [w for c in store.configs() if store.rows(c)
                                 for w in provenance_warnings(_provenance_columns(store, c), f"{path} [{c}]")]
        else:
            try:
                result[str(path)] = provenance_warnings(read_shard(path)[1], str(path))
            except Exception:  # noqa: BLE001 - an unreadable shard is already a violation; no warning on top
                result[str(path)] = []
    return result
