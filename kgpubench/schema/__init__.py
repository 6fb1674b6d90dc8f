"""Declarations of the dataset tables (configs): the single source of truth for their shape.

Each table lives in its own module; :data:`TABLES` is the registry.
"""

from __future__ import annotations

from kgpubench.errors import unknown_name
from kgpubench.schema import (
    autotune,
    convolutions,
    kernels,
    llm_operators,
    npb,
    operators,
    profiles,
    programs,
    stencil,
    tunings,
)
from kgpubench.schema._core import ARROW_TYPES, Column, Table, canonical_value, row_id_of, row_ids
from kgpubench.schema._rowids import arrow_row_id_array, arrow_row_ids
from kgpubench.schema.common import STATUSES

TABLES: dict[str, Table] = {t.name: t for t in (kernels.TABLE, npb.TABLE, stencil.TABLE, autotune.TABLE,
                                                programs.TABLE, tunings.TABLE, operators.TABLE, profiles.TABLE,
                                                llm_operators.TABLE, convolutions.TABLE)}


def get_table(name: str) -> Table:
    """Return the declared table called ``name`` (error with suggestions when unknown)."""
    try:
        return TABLES[name]
    except KeyError:
        raise unknown_name("config", name, TABLES) from None


__all__ = [
    "ARROW_TYPES", "Column", "STATUSES", "TABLES", "Table", "arrow_row_id_array", "arrow_row_ids", "canonical_value",
    "get_table", "row_id_of", "row_ids",
]
