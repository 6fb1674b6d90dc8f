"""The `regular` suite (seed 000 table 7): our own CUDA kernels for vector add, NN euclid, SRAD v2 (two
kernels), Hotspot calculate_temp, a shared-memory tiled matrix multiply and Gaussian Fan1/Fan2.

Loaded by ``kgpubench collect --suite regular`` through :func:`kgpubench.measure.suites.load_suite`.
"""

from .suite import COLLECTOR_VERSION, RegularSuite

SUITE = RegularSuite()

__all__ = ["COLLECTOR_VERSION", "SUITE", "RegularSuite"]
