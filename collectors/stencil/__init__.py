"""The ``stencil`` suite (seed 003): Simwave-style 3-D acoustic wave update with 3-D tile sizes.

Loaded by ``kgpubench collect --suite stencil`` through :func:`kgpubench.measure.suites.load_suite`. What is
measured is in :mod:`.spec` (the sweep), :mod:`.cases` (one harness case per configuration), :mod:`.prepared`
(inputs, timed unit, verification), ``kernels/stencil.cu`` (the kernels), :mod:`.weights` and
:mod:`.reference` (generated finite-difference weights, NumPy reference); see README.md.
"""

from .suite import COLLECTOR_VERSION, StencilSuite, config_of

SUITE = StencilSuite()

__all__ = ["COLLECTOR_VERSION", "SUITE", "StencilSuite", "config_of"]
