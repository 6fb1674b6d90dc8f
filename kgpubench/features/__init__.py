"""Static features of CUDA kernels from their source, PTX and the ptxas resource report.

Main entry point: :func:`extract_features` returns a :class:`KernelFeatures`; its
:meth:`~KernelFeatures.as_columns` gives row columns named as in the ``kernels`` table. The harness
calls :func:`case_features`. Loops are named ``L1``, ``L2``... in the order of their headers in the
PTX, by header label, or ``line:N`` (see :mod:`kgpubench.features.cfg`); :func:`analyse_kernel` lists
them (``KernelAnalysis.loops``) without needing trip counts.
"""

from __future__ import annotations

from kgpubench.features.analysis import KernelAnalysis, LoopInfo, TripCountError
from kgpubench.features.expr import ExpressionError, evaluate
from kgpubench.features.occupancy import LIMITS, Occupancy, limits_for, occupancy, sm_saturation
from kgpubench.features.ptx import PtxParseError, parse_ptx
from kgpubench.features.record import (
    SCHEMA_COLUMNS,
    KernelFeatures,
    LaunchConfigError,
    analyse_kernel,
    analyse_ptx,
    case_features,
    extract_features,
    launch_env,
)
from kgpubench.features.toolchain import CompileError, Resources, Toolchain, find_toolchain

__all__ = [
    "LIMITS", "SCHEMA_COLUMNS", "CompileError", "ExpressionError", "KernelAnalysis", "KernelFeatures",
    "LaunchConfigError", "LoopInfo", "Occupancy", "PtxParseError", "Resources", "Toolchain", "TripCountError",
    "analyse_kernel", "analyse_ptx", "case_features", "evaluate", "extract_features", "find_toolchain",
    "launch_env", "limits_for", "occupancy", "parse_ptx", "sm_saturation",
]
