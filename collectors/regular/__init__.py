"""The `regular` suite (seed 000 table 7): our own CUDA kernels for vector add, NN euclid, SRAD v2 (two
kernels), Hotspot calculate_temp, a shared-memory tiled matrix multiply and Gaussian Fan1/Fan2.

Layout (the same in every suite): ``suite.py`` (the suite object, :data:`SUITE`), ``spec.py`` (kernels, sizes,
launches, trip counts), ``kernels/*.cu``, ``reference.py`` (NumPy references), ``prepare.py`` (inputs, launch and
checks). Loaded by ``kgpubench collect --suite regular`` through :func:`kgpubench.measure.suites.load_suite`.
"""

from .suite import COLLECTOR_VERSION, SUITE, RegularSuite

__all__ = ["COLLECTOR_VERSION", "SUITE", "RegularSuite"]
