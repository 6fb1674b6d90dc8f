"""Public auto-tuning measurements in (Kernel Tuner caches, T4 results) and kgpubench rows out (T4).

Entry points: :func:`import_rows`, :func:`import_table`, :func:`import_to_shard` (files -> `autotune`
rows/shard) and :func:`export_t4` / :func:`export_t4_table` (rows with tunable parameters -> T4 files).
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
from kgpubench.importers.export import MAPPERS, export_t4, export_t4_table, parse_where
from kgpubench.importers.t4 import T4_SCHEMA_VERSION

__all__ = [
    "BENCHMARK_HUB",
    "FORMATS",
    "KNOWN_SOURCES",
    "MAPPERS",
    "T4_SCHEMA_VERSION",
    "ImportFormat",
    "ImportFormatError",
    "Provenance",
    "export_t4",
    "export_t4_table",
    "import_rows",
    "import_table",
    "import_to_shard",
    "parse_where",
    "provenance_for",
]
