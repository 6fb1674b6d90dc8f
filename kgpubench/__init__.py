"""kgpubench: an open benchmark dataset and leaderboard for learning GPU kernel performance.

``kgpubench.load_dataset`` loads a packaged config; ``kgpubench.collect`` measures a suite with the harness
(:func:`kgpubench.measure.api.collect`). Both are reached lazily: ``import kgpubench`` stays light.
"""

from __future__ import annotations

from typing import Any

from kgpubench.buildinfo import package_version
from kgpubench.errors import KgpubenchError

__version__ = package_version()


def load_dataset(*args, **kwargs):
    """Load a packaged config; see :func:`kgpubench.tasks.loading.load_dataset`."""
    from kgpubench.tasks.loading import load_dataset as _load

    return _load(*args, **kwargs)


def __getattr__(name: str) -> Any:
    """``kgpubench.collect``: :func:`kgpubench.measure.api.collect`, imported on first use (the harness needs
    NumPy and pyarrow, which ``import kgpubench`` does not load)."""
    if name == "collect":
        from kgpubench.measure.api import collect

        return collect
    raise AttributeError(f"module 'kgpubench' has no attribute {name!r}")


__all__ = ["KgpubenchError", "__version__", "collect", "load_dataset"]
