"""kgpubench: an open benchmark dataset and leaderboard for learning GPU kernel performance."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from kgpubench.errors import KgpubenchError

try:
    __version__ = _version("kgpubench")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"


def load_dataset(*args, **kwargs):
    """Load a packaged config; see :func:`kgpubench.loading.load_dataset`."""
    from kgpubench.loading import load_dataset as _load

    return _load(*args, **kwargs)


__all__ = ["KgpubenchError", "__version__", "load_dataset"]
