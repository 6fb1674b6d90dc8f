"""Public auto-tuning measurements in (Kernel Tuner caches, T4 results) and kgpubench rows out (T4).

Entry points: :func:`import_rows`, :func:`import_table`, :func:`import_to_shard` (files -> `autotune`
rows/shard). The T4 export (rows with tunable parameters -> T4 files) reads the packaged dataset, a layer above
the importers, so it is not re-exported here: :func:`kgpubench.importers.export.export_t4` /
:func:`~kgpubench.importers.export.export_t4_table`. Importing any importer (or :mod:`kgpubench.importers.limits`,
which the store's bundles use) runs this file, so it stays below the store.
"""

from __future__ import annotations

from kgpubench.importers.api import FORMATS, ImportFormat, import_rows, import_table, import_to_shard
from kgpubench.importers.common import (
    BENCHMARK_HUB,
    KNOWN_SOURCES,
    ImportFormatError,
    Provenance,
    provenance_for,
)
from kgpubench.importers.t4 import T4_SCHEMA_VERSION

__all__ = [
    "BENCHMARK_HUB",
    "FORMATS",
    "KNOWN_SOURCES",
    "T4_SCHEMA_VERSION",
    "ImportFormat",
    "ImportFormatError",
    "Provenance",
    "import_rows",
    "import_table",
    "import_to_shard",
    "provenance_for",
]
