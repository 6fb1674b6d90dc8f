"""The ``power`` suite (seed 002 tables 2 and 3): our own CUDA kernels of the programs whose average power the
seed study predicted, swept over the number of blocks so that SM saturation spans about 0.1 to 1.0, every
configuration with a power window.

Layout (the same in every suite): ``suite.py`` (the suite object, :data:`SUITE`), ``spec.py`` (kernels, sizes,
launches, trip counts), ``kernels/*.cu`` (``extern "C"`` kernels, compile-time parameters as ``-D`` defines),
``reference.py`` (NumPy references), ``prepare.py`` (inputs, launch and checks). The harness loads this folder as
``kgpubench_collectors.power`` and uses :data:`SUITE`.
"""
from . import prepare, reference, spec
from .suite import (
    COLLECTOR_VERSION,
    KERNEL_DIR,
    PLAN_SM_COUNT,
    SUITE,
    PowerSuite,
    device_sm_count,
    make_case,
    rolled_loop_lines,
    trip_counts,
)

__all__ = ["COLLECTOR_VERSION", "KERNEL_DIR", "PLAN_SM_COUNT", "SUITE", "PowerSuite", "device_sm_count", "make_case",
           "prepare", "reference", "rolled_loop_lines", "spec", "trip_counts"]
