"""The ``stencil`` suite (seed 003): Simwave-style 3-D acoustic wave update with 3-D tile sizes.

Layout (the same in every suite): ``suite.py`` (the suite object, :data:`SUITE`), ``spec.py`` (the sweep),
``kernels/stencil.cu`` (the kernels), ``reference.py`` (NumPy reference) and ``prepare.py`` (inputs, timed unit,
verification); beside them :mod:`.cases` (one harness case per configuration) and :mod:`.weights` (generated
finite-difference weights); see README.md. Loaded by ``kgpubench collect --suite stencil`` through
:func:`kgpubench.measure.suites.load_suite`.
"""

from .suite import COLLECTOR_VERSION, SUITE, StencilSuite, config_of

__all__ = ["COLLECTOR_VERSION", "SUITE", "StencilSuite", "config_of"]
