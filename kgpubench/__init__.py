"""kgpubench: an open benchmark dataset and leaderboard for learning GPU kernel performance."""

from __future__ import annotations

from kgpubench.buildinfo import package_version
from kgpubench.errors import KgpubenchError

__version__ = package_version()


def load_dataset(*args, **kwargs):
    """Load a packaged config; see :func:`kgpubench.store.loading.load_dataset`."""
    from kgpubench.store.loading import load_dataset as _load

    return _load(*args, **kwargs)


__all__ = ["KgpubenchError", "__version__", "load_dataset"]
