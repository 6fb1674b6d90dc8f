"""The backends there are, and how to get one: ``cupy`` (a real GPU) and ``fake`` (NumPy, for tests).

The contract every backend follows is :class:`kgpubench.measure.backends.base.Backend` (checked by
:func:`kgpubench.testing.check_backend`); this module sits above the implementations, which import the
contract and never this registry.
"""

from __future__ import annotations

from typing import Any

from kgpubench.errors import NoGpuError, unknown_name
from kgpubench.measure.backends.base import Backend

BACKENDS = ("cupy", "fake")


def get_backend(name: str = "cupy", device: int = 0, **kwargs: Any) -> Backend:
    """Return the backend called ``name`` (``cupy`` or ``fake``) for device index ``device``.

    Raises
    ------
    NoGpuError
        ``cupy`` was asked for and CuPy is not installed or sees no GPU.
    """
    if name == "fake":
        from kgpubench.measure.backends.fake import FakeBackend

        return FakeBackend(**kwargs)
    if name != "cupy":
        raise unknown_name("backend", name, BACKENDS)
    from kgpubench.measure.backends.cupy_backend import CupyBackend, cupy_available

    ok, why = cupy_available()
    if not ok:
        raise NoGpuError(why)
    return CupyBackend(device=device, **kwargs)
