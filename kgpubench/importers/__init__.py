"""Public measurements in: auto-tuning files (Kernel Tuner caches, T4 results) and upstream folders.

Entry points: :func:`import_rows`, :func:`import_table`, :func:`import_to_shard` (files -> `autotune`
rows/shard). The T4 export (kgpubench rows out as T4 files) reads the packaged dataset through
``load_dataset``, so it lives in the tasks layer: :func:`kgpubench.tasks.export.export_t4` /
:func:`~kgpubench.tasks.export.export_t4_table`. Importing any importer runs this file, so it imports
nothing until a name is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the module that defines it (re-exported lazily by ``__getattr__``)
_EXPORTS = {
    **dict.fromkeys(("FORMATS", "ImportFormat", "import_rows", "import_table", "import_to_shard"),
                    "kgpubench.importers.api"),
    **dict.fromkeys(("BENCHMARK_HUB", "KNOWN_SOURCES", "ImportFormatError", "Provenance", "provenance_for"),
                    "kgpubench.importers.common"),
    "T4_SCHEMA_VERSION": "kgpubench.importers.t4",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


__all__ = [  # the keys of _EXPORTS (tests/importers/test_package.py)
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
