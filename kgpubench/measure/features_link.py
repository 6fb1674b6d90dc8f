"""The one place where the harness asks :mod:`kgpubench.features` for a case's static features.

Features are static: they depend only on the source, the defines, the target architecture and the trip
counts, never on a run. When the features toolchain (nvcc) is missing on the measuring machine, the columns
stay null and can be filled later from the shard on any machine with nvcc; a warning says so once.
"""

from __future__ import annotations

import sys
from typing import Any

from kgpubench.measure.backend import DeviceInfo
from kgpubench.measure.suite import Case, launch_columns

_warned: set[str] = set()


def trip_env(case: Case) -> dict[str, float]:
    """Variables of trip-count expressions: the case's sizes and its launch (``nb``, ``nt``, ``grid_x``...)."""
    env: dict[str, float] = {k: float(v) for k, v in case.sizes.items()}
    env.update({k: float(v) for k, v in launch_columns(case.grid, case.block).items()})
    return env


def static_features(case: Case, dev: DeviceInfo) -> dict[str, Any]:
    """Static-feature columns of ``case`` compiled for ``dev`` (``{}`` with a one-time warning when unavailable)."""
    try:
        from kgpubench import features as api
    except ImportError as exc:
        _warn_once("import", f"static features skipped: kgpubench.features does not import ({exc}).")
        return {}
    extract = api.case_features
    from kgpubench.errors import KgpubenchError, ToolchainError

    try:
        return dict(extract(case, arch=dev.arch, env=trip_env(case), sm_count=dev.sm_count))
    except ToolchainError as exc:
        _warn_once(f"toolchain:{type(exc).__name__}:{case.source.kernel}",
                   f"static features of {case.source.kernel} skipped (fill them later on a machine with nvcc): "
                   f"{exc}")
        return {}
    except KgpubenchError as exc:  # a suite's trip counts that do not fit its kernel: say so, keep measuring
        _warn_once(f"features:{type(exc).__name__}:{case.source.kernel}",
                   f"static features of {case.source.kernel} skipped: {exc}")
        return {}


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(f"warning: {message}", file=sys.stderr)
