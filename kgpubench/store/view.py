"""What the generated metadata (the card, croissant.json) reads from a store: a structural type.

:class:`~kgpubench.store.store.Store` writes its card and croissant.json, so those modules must not import it;
they take any object with this shape instead (the store, or a test's stand-in).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class StoreView(Protocol):
    """The read-only face of a store: its folder, version, manifest and the parts of each config."""

    path: Path

    @property
    def version(self) -> str:
        """The dataset version, ``MAJOR.MINOR.PATCH``."""
        ...

    def manifest(self) -> dict:
        """The parsed ``manifest.json`` (an empty store's skeleton when there is none)."""
        ...

    def files(self, config: str) -> list[dict]:
        """The manifest entries (``path``, ``rows``, ``sha256``) of one config's parquet parts."""
        ...

    def rows(self, config: str) -> int:
        """The number of rows of one config."""
        ...
